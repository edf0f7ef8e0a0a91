"""Episode throughput: batched vs one-at-a-time (transformers backend) and concurrent vs serial
requests (litellm backend against a local `transformers serve`), each pair in the same run. The
litellm pair runs twice: with the deployment prompt, and with the brief alone as the prompt, to
show how much of the ratio the server's prompt processing takes; server and client CPU seconds
are recorded per arm.

    python -m benchmarks.episodes --json benchmarks/results/episodes.json

A tiny random-weight Qwen3 plays the agent (its replies are garbage, so episodes end as
malformed after a fixed number of turns: every episode costs the same number of model calls).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import tempfile
import time
from pathlib import Path

from benchmarks.common import finish
from hindsight.corpus import Corpus
from hindsight.models.tiny import build_tiny_qwen
from hindsight.protocol import ProtocolConfig
from hindsight.runner import run_episodes
from hindsight.schema import Task
from hindsight.search.bm25 import BM25Backend
from tests.helpers import random_papers, start_transformers_server


def timed_run(policy, tasks, backend, config, out: Path, batch_size: int, first_messages=None) -> float:
    start = time.perf_counter()
    run_episodes(
        policy,
        {task.task_id: task for task in tasks},
        backend,
        config,
        out,
        batch_size=batch_size,
        progress=False,
        first_messages=first_messages,
    )
    return time.perf_counter() - start


def prompt_tokens_per_call(run_dir: Path) -> float:
    rows = [json.loads(line) for line in (run_dir / "episodes.jsonl").read_text().splitlines()]
    return sum(row["tokens"]["prompt"] for row in rows) / sum(row["calls"] for row in rows)


# The prompt every evaluated policy gets (system prompt, tools, brief) and a bare one (the brief
# alone): the server's prefill grows with the prompt and does not shrink with concurrency.
PROMPTS = {"deployment prompt": None, "brief alone": lambda task: [{"role": "user", "content": task.brief}]}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=64)
    parser.add_argument(
        "--max-new-tokens",
        type=int,
        default=64,
        help="tokens per reply; a tool call with a short query takes about 40-60",
    )
    parser.add_argument("--skip-litellm", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    from hindsight.policy.hf import HFPolicy

    work = Path(tempfile.mkdtemp(prefix="hindsight-bench-episodes-"))
    papers = random_papers(300, seed=1)
    model_dir = build_tiny_qwen(work / "model", [f"{p.title} {p.abstract}" for p in papers])
    backend = BM25Backend(Corpus(papers), cache_dir=work / "index")
    config = ProtocolConfig(budget=3, max_malformed=3, abstract_words=20)
    tasks = [Task(f"t{i}", f"graph attention for robots, case {i}", dt.date(2021, 6, 1)) for i in range(args.episodes)]
    report = {
        "episodes": args.episodes,
        "model_calls_per_episode": 3,
        "machine": f"{platform.machine()}, Python {platform.python_version()}",
    }

    policy = HFPolicy(str(model_dir), max_new_tokens=args.max_new_tokens)
    timed_run(policy, tasks[:2], backend, config, work / "warm-up", batch_size=2)  # first-call costs out of the timings
    one = timed_run(policy, tasks, backend, config, work / "hf-one", batch_size=1)
    batched = timed_run(policy, tasks, backend, config, work / "hf-batched", batch_size=args.episodes)
    report["hf"] = {
        "one_at_a_time_eps": args.episodes / one,
        "batched_eps": args.episodes / batched,
        "speedup": one / batched,
    }
    if not args.skip_litellm:
        import psutil  # comes with accelerate

        from hindsight.policy.litellm_backend import LiteLLMPolicy

        # continuous batching lets the server work on concurrent requests together
        process, url = start_transformers_server(model_dir, extra_args=("--continuous-batching",))
        try:

            def make(concurrency):
                return LiteLLMPolicy(
                    f"openai/{model_dir}",
                    api_base=url,
                    api_key="unused",
                    use_cache=False,
                    max_new_tokens=args.max_new_tokens,
                    concurrency=concurrency,
                )

            timed_run(make(16), tasks[:16], backend, config, work / "lite-warm-up", batch_size=16)
            arms = [(prompt, concurrency) for prompt in PROMPTS for concurrency in (1, 16)]
            # arms alternate, three times each; the fastest of each keeps a passing hiccup of the shared CPU out
            times, spent = {arm: [] for arm in arms}, {}
            server = psutil.Process(process.pid)
            for repeat in range(3):
                for prompt, concurrency in arms:
                    out = work / f"lite-{prompt.split()[0]}-{concurrency}-{repeat}"
                    server_before, client_before = sum(server.cpu_times()[:2]), time.process_time()
                    wall = timed_run(
                        make(concurrency),
                        tasks,
                        backend,
                        config,
                        out,
                        batch_size=args.episodes,
                        first_messages=PROMPTS[prompt],
                    )
                    times[prompt, concurrency].append(wall)
                    if wall == min(times[prompt, concurrency]):  # where the time went, for the run reported
                        spent[prompt, concurrency] = {
                            "wall_s": wall,
                            "server_cpu_s": sum(server.cpu_times()[:2]) - server_before,
                            "client_cpu_s": time.process_time() - client_before,
                            "prompt_tokens_per_call": prompt_tokens_per_call(out),
                        }
        finally:
            process.terminate()
        report["litellm"] = {
            prompt: {
                "concurrency_1_eps": args.episodes / min(times[prompt, 1]),
                "concurrency_16_eps": args.episodes / min(times[prompt, 16]),
                "speedup": min(times[prompt, 1]) / min(times[prompt, 16]),
                "serial": spent[prompt, 1],
                "concurrent": spent[prompt, 16],
            }
            for prompt in PROMPTS
        }
    lines = [
        "| backend | baseline (episodes/s) | improved (episodes/s) | ratio |",
        "|---|---:|---:|---:|",
        f"| hf, tiny Qwen3: one at a time → batch of {args.episodes} | {report['hf']['one_at_a_time_eps']:.2f} "
        f"| {report['hf']['batched_eps']:.2f} | **{report['hf']['speedup']:.1f}×** |",
    ]
    if "litellm" in report:
        for prompt, arm in report["litellm"].items():
            tokens = arm["serial"]["prompt_tokens_per_call"]
            lines.append(
                f"| litellm → transformers serve: concurrency 1 → 16, {prompt} (~{tokens:.0f} prompt tokens a call) "
                f"| {arm['concurrency_1_eps']:.2f} | {arm['concurrency_16_eps']:.2f} | **{arm['speedup']:.1f}×** |"
            )
        lines += ["", "| litellm arm | wall (s) | server CPU (s) | client CPU (s) |", "|---|---:|---:|---:|"]
        for prompt, arm in report["litellm"].items():
            for name, concurrency in (("serial", 1), ("concurrent", 16)):
                lines.append(
                    f"| {prompt}, concurrency {concurrency} | {arm[name]['wall_s']:.1f} "
                    f"| {arm[name]['server_cpu_s']:.1f} | {arm[name]['client_cpu_s']:.1f} |"
                )
    report["markdown"] = "\n".join(lines)
    return finish(report, args.json)


if __name__ == "__main__":
    main()
