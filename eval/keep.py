"""Keep finished runs for the record: each run's manifest, and its episodes and instances
gzip-compressed, under DEST/<run>/; eval/compare.py reads the kept runs like the originals.

    python eval/keep.py outputs/qwen05_world/seed0/runs/{base,format,sft} --into benchmarks/results/qwen05_world/seed0/runs
    python eval/compare.py base format sft --every-pair --runs-dir benchmarks/results/qwen05_world/seed0/runs
"""

import argparse
import sys
from pathlib import Path

from hindsight.runs import RunError, archive_run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", type=Path, help="run folders (<runs_dir>/<name>)")
    parser.add_argument("--into", type=Path, required=True, help="the folder the kept runs go to")
    args = parser.parse_args(argv)
    try:
        for run in args.runs:
            print(f"kept {archive_run(run, args.into)}")
    except RunError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
