"""Running one policy over one split under a recipe's protocol (the logic behind eval/run.py)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from hindsight.errors import UserError
from hindsight.jsonl import sha256_file
from hindsight.models.gguf import model_provenance
from hindsight.policy import make_policy
from hindsight.policy.chat import HISTORY_RENDERING
from hindsight.protocol import SCORER_VERSION
from hindsight.provenance import git_commit, software_versions, text_hash
from hindsight.recipe import Recipe
from hindsight.runner import RunDirError, run_episodes
from hindsight.schema import tasks_of
from hindsight.shards import merge_runs, merged_manifest, shard_folder, shard_of
from hindsight.stages import StudentManifest


def select_instances(instances, split: str, limit: int | None):
    chosen = [inst for inst in instances if inst.split == split]
    if not chosen:
        raise UserError(
            f"no instances in split {split!r} (splits present: {', '.join(sorted({i.split for i in instances}))})"
        )
    return chosen[:limit] if limit else chosen


def write_instances(path: Path, instances) -> str:
    """The run's own target list: two runs over the same targets write the same bytes. A run
    folder that already holds another list is refused and left as it is."""
    text = "".join(json.dumps(inst.to_dict(), ensure_ascii=False) + "\n" for inst in instances)
    if path.exists() and path.read_text(encoding="utf-8") != text:
        raise RunDirError(f"{path.parent} holds a run over other targets; choose another run name or delete the folder")
    if not path.exists():
        path.write_text(text, encoding="utf-8")
    return sha256_file(path)


def check_rendering(manifest: StudentManifest, policy, enable_thinking: bool) -> None:
    """Refuse a student trained on prompts rendered otherwise than the evaluator will render them."""
    if manifest.enable_thinking is not None and manifest.enable_thinking != enable_thinking:
        raise UserError(
            f"{manifest.path}: the student was trained with enable_thinking={manifest.enable_thinking}, "
            f"but policy.enable_thinking is {enable_thinking}"
        )
    renderer = getattr(policy, "renderer", None)
    template = getattr(getattr(renderer, "tokenizer", None), "chat_template", None)
    if manifest.chat_template_hash and template and text_hash(template) != manifest.chat_template_hash:
        raise UserError(
            f"{manifest.path}: the student was trained with another chat template than the one "
            f"{policy.name} renders prompts with; train and evaluate with the same template "
            "(policy.chat_template names a template file, such as the student folder's chat_template.jinja)"
        )
    # only templates that read reasoning_content render history differently as generated
    if template and "reasoning_content" in template and manifest.history != HISTORY_RENDERING:
        raise UserError(
            f"{manifest.path}: the student was trained with history rendered "
            f"{manifest.history or 'by the template alone'}, but {policy.name} renders it "
            f"{HISTORY_RENDERING}; retrain it with this version"
        )


def trained_student(folder: str | Path, policy_model: str) -> tuple[str, str | None]:
    """(model, adapter) for what train/sft.py left in `folder`: a LoRA adapter for `policy_model`,
    or a fully fine-tuned model, as the folder's train_manifest.json says."""
    manifest = StudentManifest.read(folder)
    if not manifest.lora:
        return str(manifest.output), None
    if not _same_model(manifest.base_model, policy_model):
        raise UserError(
            f"{manifest.path}: the adapter was trained on {manifest.base_model}, but policy.model is "
            f"{policy_model}; set policy.model={manifest.base_model}"
        )
    if manifest.gguf_sha256 and manifest.gguf_sha256 != model_provenance(policy_model).get("gguf_sha256"):
        raise UserError(
            f"{manifest.path}: the adapter was trained on a GGUF file with sha256 "
            f"{manifest.gguf_sha256[:12]}…, but {policy_model} now holds other weights"
        )
    return policy_model, str(manifest.output)


def _same_model(a: str, b: str) -> bool:
    return a == b or (Path(a).exists() and Path(b).exists() and Path(a).resolve() == Path(b).resolve())


