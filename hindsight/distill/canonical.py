"""Training rows rebuilt, not copied: each teacher action written anew in one canonical form.

What a row keeps of an assistant turn is its tool call, and of a call only what the protocol
needs, written the way the protocol or the search fixes it: a query as plain text (compatibility
forms folded, invisible format characters dropped, whitespace single); a paper id as the search
returned it; `limit` left out (the protocol's default); a rationale only where the recipe keeps
rationales (`distill.keep_rationales`). Extra keys, the teacher's spacing and spelling of ids,
and any text around a call never reach a row. Each field a teacher could choose freely and that
could carry a private fact is either canonicalised here or dropped; the query, the one free text
left, is judged word by word (hindsight.leaks: the closed vocabulary).
"""

from __future__ import annotations

import unicodedata

from hindsight.ids import normalize_arxiv_id
from hindsight.leaks import call_arguments, papers_shown


def canonical_text(text: str) -> str:
    """NFKC, format characters (zero-width, joiners, marks of direction) dropped, whitespace single."""
    folded = unicodedata.normalize("NFKC", text)
    return " ".join("".join(ch for ch in folded if unicodedata.category(ch) != "Cf").split())


def returned_forms(messages: list[dict]) -> dict[str, str]:
    """normalised id -> the id as a search or read of this conversation returned it."""
    forms: dict[str, str] = {}
    for message in messages:
        if message.get("role") == "tool":
            for paper in papers_shown(message.get("content") or ""):
                pid = paper.get("id")
                if isinstance(pid, str) and (key := normalize_arxiv_id(pid)):
                    forms.setdefault(key, pid)
    return forms


def canonical_id(value, forms: dict[str, str]):
    """An id as the search returned it; one no search returned is left for replay to reject."""
    key = normalize_arxiv_id(value)
    return forms.get(key, value) if key else value


def canonical_action(tool: str, arguments, messages: list[dict], keep_rationales: bool = False) -> tuple[str, object]:
    """(tool, arguments) as a row keeps them, given the conversation so far. Arguments that are
    not a JSON object, and entries that are not papers, are passed on as they are: replay
    judges them malformed."""
    parsed = call_arguments(arguments)
    if parsed is None:
        return tool, arguments
    if tool == "search_papers":
        query = parsed.get("query")
        return tool, {"query": canonical_text(query)} if isinstance(query, str) else parsed
    forms = returned_forms(messages)
    if tool == "read_paper":
        return tool, {"id": canonical_id(parsed.get("id"), forms)}
    if tool == "submit_answer" and isinstance(parsed.get("papers"), list):
        papers = []
        for paper in parsed["papers"]:
            if not isinstance(paper, dict):
                papers.append(paper)
                continue
            kept = {"id": canonical_id(paper.get("id"), forms)}
            if keep_rationales and isinstance(paper.get("rationale"), str):
                kept["rationale"] = canonical_text(paper["rationale"])
            papers.append(kept)
        return tool, {"papers": papers}
    return tool, parsed
