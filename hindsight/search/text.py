"""The lexical analyser shared by indexing and querying: lowercase, word split, English
stopwords, Snowball (Porter2) stemming. Its version is part of the index key."""

from __future__ import annotations

import re
from functools import lru_cache

import Stemmer
from bm25s.stopwords import STOPWORDS_EN

ANALYZER_VERSION = "en-snowball-1"
_WORD = re.compile(r"(?u)\b\w\w+\b")
_STOPWORDS = frozenset(STOPWORDS_EN)
_stemmer = Stemmer.Stemmer("english")


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return _stemmer.stemWord(word)


def analyze(text: str) -> list[str]:
    """The index terms of `text`, in order, repeats kept (term frequency matters)."""
    return [_stem(word) for word in _WORD.findall(text.lower()) if word not in _STOPWORDS]
