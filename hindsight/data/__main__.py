"""`python -m hindsight.data SOURCE`: make a benchmark if needed and say what it holds."""

from __future__ import annotations

import sys

from hindsight.data.loader import materialise
from hindsight.data.native import load_native


def main(argv: list[str] | None = None) -> int:
    """python -m hindsight.data SOURCE: make the benchmark (world, DeepScholar) if needed
    and say where it is and what it holds."""
    import argparse
    from collections import Counter

    parser = argparse.ArgumentParser(prog="python -m hindsight.data", description=main.__doc__)
    parser.add_argument("source", help="world, world:SEED, a native folder or a DeepScholar-Bench folder")
    args = parser.parse_args(argv)
    try:
        folder = materialise(args.source)
        corpus, instances, _ = load_native(folder)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    splits = Counter(inst.split for inst in instances)
    print(f"{args.source}: {folder}\n  {len(corpus)} papers, {len(instances)} targets ("
          + ", ".join(f"{name} {count}" for name, count in sorted(splits.items())) + ")")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
