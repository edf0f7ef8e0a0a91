"""Candidate trajectories from the privileged teacher.

    python distill/teacher.py recipes/tiny.yaml

For every train and dev target, K candidates (tasks "<instance>#<k>", seeds seed+k) run through
the ordinary SearchEnv under the protocol, with the teacher's prompt: the deployment system
prompt, demonstration instructions and a private block of antecedent titles and abstracts.
Output: <out_dir>/candidates/episodes.jsonl (transcripts with the private text, for audit) and
its manifest. Resumable like every run.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[1])  # the checkout, not this script's folder

from distill.config import DistillConfig  # noqa: E402
from distill.prompts import DEMONSTRATION_INSTRUCTIONS, PRIVATE_RULES, teacher_messages  # noqa: E402
from hindsight.config import ConfigError  # noqa: E402
from hindsight.corpus import Corpus  # noqa: E402
from hindsight.data import load_benchmark  # noqa: E402
from hindsight.provenance import git_commit, software_versions  # noqa: E402
from hindsight.recipe import Recipe, add_recipe_arguments, load_recipe  # noqa: E402
from hindsight.runner import run_episodes  # noqa: E402
from hindsight.schema import Task  # noqa: E402
from hindsight.search.text import analyze  # noqa: E402


def corpus_idf(corpus: Corpus) -> dict[str, float]:
    df = Counter(term for paper in corpus for term in set(analyze(f"{paper.title}\n{paper.abstract}")))
    return {term: math.log(len(corpus) / count) for term, count in df.items()}


def make_teacher(cfg: DistillConfig, recipe: Recipe, idf: dict[str, float]):
    if cfg.teacher == "scripted":
        from distill.scripted_teacher import ScriptedTeacher
        return ScriptedTeacher(idf, seed=cfg.seed)
    from dataclasses import replace

    from hindsight.policy import make_policy
    policy_config = replace(recipe.policy, backend=cfg.teacher, model=cfg.model, api_base=cfg.api_base,
                            temperature=cfg.temperature, seed=cfg.seed, concurrency=cfg.concurrency, adapter=None)
    return make_policy(policy_config, recipe.protocol)


def generate_candidates(recipe: Recipe, progress: bool = True) -> Path:
    cfg = DistillConfig.from_recipe(recipe)
    corpus, instances, _ = load_benchmark(recipe.data.source)
    chosen = {}
    for split in cfg.splits:
        in_split = [inst for inst in instances if inst.split == split]
        chosen.update((inst.id, inst) for inst in in_split[: cfg.max_targets or len(in_split)])
    idf = corpus_idf(corpus)
    tasks = [Task(f"{inst.id}#{k}", inst.brief, inst.cutoff) for inst in chosen.values() for k in range(cfg.candidates)]

    def first_messages(task: Task) -> list[dict]:
        instance = chosen[task.instance_id.rpartition("#")[0]]
        return teacher_messages(task, instance, idf, cfg.private_max, cfg.abstract_chars, recipe.protocol.read_paper)

    backend = recipe.search.build(corpus)
    out = Path(cfg.out_dir) / "candidates"
    manifest = {"stage": "distill/teacher", "recipe": recipe.to_dict(), "data_source": recipe.data.source,
                "teacher_prompt": {"instructions": DEMONSTRATION_INSTRUCTIONS, "private_rules": PRIVATE_RULES},
                "targets": len(chosen), "candidates_per_target": cfg.candidates, "corpus_hash": corpus.hash,
                "software": software_versions(), "git_commit": git_commit()}
    run_episodes(make_teacher(cfg, recipe, idf), tasks, backend, recipe.protocol, out, manifest,
                 batch_size=cfg.batch_size, progress=progress, first_messages=first_messages)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_recipe_arguments(parser)
    args = parser.parse_args(argv)
    try:
        out = generate_candidates(load_recipe(args.recipe, args.overrides))
    except (ConfigError, ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"candidates: {out / 'episodes.jsonl'}\nnext: python distill/replay.py {args.recipe}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
