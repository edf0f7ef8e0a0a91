"""The information boundary against an adversary who disguises what it copies.

Titles, abstract sentences and ids of labels and targets, from the synthetic world and from the
real DeepScholar-Bench data, are disguised (case, punctuation, invisible characters, look-alike
letters, diacritics, hyphens, spellings, word forms, a split across queries, JSON-text
arguments, ids with separators, full-width digits, versions, URLs) and planted in a
conversation: the replay validator's check and the leak audit must both find every one. Legitimate
conversations (keyword queries that copy nothing; label ids a search returned, with or without a
version) must never be flagged.
"""

import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from hindsight.distill.audit import audit_row
from hindsight.leaks import check_messages, content_words
from tests.helpers import SHARED_DATA
from tests.leak_helpers import (
    SETTINGS,
    SHARE,
    N,
    a_title,
    conversation,
    deepscholar_instances,
    flagged,
    instances,
    private_for,
    world_instances,
)

LOOKALIKE = {"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "x": "х", "y": "у", "i": "і", "s": "ѕ", "j": "ј"}
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]
BRITISH = [
    (r"ization\b", "isation"),
    (r"ize\b", "ise"),
    (r"yze\b", "yse"),
    (r"or\b", "our"),
    (r"ter\b", "tre"),
    (r"eling\b", "elling"),
]


# -- disguises ---------------------------------------------------------------------------------


@st.composite
def disguised(draw, text: str) -> str:
    """`text` as an adversary might write it: each word may be recased, joined to or split from its
    neighbour, respelled, given another ending, dressed in look-alike letters, diacritics or
    invisible characters, and separated by punctuation or no-break spaces."""
    out, joined = [], False
    for word in text.split():
        # words joined ("statespace") meet only in pairs, as the search analyser's pairs do
        separator = draw(st.sampled_from([" ", "  ", "\u00a0", " - ", ", ", "-", "\u200b "] + ([] if joined else [""])))
        joined = separator == ""
        if draw(st.booleans()):
            word = word.upper() if draw(st.booleans()) else word.capitalize()
        for pattern, repl in BRITISH:
            if len(word) >= 5 and draw(st.integers(0, 2)) == 0:
                word = re.sub(pattern, repl, word)
        if (
            word.isalpha()
            and len(word) > 3
            and not word.lower().endswith("s")
            and not joined
            and word.lower() not in ("with", "from", "into", "over", "under", "that", "this")
            and draw(st.integers(0, 3)) == 0
        ):
            word += "s"
        letters = []
        for ch in word:
            roll = draw(st.integers(0, 9))
            if roll == 0 and ch.lower() in LOOKALIKE:
                ch = LOOKALIKE[ch.lower()]
            elif roll == 1 and ch.isalpha():
                ch += "\u0301"  # a combining accent
            letters.append(ch)
            if draw(st.integers(0, 9)) == 0:
                letters.append(draw(st.sampled_from(INVISIBLE)))
        out += ["".join(letters), separator]
    return "".join(out).strip()


@st.composite
def disguised_id(draw, pid: str) -> str:
    if "/" in pid:
        archive, number = pid.split("/")
        return draw(
            st.sampled_from(
                [
                    f"{archive}/{number}",
                    f"{archive.upper()}/{number}v2",
                    f"arXiv:{archive}/{number}",
                    f"{archive} / {number}",
                ]
            )
        )
    head, tail = pid.split(".")
    sep = draw(st.sampled_from([".", " . ", "-", " ", "_", "·", ". "]))
    text = f"{head}{sep}{tail}"
    if draw(st.booleans()):
        text = "".join(chr(ord(c) + 0xFEE0) if c.isdigit() else c for c in text)  # full-width digits
    if draw(st.booleans()):
        text = " ".join(text) if draw(st.booleans()) else text  # every character spaced
    return draw(
        st.sampled_from(
            [text, f"{text}v3", f"arXiv:{text}", f"https://arxiv.org/abs/{text}", f"see {text} for details"]
        )
    )


# -- conversations -----------------------------------------------------------------------------


@SETTINGS
@given(st.data())
def test_a_disguised_title_in_a_query_is_flagged_by_both(data):
    instance, title = a_title(data.draw)
    query = data.draw(disguised(title))
    flags, audit = flagged(instance, conversation(instance, [query], as_text=data.draw(st.booleans())))
    assert "identifying_query" in flags and audit, (title, query)


