"""GRPO throughput of the rl stage: episodes per second of rollout, optimiser steps per minute, and
where a step's time goes (generation, environment, update), one run.

    python -m benchmarks.rl_steps --recipe recipes/demo.yaml --student outputs/demo/sft --steps 4
    python -m benchmarks.rl_steps --student outputs/demo-seed1-t2/sft --set data.source=world:1
    python -m benchmarks.rl_steps --steps 3            # a random tiny Qwen3 when no student is given

Generation is the time inside the policy's act (the model writing replies), environment is the
rest of the rollout (search, tool answers, building the token sequences), update is the rest of
the optimiser step (log-probabilities, loss, backward, optimiser); shares are of the steps'
time, setup (loading the student and the world, building the trainer) apart. No dev scoring runs.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from unittest import mock

from benchmarks.common import finish


class Clock:
    def __init__(self):
        self.seconds = {"generation": 0.0, "rollout": 0.0}
        self.episodes = 0
        self.first_rollout = 0.0

    def wrap(self, name, function):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[name] += time.perf_counter() - start

        return timed


def random_student(work: Path) -> str:
    from hindsight.data import load_benchmark
    from hindsight.models.tiny import build_tiny_qwen

    corpus = load_benchmark("world")[0]
    return str(build_tiny_qwen(work / "tiny", [p.title for p in corpus.papers[:2000]]))


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recipe", default="recipes/demo.yaml")
    parser.add_argument("--student", help="where RL starts (rl.student); default: a random tiny Qwen3")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a recipe override, as the stage commands take it (data.source=world:1 for a seed-1 student)",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    from hindsight.policy.hf import HFPolicy
    from hindsight.recipe import load_recipe
    from hindsight.rl import grpo
    from hindsight.rl.rollout import EpisodeRollout

    clock = Clock()
    with tempfile.TemporaryDirectory() as tmp:
        student = args.student or random_student(Path(tmp))
        recipe = load_recipe(
            args.recipe,
            [
                f"rl.student={student}",
                f"rl.output_dir={tmp}/rl",
                f"rl.steps={args.steps}",
                "rl.dev_targets=0",
                "rl.dev_every=0",
                *args.set,
            ],
        )
        cfg = grpo.RLConfig.from_recipe(recipe)
        timed_rollout = clock.wrap("rollout", EpisodeRollout.__call__)

        def rollout(self, prompts, trainer):
            clock.first_rollout = clock.first_rollout or time.perf_counter()
            clock.episodes += len(prompts)
            return timed_rollout(self, prompts, trainer)

        start = time.perf_counter()
        with (
            mock.patch.object(EpisodeRollout, "__call__", rollout),
            mock.patch.object(HFPolicy, "act", clock.wrap("generation", HFPolicy.act)),
        ):
            manifest = grpo.train(recipe, cfg)
        total = time.perf_counter() - start
    steps = manifest["steps"]
    generation, rollout_s = clock.seconds["generation"], clock.seconds["rollout"]
    setup = clock.first_rollout - start
    training = total - setup  # the steps, from the first rollout to the saved student
    split = {"generation": generation, "environment": rollout_s - generation, "update": training - rollout_s}
    markdown = (
        "| steps | episodes | episodes/s of rollout | optimiser steps/min | generation | environment | update | setup |\n"
        "|---:|---:|---:|---:|---:|---:|---:|---:|\n"
        f"| {steps} | {clock.episodes} | {clock.episodes / rollout_s:.2f} | {60 * steps / training:.2f} | "
        + " | ".join(f"{seconds:.0f} s ({seconds / training:.0%})" for seconds in split.values())
        + f" | {setup:.0f} s |"
    )
    return finish(
        {
            "recipe": args.recipe,
            "student": args.student,
            "steps": steps,
            "episodes": clock.episodes,
            "seconds": {"total": total, "setup": setup, **split},
            "group_size": cfg.group_size,
            "targets_per_step": cfg.targets_per_step,
            "markdown": markdown,
        },
        args.json,
    )


if __name__ == "__main__":
    main()
