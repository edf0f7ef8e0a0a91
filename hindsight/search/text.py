"""The lexical analyser shared by indexing and querying: lowercase, word split, English
stopwords, Snowball (Porter2) stemming. Its version is part of the index key."""

from __future__ import annotations

import importlib.util
import re
from functools import lru_cache
from pathlib import Path

import Stemmer


def _bm25s_stopwords() -> frozenset[str]:
    """bm25s's English stop words, read without importing the bm25s package: it imports numba
    where installed, and a script whose top-level imports reach numba cannot start vLLM's CPU
    engine (its spawned workers re-import the script and trip over llvmlite)."""
    package = importlib.util.find_spec("bm25s")
    path = Path(package.submodule_search_locations[0]) / "stopwords.py"
    spec = importlib.util.spec_from_file_location("hindsight_bm25s_stopwords", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return frozenset(module.STOPWORDS_EN)


ANALYZER_VERSION = "en-snowball-1"
_WORD = re.compile(r"(?u)\b\w\w+\b")
STOPWORDS = _bm25s_stopwords()
_stemmer = Stemmer.Stemmer("english")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    return _stemmer.stemWord(word)


def analyze(text: str) -> list[str]:
    """The index terms of `text`, in order, repeats kept (term frequency matters)."""
    return [stem(word) for word in _WORD.findall(text.lower()) if word not in STOPWORDS]
