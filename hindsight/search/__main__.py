"""Search a corpus from the command line, as an agent would see it at a cutoff. Reads the
corpus file (its index is cached under $HINDSIGHT_CACHE); prints the results, writes nothing else.

    python -m hindsight.search --corpus examples/mini_corpus.jsonl --cutoff 2024-06-01 "hindsight search agents"
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from hindsight.corpus import CorpusError, load_corpus
from hindsight.schema import SchemaError, parse_date
from hindsight.search import Hit, make_backend


def format_hits(hits: list[Hit], width: int = 70) -> str:
    if not hits:
        return "  (no paper before the cutoff matches)"
    lines = [f"  {'#':>2}  {'id':<12} {'date':<10} {'score':>6}  title"]
    for hit in hits:
        title = hit.title if len(hit.title) <= width else hit.title[: width - 1] + "…"
        lines.append(f"  {hit.rank:>2}  {hit.id:<12} {hit.date.isoformat():<10} {hit.score:>6.2f}  {title}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m hindsight.search", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("query", nargs="+", help="the search text (several arguments are several queries)")
    parser.add_argument("--corpus", required=True, type=Path, help="JSONL, JSONL.gz or Parquet corpus")
    parser.add_argument(
        "--cutoff",
        action="append",
        required=True,
        help="YYYY-MM-DD; only papers dated strictly before it are searched (repeatable)",
    )
    parser.add_argument("--date-field", default="date")
    parser.add_argument("--backend", default="bm25", choices=["bm25", "dense", "hybrid"])
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--skip-bad", action="store_true", help="skip and count malformed corpus lines")
    args = parser.parse_args(argv)
    try:
        cutoffs = [parse_date(c, name="--cutoff") for c in args.cutoff]
        corpus = load_corpus(args.corpus, date_field=args.date_field, skip_bad=args.skip_bad)
    except (CorpusError, SchemaError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report = corpus.report
    print(
        f"corpus   {args.corpus}: {report.loaded:,} papers, {corpus.dates[0]} .. {corpus.dates[-1]}"
        + (f", {report.skipped} bad lines skipped" if report.skipped else "")
    )
    start = time.perf_counter()
    backend = make_backend(args.backend, corpus)
    where = getattr(backend, "index_dir", None) or getattr(backend, "embeddings_path", "")
    reused = getattr(backend, "reused_index", getattr(backend, "reused_embeddings", False))
    print(f"index    {args.backend} {'reused' if reused else 'built'} in {time.perf_counter() - start:.2f}s at {where}")
    for query in args.query:
        for cutoff in cutoffs:
            print(
                f"\nsearch   {query!r} before {cutoff} "
                f"({corpus.prefix_len(cutoff):,} of {len(corpus):,} papers eligible)"
            )
            print(format_hits(backend.search(query, cutoff, args.k)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
