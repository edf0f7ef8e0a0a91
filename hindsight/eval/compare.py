"""Compare runs under one protocol: the funnel, the end-to-end table and paired intervals.

    python eval/compare.py base sft [--runs-dir runs] [--json OUT] [--markdown OUT] [--plots DIR] [--html DIR]

The first run is the baseline; every other run is reported as a difference from it, with a
paired bootstrap 95% interval over targets and a sign-flip p-value (`--every-pair`: every later
run against every earlier one, e.g. `base format sft` adds sft - format, the format control's
headline). Runs whose protocol hash,
scorer or instance set differ are refused. Reads <runs-dir>/<run>/ (episodes, manifest, the
instances it names); prints the tables and writes only what --json, --markdown, --plots,
--trec and --html name.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from hindsight.data import InstanceError, load_instances
from hindsight.eval.comparison import (
    OVERLAP,
    ComparisonError,
    compare_runs,
    demonstrated_ids,
)
from hindsight.eval.tables import render
from hindsight.jsonl import sha256_file
from hindsight.runs import Run, RunError, load_run


def load_for_comparison(names: list[str], runs_dir: Path, instances_path: Path | None):
    runs = [load_run(runs_dir / name) for name in names]
    path = instances_path or runs[0].instances_path
    digest = sha256_file(path)
    if instances_path is None and digest != runs[0].field("instances.sha256"):
        raise ComparisonError(f"{path} changed since run {runs[0].name} was made (sha256 differs from its manifest)")
    return runs, load_instances(path)


def write_outputs(report: dict, runs: list[Run], instances, args, demonstrated: set[str] | None = None) -> list[Path]:
    written = []
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2, default=str) + "\n")
        written.append(args.json)
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(render(report, markdown=True))
        written.append(args.markdown)
    plots = []
    if args.plots:
        from hindsight.eval.plots import write_plots

        plots = write_plots(report, args.plots)
        written += plots
    if args.html:
        from hindsight.eval.viewer import write_viewer

        written.append(write_viewer(report, runs, instances, args.html, plots, demonstrated))
    if args.trec:
        from hindsight.eval.trec import write_trec

        written += write_trec(runs, instances, args.trec)
    return written


def make_parser(description: str, several_runs: bool) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    if several_runs:
        parser.add_argument("runs", nargs="+", help="run names under --runs-dir; the first is the baseline")
    else:
        parser.add_argument("runs", nargs=1, metavar="run", help="a run name under --runs-dir")
    parser.add_argument("--runs-dir", type=Path, default=Path("runs"))
    parser.add_argument("--instances", type=Path, help="score against this instances file instead of the manifest's")
    parser.add_argument("--json", type=Path, help="write the full report (with per-target scores) here")
    parser.add_argument("--markdown", type=Path, help="write the tables as Markdown here")
    parser.add_argument("--plots", type=Path, help="write the three PNG figures into this folder")
    parser.add_argument("--trec", type=Path, help="write TREC qrels and run files into this folder")
    parser.add_argument("--html", type=Path, help="write the episode viewer into this folder (open its index.html)")
    parser.add_argument(
        "--slice",
        action="append",
        default=[],
        help="also report the funnel by this field: both-submitted (targets where every run "
        "submitted a valid answer), split, flagged, labels, or any instance field "
        "(dotted, e.g. audit.topic); repeatable",
    )
    if several_runs:
        parser.add_argument(
            "--every-pair",
            action="store_true",
            help="report every later run against every earlier one, not only against the first "
            "(base format sft: format - base, sft - base and sft - format)",
        )
        parser.add_argument(
            "--training-set",
            type=Path,
            metavar="SFT_JSONL",
            help="the SFT set the student was trained on: adds the overlap slice (eval targets with "
            "and without an antecedent that a training demonstration showed)",
        )
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    return parser


def execute(args: argparse.Namespace) -> int:
    try:
        runs, instances = load_for_comparison(args.runs, args.runs_dir, args.instances)
        training_set = getattr(args, "training_set", None)
        demonstrated = demonstrated_ids(training_set) if training_set else None
        slices = tuple(args.slice) + ((OVERLAP,) if training_set and OVERLAP not in args.slice else ())
        report = compare_runs(
            runs,
            instances,
            n=args.resamples,
            seed=args.seed,
            slices=slices,
            demonstrated=demonstrated,
            every_pair=getattr(args, "every_pair", False),
        )
    except (ComparisonError, RunError, InstanceError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(render(report))
    for path in write_outputs(report, runs, instances, args, demonstrated):
        print(f"wrote {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return execute(make_parser(__doc__, several_runs=True).parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
