"""A dated paper corpus held in date order, so that "before the cutoff" is a prefix.

`load_corpus` reads our JSONL (or .jsonl.gz), Parquet, or the arXiv metadata snapshot (one JSON
object a line with `id`, `title`, `abstract`, `categories`, `versions`, `update_date`, as Kaggle
distributes it), record by record, so only the papers kept are held. A bad record (not JSON,
missing id/title/date, unparseable date, not an arXiv id, duplicate id) stops the load with the
file, line and reason; with `skip_bad=True` it is skipped instead and counted in the report,
never dropped silently. `categories` keeps the papers with a category starting with one of the
given prefixes (`("cs.",)`), counted as filtered.
"""

from __future__ import annotations

import bisect
import datetime as dt
import email.utils
import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from hindsight.errors import UserError
from hindsight.jsonl import read_jsonl
from hindsight.schema import Paper, SchemaError, parse_date

__all__ = ["CORPUS_FORMATS", "Corpus", "CorpusError", "LoadReport", "load_corpus", "load_papers"]

CORPUS_FORMATS = ("auto", "jsonl", "parquet", "arxiv-snapshot")


class CorpusError(UserError):
    """A corpus file that cannot be loaded as asked; the message names file and line."""


@dataclass
class LoadReport:
    path: str
    read: int = 0
    loaded: int = 0
    skipped: int = 0
    filtered: int = 0  # outside the asked categories
    skipped_by_reason: Counter = field(default_factory=Counter)
    first_errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "read": self.read,
            "loaded": self.loaded,
            "skipped": self.skipped,
            "filtered": self.filtered,
            "skipped_by_reason": dict(self.skipped_by_reason),
            "first_errors": list(self.first_errors),
        }


class Corpus:
    """Papers sorted by (date, id). Index `i` is a paper's position in that order everywhere."""

    def __init__(self, papers: Iterable[Paper], report: LoadReport | None = None):
        self.papers: list[Paper] = sorted(papers, key=lambda p: (p.date, p.id))
        self.dates: list[dt.date] = [p.date for p in self.papers]
        self.index_of: dict[str, int] = {}
        for i, paper in enumerate(self.papers):
            if paper.id in self.index_of:
                raise CorpusError(f"duplicate paper id {paper.id}")
            self.index_of[paper.id] = i
        self.report = report
        self._hash: str | None = None

    def __len__(self) -> int:
        return len(self.papers)

    def __iter__(self) -> Iterator[Paper]:
        return iter(self.papers)

    def prefix_len(self, cutoff: dt.date | str) -> int:
        """How many papers are dated strictly before `cutoff` (they are `papers[:n]`)."""
        return bisect.bisect_left(self.dates, parse_date(cutoff, name="cutoff"))

    def get(self, paper_id: str) -> Paper | None:
        i = self.index_of.get(paper_id)
        return None if i is None else self.papers[i]

    @property
    def hash(self) -> str:
        """sha256 over the papers' canonical JSON in corpus order: equal hash, equal corpus."""
        if self._hash is None:
            digest = hashlib.sha256()
            for paper in self.papers:
                digest.update(json.dumps(paper.to_dict(), sort_keys=True, ensure_ascii=False).encode())
                digest.update(b"\n")
            self._hash = digest.hexdigest()
        return self._hash


def _parquet_records(path: Path) -> Iterator[tuple[int, dict | None, str | None]]:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise CorpusError(f"{path}: reading Parquet needs pyarrow (pip install 'hindsight[parquet]')") from exc
    row_no = 0
    for batch in pq.ParquetFile(path).iter_batches():
        for record in batch.to_pylist():
            row_no += 1
            yield row_no, record, None


def detect_format(path: Path) -> str:
    """parquet by suffix; otherwise the first record says whether it is the arXiv snapshot."""
    if path.suffix == ".parquet":
        return "parquet"
    for _, record, _ in read_jsonl(path):
        return (
            "arxiv-snapshot"
            if isinstance(record, dict) and "versions" in record and "update_date" in record
            else "jsonl"
        )
    return "jsonl"


