"""How many scripted-teacher candidates the leak checks flag, by flag: the rules alone, with the
retrieval check (the validator's second line), and with the unreadable-text check too (the third,
hindsight/lexicon.py): the false-positive count a change to hindsight/leaks.py,
hindsight/distill/retrieval.py or hindsight/lexicon.py must report before and after.

    python -m benchmarks.leak_flags --data world --candidates 4               # 1,920 world candidates
    python -m benchmarks.leak_flags --data ../shared/data/deepscholar-bench --candidates 4

The teacher runs without its leak guard, so every candidate is judged as the teacher wrote it.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import json
import tempfile
from dataclasses import replace
from pathlib import Path

from benchmarks.common import finish
from hindsight.distill.config import DistillConfig
from hindsight.distill.prompts import private_texts
from hindsight.distill.replay import Validator, flag_summary, validate_all
from hindsight.distill.teacher import generate_candidates
from hindsight.recipe import load_recipe
from hindsight.runs import read_episodes
from hindsight.schema import CandidateId


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="world", help="a benchmark source (world, or a converted data folder)")
    parser.add_argument("--candidates", type=int, default=4, help="K candidates a target")
    parser.add_argument("--budget", type=int, default=12)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="hindsight-bench-leaks-"))
    recipe_path = work / "recipe.yaml"
    recipe_path.write_text(
        json.dumps(
            {
                "data": {"source": args.data},
                "protocol": {"budget": args.budget},
                "distill": {"out_dir": str(work / "out"), "candidates": args.candidates, "leak_retries": 0},
            }
        )
    )
    recipe = load_recipe(recipe_path)
    generate_candidates(recipe, progress=False)
    corpus, instances, _ = recipe.data.load()
    by_id = {inst.id: inst for inst in instances}
    candidates = list(read_episodes(work / "out" / "candidates" / "episodes.jsonl").values())
    cfg = DistillConfig.from_recipe(recipe)
    chosen = [by_id[iid] for iid in {CandidateId.parse(c.instance_id).instance_id for c in candidates}]
    backend = recipe.search.build(corpus)
    report = {"data": args.data, "candidates": len(candidates)}
    arms = {
        "rules": replace(cfg, retrieval_words=None, unreadable_words=None),
        "rules and retrieval": replace(cfg, unreadable_words=None),
        "rules, retrieval and lexicon": cfg,
    }
    for label, setting in arms.items():
        private = private_texts(chosen, corpus, setting)
        replays = validate_all(candidates, by_id, Validator(backend, recipe.protocol, corpus, setting, private))
        report[label] = {
            **flag_summary(replays),
            "reasons": sorted(
                {reason for r in replays for reason in r.reasons if not reason.startswith(("unsurfaced", "malformed"))}
            )[:20],
        }
    report["markdown"] = (
        "| checks | candidates | valid | private_copy | identifying_query | unreadable |\n|---|---:|---:|---:|---:|---:|\n"
        + "".join(
            f"| {label} | {report[label]['candidates']} | {report[label]['valid']} | "
            f"{report[label]['flags']['private_copy']} | {report[label]['flags']['identifying_query']} | "
            f"{report[label]['flags']['unreadable']} |\n"
            for label in arms
        )
    )
    return finish(report, args.json)


if __name__ == "__main__":
    main()
