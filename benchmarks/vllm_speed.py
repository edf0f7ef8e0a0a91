"""Evaluation speed of the real-model experiment's vLLM engine: float32 with prefix caching (vLLM's
default, the baseline) against float32 without it, bfloat16 with it, the model run uncompiled
(`policy.enforce_eager`) and (with an adapter) the adapter folded into the weights
(`policy.merge_adapter`), on the same eval targets under the
protocol and policy settings of a recipe; each arm in the same run. Run it in the environment
`make venv-vllm` builds:

    .venv-vllm/bin/python -m benchmarks.vllm_speed recipes/qwen05_world.yaml --episodes 10 \
        --adapter outputs/qwen05_world/sft/adapter --json benchmarks/results/vllm_speed-qwen05.json
    .venv-vllm/bin/python -m benchmarks.vllm_speed recipes/qwen05_world.yaml --episodes 10 \
        --adapter outputs/qwen05_world/sft/adapter --arms merged --json benchmarks/results/vllm_merged-qwen05.json

`--arms` picks arms besides the baseline (by a word of their names: `merged`, `bfloat16`, `no`, `eager`).

Each arm starts an engine of its own (timed apart; the start generates already: vLLM's warm-up
and, with an adapter, the adapter probe), then plays the targets greedily in one batch. What each change does to the result: how many episodes kept the
baseline's actions, and the paired difference in exposed gain and final nDCG@10 with its 95%
bootstrap interval; an arm agrees when both intervals hold zero.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from benchmarks.common import finish, machine
from benchmarks.same_episodes import compare
from hindsight.metrics import score_episode
from hindsight.policy import make_policy
from hindsight.recipe import load_recipe
from hindsight.runner import run_episodes
from hindsight.runs import read_episodes
from hindsight.schema import tasks_of
from hindsight.stats import paired_bootstrap

# The baseline's policy settings (whatever the recipe says), the ratios' denominator.
BASELINE = {"dtype": "float32", "reuse_cache": True, "merge_adapter": False, "enforce_eager": False}

# name: what the arm changes from the baseline; the first is the baseline itself
ARMS = {
    "float32, prefix cache": {},
    "float32, no prefix cache": {"reuse_cache": False},
    "bfloat16, prefix cache": {"dtype": "bfloat16"},
    "float32, prefix cache, adapter merged": {"merge_adapter": True},
    "float32, prefix cache, eager": {"enforce_eager": True},
}


def chosen_arms(words: list[str] | None, adapter: str | None) -> dict:
    """The baseline and the arms named by `words` (all by default); the merged arm needs an adapter."""
    baseline, *others = ARMS
    picked = [name for name in others if not words or any(word in name.replace(",", " ").split() for word in words)]
    if not adapter:
        picked = [name for name in picked if not ARMS[name].get("merge_adapter")]
    if words and not picked:
        raise SystemExit(f"--arms {' '.join(words)}: no arm of {others} (the merged arm needs --adapter)")
    return {name: ARMS[name] for name in (baseline, *picked)}


def play(recipe, adapter: str | None, arm: dict, instances, backend, out: Path) -> dict:
    """One arm: the recipe's policy on vLLM with the baseline's settings and the arm's changes;
    its engine start (a merge included) and its episodes' wall time, in seconds."""
    policy_cfg = replace(recipe.policy, backend="vllm", **{**BASELINE, **arm})
    start = time.perf_counter()
    policy = make_policy(policy_cfg, recipe.protocol, adapter=adapter)
    policy.engine()
    started = time.perf_counter() - start
    start = time.perf_counter()
    tasks = tasks_of(instances)
    run_episodes(policy, tasks, backend, recipe.protocol, out, batch_size=len(tasks), progress=False)
    seconds = time.perf_counter() - start
    policy.close()
    return {"engine_start_s": started, "seconds": seconds, "episodes_per_s": len(tasks) / seconds}


