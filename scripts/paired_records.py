"""Two arms' committed per-target records, paired over their common targets: later - earlier on
the funnel (exposed gain, selected gain, final nDCG@10) with the paired bootstrap 95% interval,
and the same on the targets where both submitted. A reading of records, no model run:

    python scripts/paired_records.py RECORDS_A#ARM RECORDS_B#ARM [--resamples N]

Each side is a comparison.json (`eval/compare.py --json`) and the name of a run in it, e.g.
benchmarks/results/qwen05_world/seed0/comparison.json#sft against
benchmarks/results/qwen05_world/seed0/arms.json#format. Both must hold the same targets; runs
made under different protocol readings are paired only where the caller says why that is fair.
"""

import argparse
import json
import sys
from pathlib import Path

from hindsight.eval.comparison import paired_differences

FUNNEL = (("exposed_gain", "exposed"), ("selected_gain", "selected"), ("ndcg10", "final nDCG@10"))


def records(spec: str) -> tuple[str, dict[str, dict]]:
    path, _, arm = spec.partition("#")
    report = json.loads(Path(path).read_text())
    if arm not in report.get("per_target", {}):
        raise SystemExit(f"{path}: no run {arm!r} in per_target (runs: {', '.join(report.get('per_target', {}))})")
    return arm, {row["instance_id"]: row for row in report["per_target"][arm]}


def submitted(row: dict) -> bool:
    return row["status"] == "submitted"


def table(a: list[dict], b: list[dict], resamples: int, out: dict | None = None) -> list[str]:
    differences = paired_differences(a, b, resamples)
    rows = {
        key: {
            "earlier": sum(r[key] for r in a) / len(a),
            "later": sum(r[key] for r in b) / len(b),
            **{k: differences[key][k] for k in ("diff", "low", "high")},
        }
        for key, _ in FUNNEL
    }
    if out is not None:
        out.update(rows)
    return [
        f"{label}: {rows[key]['earlier']:.3f} → {rows[key]['later']:.3f}, "
        f"{rows[key]['diff']:+.3f} [{rows[key]['low']:+.3f}, {rows[key]['high']:+.3f}]"
        for key, label in FUNNEL
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("earlier", help="RECORDS#ARM: the arm subtracted")
    parser.add_argument("later", help="RECORDS#ARM")
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args(argv)
    (name_a, a), (name_b, b) = records(args.earlier), records(args.later)
    if set(a) != set(b):
        print(f"error: the two arms hold different targets ({len(a)} and {len(b)})", file=sys.stderr)
        return 2
    ids = sorted(a)
    report = {"earlier": args.earlier, "later": args.later, "resamples": args.resamples}
    report["all"] = {"targets": len(ids)}
    print(f"{name_b} - {name_a}, {len(ids)} targets")
    print("\n".join(table([a[i] for i in ids], [b[i] for i in ids], args.resamples, report["all"])))
    both = [i for i in ids if submitted(a[i]) and submitted(b[i])]
    report["both_submitted"] = {"targets": len(both)}
    print(f"both submitted, {len(both)} targets")
    if both:
        print("\n".join(table([a[i] for i in both], [b[i] for i in both], args.resamples, report["both_submitted"])))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
