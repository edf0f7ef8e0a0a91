"""What every search backend shares: the hit record, the protocol, exact top-k selection."""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np


class SearchBackendError(RuntimeError):
    """A backend broke its contract (for example, returned a paper dated on or after the cutoff)."""


@dataclass(frozen=True)
class Hit:
    id: str
    title: str
    date: dt.date
    abstract: str
    score: float
    rank: int


@runtime_checkable
class SearchBackend(Protocol):
    corpus_hash: str

    def search(self, query: str, cutoff: dt.date | str, k: int) -> list[Hit]:
        """The k best papers dated strictly before `cutoff`, best first."""
        ...

    def describe(self) -> dict:
        """Name, parameters and corpus hash: everything that makes two backends answer alike."""
        ...


def top_k_indices(scores: np.ndarray, k: int, id_rank: np.ndarray, positive_only: bool) -> np.ndarray:
    """Positions of the k highest scores, best first, ties broken by `id_rank` (ascending).

    `scores` is already restricted to the eligible (pre-cutoff) prefix. With `positive_only`,
    only scores > 0 qualify (a lexical match). Exact: every paper tied at the k-th score is
    considered before the id tie-break, so the result never depends on partition order.
    """
    candidates = np.flatnonzero(scores > 0) if positive_only else np.arange(len(scores))
    if len(candidates) == 0 or k <= 0:
        return candidates[:0]
    candidate_scores = scores[candidates]
    if len(candidates) > k:
        kth_best = np.partition(candidate_scores, len(candidates) - k)[len(candidates) - k]
        keep = candidate_scores >= kth_best
        candidates, candidate_scores = candidates[keep], candidate_scores[keep]
    order = np.lexsort((id_rank[candidates], -candidate_scores))
    return candidates[order[:k]]


def hits_at(papers: list, positions: np.ndarray, scores: np.ndarray) -> list[Hit]:
    """Hits for the chosen corpus positions, ranked in the given order."""
    return [
        Hit(
            id=papers[i].id,
            title=papers[i].title,
            date=papers[i].date,
            abstract=papers[i].abstract,
            score=float(scores[i]),
            rank=rank,
        )
        for rank, i in enumerate(positions, start=1)
    ]


def id_ranks(ids: list[str]) -> np.ndarray:
    """For each position, the rank of its id in sorted order (the tie-break key)."""
    ranks = np.empty(len(ids), dtype=np.int64)
    ranks[np.argsort(np.asarray(ids, dtype=object), kind="stable")] = np.arange(len(ids))
    return ranks


def default_cache_dir() -> Path:
    """Where indexes are kept: $HINDSIGHT_CACHE, else ~/.cache/hindsight."""
    return Path(os.environ.get("HINDSIGHT_CACHE", Path.home() / ".cache" / "hindsight"))
