"""The offline privileged teacher: it reads the private block from its own prompt, searches the
brief's first sentence (its opening search, first unless `opening_at` says otherwise) and
short keyword queries of discriminative words (rare in the corpus, absent from the brief), and
submits what its keyword searches surfaced, in the order they surfaced it.

Keyword words are ranked by how many antecedents share them (weighted by tier) times their
rarity in the corpus. The first keyword query is the same for every candidate and, as far as
the private block allows, for every target that needs the same mechanism (see `_plan`); later
ones sample from the top of the ranking and differ by seed. It never copies a title or a
phrase: a keyword query is 2-3 single words in an order of its own, well under the n-gram
length that flags private copying. The opening search is the one any searcher makes; where it
comes is a setting because a student imitates the order of its teacher's searches.

The submission is what a student can imitate: the results of its keyword searches, whole and in
the order they came back, then the opening search's if there is room. The hindsight is in the
searches; the submission copies their results forward, by no score a student could not see.
How this design was reached, and what the earlier teachers did to the demo's student, is in
docs/experiments/demo-history.md.
"""

from __future__ import annotations

import random
import re

from hindsight.distill.guard import is_refusal
from hindsight.distill.prompts import PRIVATE_HEADER
from hindsight.policy.base import Conversation, Turn
from hindsight.policy.parsing import ToolCall
from hindsight.policy.scripted import first_sentence_query, searches
from hindsight.prompts import brief_from_messages
from hindsight.search.text import analyze

_ENTRY = re.compile(r"^\d+\. \[(T\d)/\w+\] (.*)\n   Abstract: (.*)$", re.M)


