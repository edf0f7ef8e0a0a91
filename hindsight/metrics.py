"""Scoring: the pure ranking measures, episode scoring and the exposure-selection-ranking funnel.

Pure measures take a ranked list of ids as given and a {id: gain} map. A repeated id counts
once, at its first rank (later repeats are dropped and the list closes up), then the list is cut
at k. Gains are linear and the discount is log2(rank + 1), as in trec_eval's `ndcg_cut`; the
ideal ranking is the target's own labels sorted by gain, top k.

`score_episode` canonicalises a submission first (arXiv version suffixes stripped; malformed ids
keep their slot with zero gain; duplicates keep their first rank; ranks past k ignored), then
scores it. Submission metrics are zero unless the episode ended with a submission; exposure is
what the logged steps actually returned, whatever the ending (a budget-exhausted episode did
see what it saw), and a missing episode is zero everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from hindsight.ids import normalize_arxiv_id
from hindsight.schema import TIERS, Episode, Instance

K = 10
PROGRESS_POINTS = tuple(i / 10 for i in range(11))


def _unique(ranked_ids: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(ranked_ids))


_LOG2 = [math.log2(rank + 1) for rank in range(65)]  # the same divisors as computed each time, looked up


def dcg(gains: Sequence[float]) -> float:
    return sum(gain / (_LOG2[rank] if rank < 65 else math.log2(rank + 1)) for rank, gain in enumerate(gains, start=1))


def ideal_dcg(gains: dict[str, float], k: int = K) -> float:
    return dcg(sorted((g for g in gains.values() if g > 0), reverse=True)[:k])


def ndcg_at_k(ranked_ids: Iterable[str], gains: dict[str, float], k: int = K) -> float:
    ideal = ideal_dcg(gains, k)
    if ideal == 0:
        return 0.0
    return dcg([gains.get(pid, 0.0) for pid in _unique(ranked_ids)[:k]]) / ideal


def hits_at_k(ranked_ids: Iterable[str], gains: dict[str, float], k: int = K) -> int:
    return sum(1 for pid in _unique(ranked_ids)[:k] if gains.get(pid, 0.0) > 0)


def recall_at_k(ranked_ids: Iterable[str], gains: dict[str, float], k: int = K) -> float:
    relevant = sum(1 for g in gains.values() if g > 0)
    return hits_at_k(ranked_ids, gains, k) / relevant if relevant else 0.0


def mrr(ranked_ids: Iterable[str], gains: dict[str, float], k: int | None = None) -> float:
    """Reciprocal rank of the first labelled id (within the first k, if k is given)."""
    ranked = _unique(ranked_ids)
    for rank, pid in enumerate(ranked[:k] if k else ranked, start=1):
        if gains.get(pid, 0.0) > 0:
            return 1.0 / rank
    return 0.0


def oracle_gain(ids: Iterable[str], gains: dict[str, float], k: int = K, ideal: float | None = None) -> float:
    """phi(A): nDCG@k of the labelled members of `ids`, ordered best first — how well the
    papers in A could be ranked if their gains were known. `ideal`: ideal_dcg(gains, k), when
    the caller has it already."""
    ideal = ideal_dcg(gains, k) if ideal is None else ideal
    if ideal == 0:
        return 0.0
    found = sorted((gains[pid] for pid in set(ids) if gains.get(pid, 0.0) > 0), reverse=True)
    return dcg(found[:k]) / ideal


MALFORMED = "<malformed:"  # the marker a malformed submitted id leaves in its slot


def canonical_submission(ids: Iterable[str], k: int = K) -> list[str]:
    """Base ids in submitted order; a malformed id keeps its slot as a unique never-relevant
    marker; duplicates keep their first rank; cut at k."""
    canonical = [normalize_arxiv_id(pid) or f"{MALFORMED}{i}>" for i, pid in enumerate(ids)]
    return _unique(canonical)[:k]


def eligible_gains(instance: Instance) -> dict[str, float]:
    """Gains of the labels that count: dated before the cutoff (when dated), top 10 by gain."""
    labels = [lab for lab in instance.labels if lab.date is None or lab.date < instance.cutoff]
    labels.sort(key=lambda lab: (-lab.gain, lab.id))
    return {lab.id: lab.gain for lab in labels[:10]}


def exposure_by_step(episode: Episode) -> list[list[str]]:
    """For each step, the canonical ids it returned (post-cutoff ids cannot be labels)."""
    return [[pid for pid in map(normalize_arxiv_id, step.returned_ids) if pid] for step in episode.steps]


def prefix_curve(
    per_step: list[list[str]], gains: dict[str, float], points: Sequence[float] = PROGRESS_POINTS
) -> list[float]:
    """phi of the ids exposed by the first floor(p * T) of T steps, at each progress point p."""
    total = len(per_step)
    ideal = ideal_dcg(gains)
    by_steps: dict[int, float] = {}  # points that fall on the same number of steps share a value
    for p in points:
        upto = math.floor(p * total + 1e-9)
        if upto not in by_steps:
            by_steps[upto] = oracle_gain((pid for step in per_step[:upto] for pid in step), gains, ideal=ideal)
    return [by_steps[math.floor(p * total + 1e-9)] for p in points]


def score_episode(episode: Episode | None, instance: Instance, k: int = K) -> dict:
    gains = eligible_gains(instance)
    n_labels = len(gains)
    if episode is None:
        return {
            "instance_id": instance.id,
            "status": "missing",
            "n_labels": n_labels,
            "ndcg10": 0.0,
            "recall10": 0.0,
            "mrr": 0.0,
            "anyhit10": 0.0,
            "hits": 0,
            "exposed_gain": 0.0,
            "selected_gain": 0.0,
            "zero_exposure": True,
            "calls": 0,
            "prefix_curve": [0.0] * len(PROGRESS_POINTS),
            "submission": [],
            "submitted_surfaced": 0,
            "hits_surfaced": 0,
            "exposed_tiers": [],
        }
    per_step = exposure_by_step(episode)
    exposed = {pid for step in per_step for pid in step}
    ideal = ideal_dcg(gains, k)
    submitted = canonical_submission([p.id for p in episode.submission], k) if episode.status == "submitted" else []
    surfaced = [pid for pid in submitted if pid in exposed]
    tiers = {lab.id: lab.tier for lab in instance.labels}
    hits = hits_at_k(submitted, gains, k)
    return {
        "instance_id": instance.id,
        "status": episode.status,
        "n_labels": n_labels,
        "ndcg10": ndcg_at_k(submitted, gains, k),
        "recall10": recall_at_k(submitted, gains, k),
        "mrr": mrr(submitted, gains, k),
        "anyhit10": float(hits > 0),
        "hits": hits,
        "exposed_gain": oracle_gain(exposed, gains, k, ideal),
        "selected_gain": oracle_gain(exposed.intersection(submitted), gains, k, ideal),
        "zero_exposure": not any(pid in gains for pid in exposed),
        "calls": episode.calls,
        "prefix_curve": prefix_curve(per_step, gains),
        # where the submission came from: ids a search of this episode had returned, or not
        "submission": [pid for pid in submitted if not pid.startswith(MALFORMED)],
        "submitted_surfaced": len(surfaced),
        "hits_surfaced": hits_at_k(surfaced, gains, k),
        "exposed_tiers": sorted({tiers[pid] for pid in exposed if pid in gains}),
    }


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator > 0 else None


def aggregate(scores: list[dict]) -> dict:
    """Means over targets, the funnel and the multi-hit rates (each with its denominator)."""
    n = len(scores)
    if n == 0:
        raise ValueError("no targets to aggregate")

    def mean(key: str) -> float:
        return sum(float(s[key]) for s in scores) / n

    final, exposed, selected = mean("ndcg10"), mean("exposed_gain"), mean("selected_gain")
    out = {
        "targets": n,
        "ndcg10": final,
        "recall10": mean("recall10"),
        "mrr": mean("mrr"),
        "anyhit10": mean("anyhit10"),
        "calls": mean("calls"),
        "exposed_gain": exposed,
        "selected_gain": selected,
        "zero_exposure": mean("zero_exposure"),
        "gain_kept": _ratio(final, exposed),
        "rank_quality": _ratio(final, selected),
        "prefix_curve": [sum(s["prefix_curve"][i] for s in scores) / n for i in range(len(PROGRESS_POINTS))],
    }
    for need in (3, 5):
        eligible = [s for s in scores if s["n_labels"] >= need]
        out[f"hits{need}_eligible"] = len(eligible)
        out[f"hits{need}"] = _ratio(sum(s["hits"] >= need for s in eligible), len(eligible))
    out["sources"] = submission_sources(scores)
    return out


def submission_sources(scores: list[dict]) -> dict:
    """Counts over all targets: submitted ids and how many a search of the same episode had
    returned, hits and how many of those had been returned, distinct ids submitted, and the
    targets whose searches surfaced an antecedent of each tier. A policy that submits ids it
    never saw (recalled from training, or made up) shows here and nowhere else in the funnel."""
    return {
        "submitted": sum(len(s["submission"]) for s in scores),
        "submitted_surfaced": sum(s["submitted_surfaced"] for s in scores),
        "hits": sum(s["hits"] for s in scores),
        "hits_surfaced": sum(s["hits_surfaced"] for s in scores),
        "distinct_submitted": len({pid for s in scores for pid in s["submission"]}),
        "targets_exposed_to": {tier: sum(tier in s["exposed_tiers"] for s in scores) for tier in TIERS},
    }
