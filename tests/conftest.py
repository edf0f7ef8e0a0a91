import os

import pytest

from hindsight.corpus import Corpus
from tests.helpers import random_papers

# Tests never reach a model hub: a load that would download fails instead of hanging.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session", autouse=True)
def _isolated_session_cache(tmp_path_factory):
    """The same for session-scoped fixtures, which are set up before any test's own fixtures."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HINDSIGHT_CACHE", str(tmp_path_factory.getbasetemp() / "hindsight-cache"))
        yield


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Indexes built by a test go to a temporary cache, never to the user's home."""
    monkeypatch.setenv("HINDSIGHT_CACHE", str(tmp_path_factory.getbasetemp() / "hindsight-cache"))


@pytest.fixture
def small_corpus() -> Corpus:
    return Corpus(random_papers(300, seed=1))


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    """A random-weight Qwen3 with a tokenizer trained on test text, saved in a temp dir."""
    pytest.importorskip("transformers")
    from hindsight.models.tiny import build_tiny_qwen

    texts = [f"{p.title} {p.abstract}" for p in random_papers(300, seed=9)]
    return build_tiny_qwen(tmp_path_factory.mktemp("tiny-qwen"), texts)


@pytest.fixture(scope="session")
def tiny_server(tiny_model):
    """`transformers serve` running the tiny model on 127.0.0.1: a real OpenAI-compatible server."""
    from tests.helpers import start_transformers_server

    process, url = start_transformers_server(tiny_model)
    yield url
    process.terminate()
    process.wait(timeout=30)
