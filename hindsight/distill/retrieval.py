"""The validator's second line: does what the assistant wrote find a private paper through the
search index, before any search of the episode returned it?

The string rules of hindsight.leaks judge characters, words and ids against the private text.
This check judges by effect instead. Each rationale, free text and non-query argument the
assistant wrote is read the way the rules read it (folded, digits read as letters against the
private vocabulary), the words the agent could know are taken out (the brief's and those of
every result shown so far), and what is left is searched, without the cutoff, in the corpus the
episode searches. If its best match is a label or the target that no search of the episode had
returned by then, the text points at a paper it could only know from hindsight, whatever its
spelling and however many other words dilute it. What is left must hold `min_words` content
words: a short phrase's best match says little. Queries are left to the rules: a query's results
are returned to the agent anyway, and a good query is meant to find antecedents.
"""

from __future__ import annotations

import datetime as dt

from hindsight.ids import normalize_arxiv_id
from hindsight.leaks import (
    Finding,
    PrivateText,
    call_arguments,
    content_words,
    paper_ids,
    papers_shown,
    spelled,
    strings_of,
    terms,
    words,
)

NO_CUTOFF = dt.date.max


def assistant_texts(message: dict) -> list[str]:
    """What an assistant message wrote, queries of search_papers left out."""
    texts = [message.get("content") or ""]
    for call in message.get("tool_calls") or []:
        function = call.get("function", {})
        arguments = call_arguments(function.get("arguments")) or {}
        if function.get("name") == "search_papers":
            arguments = {key: value for key, value in arguments.items() if key != "query"}
        texts += strings_of(arguments)
    return [text for text in texts if text.strip()]


def retrieval_findings(
    messages: list[dict], backend, private: PrivateText, brief: str, min_words: int = 4, only_turn: int | None = None
) -> list[Finding]:
    """A `private_copy` finding for each assistant text whose words beyond the public ones find,
    as the best match in `backend` searched without a cutoff, a private paper the episode had not
    surfaced when the text was written. With `only_turn`, only that message's texts are searched
    (the guard judges one new reply; the earlier ones were judged when they were proposed)."""
    surfaced: set[str] = set()
    public = set(terms(brief))
    findings = []
    for turn, message in enumerate(messages):
        if message.get("role") == "tool":
            papers = papers_shown(message.get("content") or "")
            surfaced |= paper_ids(papers)
            public |= terms(" ".join(s for paper in papers for s in strings_of(paper)))
            continue
        if message.get("role") != "assistant" or only_turn not in (None, turn):
            continue
        for text in assistant_texts(message):
            beyond = [w for w in words(text, private.vocabulary, "either") if spelled(w) not in public]
            read = " ".join(beyond)
            if len(content_words(read)) < min_words:
                continue
            best = backend.search(read, NO_CUTOFF, 1)
            found = normalize_arxiv_id(best[0].id) if best else None
            if found in private.ids and found not in surfaced:
                findings.append(
                    Finding(
                        "private_copy",
                        turn,
                        text,
                        f"its best match in the search index is private paper {found}, "
                        f"which no search of the episode had returned",
                    )
                )
    return findings
