"""Running one policy over one split under a recipe's protocol (the logic behind eval/run.py)."""

from __future__ import annotations

import json
from pathlib import Path

from hindsight.data import load_benchmark
from hindsight.jsonl import sha256_file
from hindsight.policy import make_policy
from hindsight.protocol import SCORER_VERSION
from hindsight.provenance import git_commit, software_versions
from hindsight.recipe import Recipe
from hindsight.runner import run_episodes


def select_instances(instances, split: str, limit: int | None):
    chosen = [inst for inst in instances if inst.split == split]
    if not chosen:
        raise ValueError(f"no instances in split {split!r} (splits present: "
                         f"{', '.join(sorted({i.split for i in instances}))})")
    return chosen[:limit] if limit else chosen


def write_instances(path: Path, instances) -> str:
    """The run's own target list: two runs over the same targets write the same bytes."""
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(inst.to_dict(), ensure_ascii=False) + "\n" for inst in instances)
    return sha256_file(path)


def evaluate(recipe: Recipe, name: str, adapter: str | None = None, split: str | None = None,
             limit: int | None = None, progress: bool = True) -> Path:
    corpus, instances, report = load_benchmark(recipe.data.source)
    chosen = select_instances(instances, split or recipe.data.split, limit)
    run_dir = Path(recipe.runs_dir) / name
    run_dir.mkdir(parents=True, exist_ok=True)
    digest = write_instances(run_dir / "instances.jsonl", chosen)
    backend = recipe.search.build(corpus)
    policy = make_policy(recipe.policy, recipe.protocol, adapter=adapter)
    manifest = {"name": name, "recipe": recipe.to_dict(), "recipe_path": recipe.path, "adapter": adapter,
                "scorer_version": SCORER_VERSION, "data_source": recipe.data.source,
                "instances": {"path": "instances.jsonl", "sha256": digest, "split": split or recipe.data.split,
                              "count": len(chosen)},
                "corpus_hash": corpus.hash, "data_report": report.to_dict(), "software": software_versions(),
                "git_commit": git_commit()}
    run_episodes(policy, [inst.task() for inst in chosen], backend, recipe.protocol, run_dir, manifest,
                 batch_size=recipe.policy.batch_size, progress=progress)
    return run_dir
