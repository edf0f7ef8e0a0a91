"""Policies that need no model: the non-agent BM25 baseline."""

from __future__ import annotations

import json
import random

from hindsight.policy.base import Conversation, Turn
from hindsight.policy.parsing import ToolCall
from hindsight.prompts import brief_from_messages
from hindsight.search.text import STOPWORDS


def searches(messages: list[dict]) -> list[tuple[str | None, list[str]]]:
    """Each search of a conversation so far, in order: its query and the ids it returned."""
    done, query = [], None
    for message in messages:
        if message["role"] == "assistant" and message.get("tool_calls"):
            query = message["tool_calls"][0]["function"]["arguments"].get("query")
        elif message["role"] == "tool":
            done.append((query, [hit["id"] for hit in json.loads(message["content"]).get("results", [])]))
    return done


def first_sentence_query(brief: str, max_words: int = 64) -> str:
    """The brief's first sentence as a query: what a searcher who knows nothing else types first."""
    return " ".join(brief.split(". ")[0].rstrip(".").split()[:max_words])


class BM25OneShot:
    """Search the brief once and submit what came back, best first: the non-agent baseline row."""

    name = "bm25-oneshot"

    def __init__(
        self,
        max_query_words: int = 64,
        k: int = 10,
        first_sentence: bool = False,
        rationale: str | None = "top lexical match for the brief",
    ):
        """`first_sentence` searches only the brief's first sentence; `rationale=None` submits ids alone
        (the demo's naive demonstrations, short enough for a tiny model to learn)."""
        self.max_query_words, self.k, self.first_sentence, self.rationale = (
            max_query_words,
            k,
            first_sentence,
            rationale,
        )

    def act(self, batch: list[Conversation], tools: list[dict]) -> list[Turn]:
        return [self._turn(conv) for conv in batch]

    def _turn(self, conv: Conversation) -> Turn:
        results = [m for m in conv.messages if m["role"] == "tool"]
        if not results:
            brief = brief_from_messages(conv.messages)
            query = (
                first_sentence_query(brief, self.max_query_words)
                if self.first_sentence
                else " ".join(brief.split()[: self.max_query_words])
            )
            return Turn(calls=[ToolCall("search_papers", {"query": query, "limit": self.k})])
        try:
            papers = [
                {"id": hit["id"], **({"rationale": self.rationale} if self.rationale else {})}
                for hit in json.loads(results[-1]["content"]).get("results", [])
            ]
        except (json.JSONDecodeError, KeyError):
            papers = []
        return Turn(calls=[ToolCall("submit_answer", {"papers": papers[: self.k]})])

    def describe(self) -> dict:
        return {
            "backend": self.name,
            "max_query_words": self.max_query_words,
            "k": self.k,
            "first_sentence": self.first_sentence,
            "rationale": self.rationale,
        }


class NaiveExplorer:
    """A searcher that knows nothing of the field: the brief's first sentence, then for some
    targets one or two of its next sentences, then a submission of what came back, in the order
    it came back. Its demonstrations teach a from-scratch student to act and to copy: words from
    the brief into queries, ids out of tool results into the submission. How many searches a
    task gets is drawn from its brief and `Task.sample`."""

    name = "naive-explorer"

    def __init__(self, max_searches: int = 3, max_query_words: int = 12, submit: int = 10, seed: int = 0):
        self.max_searches, self.max_query_words, self.submit, self.seed = max_searches, max_query_words, submit, seed

    def act(self, batch: list[Conversation], tools: list[dict]) -> list[Turn]:
        return [self._turn(conv) for conv in batch]

    def _queries(self, conv: Conversation) -> list[str]:
        brief = brief_from_messages(conv.messages)
        later = [" ".join(s.rstrip(".?").split()[: self.max_query_words]) for s in brief.split(". ")[1:] if s.strip()]
        searches = random.Random(f"{brief}:{self.seed + conv.task.sample}").randint(1, self.max_searches)
        return [first_sentence_query(brief), *later][:searches]

    def _turn(self, conv: Conversation) -> Turn:
        queries, done = self._queries(conv), searches(conv.messages)
        if len(done) < len(queries):
            return Turn(calls=[ToolCall("search_papers", {"query": queries[len(done)]})])
        surfaced = list(dict.fromkeys(pid for _, ids in done for pid in ids))
        return Turn(calls=[ToolCall("submit_answer", {"papers": [{"id": pid} for pid in surfaced[: self.submit]]})])

    def describe(self) -> dict:
        return {
            "backend": self.name,
            "max_searches": self.max_searches,
            "max_query_words": self.max_query_words,
            "submit": self.submit,
            "seed": self.seed,
        }


def brief_queries(brief: str, lengths: list[int]) -> list[str]:
    """One query per entry of `lengths`, of that many words of the brief and nothing else: the
    first is the brief's opening words, as `first_sentence_query` types them; the later ones take
    the content words after the first sentence (stopwords left out, as the search drops them) in
    order, each query the next run of them, starting over when the brief runs out."""
    first, _, rest = brief.partition(". ")
    words = [w.strip(".,;:?!()") for w in (rest or first).split()]
    words = [w for w in words if w and w.lower() not in STOPWORDS] or brief.split()
    queries, position = [], 0
    for i, length in enumerate(lengths):
        if i == 0:
            queries.append(" ".join(brief.split()[:length]).rstrip(".?"))
            continue
        queries.append(" ".join(words[(position + j) % len(words)] for j in range(min(length, len(words)))))
        position += length
    return queries


class FormatMatchedExplorer:
    """The format control: for each task, the searches of a reference demonstration of the same
    target replaced by as many queries of as many words each, taken from the brief alone
    (`brief_queries`), then a submission of as many surfaced papers as the reference submitted,
    in the order they came back. Its episodes have the deployment format and the reference's
    shape without any hindsight: a student trained on them learns to act, not where to look.
    `shapes` maps a task id to (words of each query, papers submitted); a task it does not name
    gets one query of twelve words and a submission of everything surfaced."""

    name = "format-matched-explorer"

    def __init__(self, shapes: dict[str, tuple[tuple[int, ...], int]]):
        self.shapes = shapes

    def act(self, batch: list[Conversation], tools: list[dict]) -> list[Turn]:
        return [self._turn(conv) for conv in batch]

    def _turn(self, conv: Conversation) -> Turn:
        lengths, submit = self.shapes.get(conv.task.task_id, ((12,), 10**6))
        done = searches(conv.messages)
        if len(done) < len(lengths):
            query = brief_queries(brief_from_messages(conv.messages), list(lengths))[len(done)]
            return Turn(calls=[ToolCall("search_papers", {"query": query})])
        surfaced = list(dict.fromkeys(pid for _, ids in done for pid in ids))
        return Turn(calls=[ToolCall("submit_answer", {"papers": [{"id": pid} for pid in surfaced[:submit]]})])

    def describe(self) -> dict:
        return {"backend": self.name, "shapes": len(self.shapes)}
