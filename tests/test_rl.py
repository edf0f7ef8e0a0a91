"""The rl stage: whole episodes as GRPO rollouts, rewards computed where the labels are, the
student chosen on dev, and nothing private reaching the policy or the trained sequences."""

import json

import pytest

from hindsight.config import ConfigError
from hindsight.policy.scripted import NaiveExplorer
from hindsight.recipe import load_recipe
from hindsight.runner import play_episodes
from tests.helpers import write_jsonl

pytestmark = pytest.mark.slow

RECIPE = """
data: {{source: world, split: eval}}
search: {{backend: bm25}}
protocol: {{budget: 3, k: 3, fields: [id, title]}}
policy: {{backend: hf, model: {model}, max_new_tokens: 24}}
rl:
  student: {model}
  output_dir: {out}
  max_targets: 4
  dev_targets: 2
  dev_every: 1
  steps: 1
  group_size: 2
  targets_per_step: 2
  max_new_tokens: 24
  learning_rate: 1.0e-3
"""


@pytest.fixture(scope="module")
def world_model(tmp_path_factory):
    from hindsight.data import load_benchmark
    from hindsight.models.tiny import build_tiny_qwen

    corpus = load_benchmark("world")[0]
    return build_tiny_qwen(tmp_path_factory.mktemp("rl-student"), [p.title for p in corpus.papers[:2000]])


def write_recipe(tmp_path, model, **rl) -> str:
    path = tmp_path / "rl.yaml"
    text = RECIPE.format(model=model, out=tmp_path / "rl")
    path.write_text(text + "".join(f"  {key}: {json.dumps(value)}\n" for key, value in rl.items()))
    return str(path)


@pytest.mark.parametrize(
    "setting, named",
    [
        ({"reward": {"ndcg10": 1.0, "recall": 1.0}}, "rl.reward: unknown term(s) recall"),
        ({"reward": {"ndcg10": 0.0}}, "rl.reward: every weight is 0"),
        ({"group_size": 1}, "rl.group_size"),
        ({"temperature": 0.0}, "rl.temperature"),
        ({"lora": {"rank": 12}}, "rl.lora.rank"),
        ({"clip": 0.2}, "clip"),
        ({"generation": "sglang"}, "rl.generation"),
        ({"vllm_memory": 1.5}, "rl.vllm_memory"),
        ({"scale_rewards": "std"}, "rl.scale_rewards"),
        ({"iterations": 0}, "rl.iterations"),
        ({"top_entropy_quantile": 0.0}, "rl.top_entropy_quantile"),
        ({"top_entropy_quantile": 1.2}, "rl.top_entropy_quantile"),
        ({"iterations": 2, "save_every": 3}, "rl.save_every: 3 is not a multiple of rl.iterations"),
    ],
)
def test_the_rl_section_names_what_is_wrong(tmp_path, setting, named):
    from hindsight.rl.config import RLConfig

    with pytest.raises(ConfigError, match=named.replace("(", r"\(").replace(")", r"\)")):
        RLConfig.from_recipe(load_recipe(write_recipe(tmp_path, "m", **setting)))


def test_vllm_generation_asks_trl_for_a_colocated_engine_without_the_sampling_correction(tmp_path):
    from trl import GRPOConfig

    from hindsight.rl.config import RLConfig
    from hindsight.rl.grpo import vllm_flags

    assert vllm_flags(RLConfig()) == {}
    args = GRPOConfig(
        output_dir=str(tmp_path),
        report_to=[],
        use_cpu=True,
        **vllm_flags(RLConfig(generation="vllm", vllm_memory=0.4, max_context=8192)),
    )
    assert (
        args.use_vllm,
        args.vllm_mode,
        args.vllm_gpu_memory_utilization,
        args.vllm_max_model_length,
        args.vllm_importance_sampling_correction,
    ) == (True, "colocate", 0.4, 8192, False)


