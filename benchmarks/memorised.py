"""How a student scores on the train targets its SFT set showed solved, against the train targets it
did not: a student that learned its demonstrations by heart scores far higher on the first. RL
rollouts on those targets reward reciting them (`rl.skip_demonstrated` leaves them out).

    python eval/run.py recipes/demo.yaml --set data.split=train --name sft-on-train --student outputs/demo/sft
    python -m benchmarks.memorised outputs/demo/runs/sft-on-train --distill outputs/demo/distill
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from benchmarks.common import finish
from hindsight.data import load_instances
from hindsight.errors import UserError
from hindsight.metrics import score_episode
from hindsight.runs import load_run
from hindsight.stages import DistillOutput

MEASURES = ("ndcg10", "exposed_gain", "selected_gain")


def measure(run_dir: Path, distill_dir: Path) -> dict:
    run = load_run(run_dir)
    demonstrated = DistillOutput(distill_dir).demonstrated_targets()
    groups: dict[str, list[dict]] = {"demonstrated": [], "not demonstrated": []}
    for instance in load_instances(run.instances_path):
        if instance.split != "train":
            continue
        score = score_episode(run.episodes.get(instance.id), instance)
        groups["demonstrated" if instance.id in demonstrated else "not demonstrated"].append(score)
    if not any(groups.values()):
        raise UserError(f"{run_dir}: no train targets in its instances; run it with --set data.split=train")
    rows = {
        name: {
            "targets": len(scores),
            **{m: float(np.mean([s[m] for s in scores])) if scores else None for m in MEASURES},
        }
        for name, scores in groups.items()
    }
    lines = ["| train targets | targets | final nDCG@10 | exposed gain | selected gain |", "|---|---:|---:|---:|---:|"]
    for name, row in rows.items():
        cells = " | ".join("–" if row[m] is None else f"{row[m]:.3f}" for m in MEASURES)
        lines.append(f"| {name} in {distill_dir} | {row['targets']} | {cells} |")
    return {"run": str(run_dir), "distill": str(distill_dir), "groups": rows, "markdown": "\n".join(lines)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path, help="a run of the student on the train targets")
    parser.add_argument("--distill", type=Path, required=True, help="the distillation folder its SFT set came from")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    try:
        finish(measure(args.run, args.distill), args.json)
    except UserError as exc:  # a missing or broken run or distillation
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
