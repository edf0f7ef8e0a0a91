"""Naive demonstrations: search the brief's own first sentence, submit what came back.

    python distill/naive.py recipes/demo.yaml

They teach a from-scratch student the action format (how to call the tools) without any
hindsight: the student learns to act, not where to look. Runs on the train split through the
ordinary runner and writes <distill.out_dir>/naive_sft.jsonl (deployment transcripts only).
"""

from __future__ import annotations

import sys
from pathlib import Path

from hindsight.distill.config import DistillConfig
from hindsight.policy.scripted import BM25OneShot
from hindsight.protocol import tool_schemas
from hindsight.recipe import recipe_command
from hindsight.runner import run_episodes
from hindsight.runs import read_episodes
from hindsight.schema import tasks_of
from hindsight.stages import SFTRow


def naive_demonstrations(recipe, progress: bool = True) -> Path:
    cfg = DistillConfig.from_recipe(recipe)
    corpus, instances, _ = recipe.data.load()
    tasks = tasks_of(inst for inst in instances if inst.split == "train")
    out = Path(cfg.out_dir)
    policy = BM25OneShot(max_query_words=recipe.protocol.max_query_words, k=recipe.protocol.k,
                         first_sentence=True, rationale=None)
    run_episodes(policy, tasks, recipe.search.build(corpus), recipe.protocol, out / "naive",
                 batch_size=256, progress=progress)
    tools = tool_schemas(recipe.protocol)
    with open(cfg.output.naive_sft_set, "w", encoding="utf-8") as handle:
        for episode in read_episodes(out / "naive" / "episodes.jsonl").values():
            last = max(i for i, m in enumerate(episode.messages) if m["role"] == "assistant")
            handle.write(SFTRow(episode.messages[: last + 1], tools).to_line())
    return cfg.output.naive_sft_set


def main(argv: list[str] | None = None) -> int:
    return recipe_command(__doc__, lambda recipe, args: f"naive demonstrations: {naive_demonstrations(recipe)}", argv)


if __name__ == "__main__":
    sys.exit(main())
