"""Policies that need no model: the non-agent BM25 baseline."""

from __future__ import annotations

import json

from hindsight.policy.base import Conversation, Turn
from hindsight.policy.parsing import ToolCall
from hindsight.prompts import brief_from_messages


def first_sentence_query(brief: str, max_words: int = 64) -> str:
    """The brief's first sentence as a query: what a searcher who knows nothing else types first."""
    return " ".join(brief.split(". ")[0].rstrip(".").split()[:max_words])


class BM25OneShot:
    """Search the brief once and submit what came back, best first: the non-agent baseline row."""

    name = "bm25-oneshot"

    def __init__(self, max_query_words: int = 64, k: int = 10, first_sentence: bool = False,
                 rationale: str | None = "top lexical match for the brief"):
        """`first_sentence` searches only the brief's first sentence; `rationale=None` submits ids alone
        (the demo's naive demonstrations, short enough for a tiny model to learn)."""
        self.max_query_words, self.k, self.first_sentence, self.rationale = max_query_words, k, first_sentence, rationale

    def act(self, batch: list[Conversation], tools: list[dict]) -> list[Turn]:
        return [self._turn(conv) for conv in batch]

    def _turn(self, conv: Conversation) -> Turn:
        results = [m for m in conv.messages if m["role"] == "tool"]
        if not results:
            brief = brief_from_messages(conv.messages)
            query = (first_sentence_query(brief, self.max_query_words) if self.first_sentence
                     else " ".join(brief.split()[: self.max_query_words]))
            return Turn(calls=[ToolCall("search_papers", {"query": query, "limit": self.k})])
        try:
            papers = [{"id": hit["id"], **({"rationale": self.rationale} if self.rationale else {})}
                      for hit in json.loads(results[-1]["content"]).get("results", [])]
        except (json.JSONDecodeError, KeyError):
            papers = []
        return Turn(calls=[ToolCall("submit_answer", {"papers": papers[: self.k]})])

    def describe(self) -> dict:
        return {"backend": self.name, "max_query_words": self.max_query_words, "k": self.k,
                "first_sentence": self.first_sentence, "rationale": self.rationale}