def test_an_episode_is_one_sequence_whose_mask_covers_exactly_the_students_actions(world_model, tmp_path):
    from transformers import AutoTokenizer

    from hindsight.protocol import tool_schemas
    from hindsight.rl.rollout import episode_sequence

    recipe = load_recipe(write_recipe(tmp_path, world_model))
    corpus, instances, _ = recipe.data.load()
    tasks = {inst.id: inst.task() for inst in instances if inst.split == "train"}
    tasks = dict(list(tasks.items())[:3])
    episodes = play_episodes(NaiveExplorer(max_searches=2, seed=1), tasks, recipe.search.build(corpus), recipe.protocol)
    tokenizer = AutoTokenizer.from_pretrained(world_model)
    for episode in episodes.values():
        prompt, completion, mask = episode_sequence(tokenizer, episode, tool_schemas(recipe.protocol), False)
        assert len(completion) == len(mask) and mask[0] == 1
        actions = tokenizer.decode([t for t, m in zip(completion, mask) if m])
        context = tokenizer.decode([t for t, m in zip(completion, mask) if not m])
        assert tokenizer.decode(prompt).endswith("<|im_start|>assistant\n")
        assistant = [m for m in episode.messages if m["role"] == "assistant"]
        assert actions.count("<|im_end|>") == len(assistant)
        last = max(i for i, m in enumerate(episode.messages) if m["role"] == "assistant")
        for message in episode.messages[:last]:
            if message["role"] == "tool":  # what the environment said is context, never trained
                assert message["content"] in context and message["content"] not in actions
        for step in episode.steps:
            if step.tool == "search_papers":
                assert step.args["query"] in actions


def test_a_sampled_turn_that_ends_without_acting_is_trained_not_refused(world_model, tmp_path):
    from transformers import AutoTokenizer

    from hindsight.masking import MaskingError, encode_conversation
    from hindsight.protocol import tool_schemas
    from hindsight.rl.rollout import episode_sequence

    recipe = load_recipe(write_recipe(tmp_path, world_model))
    corpus, instances, _ = recipe.data.load()
    inst = next(i for i in instances if i.split == "train")
    (episode,) = play_episodes(
        NaiveExplorer(max_searches=1, seed=1), {inst.id: inst.task()}, recipe.search.build(corpus), recipe.protocol
    ).values()
    # the model ended a turn at once (seen in a GRPO run: a sampled reply of the end-of-turn token alone)
    first = next(i for i, m in enumerate(episode.messages) if m["role"] == "assistant")
    episode.messages.insert(first, {"role": "assistant", "content": ""})
    episode.messages.insert(first + 1, {"role": "user", "content": "Your reply held no tool call."})
    tokenizer = AutoTokenizer.from_pretrained(world_model)
    tools = tool_schemas(recipe.protocol)
    with pytest.raises(MaskingError, match="renders to no action"):  # a demonstration must act
        encode_conversation(tokenizer, episode.messages, tools)
    _, completion, mask = episode_sequence(tokenizer, episode, tools, False)
    actions = tokenizer.decode([t for t, m in zip(completion, mask) if m])
    assert actions.count("<|im_end|>") == sum(m["role"] == "assistant" for m in episode.messages)
    assert actions.startswith("<|im_end|>")  # the empty turn's end-of-turn token is its action


def test_the_reward_is_the_weighted_score_of_the_episode_against_its_labels(world_model, tmp_path):
    from hindsight.metrics import ndcg_at_k
    from hindsight.rl.reward import EpisodeReward

    recipe = load_recipe(write_recipe(tmp_path, world_model))
    corpus, instances, _ = recipe.data.load()
    train = [inst for inst in instances if inst.split == "train"][:4]
    tasks = {inst.id: inst.task() for inst in train}
    episodes = play_episodes(NaiveExplorer(max_searches=3, seed=2), tasks, recipe.search.build(corpus), recipe.protocol)
    reward = EpisodeReward({tasks[inst.id].task_id: inst for inst in train}, {"ndcg10": 1.0, "malformed": -0.5})
    got = reward(
        None, None, task_id=[tasks[inst.id].task_id for inst in train], episode=[episodes[i.id] for i in train]
    )
    for inst, value in zip(train, got):
        episode = episodes[inst.id]
        submitted = [p.id for p in episode.submission] if episode.status == "submitted" else []
        expected = ndcg_at_k(submitted, inst.gains) - 0.5 * (episode.status != "submitted")
        assert value == pytest.approx(expected)


def test_distinct_share_counts_how_much_a_groups_episodes_differ():
    from hindsight.rl.reward import distinct_share

    # two groups of four: one sample repeated four times (nothing explored), then four different ones
    assert distinct_share(["a", "a", "a", "a", "b", "c", "d", "e"], 4) == pytest.approx(0.5)
    assert distinct_share(["a", "b", "a", "b"], 4) == pytest.approx(1 / 3)
    assert distinct_share(["a", "a"], 2) == 0.0


def test_episode_actions_tell_apart_replies_and_ignore_what_the_environment_returned():
    from hindsight.rl.reward import episode_actions
    from hindsight.schema import Episode

    def episode(reply: str, results: str) -> Episode:
        messages = [
            {"role": "user", "content": "brief"},
            {"role": "assistant", "content": reply},
            {"role": "tool", "content": results},
        ]
        return Episode(instance_id="t", policy="p", protocol_hash="h", messages=messages)

    assert episode_actions(episode("search a", "1")) == episode_actions(episode("search a", "2"))
    assert episode_actions(episode("search a", "1")) != episode_actions(episode("search b", "1"))


