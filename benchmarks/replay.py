"""Replay-validation throughput on the synthetic world, one core, with and without the result
cache for repeated queries (the same candidates, the same run).

    python -m benchmarks.replay --json benchmarks/results/replay.json
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import tempfile
import time
from pathlib import Path

from benchmarks.common import finish
from hindsight.distill.config import DistillConfig
from hindsight.distill.prompts import private_texts
from hindsight.distill.replay import Validator, validate_all
from hindsight.distill.teacher import generate_candidates
from hindsight.recipe import load_recipe
from hindsight.runs import read_episodes
from hindsight.schema import CandidateId
from hindsight.search.bm25 import BM25Backend


class Uncached:
    """Passes every search through: the baseline."""

    def __init__(self, backend):
        self.backend = backend

    def search(self, query, cutoff, k):
        return self.backend.search(query, cutoff, k)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", type=int, default=200, help="train targets (K=4 candidates each)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="hindsight-bench-replay-"))
    recipe_path = work / "recipe.yaml"
    recipe_path.write_text(
        f"data:\n  source: world\nprotocol:\n  budget: 12\n"
        f"distill:\n  out_dir: {work / 'out'}\n  candidates: 4\n  max_targets: {args.targets}\n"
        f"  splits: [train]\n"
    )
    recipe = load_recipe(recipe_path)
    generate_candidates(recipe, progress=False)
    corpus, instances, _ = recipe.data.load()
    by_id = {inst.id: inst for inst in instances}
    candidates = list(read_episodes(work / "out" / "candidates" / "episodes.jsonl").values())
    private = private_texts(
        [by_id[iid] for iid in {CandidateId.parse(c.instance_id).instance_id for c in candidates}],
        corpus,
        DistillConfig(),
    )
    backend = BM25Backend(corpus)
    report = {"candidates": len(candidates)}
    for label in ("uncached", "cached"):
        validator = Validator(backend, recipe.protocol, corpus, DistillConfig(), private)
        if label == "uncached":
            validator.backend.search = Uncached(backend).search
        start = time.perf_counter()
        replays = validate_all(candidates, by_id, validator)
        seconds = time.perf_counter() - start
        report[label] = {
            "seconds": round(seconds, 2),
            "candidates_per_s": len(candidates) / seconds,
            "valid": sum(not r.flags for r in replays),
        }
    report["speedup"] = report["cached"]["candidates_per_s"] / report["uncached"]["candidates_per_s"]
    report["markdown"] = (
        "| replay validation | candidates/s |\n|---|---:|\n"
        f"| every search run | {report['uncached']['candidates_per_s']:.0f} |\n"
        f"| repeated searches cached | {report['cached']['candidates_per_s']:.0f} (**{report['speedup']:.1f}×**) |\n\n"
        f"{len(candidates)} candidates of the scripted teacher ({args.targets} train targets × 4), one core."
    )
    return finish(report, args.json)


if __name__ == "__main__":
    main()
