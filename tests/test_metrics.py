"""Scoring against trec_eval (through pytrec_eval) and the funnel's invariants."""

import datetime as dt
import math
import random

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from hindsight.metrics import (
    aggregate,
    canonical_submission,
    hits_at_k,
    mrr,
    ndcg_at_k,
    oracle_gain,
    recall_at_k,
    score_episode,
    submission_sources,
)
from hindsight.schema import Episode, Instance, Label, Step, SubmittedPaper, Target

pytrec_eval = pytest.importorskip("pytrec_eval")
GAINS = (0.5, 1.0, 2.0, 3.0, 4.0, 7.0)


def test_ndcg_by_hand():
    gains = {"a": 7.0, "b": 3.0, "c": 1.0}
    ideal = 7 + 3 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at_k(["b", "x", "a"], gains) == pytest.approx((3 + 7 / math.log2(4)) / ideal)
    assert ndcg_at_k(["a", "b", "c"], gains) == pytest.approx(1.0)
    assert ndcg_at_k(["a", "a", "b"], gains) == ndcg_at_k(["a", "b"], gains)  # a repeat counts once
    assert ndcg_at_k([f"x{i}" for i in range(10)] + ["a"], gains) == 0.0  # rank 11 is ignored
    assert ndcg_at_k([], gains) == 0.0 and ndcg_at_k(["a"], {}) == 0.0
    assert recall_at_k(["a", "x", "c"], gains) == pytest.approx(2 / 3)
    assert mrr(["x", "y", "b"], gains) == pytest.approx(1 / 3)
    assert hits_at_k(["a", "b", "z"], gains) == 2


def random_case(rng: random.Random):
    n_labels = rng.randint(1, 14)
    gains = {f"d{i}": rng.choice(GAINS) for i in range(n_labels)}
    pool = list(gains) + [f"n{i}" for i in range(20)]
    ranked = rng.sample(pool, rng.randint(0, 15))
    return gains, ranked


def test_ndcg_recall_and_mrr_agree_with_trec_eval_on_1000_targets():
    rng = random.Random(42)
    cases = {f"q{i}": random_case(rng) for i in range(1000)}
    # trec_eval wants integer relevance: gains are multiples of 0.5, so doubling is exact.
    qrels = {q: {d: round(2 * g) for d, g in gains.items()} for q, (gains, _) in cases.items()}
    run = {q: {d: float(100 - r) for r, d in enumerate(ranked)} for q, (_, ranked) in cases.items()}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.10", "recip_rank"})
    results = evaluator.evaluate(run)
    compared = 0
    for q, (gains, ranked) in cases.items():
        trec = results.get(q, {"ndcg_cut_10": 0.0, "recall_10": 0.0, "recip_rank": 0.0})
        # our recall counts the top 10 labels by gain; trec_eval counts all judged documents
        top10 = dict(sorted(gains.items(), key=lambda kv: -kv[1])[:10]) if len(gains) <= 10 else None
        assert abs(ndcg_at_k(ranked, gains) - trec["ndcg_cut_10"]) < 1e-9, q
        assert abs(mrr(ranked, gains) - trec["recip_rank"]) < 1e-9, q
        if top10 is not None:
            assert abs(recall_at_k(ranked, gains) - trec["recall_10"]) < 1e-9, q
            compared += 1
    assert compared > 500


CUTOFF = dt.date(2024, 6, 1)


def make_instance(gains: dict[str, float]) -> Instance:
    labels = tuple(Label(id=pid, tier="T3", role="conceptual", gain=g) for pid, g in gains.items())
    return Instance(
        id="t",
        split="eval",
        brief="b",
        cutoff=CUTOFF,
        target=Target(id="2409.00001", title="T", date=dt.date(2024, 9, 1)),
        labels=labels,
    )


