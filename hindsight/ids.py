"""arXiv identifier normalisation.

Every id that enters scoring, the corpus or a submission passes through `normalize_arxiv_id`,
which returns the base id (no version suffix) or None for anything that is not an arXiv id.
It never raises: a malformed id in a model's submission is a zero-gain entry, not a crash.

Accepted forms (case-insensitive prefixes, surrounding whitespace ignored):
  2401.01234, 2401.01234v3        new style; 4-digit numbers up to 1412, 5-digit from 1501
  0704.0001                        the first new-style month
  cs/0501001, cs/0501001v2         old style; the archive's subject class is dropped
  math.AG/0601001 -> math/0601001
  arXiv:2401.01234, https://arxiv.org/abs/2401.01234v2, https://arxiv.org/pdf/2401.01234.pdf
"""

from __future__ import annotations

import re

__all__ = ["normalize_arxiv_id", "is_arxiv_id"]

_PREFIX = re.compile(r"^(?:arxiv:|https?://(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/)", re.IGNORECASE)
_NEW = re.compile(r"^(\d{2})(\d{2})\.(\d{4,5})(?:v\d+)?$")
_OLD = re.compile(r"^([a-z]+(?:-[a-z]+)*)(?:\.[a-z]{2})?/(\d{2})(\d{2})(\d{3})(?:v\d+)?$", re.IGNORECASE)


def normalize_arxiv_id(value: object) -> str | None:
    """The arXiv base id of `value`, or None when it is not a well-formed arXiv id."""
    if not isinstance(value, str):
        return None
    text = _PREFIX.sub("", value.strip())
    if text.lower().endswith(".pdf"):
        text = text[:-4]
    text = text.rstrip("/")
    if match := _NEW.match(text):
        year, month, number = match.groups()
        if not 1 <= int(month) <= 12:
            return None
        # arXiv switched from 4- to 5-digit sequence numbers in January 2015.
        if (len(number) == 5) != (int(year + month) >= 1501):
            return None
        if int(year + month) < 704:
            return None
        return f"{year}{month}.{number}"
    if match := _OLD.match(text):
        archive, year, month, number = match.groups()
        if not 1 <= int(month) <= 12:
            return None
        return f"{archive.lower()}/{year}{month}{number}"
    return None


def is_arxiv_id(value: object) -> bool:
    return normalize_arxiv_id(value) is not None
