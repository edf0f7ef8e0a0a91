"""Whether two runs played the same episodes on the targets they share: the same transcript (every
message), or at least the same actions (each call's tool and arguments, then the answer), and for
each episode that differs, the first call where it does. Two evaluators of one model in float32
(transformers and vLLM) should play the same greedy episodes; this says whether they did.

    python -m benchmarks.same_episodes outputs/qwen05_world/seed1/runs/sft outputs/qwen05_world/seed1/runs/sft-hf
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks.common import finish
from hindsight.runs import read_episodes
from hindsight.schema import Episode


def actions(episode: Episode) -> list[str]:
    calls = [json.dumps([step.tool, step.args], sort_keys=True) for step in episode.steps]
    return calls + [json.dumps([paper.id for paper in episode.submission])]


def first_difference(one: list[str], other: list[str]) -> int | None:
    """The index of the first action that differs; None where the two lists are equal."""
    for index, (mine, theirs) in enumerate(zip(one, other)):
        if mine != theirs:
            return index
    return None if len(one) == len(other) else min(len(one), len(other))


def compare(one: dict[str, Episode], other: dict[str, Episode]) -> dict:
    shared = sorted(one.keys() & other.keys())
    differing = {}
    for instance_id in shared:
        index = first_difference(actions(one[instance_id]), actions(other[instance_id]))
        if index is not None:
            differing[instance_id] = index
    same_transcript = sum(one[i].messages == other[i].messages for i in shared)
    return {
        "shared_targets": len(shared),
        "same_transcript": same_transcript,
        "same_actions": len(shared) - len(differing),
        "first_differing_action": differing,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("one", type=Path, help="a run folder (runs/<name>)")
    parser.add_argument("other", type=Path, help="another run folder")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    report = compare(read_episodes(args.one / "episodes.jsonl"), read_episodes(args.other / "episodes.jsonl"))
    where = ", ".join(f"{i} at call {n + 1}" for i, n in report["first_differing_action"].items()) or "none"
    report["markdown"] = (
        f"{report['shared_targets']} shared targets: {report['same_transcript']} with the same transcript, "
        f"{report['same_actions']} with the same actions; differing: {where}"
    )
    finish(report, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
