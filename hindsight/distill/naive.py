"""Naive demonstrations: searches of the brief's own words, then a submission of what came back.

    python distill/naive.py recipes/demo.yaml [--samples N]

They teach a from-scratch student the action format (how to call the tools, and how to copy ids
out of tool results) without any hindsight: the student learns to act, not where to look. Each
train target gets N episodes of the naive explorer (hindsight/policy/scripted.py), whose
searches differ by sample, so what comes back differs too and no list of ids can stand in for
copying. Runs through the ordinary runner and writes <distill.out_dir>/naive_sft.jsonl
(deployment transcripts only).
"""

from __future__ import annotations

import sys
from pathlib import Path

from hindsight.distill.config import DistillConfig
from hindsight.policy.scripted import NaiveExplorer
from hindsight.protocol import tool_schemas
from hindsight.recipe import recipe_command
from hindsight.runner import run_episodes
from hindsight.runs import read_episodes
from hindsight.schema import CandidateId
from hindsight.stages import SFTRow


def naive_demonstrations(recipe, samples: int = 1, progress: bool = True) -> Path:
    cfg = DistillConfig.from_recipe(recipe)
    corpus, instances, _ = recipe.data.load()
    tasks = {
        str(CandidateId(inst.id, k)): inst.task(k)
        for inst in instances
        if inst.split == "train"
        for k in range(samples)
    }
    out = Path(cfg.out_dir)
    policy = NaiveExplorer(seed=cfg.seed, submit=recipe.protocol.k * 2)
    run_episodes(
        policy, tasks, recipe.search.build(corpus), recipe.protocol, out / "naive", batch_size=256, progress=progress
    )
    tools = tool_schemas(recipe.protocol)
    with open(cfg.output.naive_sft_set, "w", encoding="utf-8") as handle:
        for episode in read_episodes(out / "naive" / "episodes.jsonl").values():
            last = max(i for i, m in enumerate(episode.messages) if m["role"] == "assistant")
            handle.write(SFTRow(episode.messages[: last + 1], tools).to_line())
    return cfg.output.naive_sft_set


def main(argv: list[str] | None = None) -> int:
    def options(parser):
        parser.add_argument("--samples", type=int, default=1, help="naive episodes per train target")

    return recipe_command(
        __doc__,
        lambda recipe, args: f"naive demonstrations: {naive_demonstrations(recipe, args.samples)}",
        argv,
        options,
    )


if __name__ == "__main__":
    sys.exit(main())
