"""The default backend against an independent BM25 (the Lucene formula written out directly)
and, where present, on the real 74k-paper arXiv corpus."""

import bisect
import datetime as dt
import math
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hindsight.corpus import Corpus, load_corpus
from hindsight.search import make_backend
from hindsight.search.bm25 import BM25Backend
from hindsight.search.text import analyze
from tests.helpers import WORDS, random_papers, require_arxiv_corpus

K1, B = 0.9, 0.4


class ReferenceBM25:
    """Brute force: Lucene's BM25 (since Lucene 8 without the constant (k1 + 1) factor) with
    whole-corpus statistics, every pre-cutoff paper scored."""

    def __init__(self, corpus: Corpus):
        self.corpus = corpus
        self.docs = [Counter(analyze(f"{p.title}\n{p.abstract}")) for p in corpus.papers]
        self.lengths = [sum(doc.values()) for doc in self.docs]
        self.avgdl = sum(self.lengths) / len(self.docs)
        self.df = Counter(term for doc in self.docs for term in doc)

    def scores(self, query: str, cutoff) -> dict[str, float]:
        terms = analyze(query)
        n = len(self.docs)
        out = {}
        for i, paper in enumerate(self.corpus.papers):
            if paper.date >= cutoff:
                continue
            score = 0.0
            for term in terms:
                tf = self.docs[i].get(term, 0)
                if tf:
                    idf = math.log(1 + (n - self.df[term] + 0.5) / (self.df[term] + 0.5))
                    score += idf * tf / (tf + K1 * (1 - B + B * self.lengths[i] / self.avgdl))
            if score > 0:
                out[paper.id] = score
        return out


def assert_exact_top_k(hits, reference: dict[str, float], k: int, tol=1e-4):
    assert len(hits) == min(k, len(reference))
    for hit in hits:
        assert hit.id in reference, f"{hit.id} is not an eligible match"
        assert hit.score == pytest.approx(reference[hit.id], rel=tol)
    for a, b in zip(hits, hits[1:]):
        ra, rb = reference[a.id], reference[b.id]
        assert ra >= rb - tol * ra
        if ra == rb:  # an exact tie in the reference: the smaller id comes first
            assert a.id < b.id
    if hits:
        returned = {h.id for h in hits}
        floor = reference[hits[-1].id]
        missed = [pid for pid, s in reference.items() if pid not in returned and s > floor * (1 + tol)]
        assert not missed, f"better papers left out: {missed[:5]}"
        tied_out = [pid for pid, s in reference.items() if pid not in returned and s == floor]
        assert all(pid > hits[-1].id for pid in tied_out), "a tie at the k-th score was broken against id order"


@pytest.fixture(scope="module")
def synthetic():
    corpus = Corpus(random_papers(2000, seed=7))
    return corpus, BM25Backend(corpus), ReferenceBM25(corpus)


def test_top_k_matches_brute_force_reference_at_random_cutoffs(synthetic):
    corpus, backend, reference = synthetic
    rng = random.Random(3)
    for _ in range(150):
        query = " ".join(rng.choices(WORDS, k=rng.randint(1, 4)))
        cutoff = corpus.dates[0] + dt.timedelta(days=rng.randrange(-5, 1510))
        k = rng.choice([1, 3, 10, 25])
        hits = backend.search(query, cutoff, k)
        assert all(h.date < cutoff for h in hits)
        assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
        assert_exact_top_k(hits, reference.scores(query, cutoff), k)


def test_ties_break_by_id():
    base = random_papers(1, seed=0)[0]
    twins = [
        type(base)(id=f"2001.{n:05d}", title="quantum cache", date=dt.date(2020, 1, 2), abstract="")
        for n in (9, 3, 7, 1)
    ]
    backend = BM25Backend(Corpus(twins))
    assert [h.id for h in backend.search("quantum", "2021-01-01", 3)] == ["2001.00001", "2001.00003", "2001.00007"]


def test_only_matching_papers_come_back(small_corpus):
    backend = BM25Backend(small_corpus)
    assert backend.search("zebra xylophone", "2030-01-01", 10) == []
    assert backend.search("the of and", "2030-01-01", 10) == []  # stopwords only
    assert backend.search("quantum", small_corpus.dates[0], 10) == []  # nothing before the first paper


