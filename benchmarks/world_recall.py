"""What an id learned by heart is worth in the synthetic world, against what a searcher that knows
the mechanism can find, for world shapes side by side.

    python -m benchmarks.world_recall --json benchmarks/results/world_recall.json

For each shape (papers a line, papers a method variant, how fast lines grow, how sparse a line's
first papers are) it builds the world for seed 0 and reports, over the eval split:
- recall's share: the share of eval antecedent gain carried by ids that are also some training
  target's antecedents (what a student replaying its demonstrations' ids could reach);
- the oracle searcher: the brief's first sentence, then three queries of two subproblem and two
  variant words, BM25 with k = 5; the share of T3 antecedents it surfaces and its exposed gain;
- the brief alone: the exposed gain of the first-sentence search.
The first row is world-1's shape (six papers a line, dates uniform, no consolidation); the
second is world-2's (the default).
"""

from __future__ import annotations

import argparse
import random
import tempfile
from collections import Counter
from pathlib import Path
from unittest import mock

from benchmarks.common import finish
from hindsight.data.native import load_native
from hindsight.metrics import oracle_gain
from hindsight.search.bm25 import BM25Backend

SHAPES = [  # key papers a line, method papers a variant, line growth, maturity floor
    (6, 6, 1.0, 1.0),
    (24, 24, 2.0, 0.4),
    (24, 24, 2.0, 1.0),
    (16, 16, 3.0, 0.2),
]


def measure(key: int, method: int, growth: float, floor: float, seed: int = 0, k: int = 5) -> dict:
    import hindsight.data.world as world

    with (
        mock.patch.multiple(
            world, KEY_PAPERS_PER_LINE=key, METHOD_PAPERS_PER_VARIANT=method, LINE_GROWTH=growth, MATURITY_FLOOR=floor
        ),
        tempfile.TemporaryDirectory() as tmp,
    ):
        world.write_world(tmp, seed)
        vocab = world.World(seed).vocab
        corpus, instances, _ = load_native(tmp)
        backend = BM25Backend(corpus, cache_dir=Path(tmp) / "index")
        trained = {lab.id for inst in instances if inst.split == "train" for lab in inst.labels}
        evaluation = [inst for inst in instances if inst.split == "eval"]
        labels = [lab for inst in evaluation for lab in inst.labels]
        found, total, brief_gain, oracle = Counter(), Counter(), 0.0, 0.0
        for inst in evaluation:
            tier = {lab.id: lab.tier for lab in inst.labels}
            total.update(tier.values())
            opening = [hit.id for hit in backend.search(inst.brief.split(". ")[0], inst.cutoff, k)]
            surfaced, rng = set(opening), random.Random(inst.id)
            for _ in range(3):
                query = " ".join(
                    rng.sample(vocab.sub[inst.audit["subproblem"]], 2)
                    + rng.sample(vocab.variant[inst.audit["variant"]], 2)
                )
                surfaced |= {hit.id for hit in backend.search(query, inst.cutoff, k)}
            found.update(tier[pid] for pid in surfaced if pid in tier)
            brief_gain += oracle_gain(opening, inst.gains)
            oracle += oracle_gain(surfaced, inst.gains)
    return {
        "key_papers_per_line": key,
        "method_papers_per_variant": method,
        "line_growth": growth,
        "maturity_floor": floor,
        "recall_share_of_gain": sum(lab.gain for lab in labels if lab.id in trained) / sum(lab.gain for lab in labels),
        "oracle_t3_found": found["T3"] / total["T3"],
        "oracle_exposed_gain": oracle / len(evaluation),
        "brief_exposed_gain": brief_gain / len(evaluation),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    rows = [measure(*shape) for shape in SHAPES]
    lines = [
        "| papers a line / a variant | line growth | maturity floor | eval gain reachable by recall | oracle finds of T3 | oracle exposed gain | brief's exposed gain |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r['key_papers_per_line']} / {r['method_papers_per_variant']} | {r['line_growth']:g} | "
        f"{r['maturity_floor']:g} | {r['recall_share_of_gain']:.0%} | {r['oracle_t3_found']:.0%} | "
        f"{r['oracle_exposed_gain']:.3f} | {r['brief_exposed_gain']:.3f} |"
        for r in rows
    ]
    finish({"rows": rows, "markdown": "\n".join(lines)}, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
