import gzip
import json

import pytest

from hindsight.corpus import Corpus, CorpusError, load_corpus
from tests.helpers import random_papers, write_jsonl

GOOD = [
    {"id": "2402.00002", "title": "B", "abstract": "b", "date": "2024-02-01"},
    {"id": "2401.00001v2", "title": "A", "abstract": "a", "date": "2024-01-05"},
]


def test_loads_jsonl_and_keeps_papers_in_date_order(tmp_path):
    corpus = load_corpus(write_jsonl(tmp_path / "c.jsonl", GOOD))
    assert [p.id for p in corpus] == ["2401.00001", "2402.00002"]
    assert corpus.prefix_len("2024-01-05") == 0  # strictly before the cutoff
    assert corpus.prefix_len("2024-01-06") == 1
    assert corpus.prefix_len("2030-01-01") == 2
    assert corpus.report.loaded == 2 and corpus.report.skipped == 0


def test_gzip_and_parquet_give_the_same_corpus_and_hash(tmp_path):
    plain = load_corpus(write_jsonl(tmp_path / "c.jsonl", GOOD))
    with gzip.open(tmp_path / "c.jsonl.gz", "wt") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in GOOD)
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    pq.write_table(pa.Table.from_pylist(GOOD), tmp_path / "c.parquet")
    for other in ("c.jsonl.gz", "c.parquet"):
        assert load_corpus(tmp_path / other).hash == plain.hash


def test_hash_depends_on_content_not_file_order(tmp_path):
    forward = load_corpus(write_jsonl(tmp_path / "a.jsonl", GOOD))
    backward = load_corpus(write_jsonl(tmp_path / "b.jsonl", GOOD[::-1]))
    edited = load_corpus(write_jsonl(tmp_path / "c.jsonl", [GOOD[0], {**GOOD[1], "abstract": "changed"}]))
    assert forward.hash == backward.hash != edited.hash


@pytest.mark.parametrize(
    "bad_line, reason",
    [
        ("{not json", "not valid JSON"),
        (json.dumps({"title": "T", "date": "2024-01-01"}), "missing required field 'id'"),
        (json.dumps({"id": "2401.00009", "date": "2024-01-01"}), "missing required field 'title'"),
        (json.dumps({"id": "2401.00009", "title": "T"}), "missing required field 'date'"),
        (json.dumps({"id": "2401.00009", "title": "T", "date": "yesterday"}), "unparseable date"),
        (
            json.dumps({"id": "2401.00001", "title": "dup", "date": "2024-01-05"}),
            r"duplicate id 2401.00001 \(first at line 2\)",
        ),
    ],
)
def test_bad_line_fails_with_file_line_and_reason(tmp_path, bad_line, reason):
    path = write_jsonl(tmp_path / "c.jsonl", GOOD + [bad_line])
    with pytest.raises(CorpusError, match=rf"c.jsonl:3: .*{reason}"):
        load_corpus(path)


def test_skip_bad_skips_and_counts_every_bad_line(tmp_path):
    path = write_jsonl(
        tmp_path / "c.jsonl", GOOD + ["{oops", json.dumps({"id": "x", "title": "T", "date": "2024-01-01"}), ""]
    )
    corpus = load_corpus(path, skip_bad=True)
    assert len(corpus) == 2
    assert corpus.report.read == 4 and corpus.report.skipped == 2
    assert sum(corpus.report.skipped_by_reason.values()) == 2
    assert corpus.report.first_errors[0].startswith(f"{path}:3: not valid JSON")


def test_missing_or_empty_file_is_an_error(tmp_path):
    with pytest.raises(CorpusError, match="no such corpus file"):
        load_corpus(tmp_path / "absent.jsonl")
    with pytest.raises(CorpusError, match="no papers loaded"):
        load_corpus(write_jsonl(tmp_path / "empty.jsonl", []))


def test_date_field_can_be_renamed(tmp_path):
    rows = [{"id": "2505.23969", "title": "T", "abstract": "", "listed": "2025-06-02"}]
    path = write_jsonl(tmp_path / "c.jsonl", rows)
    with pytest.raises(CorpusError, match="missing required field 'date'"):
        load_corpus(path)
    assert load_corpus(path, date_field="listed").papers[0].date.isoformat() == "2025-06-02"


def test_corpus_object_refuses_duplicate_ids():
    papers = random_papers(5)
    with pytest.raises(CorpusError, match="duplicate"):
        Corpus(papers + papers[:1])
