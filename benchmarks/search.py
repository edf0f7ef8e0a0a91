"""Date-gated search benchmark: hindsight's BM25 backend against rank_bm25, in one run.

    python -m benchmarks.search --corpus ../shared/data/arxiv-cs-2025/papers.jsonl.gz \
        --date-field listed --queries 1000 --json benchmarks/results/search.json

Queries are paper titles drawn from the corpus, each with a random cutoff between the first and
last date. Both engines use the same analyser, k1 and b and gate exactly (score every paper,
keep those dated before the cutoff); rank_bm25 is what a user would write first. Timings are
per query on one thread; the ratio, not the absolute number, is the result to compare across
machines.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import datetime as dt
import platform
import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

from benchmarks.common import finish
from hindsight.corpus import Corpus, load_corpus
from hindsight.search.bm25 import BM25Backend
from hindsight.search.text import analyze


def make_queries(corpus: Corpus, n: int, seed: int) -> list[tuple[str, dt.date]]:
    rng = random.Random(seed)
    first, last = corpus.dates[0], corpus.dates[-1]
    span = (last - first).days + 1
    return [(rng.choice(corpus.papers).title, first + dt.timedelta(days=rng.randrange(span))) for _ in range(n)]


def percentiles_ms(seconds: list[float]) -> dict:
    ms = np.asarray(seconds) * 1000
    return {
        "p50_ms": float(np.percentile(ms, 50)),
        "p95_ms": float(np.percentile(ms, 95)),
        "mean_ms": float(ms.mean()),
        "queries": len(ms),
    }


def time_queries(search, queries, label: str) -> tuple[list[float], list[list[str]]]:
    timings, results = [], []
    for query, cutoff in tqdm(queries, desc=label, unit="q", leave=False):
        start = time.perf_counter()
        ids = search(query, cutoff)
        timings.append(time.perf_counter() - start)
        results.append(ids)
    return timings, results


def bench_hindsight(corpus: Corpus, queries, k: int, cache: Path) -> dict:
    start = time.perf_counter()
    backend = BM25Backend(corpus, cache_dir=cache, progress=True)
    build_s = time.perf_counter() - start
    start = time.perf_counter()
    reloaded = BM25Backend(corpus, cache_dir=cache)  # the index is found by corpus hash and mmapped
    load_s = time.perf_counter() - start
    assert reloaded.reused_index

    def search(engine):
        return lambda query, cutoff: [hit.id for hit in engine.search(query, cutoff, k)]

    search(backend)(*queries[0])  # first touch of the memory map
    timings, results = time_queries(search(backend), queries, "hindsight bm25")
    _, again = time_queries(search(reloaded), queries, "hindsight bm25 (reloaded index)")
    return {
        "build_s": build_s,
        "load_s": load_s,
        "index_mb": backend.index_bytes() / 1e6,
        **percentiles_ms(timings),
        "identical_run_to_run": results == again,
        "results": results,
    }


def bench_rank_bm25(corpus: Corpus, queries, k: int) -> dict:
    from rank_bm25 import BM25Okapi

    start = time.perf_counter()
    tokens = [analyze(f"{p.title}\n{p.abstract}") for p in tqdm(corpus.papers, desc="rank_bm25 tokenise", leave=False)]
    engine = BM25Okapi(tokens, k1=0.9, b=0.4)
    build_s = time.perf_counter() - start
    dates = np.asarray([p.date.toordinal() for p in corpus.papers])
    ids = [p.id for p in corpus.papers]

    def search(query: str, cutoff: dt.date) -> list[str]:
        scores = engine.get_scores(analyze(query))
        scores = np.where(dates < cutoff.toordinal(), scores, -np.inf)
        best = np.argsort(-scores, kind="stable")[:k]
        return [ids[i] for i in best if scores[i] > 0]

    timings, results = time_queries(search, queries, "rank_bm25")
    return {"build_s": build_s, **percentiles_ms(timings), "results": results}


def overlap_at_k(ours: list[list[str]], theirs: list[list[str]]) -> float:
    pairs = [(set(a), set(b)) for a, b in zip(ours, theirs) if a or b]
    return statistics.fmean(len(a & b) / max(len(a), len(b)) for a, b in pairs) if pairs else 1.0


def markdown(report: dict) -> str:
    ours, base = report["hindsight_bm25"], report["rank_bm25"]
    rows = [
        "| engine | build (s) | index (MB) | p50 (ms) | p95 (ms) | queries |",
        "|---|---:|---:|---:|---:|---:|",
        f"| hindsight bm25 (bm25s, exact date gate) | {ours['build_s']:.1f} (reload {ours['load_s']:.1f}) "
        f"| {ours['index_mb']:.0f} | {ours['p50_ms']:.2f} | {ours['p95_ms']:.2f} | {ours['queries']} |",
        f"| rank_bm25 (BM25Okapi, same analyser) | {base['build_s']:.1f} | – | {base['p50_ms']:.1f} "
        f"| {base['p95_ms']:.1f} | {base['queries']} |",
        "",
        f"Speed-up at p50: **{report['speedup_p50']:.0f}×** (p95: {report['speedup_p95']:.0f}×). "
        f"Identical results run to run (fresh and reloaded index): {ours['identical_run_to_run']}. "
        f"Top-{report['k']} overlap with rank_bm25 on shared queries: {report['overlap_at_k']:.3f} "
        "(their idf formula differs slightly).",
        f"Corpus: {report['papers']:,} papers; {report['machine']}.",
    ]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", required=True, type=Path, help="JSONL, JSONL.gz or Parquet corpus")
    parser.add_argument("--date-field", default="date", help="field holding each paper's date (default: date)")
    parser.add_argument("--queries", type=int, default=1000, help="queries for hindsight (default 1000)")
    parser.add_argument(
        "--baseline-queries",
        type=int,
        default=100,
        help="queries for rank_bm25, a prefix of the same list (it is slow; default 100)",
    )
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write the full report here")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    corpus = load_corpus(args.corpus, date_field=args.date_field)
    load_s = time.perf_counter() - start
    queries = make_queries(corpus, args.queries, args.seed)
    with tempfile.TemporaryDirectory(prefix="hindsight-bench-") as cache:
        ours = bench_hindsight(corpus, queries, args.k, Path(cache))
    shared = min(args.baseline_queries, len(queries))
    base = bench_rank_bm25(corpus, queries[:shared], args.k)
    report = {
        "corpus": str(args.corpus),
        "papers": len(corpus),
        "corpus_load_s": load_s,
        "k": args.k,
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, one thread, "
        f"Python {platform.python_version()}",
        "hindsight_bm25": {key: v for key, v in ours.items() if key != "results"},
        "rank_bm25": {key: v for key, v in base.items() if key != "results"},
        "speedup_p50": base["p50_ms"] / ours["p50_ms"],
        "speedup_p95": base["p95_ms"] / ours["p95_ms"],
        "overlap_at_k": overlap_at_k(ours["results"][:shared], base["results"]),
    }
    report["markdown"] = markdown(report)
    return finish(report, args.json)


if __name__ == "__main__":
    main()
