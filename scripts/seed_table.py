"""One row per demo seed from its comparison.json: python scripts/seed_table.py A/comparison.json B/..."""

import json
import sys
from pathlib import Path

METRICS = [("exposed_gain", "exposed gain"), ("selected_gain", "selected gain"), ("ndcg10", "final nDCG@10")]


def interval(difference: dict) -> str:
    return f"{difference['diff']:+.3f} [{difference['low']:+.3f}, {difference['high']:+.3f}]"


def row(path: Path) -> str:
    report = json.loads(path.read_text())
    (name, difference), = report["differences"].items()
    sft = report["runs"][name.split(" - ")[0]]["summary"]
    base = report["runs"][name.split(" - ")[1]]["summary"]
    cells = [f"{base[key]:.3f} → {sft[key]:.3f}, {interval(difference[key])}" for key, _ in METRICS]
    sources = sft["sources"]
    surfaced = f"{sources['hits_surfaced']} of {sources['hits']}"
    return f"| {path.parent} | " + " | ".join(cells) + f" | {surfaced} |"


def main(paths: list[str]) -> int:
    print("| run | " + " | ".join(f"{label}: base → sft, sft - base (95% CI)" for _, label in METRICS)
          + " | sft hits surfaced |")
    print("|---|" + "---:|" * (len(METRICS) + 1))
    for path in paths:
        print(row(Path(path)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