def test_index_is_saved_and_reused_when_the_corpus_hash_matches(tmp_path):
    papers = random_papers(200, seed=2)
    first = BM25Backend(Corpus(papers), cache_dir=tmp_path)
    again = BM25Backend(Corpus(list(reversed(papers))), cache_dir=tmp_path)
    assert not first.reused_index and again.reused_index and again.index_dir == first.index_dir
    for query in ("graph attention", "robot reward policy", "sparse kernel"):
        assert first.search(query, "2021-06-01", 10) == again.search(query, "2021-06-01", 10)
    changed = Corpus(papers[:-1])
    other = BM25Backend(changed, cache_dir=tmp_path)
    assert not other.reused_index and other.index_dir != first.index_dir
    assert isinstance(again.retriever.scores["data"], np.memmap)


def test_make_backend_names_the_choices(small_corpus):
    assert make_backend("bm25", small_corpus).describe()["k1"] == K1
    with pytest.raises(ValueError, match="bm25, dense or hybrid"):
        make_backend("tfidf", small_corpus)


# -- the real corpus ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def arxiv(tmp_path_factory):
    path = require_arxiv_corpus()
    corpus = load_corpus(path, date_field="listed")
    backend = BM25Backend(corpus, cache_dir=tmp_path_factory.mktemp("arxiv-index"))
    # An independent inverted index (positions are corpus order, so date order).
    postings: dict[str, list[int]] = {}
    for i, paper in enumerate(corpus.papers):
        for term in set(analyze(f"{paper.title}\n{paper.abstract}")):
            postings.setdefault(term, []).append(i)
    return corpus, backend, {t: np.asarray(p, dtype=np.int32) for t, p in postings.items()}


def eligible_matches(corpus, postings, query, cutoff) -> int:
    n = bisect.bisect_left(corpus.dates, cutoff)
    lists = [postings[t] for t in set(analyze(query)) if t in postings]
    if not lists:
        return 0
    merged = np.unique(np.concatenate(lists))
    return int(np.searchsorted(merged, n))


@pytest.mark.shared_data
@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(paper=st.integers(0, 74_727), day=st.integers(-10, 480), k=st.sampled_from([1, 5, 10]), words=st.integers(1, 12))
def test_real_corpus_never_returns_a_paper_on_or_after_the_cutoff(arxiv, paper, day, k, words):
    corpus, backend, postings = arxiv
    cutoff = dt.date(2025, 3, 18) + dt.timedelta(days=day)
    query = " ".join(corpus.papers[paper % len(corpus)].title.split()[:words])
    hits = backend.search(query, cutoff, k)
    assert all(hit.date < cutoff for hit in hits)
    assert len(hits) == min(k, eligible_matches(corpus, postings, query, cutoff))
    assert hits == backend.search(query, cutoff, k)


@pytest.mark.shared_data
@pytest.mark.slow
def test_real_corpus_a_post_filtered_global_top_k_would_fall_short(arxiv):
    """Why the backend gates before ranking: at an early cutoff, filtering the corpus-wide top 10
    leaves fewer than 10 results for most queries, while the gated search fills all 10."""
    corpus, backend, postings = arxiv
    rng = random.Random(0)
    cutoff = dt.date(2025, 5, 1)
    short = 0
    for paper in rng.sample(corpus.papers, 200):
        query = paper.title
        global_top = backend.search(query, "2099-01-01", 10)
        gated = backend.search(query, cutoff, 10)
        assert len(gated) == min(10, eligible_matches(corpus, postings, query, cutoff))
        short += sum(h.date < cutoff for h in global_top) < len(gated)
    assert short > 100


def test_earlier_cutoff_gives_the_later_results_minus_newer_papers(synthetic):
    """Whole-corpus term statistics make scores independent of the cutoff (docs/guide/search.md)."""
    corpus, backend, _ = synthetic
    rng = random.Random(11)
    for _ in range(50):
        query = " ".join(rng.choices(WORDS, k=2))
        late = corpus.dates[-1] + dt.timedelta(days=1)
        early = corpus.dates[0] + dt.timedelta(days=rng.randrange(1500))
        everything = backend.search(query, late, len(corpus))
        expected = [h.id for h in everything if h.date < early][:10]
        assert [h.id for h in backend.search(query, early, 10)] == expected