def test_a_run_that_no_step_improves_on_dev_saves_the_student_it_started_from(world_model, tmp_path):
    import torch
    from safetensors.torch import load_file

    from hindsight.rl.grpo import main
    from hindsight.stages import StudentManifest

    recipe = write_recipe(tmp_path, world_model)
    assert main([recipe]) == 0
    out = tmp_path / "rl"
    manifest = json.loads((out / "train_manifest.json").read_text())
    rows = [json.loads(line) for line in (out / "rewards.jsonl").read_text().splitlines()]
    assert [(r["split"], r["step"]) for r in rows if r["split"] != "signal"] == [("dev", 0), ("train", 1), ("dev", 1)]
    (train_row,) = [r for r in rows if r["split"] == "train"]
    assert 0.0 <= train_row["distinct"] <= 1.0
    # a random student never submits: every reward is 0, so no step beats the start, and TRL's log
    # says why: every group's episodes got the same reward, so none had an advantage to learn from
    (signal,) = [r for r in rows if r["split"] == "signal" and "frac_reward_zero_std" in r]
    assert signal["step"] == 1 and signal["frac_reward_zero_std"] == 1.0 and signal["reward_std"] == 0.0
    assert manifest["chosen_step"] == 0 and manifest["stage"] == "rl" and manifest["group_size"] == 2
    student = StudentManifest.read(out)
    assert not student.lora and student.output == out / "model"
    saved, start = load_file(student.output / "model.safetensors"), load_file(f"{world_model}/model.safetensors")
    assert all(torch.equal(saved[name], start[name]) for name in start)


def private_strings(instances, episodes) -> dict[str, str]:
    """What no policy may be shown: instance ids, target titles, and each label's id and title
    unless a search of the run returned that paper (then it is public)."""
    returned = {pid for episode in episodes for step in episode.steps for pid in step.returned_ids}
    private = {}
    for inst in instances:
        private[inst.id] = f"instance id of {inst.id}"
        private[inst.target.title] = f"target title of {inst.id}"
        for label in inst.labels:
            if label.id not in returned:
                private[label.id] = f"unreturned label id of {inst.id}"
                private[label.title] = f"unreturned label title of {inst.id}"
    return private


@pytest.mark.parametrize("leaky", [False, True])
def test_nothing_private_reaches_the_policy_or_the_trained_sequences(world_model, tmp_path, monkeypatch, leaky):
    """A policy that keeps every conversation it is handed, and every sequence GRPO trains on: no
    instance id, target title or unreturned label. The leaky run hands the labels' titles to the
    prompt, and the same check must find them."""
    from transformers import AutoTokenizer

    import hindsight.rl.grpo as grpo
    from hindsight.policy.hf import HFPolicy
    from hindsight.rl.rollout import EpisodeRollout

    recipe = load_recipe(write_recipe(tmp_path, world_model, dev_every=0))
    _, instances, _ = recipe.data.load()
    seen, episodes = [], []
    act, rollout = HFPolicy.act, EpisodeRollout.__call__

    def keeping_act(self, batch, tools):
        seen.extend(json.dumps(conv.messages, ensure_ascii=False) for conv in batch)
        return act(self, batch, tools)

    def keeping_rollout(self, prompts, trainer):
        out = rollout(self, prompts, trainer)
        tokenizer = AutoTokenizer.from_pretrained(world_model)
        seen.extend(tokenizer.decode(p + c) for p, c in zip(out["prompt_ids"], out["completion_ids"]))
        episodes.extend(out["episode"])
        return out

    monkeypatch.setattr(HFPolicy, "act", keeping_act)
    monkeypatch.setattr(EpisodeRollout, "__call__", keeping_rollout)
    if leaky:
        by_brief = {inst.brief: inst for inst in instances}
        honest = grpo.initial_messages

        def leaking(task, read_paper=False):
            messages = honest(task, read_paper)
            titles = "; ".join(label.title for label in by_brief[task.brief].labels)
            return messages[:-1] + [{**messages[-1], "content": messages[-1]["content"] + "\n" + titles}]

        monkeypatch.setattr(grpo, "initial_messages", leaking)
        monkeypatch.setattr("hindsight.runner.initial_messages", leaking)
    grpo.train(recipe, grpo.RLConfig.from_recipe(recipe))
    assert seen and episodes
    private = private_strings(instances, episodes)
    found = {why for text in seen for secret, why in private.items() if secret in text}
    if leaky:
        assert any(why.startswith("unreturned label title") for why in found), "the check missed a planted leak"
    else:
        assert not found, sorted(found)[:5]


