import pytest

from hindsight.corpus import Corpus
from tests.helpers import random_papers


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Indexes built by a test go to a temporary cache, never to the user's home."""
    monkeypatch.setenv("HINDSIGHT_CACHE", str(tmp_path_factory.getbasetemp() / "hindsight-cache"))


@pytest.fixture
def small_corpus() -> Corpus:
    return Corpus(random_papers(300, seed=1))
