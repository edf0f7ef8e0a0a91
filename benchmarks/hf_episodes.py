"""Episodes/s of the `hf` policy on the real Qwen, four arms in one run on the same world targets:
one at a time or batched, each re-reading the whole conversation every turn or reusing the
keys/values it kept (hindsight/policy/kv_reuse.py).

    python -m benchmarks.hf_episodes ~/.cache/hindsight-models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf \
        --json benchmarks/results/hf_episodes.json

Greedy decoding in float32, so every arm should play the same episodes; the report counts how many
came out identical to the batched re-reading arm, and the prompt tokens each arm's model read.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from benchmarks.common import finish, machine
from hindsight.data import load_benchmark
from hindsight.protocol import ProtocolConfig
from hindsight.runner import run_episodes
from hindsight.schema import tasks_of
from hindsight.search.bm25 import BM25Backend

# The experiment's protocol (recipes/qwen05_world.yaml) with a shorter budget.
PROTOCOL = ProtocolConfig(k=5, budget=4, fields=("id", "title"), tool_calls="lenient")
ARMS = {
    "one at a time, re-read": (1, False),
    "one at a time, reuse": (1, True),
    "batched, re-read": (None, False),
    "batched, reuse": (None, True),
}


def episodes(run_dir: Path) -> dict[str, str]:
    rows = [json.loads(line) for line in (run_dir / "episodes.jsonl").read_text().splitlines()]
    return {row["instance_id"]: json.dumps(row["messages"]) for row in rows}


def run_arm(model: str, instances, backend, out: Path, batch_size: int, reuse: bool, max_new_tokens: int) -> dict:
    from hindsight.policy.hf import HFPolicy

    policy = HFPolicy(model, dtype="float32", max_new_tokens=max_new_tokens, reuse_cache=reuse)
    run_episodes(
        policy, tasks_of(instances[:1]), backend, PROTOCOL, out.with_name(out.name + "-warm-up"), progress=False
    )
    policy.usage = {key: 0 for key in policy.usage}  # the warm-up's reads stay out of the counts
    calls = policy.turns
    start = time.perf_counter()
    run_episodes(policy, tasks_of(instances), backend, PROTOCOL, out, batch_size=batch_size, progress=False)
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "episodes_per_s": len(instances) / seconds,
        "act_calls": policy.turns - calls,
        **policy.usage,
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="the real model: a .gguf file or a transformers folder")
    parser.add_argument("--episodes", type=int, default=8, help="world eval targets")
    parser.add_argument("--max-new-tokens", type=int, default=96)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    work = Path(tempfile.mkdtemp(prefix="hindsight-bench-hf-"))
    corpus, instances, _ = load_benchmark("world")
    chosen = [inst for inst in instances if inst.split == "eval"][: args.episodes]
    backend = BM25Backend(corpus, cache_dir=work / "index")
    arms = {}
    for name, (batch_size, reuse) in ARMS.items():
        arms[name] = run_arm(
            args.model,
            chosen,
            backend,
            work / name.replace(" ", "_").replace(",", ""),
            batch_size or len(chosen),
            reuse,
            args.max_new_tokens,
        )
        print(name, json.dumps(arms[name]), flush=True)
    reference = episodes(work / "batched_re-read")
    for name in ARMS:
        played = episodes(work / name.replace(" ", "_").replace(",", ""))
        arms[name]["identical_episodes"] = sum(played.get(key) == text for key, text in reference.items())
    report = {
        "model": args.model,
        "protocol": PROTOCOL.to_dict(),
        "max_new_tokens": args.max_new_tokens,
        "threads": args.threads,
        "arms": arms,
        "machine": machine(),
    }

    def ratio(baseline: str, improved: str) -> str:
        b, i = arms[baseline], arms[improved]
        return (
            f"| {baseline} → {improved} | {b['episodes_per_s']:.4f} | {i['episodes_per_s']:.4f} "
            f"| **{b['seconds'] / i['seconds']:.1f}×** | {b['read_tokens'] / max(i['read_tokens'], 1):.1f}× |"
        )

    lines = [
        f"Real Qwen2.5-0.5B, float32, {args.episodes} world episodes, {args.threads} threads:",
        "",
        "| arms (same run) | baseline (episodes/s) | improved (episodes/s) | speed | fewer tokens read |",
        "|---|---:|---:|---:|---:|",
        ratio("one at a time, re-read", "batched, re-read"),
        ratio("batched, re-read", "batched, reuse"),
        ratio("one at a time, re-read", "one at a time, reuse"),
        ratio("one at a time, re-read", "batched, reuse"),
        "",
        "Episodes identical to the batched re-reading arm: "
        + ", ".join(f"{name} {arm['identical_episodes']}/{args.episodes}" for name, arm in arms.items())
        + ".",
    ]
    report["markdown"] = "\n".join(lines)
    return finish(report, args.json)


if __name__ == "__main__":
    main()
