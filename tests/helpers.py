"""Test helpers: small random corpora, JSONL writing, the real shared data."""

import datetime as dt
import json
import random
from pathlib import Path

import pytest

from hindsight.schema import Paper

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
ARXIV_CORPUS = SHARED_DATA / "arxiv-cs-2025" / "papers.jsonl.gz"

WORDS = ("graph neural network attention transformer diffusion sampling retrieval protein molecule "
         "robot policy reward agent language vision audio speech kernel sparse dense quantum circuit "
         "compiler proof theorem cache memory latency privacy federated causal bandit").split()


def random_papers(n: int, seed: int = 0, start=dt.date(2019, 1, 1), days: int = 1500) -> list[Paper]:
    """Papers with random text from a small vocabulary (many ties and shared terms) and ids that
    agree with their dates; several papers share each date."""
    rng = random.Random(seed)
    papers, serial = [], {}
    for _ in range(n):
        date = start + dt.timedelta(days=rng.randrange(days))
        month = f"{date:%y%m}"
        serial[month] = serial.get(month, 0) + 1
        title = " ".join(rng.choices(WORDS, k=rng.randint(2, 6)))
        abstract = " ".join(rng.choices(WORDS, k=rng.randint(0, 30)))
        papers.append(Paper(id=f"{month}.{serial[month]:05d}", title=title, date=date, abstract=abstract))
    return papers


def write_jsonl(path: Path, records) -> Path:
    with open(path, "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(record if isinstance(record, str) else json.dumps(record))
            handle.write("\n")
    return path


def require_arxiv_corpus() -> Path:
    if not ARXIV_CORPUS.exists():
        pytest.skip(f"real corpus not found at {ARXIV_CORPUS} (it lives in ../shared/data beside the repo)")
    return ARXIV_CORPUS
