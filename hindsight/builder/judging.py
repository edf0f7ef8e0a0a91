"""Reading the models' replies: judges' votes, their consensus, briefs and identity guesses.
A reply that cannot be read is a failed vote (or brief, or audit) with its reason, never a crash."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from hindsight.schema import ROLES

TIER_ORDER = ("T0", "T1", "T2", "T3")
_FENCE = re.compile(r"^\s*```[a-zA-Z]*\s*|\s*```\s*$")


@dataclass(frozen=True)
class Vote:
    judge: str
    tier: str
    role: str
    rationale: str


@dataclass(frozen=True)
class Consensus:
    tier: str
    role: str
    agreement: int  # votes that gave the consensus tier
    votes: int  # valid votes
    rationale: str


def _json_block(text: str, opening: str, closing: str):
    """The JSON value in a reply, fences and surrounding prose tolerated."""
    body = _FENCE.sub("", text.strip())
    start, end = body.find(opening), body.rfind(closing)
    if start < 0 or end < start:
        raise ValueError(f"no JSON {'array' if opening == '[' else 'object'} in the reply")
    try:
        return json.loads(body[start : end + 1])
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg})") from None


def _json_items(text: str) -> list:
    """The items of one JSON array, or of several arrays or objects written one after another (a
    form small models often choose: one object a line). Raises ValueError when there are none."""
    body = _FENCE.sub("", text.strip())
    starts = [i for i in (body.find("["), body.find("{")) if i >= 0]
    if not starts:
        raise ValueError("no JSON array in the reply")
    decoder, position, items = json.JSONDecoder(), min(starts), []
    while position < len(body):
        try:
            value, position = decoder.raw_decode(body, position)
        except json.JSONDecodeError as exc:
            if not items:
                raise ValueError(f"not valid JSON ({exc.msg})") from None
            break  # prose after the votes
        items.extend(value if isinstance(value, list) else [value])
        while position < len(body) and body[position] in " \t\r\n,":
            position += 1
    return items


def parse_votes(judge: str, text: str, count: int) -> tuple[dict[int, Vote], list[str]]:
    """The votes a judge's reply gives references 0..count-1, and what was wrong with the rest."""
    try:
        items = _json_items(text)
    except ValueError as exc:
        return {}, [str(exc)]
    votes, problems = {}, []
    for position, item in enumerate(items):
        index = item.get("index", position) if isinstance(item, dict) else None
        if not isinstance(index, int) or not 0 <= index < count or index in votes:
            problems.append(f"item {position}: no usable index")
            continue
        tier, role = item.get("tier"), item.get("role", item.get("type"))
        if tier not in TIER_ORDER or role not in ROLES:
            problems.append(f"item {position}: tier {tier!r} or role {role!r} unknown")
            continue
        votes[index] = Vote(judge, tier, role, " ".join(str(item.get("rationale", "")).split()))
    if len(votes) < count:
        problems.append(f"{count - len(votes)} reference(s) without a vote")
    return votes, problems


def consensus(votes: list[Vote]) -> Consensus | None:
    """The lower median tier (an even split goes to the lower tier), the majority role (a tie goes
    to the role of the votes at the consensus tier, then to conceptual), and how many agreed."""
    if not votes:
        return None
    ranks = sorted(TIER_ORDER.index(vote.tier) for vote in votes)
    tier = TIER_ORDER[ranks[(len(ranks) - 1) // 2]]
    agreeing = [vote for vote in votes if vote.tier == tier]
    counts = {role: sum(vote.role == role for vote in votes) for role in ROLES}
    best = max(counts.values())
    tied = [role for role in ROLES if counts[role] == best]
    if len(tied) > 1:
        at_tier = {role: sum(vote.role == role for vote in agreeing) for role in tied}
        tied = [role for role in tied if at_tier[role] == max(at_tier.values())]
    role = tied[0] if len(tied) == 1 else "conceptual"
    return Consensus(tier, role, len(agreeing), len(votes), agreeing[0].rationale)


def parse_brief(text: str | None, minimum_words: int = 30) -> tuple[str | None, str | None]:
    """(brief, problem): the reply as one paragraph, or why it is no brief."""
    brief = " ".join((text or "").split())
    if len(brief.split()) < minimum_words:
        return None, f"a brief of {len(brief.split())} words (under {minimum_words})"
    return brief, None


def parse_guess(text: str | None) -> tuple[dict | None, str | None]:
    """({guess, confidence, rationale}, problem) from an auditor's reply."""
    try:
        record = _json_block(text or "", "{", "}")
    except ValueError as exc:
        return None, str(exc)
    if not isinstance(record, dict):
        return None, "the reply is not a JSON object"
    guess, confidence = record.get("guess", ""), record.get("confidence")
    if (
        not isinstance(guess, str)
        or isinstance(confidence, bool)
        or not isinstance(confidence, (int, float))
        or not 0 <= confidence <= 1
    ):
        return None, f"guess {guess!r} or confidence {confidence!r} unusable"
    return {
        "guess": " ".join(guess.split()),
        "confidence": float(confidence),
        "rationale": " ".join(str(record.get("rationale", "")).split()),
    }, None