class ScriptedTeacher:
    name = "scripted-teacher"

    def __init__(
        self,
        idf: dict[str, float],
        seed: int = 0,
        queries: int = 4,
        words_per_query: int = 3,
        submit: int = 10,
        max_query_words: int = 64,
        seed_names: dict[str, str] | None = None,
        opening_at: int = 0,
        anchor_words: int = 0,
    ):
        """`queries` counts every search, the first sentence's included; `opening_at` is where that
        one comes among them (0: first). `anchor_words` of the brief's own words start the first
        keyword query (`_anchor`), the mechanism words filling the rest of its `words_per_query`.
        `seed_names` (task id -> a stable name of its target, from
        the teacher stage) keeps a plan the same across runs; a task without one is seeded from its
        brief."""
        self.idf, self.seed, self.queries, self.words_per_query, self.submit = (
            idf,
            seed,
            queries,
            words_per_query,
            submit,
        )
        self.opening_at = opening_at
        self.anchor_words = min(anchor_words, words_per_query - 1)
        self.max_query_words = max_query_words
        self.seed_names = dict(seed_names or {})
        self.plans: dict[str, list[str]] = {}
        self.skipped: dict[str, int] = {}  # planned queries the leak guard refused

    def describe(self) -> dict:
        return {
            "backend": self.name,
            "seed": self.seed,
            "queries": self.queries,
            "opening": "brief's first sentence",
            "words_per_query": self.words_per_query,
            "submission": "keyword searches' results, then the opening's, as surfaced",
        }

    def act(self, batch: list[Conversation], tools: list[dict]) -> list[Turn]:
        return [self._turn(conv) for conv in batch]

    def _private(self, conv: Conversation) -> list[tuple[str, str, str]]:
        system = conv.messages[0]["content"]
        if PRIVATE_HEADER not in system:
            raise ValueError("the scripted teacher needs the private block in its system prompt")
        return _ENTRY.findall(system.split(PRIVATE_HEADER, 1)[1])

    def _plan(self, conv: Conversation) -> list[str]:
        # candidate k of a target uses seed + k
        name = self.seed_names.get(conv.task.task_id, conv.task.brief)
        rng = random.Random(f"{name}:{self.seed + conv.task.sample}")
        brief = brief_from_messages(conv.messages)
        brief_terms = set(analyze(brief))
        private = self._private(conv)
        # A word that recurs across the antecedents (weighted by tier) and is rare in the corpus
        # names what they share: the mechanism.
        support: dict[str, float] = {}
        spelling: dict[str, str] = {}
        for tier, title, abstract in private:
            weight = {"T3": 3.0, "T2": 2.0}.get(tier, 1.0)
            seen = set()
            for word in re.findall(r"[A-Za-z][A-Za-z\-]{2,}", f"{title} {abstract}"):
                terms = analyze(word)
                if len(terms) != 1 or terms[0] in brief_terms or terms[0] in seen:
                    continue
                seen.add(terms[0])
                support[terms[0]] = support.get(terms[0], 0.0) + weight
                spelling.setdefault(terms[0], word.lower())
        ranked = sorted(support, key=lambda term: (-support[term] * self.idf.get(term, 0.0), term))
        keywords = self.queries - 1
        pool = [spelling[term] for term in ranked[: self.queries * self.words_per_query * 2]]
        opening = first_sentence_query(brief_from_messages(conv.messages), self.max_query_words)
        if len(pool) < 2:
            return [opening]
        # The first keyword query is the same for every candidate and, as far as the private block
        # allows, for every target that needs the same mechanism: the rarest of the words at least
        # half the antecedents' weight supports. Ranked by support x rarity instead, the words
        # (and their order) changed from target to target with which abstract happened to use
        # which word, and a tiny student learned no mapping from the problem to a query.
        strongest = max(support.values())
        telling = sorted(
            (term for term in support if support[term] >= strongest / 2),
            key=lambda term: (-self.idf.get(term, 0.0), term),
        )
        anchor = _anchor(brief, private, self.idf, self.anchor_words)
        queries = [" ".join([*anchor, *(spelling[term] for term in telling[: self.words_per_query - len(anchor)])])]
        for _ in range(keywords - 1):
            words = rng.sample(
                pool[: max(4, len(pool) // 2)] if rng.random() < 0.7 else pool, min(self.words_per_query, len(pool))
            )
            queries.append(" ".join(words))
        return [*queries[: self.opening_at], opening, *queries[self.opening_at :]]

    def _turn(self, conv: Conversation) -> Turn:
        key = conv.task.task_id
        if key not in self.plans:
            self.plans[key] = self._plan(conv)
        if is_refusal(conv.messages[-1]):  # the leak guard refused the last query: move on to the next
            self.skipped[key] = self.skipped.get(key, 0) + 1
        plan = self.plans[key]
        searches = sum(1 for m in conv.messages if m["role"] == "tool") + self.skipped.get(key, 0)
        if searches < len(plan):
            return Turn(calls=[ToolCall("search_papers", {"query": plan[searches]})])  # limit: the protocol's k
        return Turn(calls=[ToolCall("submit_answer", {"papers": self._forwarded(conv)})])

    def _forwarded(self, conv: Conversation) -> list[dict]:
        opening_query = first_sentence_query(brief_from_messages(conv.messages), self.max_query_words)
        done = searches(conv.messages)
        keyword_first = [ids for query, ids in done if query != opening_query] + [
            ids for query, ids in done if query == opening_query
        ]
        forwarded = list(dict.fromkeys(pid for ids in keyword_first for pid in ids))
        # No rationale: a fixed sentence would carry no information and, ten times per
        # demonstration, outweigh the queries in a student's loss.
        return [{"id": pid} for pid in forwarded[: self.submit]]


def _anchor(brief: str, private: list[tuple[str, str, str]], idf: dict[str, float], count: int) -> list[str]:
    """The first `count` words of the brief, in its order, among those the antecedents share most
    (tier-weighted support x rarity at least a quarter of the best): the problem's own words. A keyword
    query that starts with them is anchored in what the student reads: it copies them, and the
    mechanism words that follow are then predicted from the words just before them, not from a
    brief read as a whole. So the idea went; the demo's tiny student never learned to copy the
    anchor, and the demo leaves it off (docs/guide/distill.md)."""
    if count <= 0:
        return []
    support: dict[str, float] = {}
    for tier, title, abstract in private:
        for term in set(analyze(f"{title} {abstract}")):
            support[term] = support.get(term, 0.0) + {"T3": 3.0, "T2": 2.0}.get(tier, 1.0)
    order = [(word, analyze(word)) for word in re.findall(r"[A-Za-z][A-Za-z\-]{2,}", brief)]
    score = {terms[0]: support.get(terms[0], 0.0) * idf.get(terms[0], 0.0) for _, terms in order if len(terms) == 1}
    best = max(score.values(), default=0.0)
    if best <= 0:
        return []
    picked: dict[str, str] = {}
    for word, terms in order:
        if len(terms) == 1 and score[terms[0]] >= best / 4:
            picked.setdefault(terms[0], word.lower())
    return list(picked.values())[:count]
