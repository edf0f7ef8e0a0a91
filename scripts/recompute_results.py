"""The real-model experiment's committed comparisons, recomputed from the kept episodes:

    python -m scripts.recompute_results            # rewrite each seed's comparison and search behaviour
    python -m scripts.recompute_results --check    # write nothing; exit 1 naming every file that differs

Each `benchmarks/results/<experiment>/seed<N>/<variant>/` folder (`repaired`: the experiment as
run; `bf16`: the same seed trained under bf16 autocast) whose `runs/` holds kept runs of the arms
base, format and sft (those present, in that order) gets `comparison.json` and
`comparison.md` (`eval/compare.py ARMS --every-pair --slice both-submitted`, 10,000 resamples,
seed 0) and `search_behaviour.json` (`python -m benchmarks.search_behaviour`), then the pages'
tables are regenerated from them (`docs/hooks/results.py`). Run it from the repository's root
(`-m`: it imports benchmarks/ and docs/hooks/, folders of the repository, not of the package).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

ARMS = ("base", "format", "sft")


def seed_folders(root: Path) -> list[Path]:
    return sorted(path.parent for path in root.glob("benchmarks/results/*/seed*/*/runs") if path.is_dir())


def recomputed(folder: Path, root: Path) -> dict[Path, str]:
    """{file: its text as recomputed} for one seed's folder (nothing where fewer than two arms are kept)."""
    from benchmarks.search_behaviour import measure
    from hindsight.eval.compare import load_for_comparison
    from hindsight.eval.comparison import compare_runs
    from hindsight.eval.tables import render

    arms = [arm for arm in ARMS if (folder / "runs" / arm / "manifest.json").exists()]
    if len(arms) < 2:
        return {}
    runs, instances = load_for_comparison(arms, folder / "runs", None)
    report = compare_runs(runs, instances, n=10_000, seed=0, slices=("both-submitted",), every_pair=True)
    with contextlib.chdir(root):  # the search-behaviour file names its runs by their paths from the root
        behaviour = measure([(folder / "runs" / arm).relative_to(root) for arm in arms])
    return {
        folder / "comparison.json": json.dumps(report, indent=2, default=str) + "\n",
        folder / "comparison.md": render(report, markdown=True),
        folder / "search_behaviour.json": json.dumps(behaviour, indent=2) + "\n",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a committed file differs")
    args = parser.parse_args(argv)
    from docs.hooks import results

    differing = []
    for folder in seed_folders(ROOT):
        for path, text in recomputed(folder, ROOT).items():
            if path.exists() and path.read_text() == text:
                continue
            differing.append(path.relative_to(ROOT))
            if not args.check:
                path.write_text(text)
                print(f"recomputed {path.relative_to(ROOT)}")
    if args.check:
        differing += [Path(page) for page in results.stale_pages(ROOT)]
        for path in differing:
            print(f"differs from what its episodes give: {path}", file=sys.stderr)
        return 1 if differing else 0
    results.main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