def make_episode(returned: list[list[str]], submitted: list[str], status: str = "submitted") -> Episode:
    return Episode(
        instance_id="t",
        policy="p",
        protocol_hash="h",
        status=status,
        calls=len(returned) + 1,
        steps=[Step(tool="search_papers", args={}, returned_ids=ids) for ids in returned],
        submission=[SubmittedPaper(id=pid) for pid in submitted],
    )


LABEL_IDS = [f"2401.{i:05d}" for i in range(1, 13)]
OTHER_IDS = [f"2402.{i:05d}" for i in range(1, 20)]


@st.composite
def episodes_with_exposed_submissions(draw):
    gains = {
        pid: draw(st.sampled_from(GAINS)) for pid in draw(st.lists(st.sampled_from(LABEL_IDS), min_size=1, unique=True))
    }
    pool = LABEL_IDS + OTHER_IDS
    returned = draw(st.lists(st.lists(st.sampled_from(pool), max_size=10), max_size=8))
    exposed = sorted({pid for step in returned for pid in step})
    submitted = draw(st.lists(st.sampled_from(exposed), max_size=12)) if exposed else []
    return gains, returned, submitted


@settings(max_examples=300, deadline=None)
@given(episodes_with_exposed_submissions())
def test_final_never_exceeds_selected_never_exceeds_exposed(case):
    gains, returned, submitted = case
    score = score_episode(make_episode(returned, submitted), make_instance(gains))
    assert 0 <= score["ndcg10"] <= score["selected_gain"] + 1e-12
    assert score["selected_gain"] <= score["exposed_gain"] + 1e-12 <= 1 + 1e-12
    assert score["zero_exposure"] == (score["exposed_gain"] == 0)
    assert score["prefix_curve"][-1] == pytest.approx(score["exposed_gain"])
    # every submitted id was drawn from what the searches returned
    assert score["submitted_surfaced"] == len(score["submission"]) and score["hits_surfaced"] == score["hits"]
    assert all(a <= b + 1e-12 for a, b in zip(score["prefix_curve"], score["prefix_curve"][1:]))


@settings(max_examples=200, deadline=None)
@given(episodes_with_exposed_submissions(), st.data())
def test_scores_ignore_version_suffixes_and_duplicates(case, data):
    gains, returned, submitted = case
    instance = make_instance(gains)
    plain = score_episode(make_episode(returned, submitted), instance)
    versioned = [f"{pid}v{data.draw(st.integers(1, 9))}" for pid in submitted]
    with_repeats = [pid for pid in versioned for _ in range(data.draw(st.integers(1, 3)))]
    prefixed = [f"arXiv:{pid}" for pid in with_repeats]
    assert score_episode(make_episode(returned, prefixed), instance) == plain


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.one_of(st.text(max_size=20), st.sampled_from(["", " ", "v2", "2401.", "cs/", "arXiv:"])), max_size=12)
)
def test_garbage_submissions_score_zero_without_raising(garbage):
    assume(not any(LABEL_IDS[0] in text for text in garbage))  # a drawn text can spell the label itself
    score = score_episode(make_episode([], garbage), make_instance({LABEL_IDS[0]: 7.0}))
    assert score["ndcg10"] == score["recall10"] == score["mrr"] == score["hits"] == 0


def test_malformed_ids_keep_their_slot_and_ranks_past_ten_are_ignored():
    assert canonical_submission(["junk", "2401.00001v2", "junk", "2401.00001"]) == [
        "<malformed:0>",
        "2401.00001",
        "<malformed:2>",
    ]
    gains = {"2401.00001": 7.0}
    assert score_episode(make_episode([["2401.00001"]], ["junk", "2401.00001"]), make_instance(gains))["mrr"] == 0.5
    late = [f"2402.{i:05d}" for i in range(1, 11)] + ["2401.00001"]
    assert score_episode(make_episode([late], late), make_instance(gains))["ndcg10"] == 0.0