def evaluate(
    recipe: Recipe,
    name: str,
    adapter: str | None = None,
    split: str | None = None,
    limit: int | None = None,
    progress: bool = True,
    student: str | None = None,
    shard: tuple[int, int] | None = None,
) -> Path:
    """Run the recipe's policy on held-out targets under its protocol; the run folder it wrote.

    Args:
        recipe: the loaded recipe (data, search, protocol, policy, runs_dir).
        name: the run's name: episodes go to <runs_dir>/<name>/ and resume there per target.
        adapter: a PEFT adapter folder applied to policy.model (hf and vllm backends).
        split: the split to evaluate (default: data.split).
        limit: the earliest N targets of the split (default: data.max_targets, or all).
        progress: show a progress bar.
        student: a train/sft.py or RL output_dir, evaluated as what it holds (adapter or full
            model), after checking it was trained under the rendering the policy uses.
        shard: (I, N): only every N-th target from the I-th, into <name>/shards/I-of-N
            (`merge_evaluation` joins them).
    """
    if student:
        model, adapter = trained_student(student, recipe.policy.model)
        recipe = replace(recipe, policy=replace(recipe.policy, model=model))
    corpus, instances, report = recipe.data.load()
    chosen = shard_of(select_instances(instances, split or recipe.data.split, limit or recipe.data.max_targets), shard)
    run_dir = Path(recipe.runs_dir) / name
    if shard is not None:
        run_dir = shard_folder(run_dir, *shard)
    run_dir.mkdir(parents=True, exist_ok=True)
    digest = write_instances(run_dir / "instances.jsonl", chosen)
    backend = recipe.search.build(corpus)
    policy = make_policy(recipe.policy, recipe.protocol, adapter=adapter)
    if student:
        check_rendering(StudentManifest.read(student), policy, recipe.policy.enable_thinking)
    manifest = {
        "name": name,
        "recipe": recipe.to_dict(),
        "recipe_path": recipe.path,
        "adapter": adapter,
        "student": student,
        "scorer_version": SCORER_VERSION,
        "data_source": recipe.data.source,
        "instances": {
            "path": "instances.jsonl",
            "sha256": digest,
            "split": split or recipe.data.split,
            "count": len(chosen),
        },
        "corpus_hash": corpus.hash,
        "data_report": report.to_dict(),
        "software": software_versions(),
        "git_commit": git_commit(),
        "shard": list(shard) if shard else None,
    }
    try:
        run_episodes(
            policy,
            tasks_of(chosen),
            backend,
            recipe.protocol,
            run_dir,
            manifest,
            batch_size=recipe.policy.batch_size,
            progress=progress,
        )
    finally:
        if hasattr(policy, "close"):  # an engine with worker processes (vllm) stops here, not at exit
            policy.close()
    return run_dir


def merge_evaluation(recipe: Recipe, name: str, count: int, split: str | None = None, limit: int | None = None) -> Path:
    """The N complete shards of run `name` as the one run an unsharded `evaluate` would have
    written: every target of the split once, instances.jsonl in the split's order."""
    _, instances, _ = recipe.data.load()
    chosen = select_instances(instances, split or recipe.data.split, limit or recipe.data.max_targets)
    run_dir = Path(recipe.runs_dir) / name
    manifests, merged_ids = merge_runs(run_dir, count)
    missing = [inst.id for inst in chosen if inst.id not in merged_ids]
    if missing or len(merged_ids) != len(chosen):
        raise UserError(
            f"{run_dir}: the {count} shards do not cover the split's {len(chosen)} targets "
            f"({len(missing)} missing, e.g. {missing[:3]}); were they run with the same --split and --limit?"
        )
    digest = write_instances(run_dir / "instances.jsonl", chosen)
    instances_record = {**manifests[0]["instances"], "sha256": digest, "count": len(chosen)}
    merged = merged_manifest(manifests, instances=instances_record)
    (run_dir / "manifest.json").write_text(json.dumps(merged, indent=2, default=str) + "\n")
    return run_dir