METRICS = ("exposed_gain", "ndcg10")


def scores(episodes: dict, instances) -> dict[str, list[float]]:
    scored = [score_episode(episodes[inst.id], inst) for inst in instances]
    return {metric: [s[metric] for s in scored] for metric in METRICS}


def agreement(baseline: Path, arm: Path, instances) -> dict:
    """How far an arm's episodes moved from the baseline's: the same actions, and the paired
    difference (arm − baseline) of each metric with its interval."""
    base_episodes, arm_episodes = read_episodes(baseline / "episodes.jsonl"), read_episodes(arm / "episodes.jsonl")
    same = compare(base_episodes, arm_episodes)
    base_scores, arm_scores = scores(base_episodes, instances), scores(arm_episodes, instances)
    differences = {metric: paired_bootstrap(base_scores[metric], arm_scores[metric]) for metric in METRICS}
    holds_zero = all(d["low"] <= 0 <= d["high"] for d in differences.values())
    return {"same_actions": same["same_actions"], "differences": differences, "agrees": holds_zero}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("recipe", help="its data (eval targets), protocol and policy settings are used")
    parser.add_argument("--episodes", type=int, default=10, help="the recipe's first N eval targets")
    parser.add_argument("--adapter", help="a LoRA adapter folder to evaluate (default: the base model)")
    parser.add_argument("--arms", nargs="+", help="only these arms besides the baseline: merged, bfloat16, no, eager")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    arms = chosen_arms(args.arms, args.adapter)
    recipe = load_recipe(args.recipe)
    corpus, instances, _ = recipe.data.load()
    instances = [inst for inst in instances if inst.split == "eval"][: args.episodes]
    backend = recipe.search.build(corpus)
    work = Path(tempfile.mkdtemp(prefix="hindsight-bench-vllm-speed-"))
    report = {
        "recipe": args.recipe,
        "model": recipe.policy.model,
        "adapter": args.adapter,
        "episodes": len(instances),
        "protocol": recipe.protocol.to_dict(),
        "machine": machine(),
        "arms": {},
    }
    for name, arm in arms.items():
        report["arms"][name] = play(recipe, args.adapter, arm, instances, backend, work / name)
        print(name, report["arms"][name], flush=True)
    baseline_name = next(iter(arms))
    baseline = report["arms"][baseline_name]
    lines = [
        "| arm (same run) | episodes/s | × baseline | same actions | exposed gain Δ | final nDCG@10 Δ |",
        "|---|---:|---:|---:|---:|---:|",
        f"| {baseline_name} (baseline) | {baseline['episodes_per_s']:.3f} | 1.00 | — | — | — |",
    ]
    for name in list(arms)[1:]:
        arm = report["arms"][name]
        arm["speedup"] = arm["episodes_per_s"] / baseline["episodes_per_s"]
        arm |= agreement(work / baseline_name, work / name, instances)
        shown = [
            f"{d['diff']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}]"
            for d in (arm["differences"]["exposed_gain"], arm["differences"]["ndcg10"])
        ]
        lines.append(
            f"| {name} | {arm['episodes_per_s']:.3f} | **{arm['speedup']:.2f}×** | "
            f"{arm['same_actions']} of {len(instances)} | {shown[0]} | {shown[1]} |"
        )
    verdicts = ", ".join(
        f"{name}: {'agrees' if report['arms'][name]['agrees'] else 'DIFFERS'}" for name in list(arms)[1:]
    )
    lines.append(
        f"\n{recipe.policy.model} {'with ' + args.adapter if args.adapter else '(base)'}, {len(instances)} eval "
        f"targets of {args.recipe}, greedy; engine starts not in the ratios. Δ: arm − baseline, paired, "
        f"95% bootstrap interval; {verdicts}."
    )
    report["markdown"] = "\n".join(lines)
    return finish(report, args.json)


if __name__ == "__main__":
    main()