def test_a_step_makes_the_better_rewarded_episode_of_a_group_more_likely(world_model, tmp_path, monkeypatch):
    """GRPO's wiring, end to end on a tiny model: the rollouts' sequences and action masks, the
    advantages within a group and the update. The first episode of each group is given the
    higher reward; after one step, the log-likelihood of its actions rises relative to the
    second's. (The reward is fixed here because a random model earns none.)"""
    import torch
    from transformers import AutoModelForCausalLM

    import hindsight.rl.grpo as grpo
    from hindsight.rl.rollout import EpisodeRollout

    recipe = load_recipe(
        write_recipe(tmp_path, world_model, dev_every=0, dev_targets=0, targets_per_step=1, learning_rate=1.0e-3)
    )
    sequences, rollout = [], EpisodeRollout.__call__

    def keeping_rollout(self, prompts, trainer):
        out = rollout(self, prompts, trainer)
        sequences.extend(zip(out["prompt_ids"], out["completion_ids"], out["env_mask"]))
        return out

    monkeypatch.setattr(EpisodeRollout, "__call__", keeping_rollout)
    monkeypatch.setattr(
        grpo.EpisodeReward,
        "__call__",
        lambda self, prompts, completions, **_: [1.0 if i % 2 == 0 else 0.0 for i in range(len(prompts))],
    )
    grpo.train(recipe, grpo.RLConfig.from_recipe(recipe))

    def action_logprob(model, prompt, completion, mask) -> float:
        ids = torch.tensor([prompt + completion])
        with torch.no_grad():
            logprobs = torch.log_softmax(model(ids).logits[0, len(prompt) - 1 : -1].float(), dim=-1)
        taken = logprobs.gather(1, torch.tensor(completion)[:, None])[:, 0]
        return float((taken * torch.tensor(mask, dtype=torch.float32)).sum())

    start = AutoModelForCausalLM.from_pretrained(world_model)
    trained = AutoModelForCausalLM.from_pretrained(tmp_path / "rl" / "model")
    assert len(sequences) == 2 and sequences[0][1] != sequences[1][1]
    change = [action_logprob(trained, *s) - action_logprob(start, *s) for s in sequences]
    assert change[0] > change[1], change


def test_skip_demonstrated_leaves_the_targets_of_the_sft_set_out_of_the_rollouts(world_model, tmp_path):
    from hindsight.rl.grpo import RLConfig, Splits

    recipe = load_recipe(write_recipe(tmp_path, world_model, max_targets=None))
    every = Splits(recipe, RLConfig.from_recipe(recipe)).train
    shown = {inst.id for inst in every[:3]}
    distill = tmp_path / "distill"
    distill.mkdir()
    write_jsonl(
        distill / "candidates_manifest.jsonl",
        [{"source_instance": inst.id, "selected": inst.id in shown} for inst in every[:5]],
    )
    recipe = load_recipe(write_recipe(tmp_path, world_model, max_targets=None, skip_demonstrated=str(distill)))
    kept = Splits(recipe, RLConfig.from_recipe(recipe))
    assert [inst.id for inst in kept.train] == [inst.id for inst in every if inst.id not in shown]
    assert len(kept.train_tasks) == len(every) - 3


def test_skip_distilled_leaves_every_target_the_teacher_ran_on_out_of_the_rollouts(world_model, tmp_path):
    from hindsight.rl.grpo import RLConfig, Splits

    recipe = load_recipe(write_recipe(tmp_path, world_model, max_targets=None))
    every = Splits(recipe, RLConfig.from_recipe(recipe)).train
    distill = tmp_path / "distill"
    distill.mkdir()
    # the teacher ran on the first four targets; the selection kept one of them
    write_jsonl(
        distill / "candidates_manifest.jsonl",
        [{"source_instance": inst.id, "selected": n == 0} for n, inst in enumerate(every[:4])],
    )
    recipe = load_recipe(write_recipe(tmp_path, world_model, max_targets=None, skip_distilled=str(distill)))
    kept = Splits(recipe, RLConfig.from_recipe(recipe))
    assert [inst.id for inst in kept.train] == [inst.id for inst in every[4:]]


