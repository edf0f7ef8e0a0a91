"""How a run searched and answered, read from its episodes: searches per episode, words per query,
the share of queries that repeat an earlier query of the same episode, papers per answer, and how
many distinct papers the answers name across targets (an answer list reused for every brief names
few). It tells a student that learned the form of an episode from one that learned to search.
A `.jsonl` file of SFT rows (distill's `sft.jsonl`) is read the same way, each row an episode, so
a student can be set beside the demonstrations it was trained on.

    python -m benchmarks.search_behaviour outputs/qwen05_world/runs/base outputs/qwen05_world/runs/sft
    python -m benchmarks.search_behaviour outputs/qwen05_world/distill/sft.jsonl outputs/qwen05_world/runs/sft
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from benchmarks.common import run_folders_main
from hindsight.jsonl import read_jsonl
from hindsight.runs import read_episodes
from hindsight.schema import Episode, Step, SubmittedPaper


@dataclass
class Behaviour:
    episodes: int
    searches_per_episode: float
    words_per_query: float
    repeated_query_share: float  # queries equal (case and spacing aside) to an earlier one of their episode
    answers: int  # episodes that submitted at least one paper
    papers_per_answer: float  # distinct ids an answer
    answers_repeating_a_paper: float  # share of answers that name some id more than once
    distinct_submitted_share: float  # distinct ids over all submitted ids, across targets


def normalised(query: str) -> str:
    """A query as a repeat is judged: case and spacing aside."""
    return " ".join(query.lower().split())


def queries(episode: Episode) -> list[str]:
    out = []
    for step in episode.steps:
        if step.tool == "search_papers" and isinstance(step.args, dict) and isinstance(step.args.get("query"), str):
            out.append(normalised(step.args["query"]))
    return out


def behaviour(episodes: list[Episode]) -> Behaviour:
    searched = [queries(episode) for episode in episodes]
    every_query = [query for episode_queries in searched for query in episode_queries]
    repeated = sum(len(episode_queries) - len(set(episode_queries)) for episode_queries in searched)
    named = [[paper.id for paper in episode.submission] for episode in episodes if episode.submission]
    # an id named twice in one answer counts once, as the scorer counts it
    answers = [list(dict.fromkeys(ids)) for ids in named]
    submitted = [paper_id for answer in answers for paper_id in answer]
    repeating = sum(len(answer) < len(ids) for answer, ids in zip(answers, named, strict=True))
    share = lambda part, whole: part / whole if whole else 0.0  # noqa: E731
    return Behaviour(
        episodes=len(episodes),
        searches_per_episode=share(len(every_query), len(episodes)),
        words_per_query=share(sum(len(query.split()) for query in every_query), len(every_query)),
        repeated_query_share=share(repeated, len(every_query)),
        answers=len(answers),
        papers_per_answer=share(len(submitted), len(answers)),
        answers_repeating_a_paper=share(repeating, len(answers)),
        distinct_submitted_share=share(len(set(submitted)), len(submitted)),
    )


class DemonstrationError(ValueError):
    pass


def demonstration_episodes(path: Path) -> list[Episode]:
    """SFT rows read as episodes: each tool call of an assistant turn a step, the papers of the
    submit_answer call the submission."""
    episodes = []
    for line_no, row, problem in read_jsonl(path):
        where = f"{path}:{line_no}"
        if problem or not isinstance(row, dict) or not isinstance(row.get("messages"), list):
            raise DemonstrationError(f"{where}: {problem or 'not an SFT row (an object with a messages list)'}")
        steps, submission = [], []
        for message in row["messages"]:
            for call in message.get("tool_calls") or []:
                name, args = call["function"]["name"], call["function"].get("arguments")
                try:
                    args = json.loads(args) if isinstance(args, str) else args
                except json.JSONDecodeError as exc:
                    raise DemonstrationError(f"{where}: {name}'s arguments are not JSON ({exc.msg})") from None
                steps.append(Step(tool=name, args=args))
                if name == "submit_answer" and isinstance(args, dict):
                    submission = [SubmittedPaper(id=str(paper["id"])) for paper in args.get("papers") or []]
        episodes.append(
            Episode(
                instance_id=where,
                policy="demonstrations",
                protocol_hash="",
                steps=steps,
                submission=submission,
                status="submitted" if submission else "malformed",
                messages=row["messages"],
            )
        )
    return episodes


def episodes_of(source: Path) -> list[Episode]:
    """A run folder's episodes, or a file of SFT rows read as episodes."""
    if source.suffix in (".jsonl", ".gz") and source.is_file():
        return demonstration_episodes(source)
    return list(read_episodes(source / "episodes.jsonl").values())


def measure(run_dirs: list[Path]) -> dict:
    rows, lines = (
        {},
        [
            "| run | episodes | searches an episode | words a query | queries repeating one of their episode | answers | papers an answer | answers naming a paper twice | distinct of submitted ids |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ],
    )
    for run_dir in run_dirs:
        found = behaviour(episodes_of(run_dir))
        rows[str(run_dir)] = asdict(found)
        lines.append(
            f"| {run_dir} | {found.episodes} | {found.searches_per_episode:.1f} | {found.words_per_query:.1f} | "
            f"{found.repeated_query_share:.0%} | {found.answers} | {found.papers_per_answer:.1f} | "
            f"{found.answers_repeating_a_paper:.0%} | {found.distinct_submitted_share:.0%} |"
        )
    return {"runs": rows, "markdown": "\n".join(lines)}


def episodes_main(measure: Callable[[list[Path]], dict], description: str, argv: list[str] | None) -> int:
    """The command line of a benchmark that reads run folders and files of SFT rows alike: a row
    that is not an SFT row is named, and the exit status is 2."""
    try:
        return run_folders_main(measure, description, argv)
    except DemonstrationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def main(argv: list[str] | None = None) -> int:
    return episodes_main(measure, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
