"""The default backend: Lucene-variant BM25 (bm25s), exact over the pre-cutoff prefix.

Papers are indexed in corpus (date) order, so the papers eligible at a cutoff are the first n
columns of the score vector. We score the whole vector once (sparse, fast) and select the top
k of the prefix ourselves; a global top-k filtered afterwards would return too few results at
early cutoffs. Term statistics (idf, average length) come from the whole corpus, not from the
prefix: see docs/guide/search.md for what that implies.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import shutil
import tempfile
import time
from pathlib import Path

from hindsight.corpus import Corpus
from hindsight.schema import parse_date
from hindsight.search.base import Hit, default_cache_dir, hits_at, id_ranks, top_k_indices
from hindsight.search.text import ANALYZER_VERSION, analyze

log = logging.getLogger(__name__)


class BM25Backend:
    name = "bm25"

    def __init__(
        self,
        corpus: Corpus,
        *,
        k1: float = 0.9,
        b: float = 0.4,
        cache_dir: str | Path | None = None,
        progress: bool = False,
    ):
        import bm25s  # here, not at the top: see search/text.py on bm25s, numba and vLLM

        self.corpus = corpus
        self.corpus_hash = corpus.hash
        self.k1, self.b = k1, b
        self.params = {"method": "lucene", "k1": k1, "b": b, "analyzer": ANALYZER_VERSION, "bm25s": bm25s.__version__}
        key = hashlib.sha256(json.dumps([self.corpus_hash, self.params], sort_keys=True).encode())
        self.index_dir = Path(cache_dir or default_cache_dir()) / f"bm25-{key.hexdigest()[:20]}"
        self.build_seconds: float | None = None
        self.reused_index = (self.index_dir / "meta.json").exists()
        if not self.reused_index:
            self._build(progress)
        self.retriever = bm25s.BM25.load(str(self.index_dir), mmap=True, load_vocab=True)
        self.vocab: dict[str, int] = self.retriever.vocab_dict
        self.id_rank = id_ranks([p.id for p in corpus.papers])

    def _build(self, progress: bool) -> None:
        import bm25s

        start = time.perf_counter()
        tokens = [analyze(f"{p.title}\n{p.abstract}") for p in self.corpus.papers]
        retriever = bm25s.BM25(method="lucene", k1=self.k1, b=self.b)
        retriever.index(tokens, show_progress=progress)
        self.index_dir.parent.mkdir(parents=True, exist_ok=True)
        # Build beside the final place and rename, so a crash never leaves a half-written index.
        staging = Path(tempfile.mkdtemp(prefix=".bm25-", dir=self.index_dir.parent))
        try:
            retriever.save(str(staging), show_progress=False)
            meta = {"corpus_hash": self.corpus_hash, "papers": len(self.corpus), **self.params}
            (staging / "meta.json").write_text(json.dumps(meta, indent=2))
            try:
                staging.rename(self.index_dir)
            except OSError:  # another process finished the same index first
                shutil.rmtree(staging, ignore_errors=True)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        self.build_seconds = time.perf_counter() - start
        log.info("built BM25 index of %d papers in %.1fs at %s", len(self.corpus), self.build_seconds, self.index_dir)

    def index_bytes(self) -> int:
        return sum(f.stat().st_size for f in self.index_dir.iterdir() if f.is_file())

    def search(self, query: str, cutoff: dt.date | str, k: int) -> list[Hit]:
        token_ids = [self.vocab[t] for t in analyze(query) if t in self.vocab]
        n_eligible = self.corpus.prefix_len(parse_date(cutoff, name="cutoff"))
        if not token_ids or n_eligible == 0:
            return []
        scores = self.retriever.get_scores_from_ids(token_ids)[:n_eligible]
        return hits_at(self.corpus.papers, top_k_indices(scores, k, self.id_rank, positive_only=True), scores)

    def describe(self) -> dict:
        return {"backend": self.name, **self.params, "corpus_hash": self.corpus_hash}
