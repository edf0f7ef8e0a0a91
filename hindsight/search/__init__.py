"""Date-gated search over a corpus: one protocol, several backends.

Every backend answers `search(query, cutoff, k)` with the k best papers dated strictly before
`cutoff`, best first, ties broken by id, so the same call always gives the same list.
"""

from hindsight.errors import UserError
from hindsight.search.base import Hit, SearchBackend, SearchBackendError, top_k_indices

__all__ = ["Hit", "SearchBackend", "SearchBackendError", "top_k_indices", "make_backend"]


def make_backend(name: str, corpus, **options) -> SearchBackend:
    """Build a backend by name: bm25 (default), dense, hybrid. Heavy imports happen here, lazily."""
    if name == "bm25":
        from hindsight.search.bm25 import BM25Backend

        return BM25Backend(corpus, **options)
    if name == "dense":
        from hindsight.search.dense import DenseBackend

        return DenseBackend(corpus, **options)
    if name == "hybrid":
        from hindsight.search.bm25 import BM25Backend
        from hindsight.search.dense import DenseBackend
        from hindsight.search.hybrid import HybridBackend

        dense_options = {key: options.pop(key) for key in ("model", "batch_size") if key in options}
        cache_dir = options.get("cache_dir")
        return HybridBackend(
            [BM25Backend(corpus, cache_dir=cache_dir), DenseBackend(corpus, cache_dir=cache_dir, **dense_options)],
            **{k: v for k, v in options.items() if k != "cache_dir"},
        )
    raise UserError(
        f"unknown search backend {name!r} (choose bm25, dense or hybrid; "
        "OpenSearch is built from a client: hindsight.search.opensearch.OpenSearchBackend)"
    )
