"""Reciprocal rank fusion of several date-gated backends. Each component is already gated,
so the fused list is too; its score is sum(1 / (rrf_k + rank)) over the components."""

from __future__ import annotations

import datetime as dt

from hindsight.errors import UserError
from hindsight.search.base import Hit, SearchBackend


class HybridBackend:
    name = "hybrid"

    def __init__(self, backends: list[SearchBackend], *, depth: int = 100, rrf_k: int = 60):
        if len(backends) < 2:
            raise UserError("a hybrid backend fuses at least two backends")
        hashes = {b.corpus_hash for b in backends}
        if len(hashes) != 1:
            raise UserError("hybrid components must search the same corpus (their corpus hashes differ)")
        self.backends, self.depth, self.rrf_k = backends, depth, rrf_k
        self.corpus_hash = hashes.pop()

    def search(self, query: str, cutoff: dt.date | str, k: int) -> list[Hit]:
        fused: dict[str, float] = {}
        first_hit: dict[str, Hit] = {}
        for backend in self.backends:
            for hit in backend.search(query, cutoff, max(self.depth, k)):
                fused[hit.id] = fused.get(hit.id, 0.0) + 1.0 / (self.rrf_k + hit.rank)
                first_hit.setdefault(hit.id, hit)
        ranked = sorted(fused, key=lambda pid: (-fused[pid], pid))[:k]
        return [
            Hit(
                id=pid,
                title=first_hit[pid].title,
                date=first_hit[pid].date,
                abstract=first_hit[pid].abstract,
                score=fused[pid],
                rank=r,
            )
            for r, pid in enumerate(ranked, start=1)
        ]

    def describe(self) -> dict:
        return {
            "backend": self.name,
            "depth": self.depth,
            "rrf_k": self.rrf_k,
            "components": [b.describe() for b in self.backends],
            "corpus_hash": self.corpus_hash,
        }