def test_each_batch_of_rollouts_is_trained_on_for_rl_iterations_steps(world_model, tmp_path, monkeypatch):
    """rl.iterations (GRPO's μ): TRL plays a batch of episodes, then takes that many optimiser steps
    on it; the rewards log gets one train row a batch and a signal row every step."""
    import hindsight.rl.grpo as grpo
    from hindsight.rl.rollout import EpisodeRollout

    recipe = load_recipe(
        write_recipe(tmp_path, world_model, dev_every=0, dev_targets=0, targets_per_step=1, steps=4, iterations=2)
    )
    batches, rollout = [], EpisodeRollout.__call__

    def counting_rollout(self, prompts, trainer):
        batches.append(trainer.state.global_step)
        return rollout(self, prompts, trainer)

    monkeypatch.setattr(EpisodeRollout, "__call__", counting_rollout)
    monkeypatch.setattr(grpo.EpisodeReward, "__call__", _fixed_reward(grpo.EpisodeReward.__call__))
    grpo.train(recipe, grpo.RLConfig.from_recipe(recipe))
    rows = [json.loads(line) for line in (tmp_path / "rl" / "rewards.jsonl").read_text().splitlines()]
    assert batches == [0, 2]
    assert [r["step"] for r in rows if r["split"] == "train"] == [1, 3]
    assert [r["step"] for r in rows if r["split"] == "signal" and "loss" in r] == [1, 2, 3, 4]


def _fixed_reward(call):
    """The real reward's bookkeeping, with the first episode of each group rewarded (a random
    model earns nothing, so its groups would carry no advantage)."""

    def fixed(self, prompts, completions, **kwargs):
        call(self, prompts, completions, **kwargs)
        return [1.0 if i % 2 == 0 else 0.0 for i in range(len(prompts))]

    return fixed


@pytest.mark.parametrize("dev_targets", [2, 0])
def test_a_stopped_run_resumes_from_its_checkpoint_and_ends_as_the_uninterrupted_one(
    world_model, tmp_path, monkeypatch, dev_targets
):
    """rl.save_every: a run stopped after its step-2 checkpoint, run again, ends with the weights,
    the rewards log and the chosen step of the run that was never stopped (the rollouts' sampling,
    the optimiser, the best dev student so far all carried over). Four train targets, two a step:
    step 3 opens the second epoch, so the resumed run must also find the sampler's second order.
    The reward favours the first episode of each group so every step changes the weights (a random
    model earns none). With dev targets the dev choice keeps the start (its dev reward stays 0);
    without, the saved student is the last step's, so the weights compared are the trained ones."""
    import torch
    from safetensors.torch import load_file

    import hindsight.rl.grpo as grpo

    monkeypatch.setattr(
        grpo.EpisodeReward,
        "__call__",
        lambda self, prompts, completions, **_: [1.0 if i % 2 == 0 else 0.0 for i in range(len(prompts))],
    )

    def run(folder, stop_at=None):
        folder.mkdir()
        recipe = load_recipe(
            write_recipe(folder, world_model, steps=3, dev_every=2, save_every=2, dev_targets=dev_targets)
        )
        cfg = grpo.RLConfig.from_recipe(recipe)
        if stop_at is None:
            return grpo.train(recipe, cfg)
        signal = grpo.Curves.signal

        def stopping(self, step, logs):
            if step == stop_at:
                raise KeyboardInterrupt("stopped")
            signal(self, step, logs)

        with monkeypatch.context() as patch:
            patch.setattr(grpo.Curves, "signal", stopping)
            with pytest.raises(KeyboardInterrupt):
                grpo.train(recipe, cfg)
        assert (folder / "rl" / "checkpoint-2" / grpo.RL_STATE).is_file()
        return grpo.train(recipe, cfg)

    whole, resumed = run(tmp_path / "whole"), run(tmp_path / "resumed", stop_at=3)
    assert whole["resumed_from"] is None and resumed["resumed_from"] == "checkpoint-2"
    assert resumed["chosen_step"] == whole["chosen_step"] and resumed["steps"] == whole["steps"] == 3

    def rows(folder):
        return [json.loads(line) for line in (folder / "rl" / "rewards.jsonl").read_text().splitlines()]

    assert [r["split"] for r in rows(tmp_path / "whole")].count("dev") == (3 if dev_targets else 0)  # steps 0, 2, 3
    assert rows(tmp_path / "resumed") == rows(tmp_path / "whole")
    start = load_file(f"{world_model}/model.safetensors")
    a = load_file(tmp_path / "whole" / "rl" / "model" / "model.safetensors")
    b = load_file(tmp_path / "resumed" / "rl" / "model" / "model.safetensors")
    assert all(torch.equal(a[name], b[name]) for name in a)
    if not dev_targets:  # the last step's student: the steps moved its weights
        assert any(not torch.equal(a[name], start[name]) for name in start)
    assert not list((tmp_path / "resumed" / "rl").glob("checkpoint-*"))  # a finished run keeps its student only
