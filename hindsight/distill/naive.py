"""Naive demonstrations: searches of the brief's own words, then a submission of what came back.

    python distill/naive.py recipes/demo.yaml [--samples N]
    python distill/naive.py recipes/qwen05_world.yaml --format-control

They teach a from-scratch student the action format (how to call the tools, and how to copy ids
out of tool results) without any hindsight: the student learns to act, not where to look. Each
train target gets N episodes of the naive explorer (hindsight/policy/scripted.py), whose
searches differ by sample, so what comes back differs too and no list of ids can stand in for
copying. Runs through the ordinary runner and writes <distill.out_dir>/naive_sft.jsonl
(deployment transcripts only).

`--format-control` writes the format control's SFT set instead, <distill.out_dir>/format_sft.jsonl:
one episode for each row of the hindsight SFT set (sft.jsonl), on the same train target and of
the same shape (as many queries of as many words, as many papers submitted), made by the format-matched explorer
(hindsight/policy/scripted.py), which sees only the brief. A student trained on it with the same
settings learns the deployment format, the number of turns and the answer's length, but nothing
that hindsight chose: what it gains over the base is the share of a gain that format explains.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from hindsight.distill.config import DistillConfig
from hindsight.errors import UserError
from hindsight.leaks import call_arguments
from hindsight.policy.scripted import FormatMatchedExplorer, NaiveExplorer
from hindsight.prompts import brief_from_messages
from hindsight.protocol import tool_schemas
from hindsight.recipe import recipe_command
from hindsight.runner import run_episodes
from hindsight.runs import read_episodes
from hindsight.schema import CandidateId
from hindsight.stages import SFTRow, read_sft_set


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


class FormatControlError(UserError):
    pass


def demonstration_shape(row: SFTRow) -> tuple[tuple[int, ...], int]:
    """(words of each query, papers submitted) of one demonstration."""
    lengths, submitted = [], 0
    for message in row.messages:
        for call in message.get("tool_calls") or []:
            name, arguments = call["function"]["name"], call_arguments(call["function"]["arguments"]) or {}
            if name == "search_papers":
                lengths.append(len(str(arguments.get("query", "")).split()))
            elif name == "submit_answer":
                submitted = len(arguments.get("papers", []))
    return tuple(lengths), submitted


def hindsight_targets(cfg: DistillConfig) -> list[str]:
    """The train target of each row of the hindsight SFT set, in the set's order (select.py writes
    one row per selected target, sorted by instance id)."""
    targets = []
    with open(cfg.output.candidates_manifest, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if record["selected"]:
                targets.append(record["source_instance"])
    return sorted(targets)


def format_demonstrations(recipe, progress: bool = True) -> Path:
    """The format control's SFT set (see the module's docstring); returns its path."""
    cfg = DistillConfig.from_recipe(recipe)
    out = cfg.output
    rows, targets = read_sft_set(out.sft_set), hindsight_targets(cfg)
    if len(rows) != len(targets):
        raise FormatControlError(
            f"{out.sft_set} has {len(rows)} rows but {out.candidates_manifest} selects {len(targets)} "
            "targets; run distill/select_demos.py again"
        )
    corpus, instances, _ = recipe.data.load()
    by_id = {inst.id: inst for inst in instances}
    tasks, shapes = {}, {}
    for line_no, (target, row) in enumerate(zip(targets, rows), start=1):
        inst = by_id.get(target)
        if inst is None or brief_from_messages(row.messages) != inst.brief:
            raise FormatControlError(f"{out.sft_set}:{line_no}: its brief is not that of {target}, the selected target")
        tasks[target] = inst.task()
        shapes[tasks[target].task_id] = demonstration_shape(row)
    policy = FormatMatchedExplorer(shapes)
    shutil.rmtree(out.root / "format", ignore_errors=True)  # episodes of another SFT set must not resume
    run_episodes(
        policy,
        tasks,
        recipe.search.build(corpus),
        recipe.protocol,
        out.root / "format",
        batch_size=256,
        progress=progress,
    )
    tools = tool_schemas(recipe.protocol)
    episodes = read_episodes(out.root / "format" / "episodes.jsonl")
    with open(out.format_sft_set, "w", encoding="utf-8") as handle:
        for target in targets:
            handle.write(SFTRow(episodes[target].messages, tools).to_line())
    return out.format_sft_set


def main(argv: list[str] | None = None) -> int:
    def options(parser):
        parser.add_argument("--samples", type=int, default=1, help="naive episodes per train target")
        parser.add_argument(
            "--format-control",
            action="store_true",
            help="write the format control's set (format_sft.jsonl), one episode per row of sft.jsonl",
        )

    def work(recipe, args):
        if args.format_control:
            return f"format-control demonstrations: {format_demonstrations(recipe)}"
        return f"naive demonstrations: {naive_demonstrations(recipe, args.samples)}"

    return recipe_command(__doc__, work, argv, options)


if __name__ == "__main__":
    sys.exit(main())