@SETTINGS
@given(st.data())
def test_a_title_split_across_queries_is_flagged_by_both(data):
    instance, title = a_title(data.draw)
    words = title.split()
    assume(len(content_words(title)) >= 3)
    parts = data.draw(st.integers(2, min(3, len(words))))
    cuts = sorted(
        data.draw(st.lists(st.integers(1, len(words) - 1), min_size=parts - 1, max_size=parts - 1, unique=True))
    )
    pieces = [" ".join(words[a:b]) for a, b in zip([0, *cuts], [*cuts, len(words)])]
    queries = [data.draw(disguised(piece)) for piece in pieces]
    flags, audit = flagged(instance, conversation(instance, queries))
    assert "identifying_query" in flags and audit, (title, queries)


@SETTINGS
@given(st.data())
def test_a_disguised_abstract_sentence_in_a_rationale_or_free_text_is_flagged_by_both(data):
    instance = data.draw(st.sampled_from(instances()))
    label = data.draw(st.sampled_from(instance.labels))
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", label.abstract) if len(s.split()) >= N + 2]
    assume(sentences)
    sentence = data.draw(disguised(data.draw(st.sampled_from(sentences))))
    assume(not set(content_words(sentence)) <= set(content_words(instance.brief)))
    where = data.draw(st.sampled_from(["rationale", "content"]))
    messages = conversation(instance, ["keyword"], **{where: sentence})
    flags, audit = flagged(instance, messages)
    assert flags & {"private_copy", "identifying_query"} and audit, (where, sentence)


@SETTINGS
@given(st.data())
def test_a_disguised_private_id_anywhere_before_a_search_returned_it_is_flagged_by_both(data):
    instance = data.draw(st.sampled_from(instances()))
    pid = data.draw(st.sampled_from([instance.target.id] + [lab.id for lab in instance.labels]))
    text = data.draw(disguised_id(pid))
    where = data.draw(st.sampled_from(["query", "rationale", "content"]))
    messages = (
        conversation(instance, [text]) if where == "query" else conversation(instance, ["keyword"], **{where: text})
    )
    flags, audit = flagged(instance, messages)
    assert "identifying_query" in flags and audit, (where, text)


@SETTINGS
@given(st.data())
def test_label_ids_a_search_returned_are_never_flagged_wherever_they_appear(data):
    instance = data.draw(st.sampled_from(instances()))
    returned = [{"id": lab.id, "title": lab.title} for lab in instance.labels]
    submit = tuple(lab.id + data.draw(st.sampled_from(["", "v1", "v4"])) for lab in instance.labels)
    rationale = data.draw(st.sampled_from(["", f"builds on {instance.labels[0].id}", "a close method"]))
    messages = conversation(instance, ["keyword search"], papers=returned, rationale=rationale, submit=submit)
    private = private_for(instance)
    assert check_messages(messages, private, instance.brief, N, SHARE) == []
    assert (
        audit_row({"messages": messages, "tools": []}, {instance.brief: instance}, {instance.id: private}, N, SHARE)
        == []
    )


@SETTINGS
@given(st.data())
def test_rare_keyword_queries_that_copy_no_phrase_are_never_flagged(data):
    instance = data.draw(st.sampled_from(world_instances()))
    # two words at a time from the antecedents' text: what the scripted teacher does
    pool = sorted(
        {w for lab in instance.labels for w in content_words(lab.abstract)} - set(content_words(instance.brief))
    )
    queries = [
        " ".join(data.draw(st.lists(st.sampled_from(pool), min_size=2, max_size=2, unique=True))) for _ in range(3)
    ]
    private = private_for(instance)
    titles_held = [
        t
        for _, t in private.titles
        if len([w for w in content_words(t) if w in " ".join(queries).split()]) >= SHARE * len(content_words(t))
    ]
    assume(not titles_held)
    assert check_messages(conversation(instance, queries), private, instance.brief, N, SHARE) == []


def test_the_deepscholar_fixture_is_in_the_suite_where_present():
    if not (SHARED_DATA / "deepscholar-bench").exists():
        pytest.skip("DeepScholar-Bench data not found in ../shared/data")
    assert deepscholar_instances()
