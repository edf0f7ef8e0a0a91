"""Shared by the leak tests: the instances and private blocks they probe, conversations built
around a planted disguise, what the validator and the audit flag in one, and the strategies that
draw titles and character-level disguises."""

import json
import os
import sys
import unicodedata
from functools import cache

from hypothesis import HealthCheck, Phase, assume, settings
from hypothesis import strategies as st

from hindsight.data import load_benchmark
from hindsight.distill.audit import audit_row
from hindsight.leaks import PrivateText, check_messages, content_words, spelled, terms
from hindsight.lexicon import Lexicon
from hindsight.prompts import initial_messages
from tests.helpers import SHARED_DATA

N, SHARE = 5, 0.6


# CI draws the same examples every run; EXPLORE_LEAKS=N draws N fresh ones per test (run it after
# changing hindsight/leaks.py). No shrinking: a failure prints its whole example.
EXPLORE = int(os.environ.get("EXPLORE_LEAKS", "0"))


SETTINGS = settings(
    max_examples=EXPLORE or 60,
    derandomize=not EXPLORE,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.generate],
)


LEXICONS: dict[str, Lexicon] = {}  # instance id -> its corpus's lexicon (the validator's third line)


@cache
def world_instances():
    corpus, instances, _ = load_benchmark("world")
    LEXICONS.update(dict.fromkeys((inst.id for inst in instances), Lexicon.of_corpus(corpus)))
    return [inst for inst in instances if inst.split == "train"][:40]


@cache
def deepscholar_instances():
    source = SHARED_DATA / "deepscholar-bench"
    if not source.exists():
        return []
    corpus, instances, _ = load_benchmark(str(source))
    LEXICONS.update(dict.fromkeys((inst.id for inst in instances), Lexicon.of_corpus(corpus)))
    return list(instances)


def lexicon_for(instance) -> Lexicon:
    instances()
    return LEXICONS[instance.id]


def instances():
    return world_instances() + deepscholar_instances()


def private_for(instance) -> PrivateText:
    block = "\n".join(f"{lab.title}\n{lab.abstract}" for lab in instance.labels)
    return PrivateText.build(
        block, instance.target.title, instance.target.id, instance.labels, N, lexicon_for(instance)
    )


def call(name: str, arguments: dict, i: int, as_text: bool) -> dict:
    args = json.dumps(arguments, ensure_ascii=False) if as_text else arguments
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": args}}],
    }


def result(i: int, papers: list[dict]) -> dict:
    return {
        "role": "tool",
        "tool_call_id": f"c{i}",
        "name": "search_papers",
        "content": json.dumps({"results": papers, "calls_left": 5}),
    }


def conversation(
    instance,
    queries: list[str],
    papers=(),
    rationale: str = "",
    content: str = "",
    as_text: bool = False,
    submit: tuple[str, ...] = (),
) -> list[dict]:
    messages = initial_messages(instance.task())
    for i, query in enumerate(queries):
        messages += [call("search_papers", {"query": query}, i, as_text), result(i, list(papers) if i == 0 else [])]
    papers_submitted = [{"id": pid, "rationale": rationale} for pid in submit]
    if rationale and not submit:
        papers_submitted = [{"id": "x", "rationale": rationale}]
    submission = {"papers": papers_submitted}
    last = call("submit_answer", submission, len(queries), as_text)
    last["content"] = content
    messages += [last, {"role": "tool", "tool_call_id": f"c{len(queries)}", "name": "submit_answer", "content": "{}"}]
    return messages


def flagged(instance, messages) -> tuple[set[str], list[str]]:
    """What the validator's check flags, and what the audit finds, in one conversation."""
    private = private_for(instance)
    flags = {f.flag for f in check_messages(messages, private, instance.brief, N, SHARE)} - {"unsurfaced"}
    audit = [
        p
        for p in audit_row(
            {"messages": messages, "tools": []}, {instance.brief: instance}, {instance.id: private}, N, SHARE
        )
        if "no search returned" not in p
    ]
    return flags, audit


def a_title(draw) -> tuple[object, str]:
    instance = draw(st.sampled_from(instances()))
    whose = draw(st.sampled_from([instance.target.title] + [lab.title for lab in instance.labels]))
    # a title the brief nearly spells out leaks little beyond the brief: not flaggable by words
    stems = [spelled(w) for w in content_words(whose)]
    assume(stems and len([w for w in stems if w not in terms(instance.brief)]) >= SHARE * len(stems))
    return instance, whose


@cache
def characters_of(*categories: str) -> tuple[str, ...]:
    return tuple(ch for ch in map(chr, range(sys.maxunicode + 1)) if unicodedata.category(ch) in categories)


LEET = {"o": "0", "l": "1", "i": "1", "e": "3", "a": "4", "s": "5", "t": "7"}


@st.composite
def marked(draw, text: str) -> str:
    """Marks of any non-spacing, enclosing or format category after letters (U+20DD circles,
    U+034F joiners, variation selectors, zero-width characters...)."""
    marks = characters_of("Mn", "Me", "Cf")
    return "".join(ch + (draw(st.sampled_from(marks)) if ch.isalpha() and draw(st.booleans()) else "") for ch in text)


@st.composite
def digits_for_letters(draw, text: str) -> str:
    words = []
    for word in text.split():
        letters = [LEET[ch] if ch in LEET and draw(st.integers(0, 2)) == 0 else ch for ch in word.lower()]
        words.append("".join(letters))
    return " ".join(words)
