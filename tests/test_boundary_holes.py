"""Holes in the information boundary and its inputs, each closed: answers searchable before the
cutoff, students rendered otherwise than they were trained, runs corrupted by a refused resume,
and bad input that must name its file and line."""

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from hindsight.config import ConfigError
from hindsight.corpus import CorpusError, load_corpus
from hindsight.data import InstanceError, load_benchmark
from hindsight.recipe import load_recipe
from hindsight.runner import RunDirError
from hindsight.runs import RunError, read_episodes
from tests.helpers import SHARED_DATA, make_instances, random_papers, write_jsonl


def native_source(tmp_path, instance_changes: dict, corpus_extra=()):
    papers = random_papers(60, seed=2)
    instance = make_instances(1, labels_per=2)[0]
    instance["labels"] = [{"id": p.id, "tier": "T3", "role": "conceptual"} for p in papers[:2]]
    filler = {**instance, "id": "filler", "target": {"id": "2404.00099", "title": "Filler", "date": "2024-04-01"}}
    instance.update(instance_changes)
    write_jsonl(tmp_path / "corpus.jsonl", [p.to_dict() for p in papers] + list(corpus_extra))
    write_jsonl(tmp_path / "instances.jsonl", [filler, instance])
    return tmp_path


def test_an_instance_whose_cutoff_is_not_before_its_target_is_refused_with_file_and_line(tmp_path):
    source = native_source(tmp_path, {"cutoff": "2024-05-01"})
    with pytest.raises(
        InstanceError, match=r"instances.jsonl:2: .*cutoff 2024-05-01 is not before the target's date 2024-04-01"
    ):
        load_benchmark(str(source))


def test_an_instance_whose_target_is_in_the_corpus_before_the_cutoff_is_refused(tmp_path):
    target = {"id": "2301.00777", "title": "The answer itself", "date": "2024-04-01"}
    source = native_source(
        tmp_path,
        {"target": target},
        corpus_extra=[{"id": "2301.00777", "title": "The answer itself", "date": "2023-01-05"}],
    )
    with pytest.raises(
        InstanceError,
        match=r"instances.jsonl:2: instance t0: its target 2301.00777 is in the corpus "
        r"dated 2023-01-05, before the cutoff 2024-01-01",
    ):
        load_benchmark(str(source))


def test_a_non_utf8_corpus_line_is_named_and_can_be_skipped(tmp_path):
    path = tmp_path / "corpus.jsonl"
    lines = [json.dumps(p.to_dict()).encode() for p in random_papers(3)]
    path.write_bytes(lines[0] + b"\n" + b'{"id": "2001.00009", "title": "caf\xe9"}\n' + lines[1] + b"\n")
    with pytest.raises(CorpusError, match=r"corpus.jsonl:2: not UTF-8 \(byte 0xe9 at column 35\)"):
        load_corpus(path)
    corpus = load_corpus(path, skip_bad=True)
    assert len(corpus) == 2 and corpus.report.skipped == 1


def test_an_episode_line_that_is_not_an_object_is_named(tmp_path):
    path = write_jsonl(tmp_path / "episodes.jsonl", ['["not", "an", "episode"]'])
    with pytest.raises(RunError, match=r"episodes.jsonl:1: a episode record is a JSON object, not a list"):
        read_episodes(path)


@pytest.mark.parametrize(
    "text, where", [("protocol: 5\n", "protocol"), ("policy: [hf]\n", "policy"), ("train:\n  lora: 16\n", "train.lora")]
)
def test_a_recipe_section_of_the_wrong_type_names_the_file_and_section(tmp_path, text, where):
    recipe = tmp_path / "r.yaml"
    recipe.write_text(text)
    with pytest.raises(ConfigError, match=rf"r.yaml: {where}: expected a mapping"):
        loaded = load_recipe(recipe)
        from hindsight.train.config import TrainConfig

        TrainConfig.from_recipe(loaded)


def test_a_refused_resume_leaves_the_run_byte_identical(tmp_path):
    from hindsight.eval.evaluation import evaluate

    recipe = tmp_path / "r.yaml"
    recipe.write_text(f"data: {{source: world, max_targets: 2}}\nruns_dir: {tmp_path / 'runs'}\n")
    run_dir = evaluate(load_recipe(recipe), "oneshot", progress=False)
    before = {p.name: p.read_bytes() for p in run_dir.iterdir()}
    for overrides in (["protocol.budget=5"], ["data.max_targets=3", "protocol.budget=5"]):
        with pytest.raises(RunDirError):
            evaluate(load_recipe(recipe, overrides), "oneshot", progress=False)
        assert {p.name: p.read_bytes() for p in run_dir.iterdir()} == before