def snapshot_record(record: dict) -> dict:
    """An arXiv snapshot record as our fields: the first version's day is the posting date (the
    snapshot's `update_date` is the last change, used only when no version has a date)."""
    if not isinstance(record, dict):
        raise SchemaError("expected a JSON object")
    date = None
    versions = record.get("versions")
    if isinstance(versions, list) and versions and isinstance(versions[0], dict):
        try:
            date = email.utils.parsedate_to_datetime(versions[0].get("created") or "").date().isoformat()
        except (TypeError, ValueError):
            date = None
    if date is None:
        date = record.get("update_date")
        if not isinstance(date, str):
            raise SchemaError("field 'versions': no first version with a 'created' date, and no 'update_date'")
    categories = record.get("categories") or ""
    if not isinstance(categories, str):
        raise SchemaError(f"field 'categories': expected a space-separated string, got {categories!r}")
    return {
        "id": record.get("id"),
        "title": " ".join(str(record.get("title") or "").split()),
        "abstract": " ".join(str(record.get("abstract") or "").split()),
        "date": date,
        "categories": categories.split(),
    }


def load_papers(
    path: str | Path,
    *,
    date_field: str = "date",
    skip_bad: bool = False,
    format: str = "auto",
    categories: tuple[str, ...] = (),
) -> tuple[list[Paper], LoadReport]:
    """The papers of one file, validated, in file order, and what was read, skipped and filtered."""
    path = Path(path)
    if not path.exists():
        raise CorpusError(f"{path}: no such corpus file")
    if format not in CORPUS_FORMATS:
        raise CorpusError(f"{path}: unknown corpus format {format!r}; known: {', '.join(CORPUS_FORMATS)}")
    format = detect_format(path) if format == "auto" else format
    is_parquet = format == "parquet"
    records = _parquet_records(path) if is_parquet else read_jsonl(path)
    unit = "row" if is_parquet else "line"
    report = LoadReport(path=str(path))
    papers: list[Paper] = []
    first_line: dict[str, int] = {}
    for line_no, record, error in records:
        report.read += 1
        where = f"{path}:{line_no}" if not is_parquet else f"{path} {unit} {line_no}"
        reason = error
        paper = None
        if reason is None:
            try:
                if format == "arxiv-snapshot":
                    record = snapshot_record(record)
                paper = Paper.from_dict(record, where="", date_field=date_field)
            except SchemaError as exc:
                reason = str(exc)
        if paper is not None and categories and not any(c.startswith(p) for c in paper.categories for p in categories):
            report.filtered += 1  # before the duplicate check, so a filtered paper costs no memory
            continue
        if paper is not None and paper.id in first_line:
            reason = f"duplicate id {paper.id} (first at {unit} {first_line[paper.id]})"
        if reason is not None:
            if not skip_bad:
                raise CorpusError(f"{where}: {reason}")
            report.skipped += 1
            report.skipped_by_reason[reason.split(":")[0].split(" (")[0]] += 1
            if len(report.first_errors) < 20:
                report.first_errors.append(f"{where}: {reason}")
            continue
        first_line[paper.id] = line_no
        papers.append(paper)
    report.loaded = len(papers)
    return papers, report


def load_corpus(
    path: str | Path,
    *,
    date_field: str = "date",
    skip_bad: bool = False,
    format: str = "auto",
    categories: tuple[str, ...] = (),
) -> Corpus:
    """Load and validate a corpus. `date_field` names the column holding the first-posted date."""
    papers, report = load_papers(path, date_field=date_field, skip_bad=skip_bad, format=format, categories=categories)
    if not papers:
        raise CorpusError(
            f"{path}: no papers loaded ({report.read} records read, {report.skipped} skipped, "
            f"{report.filtered} outside the categories)"
        )
    return Corpus(papers, report)
