"""One row per seed from its comparison.json:
    python scripts/seed_table.py A/comparison.json B/...
    python scripts/seed_table.py --both-submitted A/comparison.json ...   # real-model columns too
The second form adds the per-target W / T / L on final nDCG@10, how many targets each arm
submitted on, and the both-submitted slice (a report made with `eval/compare.py --slice
both-submitted`)."""

import json
import sys
from pathlib import Path

METRICS = [("exposed_gain", "exposed gain"), ("selected_gain", "selected gain"), ("ndcg10", "final nDCG@10")]
SLICE = "every run submitted"  # the both-submitted slice's group of targets


def interval(difference: dict) -> str:
    return f"{difference['diff']:+.3f} [{difference['low']:+.3f}, {difference['high']:+.3f}]"


def both_submitted(report: dict, name: str) -> str:
    slices = report.get("slices", {}).get("both-submitted")
    if slices is None:
        raise SystemExit("the report has no both-submitted slice: make it with eval/compare.py --slice both-submitted")
    group = slices.get(SLICE)
    if group is None:
        return "no target"
    return f"{group['targets']} targets: {interval(group['differences'][name])}"


def row(path: Path, slice_columns: bool = False) -> str:
    report = json.loads(path.read_text())
    ((name, difference),) = report["differences"].items()
    sft_name, base_name = name.split(" - ")
    sft, base = report["runs"][sft_name]["summary"], report["runs"][base_name]["summary"]
    cells = [f"{base[key]:.3f} → {sft[key]:.3f}, {interval(difference[key])}" for key, _ in METRICS]
    sources = sft["sources"]
    cells.append(f"{sources['hits_surfaced']} of {sources['hits']}")
    if slice_columns:
        final = difference["ndcg10"]
        counts = {arm: report["runs"][arm]["counts"]["submitted"] for arm in (base_name, sft_name)}
        cells += [
            f"{final['win']} / {final['tie']} / {final['loss']}",
            f"{counts[base_name]} / {counts[sft_name]}",
            both_submitted(report, name),
        ]
    return f"| {path.parent} | " + " | ".join(cells) + " |"


def main(argv: list[str]) -> int:
    slice_columns = "--both-submitted" in argv
    paths = [arg for arg in argv if arg != "--both-submitted"]
    header = ["run"] + [f"{label}: base → sft, sft - base (95% CI)" for _, label in METRICS] + ["sft hits surfaced"]
    if slice_columns:
        header += ["final W / T / L", "submitted, base / sft", "both submitted: final, sft - base"]
    print("| " + " | ".join(header) + " |")
    print("|---|" + "---:|" * (len(header) - 1))
    for path in paths:
        print(row(Path(path), slice_columns))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
