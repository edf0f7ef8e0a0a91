"""Did the demo show the effect? Reads a comparison.json (eval/compare.py base sft --json) and
exits 1 unless every claim the demo makes holds:

    python scripts/check_demo.py outputs/demo/runs/comparison.json
    python scripts/check_demo.py outputs/demo/runs/rl-vs-sft.json     # make demo-rl: RL against SFT

- the paired 95% interval of SFT - base is above zero for exposed gain, selected gain and final nDCG@10;
- at least 80% of the SFT student's hits were returned by a search of its own episode.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

CLAIMS = [("exposed_gain", "exposed gain"), ("selected_gain", "selected gain"), ("ndcg10", "final nDCG@10")]
MIN_SURFACED_HITS = 0.8


def verdict(report: dict) -> tuple[str, str, list[tuple[bool, str]]]:
    """(student, baseline, (held, line) for each claim)."""
    differences = report["differences"]
    if len(differences) != 1:
        raise ValueError(f"expected one comparison (sft - base), found {', '.join(differences) or 'none'}")
    ((name, difference),) = differences.items()
    student, baseline = name.split(" - ")
    lines = []
    for key, label in CLAIMS:
        d = difference[key]
        held = d["low"] is not None and d["low"] > 0
        lines.append(
            (
                held,
                f"{label}: {name} {d['diff']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}]"
                f" — lower bound {'above' if held else 'not above'} zero",
            )
        )
    sources = report["runs"][student]["summary"]["sources"]
    hits, surfaced = sources["hits"], sources["hits_surfaced"]
    held = hits > 0 and surfaced >= MIN_SURFACED_HITS * hits
    lines.append(
        (
            held,
            f"{student}'s hits surfaced in its own episode: {surfaced} of {hits}"
            f" (needs ≥ {MIN_SURFACED_HITS:.0%} and at least one hit)",
        )
    )
    return student, baseline, lines


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    path = Path(argv[0])
    try:
        student, baseline, lines = verdict(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: {path}: not a comparison report ({exc!r})", file=sys.stderr)
        return 2
    for held, line in lines:
        print(("  ok    " if held else "  FAIL  ") + line)
    if all(held for held, _ in lines):
        names = {"sft": "SFT", "rl": "RL", "base": "the base"}
        print(
            f"the demo showed the effect: {names.get(student, student)} beats {names.get(baseline, baseline)} at "
            "every stage of the funnel, on hits it found itself"
        )
        return 0
    print(
        "the demo did NOT show the effect on this run: see the lines marked FAIL "
        "(and docs/guide/demo.md, 'When the check fails')"
    )
    return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