def full_student(tiny_model, folder, template: str) -> tuple[dict, Path]:
    """A fully fine-tuned student in `folder` (the tiny model itself) trained with `template`, and
    a one-target recipe that evaluates it with the hf backend: (its manifest, the recipe)."""
    shutil.copytree(tiny_model, folder / "sft" / "model")
    manifest = {
        "base_model": str(tiny_model),
        "output": "model",
        "hyperparameters": {"lora": None},
        "enable_thinking": False,
        "chat_template_hash": hashlib.sha256(template.encode()).hexdigest(),
    }
    (folder / "sft" / "train_manifest.json").write_text(json.dumps(manifest))
    recipe = folder / "r.yaml"
    recipe.write_text(
        f"data: {{source: world, max_targets: 1}}\nprotocol: {{budget: 2}}\n"
        f"policy: {{backend: hf, model: {tiny_model}, max_new_tokens: 4}}\nruns_dir: {folder / 'runs'}\n"
    )
    return manifest, recipe


@pytest.mark.parametrize(
    "change, message",
    [
        ({"enable_thinking": True}, "trained with enable_thinking=True, but policy.enable_thinking is False"),
        ({"chat_template_hash": hashlib.sha256(b"another template").hexdigest()}, "another chat template"),
    ],
)
def test_a_student_trained_with_another_rendering_is_refused(tiny_model, tmp_path, change, message):
    from transformers import AutoTokenizer

    from hindsight.eval.evaluation import evaluate

    manifest, recipe = full_student(tiny_model, tmp_path, AutoTokenizer.from_pretrained(tiny_model).chat_template)
    evaluate(load_recipe(recipe), "same", student=str(tmp_path / "sft"), progress=False)  # as trained: accepted
    (tmp_path / "sft" / "train_manifest.json").write_text(json.dumps({**manifest, **change}))
    with pytest.raises(ValueError, match=message):
        evaluate(load_recipe(recipe), "other", student=str(tmp_path / "sft"), progress=False)


def test_a_student_trained_with_a_template_file_is_evaluated_only_with_that_file(tiny_model, tmp_path):
    """train.chat_template renders a student's training rows with a file of the user's (a model
    whose own template writes no tool calls needs one); policy.chat_template serves its prompts."""
    from transformers import AutoTokenizer

    from hindsight.errors import UserError
    from hindsight.eval.evaluation import evaluate

    own = AutoTokenizer.from_pretrained(tiny_model).chat_template
    template = tmp_path / "tools.jinja"
    template.write_text(own.replace("# Tools", "# Functions you may call"))
    _, recipe = full_student(tiny_model, tmp_path, template.read_text())
    student = str(tmp_path / "sft")
    with pytest.raises(ValueError, match="another chat template.*policy.chat_template"):
        evaluate(load_recipe(recipe), "own-template", student=student, progress=False)
    run_dir = evaluate(
        load_recipe(recipe, [f"policy.chat_template={template}"]), "file-template", student=student, progress=False
    )
    policy = json.loads((run_dir / "manifest.json").read_text())["policy"]
    assert policy["chat_template"] == str(template)
    assert policy["chat_template_hash"] == hashlib.sha256(template.read_bytes()).hexdigest()
    with pytest.raises(UserError, match="policy.chat_template: no chat template file at .*absent.jinja"):
        evaluate(
            load_recipe(recipe, [f"policy.chat_template={tmp_path / 'absent.jinja'}"]),
            "x",
            student=student,
            progress=False,
        )


def test_rl_starts_from_the_template_its_lora_student_was_trained_with(tiny_model, tmp_path):
    """A LoRA student's base model holds its own template; RL reads the one training saved beside
    the adapter, and refuses to start when neither is the one the manifest records."""
    from transformers import AutoTokenizer

    from hindsight.rl.grpo import student_tokenizer
    from hindsight.stages import StudentManifest

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    trained = tokenizer.chat_template.replace("# Tools", "# Functions you may call")
    tokenizer.chat_template = trained
    tokenizer.save_pretrained(tmp_path / "sft" / "adapter")
    manifest = {
        "base_model": str(tiny_model),
        "output": "adapter",
        "hyperparameters": {"lora": {"rank": 4}},
        "enable_thinking": False,
        "chat_template_hash": hashlib.sha256(trained.encode()).hexdigest(),
    }
    (tmp_path / "sft" / "train_manifest.json").write_text(json.dumps(manifest))
    student = StudentManifest.read(tmp_path / "sft")
    assert student_tokenizer(student, str(tiny_model)).chat_template == trained
    shutil.rmtree(tmp_path / "sft" / "adapter")
    (tmp_path / "sft" / "adapter").mkdir()
    with pytest.raises(ConfigError, match="trained with a chat template that neither"):
        student_tokenizer(student, str(tiny_model))


