"""Episodes/s on the real Qwen: the `vllm` policy against the batched `hf` policy on the same world
targets and prompts, and the litellm policy at concurrency 16 against 1 with vLLM's server behind
it; each pair in the same run. Run it in the environment `make venv-vllm` builds:

    .venv-vllm/bin/python -m benchmarks.vllm_episodes ~/.cache/hindsight-models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf \
        --json benchmarks/results/vllm_episodes.json

Both local backends run in float32, where their greedy tokens agree, so both play the same
episodes; the report counts how many came out identical. Engine start and a warm-up call are
timed apart from the episodes.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from benchmarks.common import finish, machine
from benchmarks.same_episodes import compare
from hindsight.data import load_benchmark
from hindsight.models.gguf import resolve_model
from hindsight.protocol import ProtocolConfig
from hindsight.runner import run_episodes
from hindsight.runs import read_episodes
from hindsight.schema import tasks_of
from hindsight.search.bm25 import BM25Backend

# The experiment's protocol (recipes/qwen05_world.yaml) with a shorter budget.
PROTOCOL = ProtocolConfig(k=5, budget=3, fields=("id", "title"), tool_calls="lenient")


def timed_run(policy, instances, backend, out: Path) -> float:
    start = time.perf_counter()
    run_episodes(policy, tasks_of(instances), backend, PROTOCOL, out, batch_size=len(instances), progress=False)
    return time.perf_counter() - start


def episodes(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "episodes.jsonl").read_text().splitlines()]


def same_episodes(one: Path, other: Path) -> int:
    return compare(read_episodes(one / "episodes.jsonl"), read_episodes(other / "episodes.jsonl"))["same_transcript"]


def local_backends(model: str, tasks, backend, work: Path, max_new_tokens: int) -> dict:
    from hindsight.policy.hf import HFPolicy
    from hindsight.policy.vllm_backend import VLLMPolicy

    hf = HFPolicy(model, dtype="float32", max_new_tokens=max_new_tokens)
    timed_run(hf, tasks[:1], backend, work / "hf-warm-up")
    hf_s = timed_run(hf, tasks, backend, work / "hf")
    del hf
    start = time.perf_counter()
    vllm = VLLMPolicy(model, dtype="float32", max_new_tokens=max_new_tokens, max_context=8192)
    vllm.engine()
    start_s = time.perf_counter() - start
    timed_run(vllm, tasks[:1], backend, work / "vllm-warm-up")
    vllm_s = timed_run(vllm, tasks, backend, work / "vllm")
    vllm.close()  # frees the cores for the server arms
    calls = sum(row["calls"] for row in episodes(work / "vllm"))
    return {
        "hf_batched_eps": len(tasks) / hf_s,
        "vllm_eps": len(tasks) / vllm_s,
        "speedup": hf_s / vllm_s,
        "hf_s": hf_s,
        "vllm_s": vllm_s,
        "vllm_engine_start_s": start_s,
        "model_calls": calls,
        "identical_episodes": same_episodes(work / "hf", work / "vllm"),
    }


def server_concurrency(folder: Path, tasks, backend, work: Path, max_new_tokens: int) -> dict:
    from hindsight.policy.litellm_backend import LiteLLMPolicy
    from tests.helpers import start_vllm_server, stop_process_group

    process, url = start_vllm_server(folder, {}, kv_cache_gib=2)
    try:

        def make(concurrency):
            return LiteLLMPolicy(
                f"hosted_vllm/{folder}",
                api_base=url,
                api_key="unused",
                use_cache=False,
                max_new_tokens=max_new_tokens,
                concurrency=concurrency,
            )

        timed_run(make(4), tasks[:4], backend, work / "server-warm-up")
        serial = timed_run(make(1), tasks, backend, work / "server-1")
        concurrent = timed_run(make(16), tasks, backend, work / "server-16")
    finally:
        stop_process_group(process)
    return {
        "concurrency_1_eps": len(tasks) / serial,
        "concurrency_16_eps": len(tasks) / concurrent,
        "speedup": serial / concurrent,
        "serial_s": serial,
        "concurrent_s": concurrent,
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="the real model: a .gguf file or a transformers folder")
    parser.add_argument("--episodes", type=int, default=8, help="world eval targets for the hf/vllm pair")
    parser.add_argument("--server-episodes", type=int, default=16, help="world eval targets for the server pair")
    parser.add_argument("--max-new-tokens", type=int, default=96)
    parser.add_argument("--skip-server", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="hindsight-bench-vllm-"))
    corpus, instances, _ = load_benchmark("world")
    tasks = [inst for inst in instances if inst.split == "eval"]
    backend = BM25Backend(corpus, cache_dir=work / "index")
    report = {
        "model": args.model,
        "protocol": PROTOCOL.to_dict(),
        "max_new_tokens": args.max_new_tokens,
        "machine": machine(),
        "local": local_backends(args.model, tasks[: args.episodes], backend, work, args.max_new_tokens),
    }
    local = report["local"]
    lines = [
        "| arms (same run) | baseline (episodes/s) | improved (episodes/s) | ratio |",
        "|---|---:|---:|---:|",
        f"| real Qwen2.5-0.5B, float32, {args.episodes} world episodes: hf batched → vllm "
        f"| {local['hf_batched_eps']:.3f} | {local['vllm_eps']:.3f} | **{local['speedup']:.1f}×** |",
    ]
    if not args.skip_server:
        folder = resolve_model(args.model)
        server = server_concurrency(Path(folder), tasks[: args.server_episodes], backend, work, args.max_new_tokens)
        report["server"] = server
        lines.append(
            f"| litellm → vLLM server, {args.server_episodes} world episodes: concurrency 1 → 16 "
            f"| {server['concurrency_1_eps']:.3f} | {server['concurrency_16_eps']:.3f} "
            f"| **{server['speedup']:.1f}×** |"
        )
    lines.append(
        f"\nIdentical hf and vllm episodes: {local['identical_episodes']} of {args.episodes}; "
        f"vLLM engine start {local['vllm_engine_start_s']:.0f} s (not in the ratio)."
    )
    report["markdown"] = "\n".join(lines)
    return finish(report, args.json)


if __name__ == "__main__":
    main()
