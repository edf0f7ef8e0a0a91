"""Naive demonstrations: search the brief's own first sentence, submit what came back.

    python distill/naive.py recipes/demo.yaml

They teach a from-scratch student the action format (how to call the tools) without any
hindsight: the student learns to act, not where to look. Runs on the train split through the
ordinary runner and writes <distill.out_dir>/naive_sft.jsonl (deployment transcripts only).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[1])  # the checkout, not this script's folder

from distill.config import DistillConfig  # noqa: E402
from hindsight.config import ConfigError  # noqa: E402
from hindsight.data import load_benchmark  # noqa: E402
from hindsight.policy.scripted import BM25OneShot  # noqa: E402
from hindsight.protocol import tool_schemas  # noqa: E402
from hindsight.recipe import add_recipe_arguments, load_recipe  # noqa: E402
from hindsight.runner import run_episodes  # noqa: E402
from hindsight.runs import read_episodes  # noqa: E402


def naive_demonstrations(recipe, progress: bool = True) -> Path:
    cfg = DistillConfig.from_recipe(recipe)
    corpus, instances, _ = load_benchmark(recipe.data.source)
    tasks = [inst.task() for inst in instances if inst.split == "train"]
    out = Path(cfg.out_dir)
    policy = BM25OneShot(max_query_words=recipe.protocol.max_query_words, k=recipe.protocol.k,
                         first_sentence=True, rationale=None)
    run_episodes(policy, tasks, recipe.search.build(corpus), recipe.protocol, out / "naive",
                 batch_size=256, progress=progress)
    tools = tool_schemas(recipe.protocol)
    with open(out / "naive_sft.jsonl", "w", encoding="utf-8") as handle:
        for episode in read_episodes(out / "naive" / "episodes.jsonl").values():
            last = max(i for i, m in enumerate(episode.messages) if m["role"] == "assistant")
            handle.write(json.dumps({"messages": episode.messages[: last + 1], "tools": tools}) + "\n")
    return out / "naive_sft.jsonl"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_recipe_arguments(parser)
    args = parser.parse_args(argv)
    try:
        path = naive_demonstrations(load_recipe(args.recipe, args.overrides))
    except (ConfigError, ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"naive demonstrations: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
