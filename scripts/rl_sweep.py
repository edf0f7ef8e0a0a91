"""A grid of RL settings, each trained by train/rl.py and judged on the dev targets only.

    python scripts/rl_sweep.py recipes/demo.yaml --grid rl.learning_rate=1e-4,3e-4 \
        --grid rl.targets_per_step=2,8 --out outputs/demo/rl-sweep --json benchmarks/results/rl-sweep.json

Each combination trains into <out>/<name> (its rewards.jsonl holds every dev scoring and TRL's
learning signal); a finished one (its train_manifest.json exists) is not trained again, so the
command resumes. The summary ranks the combinations by their best dev reward and says how far each
moved from the start; eval targets are never read here.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def combinations(grid: list[str]) -> list[dict[str, str]]:
    """`key=a,b` arguments → every combination as {key: value}."""
    axes = []
    for item in grid:
        key, sep, values = item.partition("=")
        if not sep or not values:
            raise SystemExit(f"--grid {item!r}: expected section.key=value[,value...]")
        axes.append([(key, value) for value in values.split(",")])
    return [dict(combo) for combo in itertools.product(*axes)]


def run_name(combo: dict[str, str]) -> str:
    return "_".join(f"{key.rpartition('.')[2]}-{value}" for key, value in combo.items()) or "default"


def train(recipe: str, combo: dict[str, str], sets: list[str], folder: Path) -> float:
    """Trains one combination unless it finished before; returns its wall seconds."""
    timing = folder / "sweep_seconds.json"
    if (folder / "train_manifest.json").exists() and timing.exists():
        return json.loads(timing.read_text())["seconds"]
    folder.mkdir(parents=True, exist_ok=True)
    overrides = [*sets, *(f"{k}={v}" for k, v in combo.items()), f"rl.output_dir={folder}"]
    (folder / "sweep_settings.json").write_text(json.dumps({"recipe": recipe, "overrides": overrides[:-1]}))
    command = [sys.executable, str(ROOT / "train/rl.py"), recipe, *itertools.chain(*(["--set", o] for o in overrides))]
    resumed = any(folder.glob("checkpoint-*"))
    start = time.time()
    # Appended, so a resumed run keeps the log of the part that ran before the stop.
    with open(folder / "train.log", "a") as log:
        log.write(f"== {time.strftime('%Y-%m-%d %H:%M:%S')} {'resumed' if resumed else 'started'}\n")
        log.flush()
        subprocess.run(command, check=True, stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy())
    seconds = round(time.time() - start, 1)
    # A resumed run's seconds are those of its last part only; the log's headers date each part.
    timing.write_text(json.dumps({"seconds": seconds, "resumed": resumed}))
    return seconds


def judged(row: dict, judge: dict[str, float], where: Path) -> float:
    """A dev scoring under another reward's weights (runs whose rewards differ compared on one)."""
    missing = [term for term in judge if term not in row]
    if missing:
        raise SystemExit(f"{where}: its dev rows have no {', '.join(missing)} to judge by")
    return sum(weight * row[term] for term, weight in judge.items())


def summary(folder: Path, judge: dict[str, float] | None = None) -> dict:
    """One run's dev curve and learning signal, with the overrides and wall time its folder records
    (sweep_settings.json, sweep_seconds.json; absent for a run made otherwise). With `judge`, also
    the chosen scoring (the run's own best) under those reward weights."""
    settings_file, timing = folder / "sweep_settings.json", folder / "sweep_seconds.json"
    settings = json.loads(settings_file.read_text())["overrides"] if settings_file.exists() else []
    seconds = json.loads(timing.read_text())["seconds"] if timing.exists() else None
    rows = [json.loads(line) for line in (folder / "rewards.jsonl").read_text().splitlines() if line.strip()]
    dev = [row for row in rows if row["split"] == "dev"]
    signal = [row for row in rows if row["split"] == "signal"]
    best = max(dev, key=lambda row: (row["reward"], -row["step"]))

    def mean(key: str) -> float | None:
        values = [row[key] for row in signal if key in row]
        return sum(values) / len(values) if values else None

    last = dev[-1]
    return {
        "name": folder.name,
        "settings": settings,
        "finished": (folder / "train_manifest.json").exists(),
        "dev_last": last["reward"],
        "dev_last_step": last["step"],
        "dev_best_malformed": best["malformed"],
        "seconds": seconds,
        "dev_start": dev[0]["reward"],
        "dev_best": best["reward"],
        "dev_best_step": best["step"],
        "dev_gain": best["reward"] - dev[0]["reward"],
        "dev_curve": [{k: row[k] for k in ("step", "reward", "ndcg10", "exposed_gain", "malformed")} for row in dev],
        "frac_reward_zero_std": mean("frac_reward_zero_std"),
        "reward_std": mean("reward_std"),
        "entropy": mean("entropy"),
        "last_kl": next((row["kl"] for row in reversed(signal) if "kl" in row), None),
        **(
            {"judged_start": judged(dev[0], judge, folder), "judged_best": judged(best, judge, folder)} if judge else {}
        ),
    }


