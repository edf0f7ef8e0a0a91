"""Where a search's words come from: the share of each query's words that the searcher could read
before it wrote the query (the instructions, the brief, its earlier turns and the titles its
earlier searches returned), for its first search and for the later ones. A query made only of
words on its screen is one a student can learn to write by copying; a word that nothing on the
screen showed came from somewhere else (a teacher's hindsight, or a student's memory of the
world). A run folder and a file of SFT rows are read alike, so a student can be set beside the
demonstrations it was trained on.

    python -m benchmarks.query_sources outputs/qwen05_world/distill/sft.jsonl outputs/qwen05_world/runs/sft
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from benchmarks.search_behaviour import episodes_main, episodes_of, normalised
from hindsight.leaks import call_arguments

WORD = re.compile(r"[a-z0-9]+")


@dataclass
class QuerySources:
    episodes: int
    first_searches: int
    first_seen_share: float  # mean share of a first query's words that were on the screen before it
    later_searches: int
    later_seen_share: float  # the same for every search after the first
    later_wholly_seen: float  # share of later queries all of whose words were on the screen before
    later_repeats: float  # share of later queries equal (case and spacing aside) to an earlier one of their episode
    fresh_seen_share: float  # mean share of words seen before, over the later queries that repeat none


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def searches_in_context(messages: list[dict]) -> Iterator[tuple[list[str], set[str], bool]]:
    """Each search of `messages` in order: its query's words, every word written before it, and
    whether the query repeats an earlier one of the episode."""
    seen: set[str] = set()
    asked: set[str] = set()
    for message in messages:
        seen.update(words(message.get("content") or ""))
        for call in message.get("tool_calls") or []:
            args = call_arguments(call.get("function", {}).get("arguments")) or {}
            query = args.get("query")
            query_words = words(query) if isinstance(query, str) else []
            if call.get("function", {}).get("name") == "search_papers" and query_words:
                yield query_words, set(seen), normalised(query) in asked
                asked.add(normalised(query))
            seen.update(words(json.dumps(args)))


def sources(episodes_messages: list[list[dict]]) -> QuerySources:
    first, later, repeats, fresh = [], [], [], []
    for messages in episodes_messages:
        for position, (query, seen, repeat) in enumerate(searches_in_context(messages)):
            share = sum(word in seen for word in query) / len(query)
            if position == 0:
                first.append(share)
                continue
            later.append(share)
            repeats.append(repeat)
            if not repeat:
                fresh.append(share)
    mean = lambda shares: sum(shares) / len(shares) if shares else 0.0  # noqa: E731
    return QuerySources(
        episodes=len(episodes_messages),
        first_searches=len(first),
        first_seen_share=mean(first),
        later_searches=len(later),
        later_seen_share=mean(later),
        later_wholly_seen=mean([share == 1.0 for share in later]),
        later_repeats=mean(repeats),
        fresh_seen_share=mean(fresh),
    )


def measure(run_dirs: list[Path]) -> dict:
    rows, lines = (
        {},
        [
            "| run | episodes | first query: words seen before | later queries | their words seen before | wholly seen before | repeating an earlier query | the others' words seen before |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ],
    )
    for run_dir in run_dirs:
        found = sources([episode.messages for episode in episodes_of(run_dir)])
        rows[str(run_dir)] = asdict(found)
        lines.append(
            f"| {run_dir} | {found.episodes} | {found.first_seen_share:.0%} | {found.later_searches} | "
            f"{found.later_seen_share:.0%} | {found.later_wholly_seen:.0%} | {found.later_repeats:.0%} | "
            f"{found.fresh_seen_share:.0%} |"
        )
    return {"runs": rows, "markdown": "\n".join(lines)}


def main(argv: list[str] | None = None) -> int:
    return episodes_main(measure, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
