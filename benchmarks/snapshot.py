"""Reading the arXiv metadata snapshot: memory against file size. Two generated snapshot files,
one five times the other, from which the same 1,000 papers are kept (a category filter), read
in one run; the reader streams, so its peak memory should follow the papers kept, not the file.

    python -m benchmarks.snapshot --json benchmarks/results/snapshot.json

Peak memory is Python's allocations as tracemalloc counts them (it slows reading, so the
lines/s column is measured in a second, untraced pass).
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import tempfile
import time
import tracemalloc
from pathlib import Path

from benchmarks.common import finish
from hindsight.corpus import load_papers
from tests.test_open_corpus import write_snapshot


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--lines", type=int, default=100_000, help="the smaller file; the larger has five times as many"
    )
    parser.add_argument("--kept", type=int, default=1_000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="hindsight-bench-snapshot-"))
    measured = {}
    for lines in (args.lines, 5 * args.lines):
        path = write_snapshot(work / f"snapshot-{lines}.json", lines, cs_every=lines // args.kept)
        tracemalloc.start()
        papers, _ = load_papers(path, categories=("cs.",))
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        start = time.perf_counter()
        load_papers(path, categories=("cs.",))
        seconds = time.perf_counter() - start
        measured[lines] = {
            "file_mib": round(path.stat().st_size / 2**20, 1),
            "kept": len(papers),
            "peak_mib": round(peak / 2**20, 2),
            "seconds": round(seconds, 2),
            "lines_per_s": round(lines / seconds),
        }
        print(f"{lines} lines: {measured[lines]}", flush=True)
        path.unlink()
    small, large = measured[args.lines], measured[5 * args.lines]
    lines_md = [
        "| snapshot lines | file | papers kept | peak memory | read in | lines/s |",
        "|---|---|---|---|---|---|",
    ]
    lines_md += [
        f"| {n:,} | {m['file_mib']:,} MiB | {m['kept']:,} | {m['peak_mib']} MiB | {m['seconds']} s | "
        f"{m['lines_per_s']:,} |"
        for n, m in measured.items()
    ]
    ratio = large["peak_mib"] / small["peak_mib"]
    lines_md.append(f"\nA file five times larger: peak memory {ratio:.2f}x.")
    report = {
        "benchmark": "snapshot",
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "processor": platform.processor()},
        "measured": measured,
        "peak_ratio": round(ratio, 2),
        "markdown": "\n".join(lines_md),
    }
    return finish(report, args.json)


if __name__ == "__main__":
    main()
