"""The replay validator on hand-made adversarial candidates: each triggers exactly its flag."""

import dataclasses
import datetime as dt
import json
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight.corpus import Corpus
from hindsight.distill.config import DistillConfig
from hindsight.distill.prompts import private_block
from hindsight.distill.replay import Replay, Validator
from hindsight.distill.select import choose
from hindsight.env import SearchEnv
from hindsight.leaks import PrivateText
from hindsight.prompts import prompt_texts
from hindsight.schema import Instance, Label, Paper, Target, Task
from hindsight.search.bm25 import BM25Backend
from tests.helpers import random_papers

CUTOFF = dt.date(2022, 1, 1)
ANTECEDENT = Paper(
    id="2106.09999",
    title="Sparse quantum kernel caches for robots",
    date=dt.date(2021, 6, 3),
    abstract="zorbling frames with tilted lattice memory make every gradient hop cheaper than before",
)
LATE = Paper(id="2203.09999", title="A later paper", date=dt.date(2022, 3, 1), abstract="quantum")


@pytest.fixture(scope="module")
def world():
    papers = random_papers(300, seed=11, start=dt.date(2019, 1, 1), days=1000) + [ANTECEDENT, LATE]
    corpus = Corpus(papers)
    labels = (
        Label(
            id=ANTECEDENT.id,
            tier="T3",
            role="conceptual",
            gain=7.0,
            title=ANTECEDENT.title,
            abstract=ANTECEDENT.abstract,
            date=ANTECEDENT.date,
        ),
        Label(
            id=papers[0].id,
            tier="T1",
            role="conceptual",
            gain=1.0,
            title=papers[0].title,
            abstract=papers[0].abstract,
            date=papers[0].date,
        ),
    )
    instance = Instance(
        id="inst",
        split="train",
        brief="We want faster graph attention for robots.",
        cutoff=CUTOFF,
        target=Target(id="2205.00001", title="Hopping lattice caches for planning", date=dt.date(2022, 5, 1)),
        labels=labels,
    )
    backend = BM25Backend(corpus)
    cfg = DistillConfig()
    validator = Validator(backend, _protocol(), corpus, cfg, {"inst": private(instance)})
    return corpus, backend, instance, validator


def private(instance, ngram=5):
    return PrivateText.build(
        private_block(instance, {}, 12, 1200), instance.target.title, instance.target.id, instance.labels, ngram
    )


def _protocol():
    from hindsight.protocol import ProtocolConfig

    return ProtocolConfig()


