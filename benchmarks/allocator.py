"""Training time under glibc's mmap threshold (`train.malloc_mmap_threshold`): the same training run
once for each threshold, in turn, each arm in a process of its own (glibc reads its settings at
start), and the losses of every arm checked to be the same numbers (where a block of memory comes
from must not change what is computed).

    python -m benchmarks.allocator --json benchmarks/results/allocator.json
    python -m benchmarks.allocator --recipe recipes/demo.yaml --json benchmarks/results/allocator-demo.json   # after make demo

Without --recipe the training is a tiny random-weight Qwen3 fully fine-tuned on the scripted
teacher's demonstrations of the synthetic world, eight rows a step (the demo's shape, built here);
with it, the recipe's own training for --epochs. Each arm reports its wall, user and system
seconds and its peak memory (the training process's maximum resident set); the time ratio is
against the first threshold of --thresholds, in the same run. A MALLOC_* variable in this
process's environment is not passed on: it would override every arm.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import command_line, finish, machine

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_THRESHOLDS = (2 * 1024 * 1024, 0, 256 * 1024 * 1024)


def tiny_world_recipe(work: Path, targets: int) -> Path:
    """A recipe that fully fine-tunes a tiny Qwen3 on a distilled world SFT set, with the demo's protocol."""
    from hindsight.data import load_benchmark
    from hindsight.distill import run_distillation
    from hindsight.models.tiny import build_tiny_qwen

    recipe = work / "recipe.yaml"
    distill = {"out_dir": str(work / "distill"), "candidates": 2, "max_targets": targets, "keep_quantile": 1.0}
    recipe.write_text(
        json.dumps(
            {
                "data": {"source": "world"},
                "protocol": {"k": 5, "budget": 8, "fields": ["id", "title"]},
                "distill": distill,
            }
        )
    )
    run_distillation([str(recipe)])
    corpus, _, _ = load_benchmark("world")
    model = build_tiny_qwen(work / "tiny", [f"{p.title}\n{p.abstract}" for p in corpus.papers[:2000]])
    train = {
        "base_model": str(model),
        "lora": None,
        "learning_rate": 1.0e-3,
        "per_device_batch_size": 8,
        "gradient_accumulation_steps": 1,
        "max_length": 4096,
        "precision": "fp32",
        "lr_scheduler": "constant",
        "warmup_ratio": 0.0,
    }
    recipe.write_text(json.dumps({**json.loads(recipe.read_text()), "train": train}))
    return recipe


def train_once(recipe: Path, out: Path, threshold: int, epochs: float) -> dict:
    """One training in a process of its own: its times, peak memory and losses."""
    command = [
        sys.executable,
        str(ROOT / "train/sft.py"),
        str(recipe),
        "--set",
        f"train.output_dir={out}",
        "--set",
        f"train.epochs={epochs}",
        "--set",
        f"train.malloc_mmap_threshold={threshold}",
        "--set",
        "train.save_every=null",
    ]
    env = {key: value for key, value in os.environ.items() if not key.startswith("MALLOC_")}
    log = (out.parent / f"{out.name}.log").open("w")
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    log.close()
    if os.waitstatus_to_exitcode(status) != 0:
        tail = Path(log.name).read_text()[-3000:]
        raise SystemExit(f"the training at threshold {threshold} failed; the end of its log:\n{tail}")
    manifest = json.loads((out / "train_manifest.json").read_text())
    return {
        "wall_s": round(wall, 2),
        "user_s": round(usage.ru_utime, 2),
        "system_s": round(usage.ru_stime, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024),
        "steps": manifest["steps"],
        "losses": manifest["losses"],
    }


def measure(recipe: Path, thresholds: list[int], repeats: int, epochs: float, work: Path) -> dict:
    trainings = {threshold: [] for threshold in thresholds}
    for repeat in range(repeats):  # arms in turn, so that a slow minute of the machine falls on all of them
        for threshold in thresholds:
            trainings[threshold].append(train_once(recipe, work / f"t{threshold}-r{repeat}", threshold, epochs))
    first = thresholds[0]
    reference_losses = trainings[first][0]["losses"]
    arms = []
    for threshold in thresholds:
        runs = trainings[threshold]
        wall = statistics.median(run["wall_s"] for run in runs)
        arms.append(
            {
                "malloc_mmap_threshold": threshold,
                "wall_s": wall,
                "time_vs_first": round(wall / statistics.median(run["wall_s"] for run in trainings[first]), 3),
                "system_s": statistics.median(run["system_s"] for run in runs),
                "user_s": statistics.median(run["user_s"] for run in runs),
                "peak_rss_mb": max(run["peak_rss_mb"] for run in runs),
                "steps": runs[0]["steps"],
                "same_losses": all(run["losses"] == reference_losses for run in runs),
                "runs": [{key: value for key, value in run.items() if key != "losses"} for run in runs],
            }
        )
    return {"machine": machine(), "threads": os.environ.get("OMP_NUM_THREADS", "torch's default"), "arms": arms}


def markdown(report: dict) -> str:
    lines = [
        "| malloc_mmap_threshold | steps | wall s (median) | time vs first | user s | system s | peak RSS MB | losses as the first arm's |",
        "|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for arm in report["arms"]:
        lines.append(
            f"| {arm['malloc_mmap_threshold']:,} | {arm['steps']} | {arm['wall_s']:.1f} | {arm['time_vs_first']:.2f} | "
            f"{arm['user_s']:.1f} | {arm['system_s']:.1f} | {arm['peak_rss_mb']:,} | {'yes' if arm['same_losses'] else 'NO'} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--recipe", type=Path, help="a recipe whose training to time (default: a tiny world one, built here)"
    )
    parser.add_argument(
        "--thresholds",
        default=",".join(map(str, DEFAULT_THRESHOLDS)),
        help="bytes, comma-separated; the first is the baseline",
    )
    parser.add_argument("--repeats", type=int, default=2, help="trainings per threshold (the median is reported)")
    parser.add_argument("--epochs", type=float, default=4.0, help="train.epochs of every training")
    parser.add_argument("--targets", type=int, default=32, help="train targets distilled for the built recipe")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    thresholds = [int(value) for value in args.thresholds.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-allocator-") as tmp:
        work = Path(tmp)
        recipe = args.recipe.resolve() if args.recipe else tiny_world_recipe(work, args.targets)
        report = measure(recipe, thresholds, args.repeats, args.epochs, work)
    report = {"command": command_line("allocator", argv), **report}
    report["markdown"] = markdown(report)
    finish(report, args.json)
    return 0 if all(arm["same_losses"] for arm in report["arms"]) else 1


if __name__ == "__main__":
    sys.exit(main())
