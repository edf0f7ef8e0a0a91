"""How many of a run's replies hold a readable tool call under each reading of the protocol:
`template` (the chat template's own format), `lenient` (also fenced JSON and call objects in
prose) and `repaired` (also a call left unclosed, closed). The same replies, read each way, so
the difference is the reading alone.

    python -m benchmarks.tool_call_reading outputs/qwen05_world/runs/base outputs/qwen05_world/runs/sft

A run made under one reading saw only that reading's follow-ups (a malformed reply is answered
with an error message, a read one with search results); the first reply of each episode is the
one both readings meet unchanged, so it is reported on its own.
"""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks.common import run_folders_main
from hindsight.policy.parsing import parse_tool_calls, read_leniently
from hindsight.runs import read_episodes
from hindsight.schema import Episode


def replies(episode: Episode) -> list[str]:
    """The raw text of each reply, once (a reply with several calls logs one step per call)."""
    out: list[str] = []
    for step in episode.steps:
        raw = step.raw or ""
        if not out or raw != out[-1]:
            out.append(raw)
    return out


def readable_shares(texts: list[str]) -> dict:
    template = sum(bool(parse_tool_calls(text).calls) for text in texts)
    lenient = sum(bool(read_leniently(text).calls) for text in texts)
    repaired = sum(bool(read_leniently(text, repair=True).calls) for text in texts)
    n = max(len(texts), 1)
    return {
        "replies": len(texts),
        "template": template,
        "lenient": lenient,
        "repaired": repaired,
        "malformed_template": 1 - template / n,
        "malformed_lenient": 1 - lenient / n,
        "malformed_repaired": 1 - repaired / n,
    }


def measure(run_dirs: list[Path]) -> dict:
    rows, lines = (
        {},
        [
            "| run | replies | malformed, template reading | malformed, lenient reading | malformed, repaired reading | first replies | malformed first, template | malformed first, lenient |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ],
    )
    for run_dir in run_dirs:
        episodes = list(read_episodes(run_dir / "episodes.jsonl").values())
        every = readable_shares([text for episode in episodes for text in replies(episode)])
        first = readable_shares([replies(episode)[0] for episode in episodes if replies(episode)])
        rows[run_dir.name] = {"all": every, "first": first}
        lines.append(
            f"| {run_dir.name} | {every['replies']} | {every['malformed_template']:.0%} | "
            f"{every['malformed_lenient']:.0%} | {every['malformed_repaired']:.0%} | {first['replies']} | {first['malformed_template']:.0%} | "
            f"{first['malformed_lenient']:.0%} |"
        )
    return {"runs": rows, "markdown": "\n".join(lines)}


def main(argv: list[str] | None = None) -> int:
    return run_folders_main(measure, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
