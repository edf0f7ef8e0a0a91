"""`python -m hindsight.data SOURCE`: make a benchmark if needed and say what it holds."""

from __future__ import annotations

import sys

from hindsight.data.loader import load_benchmark, materialise
from hindsight.data.open_corpus import add_corpus_arguments, external_from_args


def main(argv: list[str] | None = None) -> int:
    """python -m hindsight.data SOURCE [--corpus SNAPSHOT]: make the benchmark (world, DeepScholar;
    merged with a paper snapshot) if needed and say where it is and what it holds. Reads SOURCE (a
    native folder, DeepScholar-Bench CSVs or world[:SEED]); writes converted or generated data
    under $HINDSIGHT_CACHE."""
    import argparse
    from collections import Counter

    parser = argparse.ArgumentParser(prog="python -m hindsight.data", description=main.__doc__)
    parser.add_argument("source", help="world, world:SEED, a native folder or a DeepScholar-Bench folder")
    add_corpus_arguments(parser)
    args = parser.parse_args(argv)
    try:
        corpus, instances, report = load_benchmark(args.source, corpus=external_from_args(args))
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    splits = Counter(inst.split for inst in instances)
    print(
        f"{args.source}: {materialise(args.source)}\n  {len(corpus):,} papers, {len(instances)} targets ("
        + ", ".join(f"{name} {count}" for name, count in sorted(splits.items()))
        + ")"
    )
    print(report.summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