def test_a_qwen3_student_trained_with_the_templates_own_history_is_refused(tiny_model, tmp_path):
    """Under a template that reads reasoning_content, a student trained before history was rendered
    as generated saw other contexts than the evaluator now serves."""
    from transformers import AutoTokenizer

    from hindsight.eval.evaluation import evaluate

    qwen3 = SHARED_DATA.parent / "chat_templates" / "qwen3.jinja"
    if not qwen3.exists():
        pytest.skip(f"{qwen3} is absent (it ships in ../shared/chat_templates)")
    manifest, recipe = full_student(tiny_model, tmp_path, qwen3.read_text())
    model = tmp_path / "sft" / "model"
    tokenizer = AutoTokenizer.from_pretrained(model)
    tokenizer.chat_template = qwen3.read_text()
    tokenizer.save_pretrained(model)
    (tmp_path / "sft" / "train_manifest.json").write_text(json.dumps({**manifest, "history": "as_generated"}))
    evaluate(load_recipe(recipe), "same", student=str(tmp_path / "sft"), progress=False)
    (tmp_path / "sft" / "train_manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match="trained with history rendered by the template alone"):
        evaluate(load_recipe(recipe), "other", student=str(tmp_path / "sft"), progress=False)


class Spy:
    """Wraps a policy and keeps everything it is handed: the tasks and the conversations."""

    def __init__(self, inner=None):
        self.inner, self.name, self.seen = inner, "spy", []

    def describe(self) -> dict:
        return {"backend": "spy"}

    def act(self, batch, tools):
        self.seen += [json.dumps({"task": conv.task.to_dict(), "messages": conv.messages}) for conv in batch]
        if self.inner is not None:
            return self.inner.act(batch, tools)
        from hindsight.policy.base import Turn
        from hindsight.policy.parsing import ToolCall

        return [Turn(calls=[ToolCall("submit_answer", {"papers": []})]) for _ in batch]


def _identities(instance) -> list[str]:
    """Every spelling of who the target is: the instance id and the target's arXiv id, whole and
    in its parts."""
    return [instance.id, instance.target.id, *instance.target.id.split(".")]


def test_no_evaluated_policy_is_told_which_instance_it_works_on(tmp_path, monkeypatch):
    import hindsight.eval.evaluation as evaluation

    spy = Spy()
    monkeypatch.setattr(evaluation, "make_policy", lambda *args, **kwargs: spy)
    recipe_path = tmp_path / "r.yaml"
    recipe_path.write_text(f"data:\n  source: world\n  max_targets: 12\nruns_dir: {tmp_path / 'runs'}\n")
    run_dir = evaluation.evaluate(load_recipe(recipe_path), "spy", progress=False)
    instances = {inst.id: inst for inst in load_benchmark("world")[1]}
    recorded = [json.loads(line)["instance_id"] for line in (run_dir / "episodes.jsonl").read_text().splitlines()]
    assert len(spy.seen) == len(recorded) == 12
    for shown, instance_id in zip(spy.seen, recorded):  # one act per episode: they come in order
        assert all(identity not in shown for identity in _identities(instances[instance_id])), shown[:200]


def test_the_teacher_sees_no_id_of_its_target_or_its_antecedents(tmp_path, monkeypatch):
    """The privileged teacher reads titles and abstracts; ids of the target and of the labels
    reach it only where a search returned them."""
    import hindsight.distill.teacher as teacher

    make_teacher = teacher.make_teacher
    spies = []
    monkeypatch.setattr(teacher, "make_teacher", lambda *args: spies.append(Spy(make_teacher(*args))) or spies[-1])
    recipe = tmp_path / "r.yaml"
    recipe.write_text(
        f"data:\n  source: world\ndistill:\n  out_dir: {tmp_path / 'd'}\n  candidates: 2\n  max_targets: 4\n"
    )
    assert teacher.main([str(recipe)]) == 0
    instances = {inst.id: inst for inst in load_benchmark("world")[1]}
    by_brief = {inst.brief: inst for inst in instances.values()}
    first_turns = [json.loads(shown) for shown in spies[0].seen if len(json.loads(shown)["messages"]) == 2]
    targets = json.loads((tmp_path / "d" / "candidates" / "manifest.json").read_text())["targets"]
    assert targets >= 4 and len(first_turns) == targets * 2
    for shown in first_turns:
        instance = by_brief[shown["task"]["brief"]]
        text = json.dumps(shown)
        assert all(identity not in text for identity in _identities(instance))
        assert all(label.id not in text for label in instance.labels)
    assert sorted(task["task"]["sample"] for task in first_turns) == [0] * targets + [1] * targets