def test_failed_and_missing_episodes_score_zero_but_keep_what_they_exposed():
    gains = {"2401.00001": 7.0, "2401.00002": 3.0}
    instance = make_instance(gains)
    exhausted = score_episode(make_episode([["2401.00001"]], ["2401.00001"], status="budget_exhausted"), instance)
    assert exhausted["ndcg10"] == exhausted["selected_gain"] == 0 and exhausted["exposed_gain"] > 0
    missing = score_episode(None, instance)
    assert missing["status"] == "missing" and missing["ndcg10"] == missing["exposed_gain"] == 0
    assert missing["zero_exposure"]


def test_labels_on_or_after_the_cutoff_do_not_count():
    late = Label(id="2407.00001", tier="T3", role="conceptual", gain=7.0, date=dt.date(2024, 7, 1))
    instance = make_instance({"2401.00001": 3.0})
    instance = Instance(**{**instance.__dict__, "labels": instance.labels + (late,)})
    assert score_episode(make_episode([["2401.00001"]], ["2401.00001"]), instance)["ndcg10"] == 1.0


def test_oracle_gain_is_the_best_possible_ranking_of_a_set():
    gains = {"a": 7.0, "b": 3.0, "c": 1.0}
    assert oracle_gain(["c", "a", "x"], gains) == pytest.approx(ndcg_at_k(["a", "c"], gains))


def test_aggregate_reports_ratios_and_multi_hit_denominators():
    sources = {"submission": [], "submitted_surfaced": 0, "hits_surfaced": 0, "exposed_tiers": []}
    rows = [
        {
            "ndcg10": 0.5,
            "recall10": 0.5,
            "mrr": 1.0,
            "anyhit10": 1.0,
            "hits": 3,
            "n_labels": 3,
            "calls": 4,
            "exposed_gain": 1.0,
            "selected_gain": 0.8,
            "zero_exposure": False,
            "prefix_curve": [0.0] * 10 + [1.0],
            **sources,
        },
        {
            "ndcg10": 0.0,
            "recall10": 0.0,
            "mrr": 0.0,
            "anyhit10": 0.0,
            "hits": 0,
            "n_labels": 2,
            "calls": 2,
            "exposed_gain": 0.0,
            "selected_gain": 0.0,
            "zero_exposure": True,
            "prefix_curve": [0.0] * 11,
            **sources,
        },
    ]
    agg = aggregate(rows)
    assert agg["gain_kept"] == pytest.approx(0.25 / 0.5) and agg["rank_quality"] == pytest.approx(0.25 / 0.4)
    assert (agg["hits3"], agg["hits3_eligible"]) == (1.0, 1)
    assert (agg["hits5"], agg["hits5_eligible"]) == (None, 0)
    assert agg["zero_exposure"] == 0.5 and agg["prefix_curve"][-1] == 0.5


def test_submission_sources_separate_ids_a_search_returned_from_ids_it_did_not():
    labels = (
        Label(id="2401.00001", tier="T3", role="conceptual", gain=7.0),
        Label(id="2401.00002", tier="T2", role="conceptual", gain=3.0),
        Label(id="2401.00003", tier="T1", role="conceptual", gain=1.0),
    )
    instance = Instance(**{**make_instance({}).__dict__, "labels": labels})
    # returned: one T3 antecedent and a stranger; submitted: the stranger, an unseen T2, the T3 twice, junk
    episode = make_episode(
        [["2401.00001", "2402.00009"]], ["2402.00009", "2401.00002", "2401.00001", "2401.00001v2", "junk"]
    )
    scores = [score_episode(episode, instance), score_episode(None, instance)]
    assert submission_sources(scores) == {
        "submitted": 3,
        "submitted_surfaced": 2,
        "hits": 2,
        "hits_surfaced": 1,
        "distinct_submitted": 3,
        "targets_exposed_to": {"T1": 0, "T2": 0, "T3": 1},
    }
    assert aggregate(scores)["sources"] == submission_sources(scores)