def candidate(backend, actions, status="submitted", returned=None):
    """A teacher transcript issuing `actions` through the ordinary environment, with teacher-only
    text around them; `returned` replaces what its first search showed (a divergent candidate)."""
    env = SearchEnv(
        Task("inst#0", "We want faster graph attention for robots.", CUTOFF), backend, _protocol(), prompt_texts(False)
    )
    messages = [{"role": "system", "content": "teacher prompt"}, {"role": "user", "content": "brief"}]
    for i, (tool, args) in enumerate(actions):
        messages.append(
            {
                "role": "assistant",
                "content": "thinking about hidden hints",
                "tool_calls": [{"id": f"c{i}", "type": "function", "function": {"name": tool, "arguments": args}}],
            }
        )
        content = env.call(tool, args).content if not env.done else "{}"
        if returned is not None and i == 0:
            content = json.dumps({"results": [{"id": pid} for pid in returned]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": content})
    episode = env.episode("inst#0", "teacher")
    episode.status, episode.messages = status, messages
    return episode


def first_hit(backend, query):
    return backend.search(query, CUTOFF, 10)[0].id


CASES = {
    "clean": lambda b: [
        ("search_papers", {"query": "quantum kernel"}),
        ("submit_answer", {"papers": [{"id": first_hit(b, "quantum kernel"), "rationale": "close method"}]}),
    ],
    "malformed": lambda b: [
        ("search_papers", {"query": 42}),
        ("search_papers", {"query": "quantum kernel"}),
        ("submit_answer", {"papers": [{"id": first_hit(b, "quantum kernel")}]}),
    ],
    "private_copy": lambda b: [
        ("search_papers", {"query": "tilted lattice memory make every gradient"}),
        ("submit_answer", {"papers": [{"id": first_hit(b, "tilted lattice memory make every gradient")}]}),
    ],
    "identifying_query": lambda b: [
        ("search_papers", {"query": "quantum kernel 2106.09999"}),
        ("submit_answer", {"papers": [{"id": first_hit(b, "quantum kernel 2106.09999")}]}),
    ],
    "unsurfaced": lambda b: [
        ("search_papers", {"query": "quantum kernel"}),
        ("submit_answer", {"papers": [{"id": "2106.09999"}]}),
    ],
}


EXPECTED = {
    "clean": set(),
    "malformed": {"malformed"},
    "private_copy": {"private_copy"},
    "identifying_query": {"identifying_query"},
    # an antecedent's id submitted before any search showed it: the teacher knew it
    "unsurfaced": {"unsurfaced", "identifying_query"},
}


@pytest.mark.parametrize("expected", list(CASES))
def test_each_adversarial_candidate_triggers_exactly_its_flags(world, expected):
    corpus, backend, instance, validator = world
    actions = CASES[expected](backend)
    if expected == "unsurfaced":
        assert "2106.09999" not in {h.id for h in backend.search("quantum kernel", CUTOFF, 10)}
    replay = validator.replay(candidate(backend, actions), instance)
    assert set(replay.flags) == EXPECTED[expected], replay.reasons


def test_a_query_holding_the_targets_title_is_identifying(world):
    corpus, backend, instance, validator = world
    actions = [("search_papers", {"query": "hopping lattice caches planning"}), ("submit_answer", {"papers": []})]
    assert validator.replay(candidate(backend, actions), instance).flags == ["identifying_query"]


def test_a_query_holding_most_of_a_private_title_is_identifying(world):
    corpus, backend, instance, validator = world
    actions = [("search_papers", {"query": "sparse quantum kernel caches"}), ("submit_answer", {"papers": []})]
    assert set(validator.replay(candidate(backend, actions), instance).flags) == {"identifying_query"}


def test_a_candidate_made_under_another_protocol_is_divergent(world):
    corpus, backend, instance, validator = world
    made = candidate(backend, CASES["clean"](backend))
    made.protocol_hash = "another protocol"
    assert validator.replay(made, instance).flags == ["divergent"]


def test_results_whose_titles_differ_are_divergent_though_the_ids_agree(world):
    corpus, backend, instance, validator = world
    made = candidate(backend, CASES["clean"](backend))
    shown = json.loads(made.messages[3]["content"])
    shown["results"][0]["title"] = "a title from another corpus"
    made.messages[3]["content"] = json.dumps(shown)
    assert validator.replay(made, instance).flags == ["divergent"]


def test_several_calls_in_one_reply_are_malformed(world):
    corpus, backend, instance, validator = world
    made = candidate(backend, CASES["clean"](backend))
    made.messages[2]["tool_calls"].append(made.messages[4]["tool_calls"][0])
    assert "malformed" in validator.replay(made, instance).flags


def test_results_that_differ_from_what_the_teacher_saw_are_divergent(world):
    corpus, backend, instance, validator = world
    actions = CASES["clean"](backend)
    replay = validator.replay(candidate(backend, actions, returned=["2001.00001"]), instance)
    assert replay.flags == ["divergent"]


def test_a_stale_index_returning_a_post_cutoff_paper_is_caught(world):
    corpus, backend, instance, _ = world
    # The validator's corpus knows the paper came out after the cutoff; the index it searches does not.
    moved = next(h.id for h in backend.search("quantum kernel", CUTOFF, 10))
    later = Corpus(dataclasses.replace(p, date=dt.date(2022, 6, 1)) if p.id == moved else p for p in corpus)
    validator = Validator(backend, _protocol(), later, DistillConfig(), {"inst": private(instance)})
    replay = validator.replay(candidate(backend, CASES["clean"](backend)), instance)
    assert replay.flags == ["post_cutoff"]


def test_the_replayed_conversation_holds_no_teacher_text(world):
    corpus, backend, instance, validator = world
    replay = validator.replay(candidate(backend, CASES["clean"](backend)), instance)
    text = json.dumps(replay.messages)
    assert "teacher prompt" not in text and "hidden hints" not in text
    assert replay.messages[0]["content"].startswith("You help researchers")
    assert replay.score["ndcg10"] >= 0 and replay.actions == 2


def test_flagged_candidates_never_reach_the_sft_set(world):
    corpus, backend, instance, validator = world
    rows = []
    for name in ("private_copy", "unsurfaced", "clean"):
        replay = validator.replay(candidate(backend, CASES[name](backend)), instance)
        replay.candidate_id = f"inst#{len(rows)}"
        replay.score["ndcg10"] = 1.0 if name != "clean" else 0.1  # flagged ones score higher
        rows.append(Replay.from_dict(json.loads(json.dumps(replay.to_dict()))))  # as select reads them back
    chosen = choose(rows, threshold=0.0)
    assert chosen["inst"].flags == [] and chosen["inst"].candidate_id == "inst#2"
    assert choose(rows, threshold=0.5) == {}


# -- rows rebuilt, not copied (hindsight/distill/canonical.py) ---------------------------------


def teacher_shapes(backend):
    """The same two actions as each kind of teacher writes them: the scripted teacher (bare calls),
    a litellm API model (arguments as JSON text, extra keys, a `limit`, prose around the call),
    a local model read from its text (a think block, an id spelled with a prefix and version, a
    query with invisible characters and odd spacing)."""
    hit = first_hit(backend, "quantum kernel")
    return {
        "scripted": [("search_papers", {"query": "quantum kernel"}), ("submit_answer", {"papers": [{"id": hit}]})],
        "litellm": [
            ("search_papers", json.dumps({"query": "quantum kernel", "limit": 3, "note": "T3 first"})),
            ("submit_answer", json.dumps({"papers": [{"id": hit, "rationale": "the lattice caches", "tier": "T3"}]})),
        ],
        "local": [
            ("search_papers", {"query": "  quantum\u200b   kernel\u2060 "}),
            ("submit_answer", {"papers": [{"id": f"arXiv:{hit}v3", "rationale": "close"}], "confidence": 0.9}),
        ],
    }


@pytest.mark.parametrize("shape", ["scripted", "litellm", "local"])
def test_a_row_keeps_each_action_rebuilt_in_one_canonical_form_whatever_the_teacher(world, shape):
    corpus, backend, instance, validator = world
    replay = validator.replay(candidate(backend, teacher_shapes(backend)[shape]), instance)
    hit = first_hit(backend, "quantum kernel")
    assistant = [m for m in replay.messages if m["role"] == "assistant"]
    assert [m["content"] for m in assistant] == ["", ""]  # no text beside a call
    calls = [m["tool_calls"][0]["function"] for m in assistant]
    assert calls == [
        {"name": "search_papers", "arguments": {"query": "quantum kernel"}},
        {"name": "submit_answer", "arguments": {"papers": [{"id": hit}]}},
    ]
    assert "rationale" not in json.dumps(replay.messages) and "T3" not in json.dumps(replay.messages)


def test_rationales_reach_a_row_only_where_the_recipe_keeps_them(world):
    corpus, backend, instance, _ = world
    cfg = DistillConfig(keep_rationales=True)
    validator = Validator(backend, _protocol(), corpus, cfg, {"inst": private(instance)})
    replay = validator.replay(candidate(backend, teacher_shapes(backend)["litellm"]), instance)
    (submission,) = [m for m in replay.messages if m["role"] == "assistant"][-1]["tool_calls"]
    assert submission["function"]["arguments"]["papers"][0] == {
        "id": first_hit(backend, "quantum kernel"),
        "rationale": "the lattice caches",
    }


@pytest.fixture(scope="module")
def judged(world):
    """A validator whose private text carries the corpus's lexicon (the closed vocabulary), and
    the audit's inputs for the same instance."""
    from hindsight.distill.judge import Judge
    from hindsight.lexicon import Lexicon

    corpus, backend, instance, _ = world
    private_text = PrivateText.build(
        private_block(instance, {}, 12, 1200),
        instance.target.title,
        instance.target.id,
        instance.labels,
        5,
        Lexicon.of_corpus(corpus),
    )
    cfg = DistillConfig()
    validator = Validator(backend, _protocol(), corpus, cfg, {"inst": private_text})
    return validator, Judge.of_config(cfg, backend), private_text


LEAK_CASES = {
    **{name: CASES[name] for name in ("clean", "private_copy", "identifying_query", "unsurfaced")},
    "non-word query": lambda b: [
        ("search_papers", {"query": "quantum xqzvtk kernel"}),
        ("submit_answer", {"papers": [{"id": first_hit(b, "quantum xqzvtk kernel")}]}),
    ],
    "words without vowels": lambda b: [
        ("search_papers", {"query": "quantum krnl lttc"}),
        ("submit_answer", {"papers": [{"id": first_hit(b, "quantum krnl lttc")}]}),
    ],
    "every word a word": lambda b: [
        ("search_papers", {"query": "robots planning graph attention"}),
        ("submit_answer", {"papers": [{"id": first_hit(b, "robots planning graph attention")}]}),
    ],
}


@pytest.mark.parametrize("case", list(LEAK_CASES))
def test_the_audit_flags_exactly_the_rows_that_replay_rejects(world, judged, case):
    """One judge for both: the row replay builds, fed to the audit with the same judge, is
    flagged exactly when replay flagged it; a query with a word outside the closed vocabulary
    is rejected by both, a query of words by neither."""
    from hindsight.distill.audit import audit_row

    corpus, backend, instance, _ = world
    validator, judge, private_text = judged
    replay = validator.replay(candidate(backend, LEAK_CASES[case](backend)), instance)
    row = {"messages": replay.messages, "tools": []}
    audit = audit_row(row, {instance.brief: instance}, {"inst": private_text}, 5, 0.6, judge)
    assert bool(audit) == bool(replay.flags), (replay.flags, audit)
    expect_flagged = case not in ("clean", "every word a word")
    assert bool(replay.flags) == expect_flagged, replay.flags
    if case in ("non-word query", "words without vowels"):
        assert "unreadable" in replay.flags and any("closed vocabulary" in problem for problem in audit)


def test_the_guard_refuses_a_query_word_outside_the_closed_vocabulary(world, judged):
    from hindsight.distill.guard import LeakGuard
    from hindsight.policy.base import Conversation, Turn
    from hindsight.policy.parsing import ToolCall
    from hindsight.prompts import initial_messages

    corpus, backend, instance, _ = world
    _, _, private_text = judged
    guard = LeakGuard(SimpleNamespace(name="teacher"), {"inst#0": private_text}, 5, 0.6, retries=1)
    task = Task("inst#0", instance.brief, CUTOFF)
    conversation = Conversation(task, initial_messages(task))
    refused = guard.why_refused(conversation, Turn(calls=[ToolCall("search_papers", {"query": "quantum xqzvtk"})]))
    assert refused and "closed vocabulary" in refused
    assert guard.why_refused(conversation, Turn(calls=[ToolCall("search_papers", {"query": "quantum kernel"})])) is None


# -- by class, on drawn examples: what construction and the closed vocabulary hold ------------

PROBES = settings(max_examples=25, derandomize=True, deadline=None, database=None)


@PROBES
@given(
    text=st.text(min_size=1, max_size=120),
    extra=st.dictionaries(st.text(min_size=1, max_size=8).filter(lambda k: k not in ("id",)), st.text(max_size=40)),
)
def test_no_rationale_text_or_extra_key_a_teacher_writes_reaches_a_row(world, text, extra):
    """Whatever a teacher writes beside a submitted id, in any script or encoding, the row keeps
    the id alone (rationales are a recipe's choice, off by default)."""
    corpus, backend, instance, validator = world
    hit = first_hit(backend, "quantum kernel")
    actions = [
        ("search_papers", {"query": "quantum kernel"}),
        ("submit_answer", {"papers": [{"id": hit, "rationale": text, **extra}]}),
    ]
    replay = validator.replay(candidate(backend, actions), instance)
    submission = [m for m in replay.messages if m["role"] == "assistant"][-1]["tool_calls"][0]["function"]
    assert submission["arguments"] == {"papers": [{"id": hit}]}


@PROBES
@given(
    junk=st.text(alphabet="bcdfghjklmnpqrstvwxz0123456789", min_size=5, max_size=9).filter(lambda w: not w.isdigit()),
    where=st.integers(0, 2),
)
def test_any_query_token_outside_the_closed_vocabulary_is_refused_by_replay_and_the_audit(world, judged, junk, where):
    """A run of consonants and digits (a cipher, a cut word, an encoding's piece) anywhere in an
    otherwise honest query: replay rejects the candidate and the audit flags its row."""
    from hindsight.distill.audit import audit_row

    corpus, backend, instance, _ = world
    validator, judge, private_text = judged
    words = ["quantum", "kernel"]
    words.insert(where, junk)
    query = " ".join(words)
    actions = [("search_papers", {"query": query}), ("submit_answer", {"papers": [{"id": first_hit(backend, query)}]})]
    replay = validator.replay(candidate(backend, actions), instance)
    assert "unreadable" in replay.flags, (query, replay.reasons)
    row = {"messages": replay.messages, "tools": []}
    assert audit_row(row, {instance.brief: instance}, {"inst": private_text}, 5, 0.6, judge)