SHORT = {
    "learning_rate": "lr",
    "targets_per_step": "targets a step",
    "dev_targets": "dev targets",
    "group_size": "group",
}


def short_setting(item: str) -> str:
    """`rl.learning_rate=1e-4` → `lr 1e-4`; a reward mapping as its weighted terms."""
    import yaml

    key, _, value = item.removeprefix("rl.").partition("=")
    if key == "reward":
        weights = yaml.safe_load(value)
        return "reward " + " ".join(f"{weight:+g}·{term}" for term, weight in weights.items()).replace("-", "−")
    return f"{SHORT.get(key, key)} {value}"


def markdown(results: list[dict]) -> str:
    judging = any("judged_best" in row for row in results)
    lines = [
        "| run | settings (beyond the recipe's) | dev reward: start → best (step) → last (step) | malformed at best | groups without spread | finished |"
        + (" judge's reward: start → at the chosen step |" if judging else ""),
        "|---|---|---|---:|---:|---|" + ("---:|" if judging else ""),
    ]
    for row in results:
        shown = ", ".join(short_setting(item) for item in row["settings"] if not item.startswith("rl.dev_every="))
        zero = row["frac_reward_zero_std"]
        lines.append(
            f"| {row['name']} | {shown} | {row['dev_start']:.4f} → {row['dev_best']:.4f} ({row['dev_best_step']}) → "
            f"{row['dev_last']:.4f} ({row['dev_last_step']}) | {row['dev_best_malformed']:.1%} | "
            f"{'–' if zero is None else f'{zero:.0%}'} | {'yes' if row['finished'] else 'stopped'} |"
            + (f" {row['judged_start']:.4f} → {row['judged_best']:.4f} |" if judging else "")
        )
    return "\n".join(lines) + "\n"


def write_summary(path: Path, payload: dict, results: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**payload, "runs": results, "markdown": markdown(results)}, indent=1) + "\n")
    print(f"wrote {path}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("recipe", nargs="?")
    parser.add_argument("--collect", nargs="+", type=Path, help="summarise these run folders instead of training")
    parser.add_argument("--grid", action="append", default=[], help="section.key=v1,v2 (repeatable)")
    parser.add_argument("--set", action="append", default=[], dest="sets", help="a fixed override for every run")
    parser.add_argument("--out", type=Path, help="one folder per combination under it")
    parser.add_argument("--json", type=Path, help="write the summary here")
    parser.add_argument(
        "--judge", help="with --collect: reward weights (a YAML mapping) to compare runs whose own rewards differ"
    )
    args = parser.parse_args(argv)
    if args.collect:
        import yaml

        judge = yaml.safe_load(args.judge) if args.judge else None
        results = [summary(folder, judge) for folder in args.collect]
        if len({row["name"] for row in results}) < len(results):  # same-named runs of different sweeps
            for row, folder in zip(results, args.collect):
                row["name"] = f"{folder.parent.name}/{folder.name}"
        print(markdown(results))
        if args.json:
            write_summary(args.json, {"judge": judge} if judge else {}, results)
        return 0
    if not args.recipe:
        parser.error("a recipe, or --collect")
    if not args.out:
        parser.error("--out: the folder the runs go under")
    results = []
    for combo in combinations(args.grid):
        folder = args.out / run_name(combo)
        print(f"{folder.name}: training", flush=True)
        seconds = train(args.recipe, combo, args.sets, folder)
        results.append(summary(folder))
        row = results[-1]
        print(
            f"{folder.name}: dev {row['dev_start']:.4f} → best {row['dev_best']:.4f} at step {row['dev_best_step']} "
            f"({seconds:.0f} s)",
            flush=True,
        )
    results.sort(key=lambda row: -row["dev_best"])
    print("\nranked by best dev reward:")
    for row in results:
        print(f"  {row['dev_gain']:+.4f}  {row['dev_best']:.4f}  {row['name']}")
    if args.json:
        write_summary(args.json, {"recipe": args.recipe, "fixed": args.sets, "grid": args.grid}, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
