"""The episode viewer at scale: how long the index of a large comparison takes to open in headless
Chromium, against a small comparison's index in the same run, plus a re-sort of every row and
one target's page.

    python -m benchmarks.viewer --json benchmarks/results/viewer.json

Two synthetic runs (base and sft) over N targets, each episode with five searches of five results
and a ten-paper submission, are compared with eval/compare.py's code and written with `--html`'s.
Times are wall clock from asking the browser to open the file to the page saying it is ready
(`document.body.dataset.ready`), the median of several cold opens; they include the driver's
round trips, so the page itself is a little faster than reported.
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.common import finish
from hindsight.data import load_instances
from hindsight.eval.comparison import compare_runs
from hindsight.eval.viewer import write_viewer
from hindsight.runs import load_run
from tests.helpers import label_id, make_instances, write_jsonl, write_run
from tests.test_viewer import chromium


def episode(i: int, run: str) -> dict:
    """Five searches of five results (an antecedent among them on some targets), then a submission."""
    steps, results = [], []
    for turn in range(5):
        returned = [f"2101.{(i * 25 + turn * 5 + k) % 99999 + 1:05d}" for k in range(5)]
        if (i + turn) % (3 if run == "base" else 2) == 0:
            returned[2] = label_id(i, turn % 3)
        steps.append(
            {"tool": "search_papers", "args": {"query": f"query {turn} for target {i}"}, "returned_ids": returned}
        )
        results.append(
            [
                {"id": pid, "title": f"A study of {pid} under varied conditions", "date": "2023-05-01"}
                for pid in returned
            ]
        )
    messages = [{"role": "system", "content": "system"}, {"role": "user", "content": f"brief {i}"}]
    for turn, step in enumerate(steps):
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": f"c{turn}",
                        "type": "function",
                        "function": {"name": "search_papers", "arguments": step["args"]},
                    }
                ],
            }
        )
        messages.append(
            {"role": "tool", "tool_call_id": f"c{turn}", "content": str({"results": results[turn]}).replace("'", '"')}
        )
    submitted = [pid for step in steps for pid in step["returned_ids"]][::2][:10]
    return {
        "instance_id": f"t{i}",
        "policy": run,
        "status": "submitted",
        "calls": 6,
        "steps": steps,
        "messages": messages,
        "submission": [{"id": pid, "rationale": "close to the brief"} for pid in submitted],
    }


def build_site(root: Path, targets: int) -> tuple[Path, float]:
    instances_path = write_jsonl(root / "instances.jsonl", make_instances(targets, labels_per=3))
    for run in ("base", "sft"):
        write_run(root / "runs", run, [episode(i, run) for i in range(targets)], instances_path)
    start = time.perf_counter()
    runs = [load_run(root / "runs" / name) for name in ("base", "sft")]
    instances = load_instances(instances_path)
    report = compare_runs(runs, instances, n=1000, seed=0)
    index = write_viewer(report, runs, instances, root / "site")
    return index, time.perf_counter() - start


def open_until_ready(browser, uri: str, ready: str) -> float:
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get("about:blank")
    start = time.perf_counter()
    browser.get(uri)
    WebDriverWait(browser, 60, poll_frequency=0.005).until(
        lambda d: d.execute_script("return document.body.dataset.ready") == ready
    )
    return time.perf_counter() - start


def sort_all_rows(browser) -> float:
    """Seconds the page takes to re-sort and redraw after a click on a column header (timed in the page)."""
    took_ms = browser.execute_script(
        "document.body.dataset.ready = ''; const start = performance.now(); "
        "document.querySelector('#targets th[data-key=\"sft:ndcg10\"]').click(); "
        "return document.body.dataset.ready === 'index' ? performance.now() - start : null;"
    )
    if took_ms is None:
        raise RuntimeError("the index did not re-render after a sort")
    return took_ms / 1000


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", type=int, default=10_000)
    parser.add_argument("--baseline-targets", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    browser = chromium()
    measured = {}
    try:
        for targets in (args.baseline_targets, args.targets):
            index, write_s = build_site(Path(tempfile.mkdtemp(prefix=f"hindsight-bench-viewer-{targets}-")), targets)
            opens = [open_until_ready(browser, index.as_uri(), "index") for _ in range(args.repeats)]
            sorts = [sort_all_rows(browser) for _ in range(args.repeats)]
            target = index.with_name("target.html").as_uri() + f"#{targets // 2}"
            pages = [open_until_ready(browser, target, "target") for _ in range(args.repeats)]
            index_kb = (index.parent / "data" / "index.js").stat().st_size / 1024
            measured[targets] = {
                "write_s": round(write_s, 2),
                "index_kb": round(index_kb),
                "index_open_s": round(statistics.median(opens), 3),
                "sort_s": round(statistics.median(sorts), 3),
                "target_open_s": round(statistics.median(pages), 3),
            }
            print(f"{targets} targets: {measured[targets]}", flush=True)
        version = browser.capabilities.get("browserVersion")
    finally:
        browser.quit()
    small, large = measured[args.baseline_targets], measured[args.targets]
    lines = [
        "| targets | index data | opens in | re-sort every row (in the page) | a target page opens in | site written in |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {n:,} | {m['index_kb']:,} KiB | {m['index_open_s']:.2f} s | {m['sort_s']:.3f} s | "
        f"{m['target_open_s']:.2f} s | {m['write_s']:.1f} s |"
        for n, m in measured.items()
    ]
    ratio = large["index_open_s"] / small["index_open_s"]
    lines.append(
        f"\nThe {args.targets:,}-target index opens in {large['index_open_s']:.2f} s, "
        f"{ratio:.1f}x the {args.baseline_targets:,}-target one (goal: under 2 s)."
    )
    report = {
        "benchmark": "viewer",
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "processor": platform.processor()},
        "browser": f"chromium {version}",
        "repeats": args.repeats,
        "measured": measured,
        "index_open_ratio": round(ratio, 2),
        "markdown": "\n".join(lines),
    }
    return finish(report, args.json)


if __name__ == "__main__":
    main()
