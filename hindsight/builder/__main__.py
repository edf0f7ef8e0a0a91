"""python -m hindsight.builder: benchmarks from your own targets (see hindsight.builder.builder).

python -m hindsight.builder run build.yaml --out data/my-benchmark [--price-as openai/gpt-4.1]
python -m hindsight.builder verify data/my-benchmark
python -m hindsight.builder from-deepscholar ../shared/data/deepscholar-bench --out inputs/
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from hindsight.log import cli_logging

    cli_logging()
    parser = argparse.ArgumentParser(
        prog="python -m hindsight.builder", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="build (or resume building) a benchmark")
    run.add_argument("config", type=Path)
    run.add_argument("--out", type=Path, required=True)
    run.add_argument("--price-as", metavar="MODEL", help="also say what the recorded tokens cost at MODEL's price")
    verify = commands.add_parser("verify", help="check a release against its manifest")
    verify.add_argument("folder", type=Path)
    adapter = commands.add_parser("from-deepscholar", help="DeepScholar-Bench CSVs as builder input")
    adapter.add_argument("src", type=Path)
    adapter.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        if args.command == "run":
            return run_build(args)
        if args.command == "verify":
            from hindsight.builder.builder import verify_release

            problems = verify_release(args.folder)
            print("\n".join(problems) if problems else f"{args.folder}: every file matches its manifest")
            return 1 if problems else 0
        from hindsight.builder.deepscholar import write_inputs

        for key, path in write_inputs(args.src, args.out).items():
            print(f"{key}: {path}")
        return 0
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def run_build(args) -> int:
    from hindsight.builder.builder import build, estimate_cost
    from hindsight.builder.config import load_build_config
    from hindsight.data.native import DataReport

    path = build(load_build_config(args.config), args.out)
    manifest = json.loads(path.read_text())
    counts = manifest["counts"]
    print(
        f"{counts['instances']} instances from {counts['targets']} targets "
        f"({', '.join(f'{s} {len(ids)}' for s, ids in manifest['splits'].items())}); {len(manifest['flagged'])} flagged"
    )
    for reason, n in counts["excluded"].items():
        print(f"  excluded: {n} × {reason}")
    print(
        f"labels: {counts['labels']} ({', '.join(f'{t} {n}' for t, n in sorted(counts['tiers'].items()))}); "
        f"judge replies with problems: {counts['judge_replies_with_problems']}; votes missing: {counts['votes_missing']}"
    )
    for model, calls in manifest["calls_this_run"].items():
        print(
            f"  {model}: {calls['requests']} requests, {calls['cached']} cached, {calls['failed']} failed, "
            f"{calls['prompt_tokens']:,} + {calls['completion_tokens']:,} tokens, ${calls['cost_usd']:.4f}"
        )
    report = DataReport(**{k: v for k, v in manifest["data_report"].items() if k in ("openness", "warnings")})
    print("\n".join(line for line in report.summary().splitlines() if line.startswith(("split", "warning", "  merge"))))
    if args.price_as:
        cost = estimate_cost(manifest, args.price_as)
        each = f"${cost['per_instance_usd']:.4f} an instance" if cost["per_instance_usd"] is not None else "no instance"
        print(
            f"at {cost['model']}'s price: ${cost['total_usd']:.4f} in all, ${cost['per_target_usd']:.4f} a target, "
            f"{each} ({cost['prompt_tokens']:,} prompt + {cost['completion_tokens']:,} completion tokens)"
        )
    print(f"wrote {path.parent}/instances.jsonl, corpus.jsonl, graded.jsonl and manifest.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
