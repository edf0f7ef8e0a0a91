"""The reward curves of an rl run (rewards.jsonl) as one figure: train reward per step, dev reward
at each scoring, and below them the learning signal TRL logged (the share of groups with no
reward spread, the spread within groups, the KL to the start) and how much the sampled episodes of
a group differed.

    python -m hindsight.rl.plot outputs/demo/rl/rewards.jsonl outputs/demo/runs/plots/rl_rewards.png
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def plot_rewards(rewards_path: Path, out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [json.loads(line) for line in rewards_path.read_text().splitlines() if line.strip()]
    signal = [row for row in rows if row["split"] == "signal"]
    fig, axes = plt.subplots(2 if signal else 1, 1, figsize=(6.4, 6.4 if signal else 3.6), squeeze=False)
    ax = axes[0][0]
    for split, style in (("train", "-"), ("dev", "o-")):
        chosen = [row for row in rows if row["split"] == split]
        if chosen:
            ax.plot(
                [r["step"] for r in chosen],
                [r["reward"] for r in chosen],
                style,
                label=f"{split} (mean of {chosen[-1]['episodes']} episodes)",
            )
    ax.set_xlabel("optimiser step")
    ax.set_ylabel("reward")
    ax.set_title(f"GRPO reward: {rewards_path.parent.name}")
    ax.legend()
    if signal:
        below = axes[1][0]
        for key, label in (
            ("frac_reward_zero_std", "share of groups with no reward spread"),
            ("reward_std", "reward spread within a group"),
            ("kl", "KL to the start"),
        ):
            points = [(r["step"], r[key]) for r in signal if key in r]
            if points:
                below.plot(*zip(*points), label=label)
        # ours, from the train rows: how much sampling explored (hindsight.rl.reward.distinct_share)
        explored = [(r["step"], r["distinct"]) for r in rows if r["split"] == "train" and "distinct" in r]
        if explored:
            below.plot(*zip(*explored), label="share of a group's episodes unlike the rest")
        below.set_xlabel("optimiser step")
        below.set_title("learning signal (TRL's log)")
        below.legend(fontsize="small")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    print(f"wrote {plot_rewards(Path(args[0]), Path(args[1]))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
