"""An open corpus: paper snapshots (the arXiv metadata snapshot among them) merged into a
benchmark's own papers, and a report that says how open the result is."""

import datetime as dt
import email.utils
import json
import random
import tracemalloc
from pathlib import Path

import pytest

from hindsight.corpus import CorpusError, load_papers
from hindsight.data import load_benchmark
from hindsight.data.native import CLOSED_BELOW
from hindsight.data.open_corpus import ExternalCorpus, merge_papers
from hindsight.recipe import load_recipe
from hindsight.schema import Paper
from tests.helpers import WORDS, make_instances, write_jsonl

DEEPSCHOLAR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "deepscholar-bench"


def snapshot_line(number: int, posted: dt.date, category: str = "cs.LG", rng=random) -> str:
    """One line as the arXiv metadata snapshot writes it: RFC 2822 version dates, space-separated
    categories, titles and abstracts broken over lines, and an update date later than posting."""
    created = email.utils.format_datetime(
        dt.datetime(posted.year, posted.month, posted.day, 17, 3, 1, tzinfo=dt.timezone.utc), usegmt=True
    )
    title = " ".join(rng.choices(WORDS, k=5))
    return json.dumps(
        {
            "id": f"{posted:%y%m}.{number:05d}",
            "submitter": "A. Author",
            "authors": "A. Author, B. Author",
            "title": title.replace(" ", "\n  ", 1),
            "comments": "12 pages",
            "journal-ref": None,
            "doi": None,
            "report-no": None,
            "categories": f"{category} stat.ML",
            "license": None,
            "abstract": "  " + " ".join(rng.choices(WORDS, k=60)) + "\n",
            "versions": [
                {"version": "v1", "created": created},
                {"version": "v2", "created": "Tue, 1 Dec 2026 10:00:00 GMT"},
            ],
            "update_date": "2026-12-01",
            "authors_parsed": [["Author", "A.", ""]],
        }
    )


def write_snapshot(
    path: Path, count: int, start=dt.date(2021, 1, 1), days: int = 1500, cs_every: int = 1, seed: int = 0
) -> Path:
    rng = random.Random(seed)
    serial: dict[str, int] = {}
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(count):
            posted = start + dt.timedelta(days=rng.randrange(days))
            month = f"{posted:%y%m}"
            serial[month] = serial.get(month, 0) + 1
            category = "cs.LG" if i % cs_every == 0 else "math.PR"
            handle.write(snapshot_line(60000 + serial[month], posted, category, rng) + "\n")
    return path


def test_arxiv_snapshot_lines_become_papers_dated_by_their_first_version(tmp_path):
    path = tmp_path / "arxiv-metadata-oai-snapshot.json"
    path.write_text(snapshot_line(123, dt.date(2023, 5, 9)) + "\n")
    (paper,), report = load_papers(path)  # the format is recognised from the first record
    assert paper.id == "2305.00123" and paper.date == dt.date(2023, 5, 9)  # not the update_date, 2026-12-01
    assert "\n" not in paper.title and not paper.abstract.startswith(" ") and paper.categories == ("cs.LG", "stat.ML")
    assert report.read == report.loaded == 1


def test_a_snapshot_record_without_any_date_falls_back_to_its_update_date(tmp_path):
    record = json.loads(snapshot_line(7, dt.date(2023, 5, 9)))
    record["versions"] = []
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(record) + "\n")
    (paper,), _ = load_papers(path, format="arxiv-snapshot")
    assert paper.date == dt.date(2026, 12, 1)


def test_malformed_snapshot_lines_are_reported_with_file_and_line(tmp_path):
    good = [snapshot_line(i, dt.date(2023, 5, 9)) for i in range(1, 5)]
    no_date = json.loads(good[3])
    del no_date["versions"], no_date["update_date"]
    lines = [
        good[0],
        good[1],
        '{"id": "2305.00003", "title": ',
        json.dumps({**json.loads(good[2]), "id": "nonsense"}),
        json.dumps(no_date),
    ]
    path = tmp_path / "snapshot.json"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(CorpusError, match=rf"{path}:3: not valid JSON"):
        load_papers(path, format="arxiv-snapshot")
    papers, report = load_papers(path, format="arxiv-snapshot", skip_bad=True)
    assert [p.id for p in papers] == ["2305.00001", "2305.00002"]
    assert report.skipped == 3 and report.read == 5
    assert [error.split(": ")[0] for error in report.first_errors] == [f"{path}:3", f"{path}:4", f"{path}:5"]
    assert "'nonsense' is not an arXiv id" in report.first_errors[1] and "update_date" in report.first_errors[2]


def test_reading_a_snapshot_holds_what_it_keeps_not_the_file(tmp_path):
    """The same 50 kept papers from a file of 4,000 lines and of 20,000: the reader streams, so the
    larger file may not take much more memory at its peak."""
    peaks = {}
    for lines in (4_000, 20_000):
        path = write_snapshot(tmp_path / f"snapshot-{lines}.json", lines, cs_every=lines // 50)
        tracemalloc.start()
        papers, report = load_papers(path, categories=("cs.",))
        peaks[lines] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert len(papers) == 50 and report.filtered == lines - 50
    assert path.stat().st_size > 5 * 1024 * 1024
    assert peaks[20_000] < 1.3 * peaks[4_000], peaks


def test_merging_keeps_one_paper_per_id_and_the_snapshots_record_wins():
    own = [
        Paper("2305.00001", "cited title", dt.date(2023, 5, 1)),
        Paper("2306.00002", "only ours", dt.date(2023, 6, 1)),
    ]
    snapshot = [
        Paper("2305.00001", "Exact Title", dt.date(2023, 5, 17), "an abstract"),
        Paper("2101.00009", "older", dt.date(2021, 1, 5)),
    ]
    merged, replaced = merge_papers(own, snapshot)
    assert replaced == 1
    assert [(p.id, p.title, p.date) for p in merged] == [
        ("2101.00009", "older", dt.date(2021, 1, 5)),
        ("2305.00001", "Exact Title", dt.date(2023, 5, 17)),
        ("2306.00002", "only ours", dt.date(2023, 6, 1)),
    ]


@pytest.fixture
def small_benchmark(tmp_path):
    """Five targets of 2024 whose two antecedents each are the only papers of the benchmark's corpus."""
    records = make_instances(5, labels_per=2)
    papers = [
        {"id": label["id"], "title": f"antecedent {label['id']}", "date": "2023-01-15"}
        for record in records
        for label in record["labels"]
    ]
    folder = tmp_path / "bench"
    folder.mkdir()
    write_jsonl(folder / "instances.jsonl", records)
    write_jsonl(folder / "corpus.jsonl", papers)
    return folder


def test_a_closed_corpus_is_warned_about_and_an_open_one_is_not(small_benchmark, tmp_path):
    _, _, closed = load_benchmark(small_benchmark, cache_dir=tmp_path / "cache")
    assert closed.openness["eval"]["distractors_per_label"] < CLOSED_BELOW
    assert closed.warnings and "closed corpus" in closed.summary()
    snapshot = write_snapshot(tmp_path / "snapshot.json", 3_000, start=dt.date(2020, 1, 1), days=1400)
    corpus, _, opened = load_benchmark(
        small_benchmark, cache_dir=tmp_path / "cache", corpus=ExternalCorpus(str(snapshot))
    )
    before_cutoff = sum(p.date < dt.date(2024, 1, 1) for p in corpus)
    assert opened.openness["eval"]["searchable_at_median_cutoff"] == before_cutoff
    assert opened.openness["eval"]["distractors_per_label"] == pytest.approx((before_cutoff - 2) / 2)
    assert opened.warnings == [] and opened.open_corpus["external"] == 3_000
    assert "3,000 from" in opened.summary()


def test_a_recipe_names_the_open_corpus_and_every_load_reads_the_same_merged_files(
    small_benchmark, tmp_path, monkeypatch
):
    monkeypatch.setenv("HINDSIGHT_CACHE", str(tmp_path / "cache"))
    snapshot = write_snapshot(tmp_path / "snapshot.json", 400, cs_every=2)
    recipe_path = tmp_path / "recipe.yaml"
    recipe_path.write_text(f"data:\n  source: {small_benchmark}\n  corpus: {snapshot}\n  corpus_categories: [cs.]\n")
    first, _, report = load_recipe(recipe_path).data.load()
    merged_folders = list((tmp_path / "cache").glob("open-*"))
    second, _, _ = load_recipe(recipe_path).data.load()
    assert len(merged_folders) == 1 and list((tmp_path / "cache").glob("open-*")) == merged_folders
    assert first.hash == second.hash and len(first) == 10 + 200 and report.open_corpus["load"]["filtered"] == 200
    recipe_path.write_text(f"data:\n  source: {small_benchmark}\n  corpus: {snapshot}\n  corpus_format: kaggle\n")
    with pytest.raises(ValueError, match="corpus format 'kaggle'"):
        load_recipe(recipe_path).data.load()


@pytest.mark.skipif(not (DEEPSCHOLAR / "papers.csv").exists(), reason="../shared/data/deepscholar-bench is absent")
def test_the_deepscholar_conversion_warns_of_its_closed_corpus_until_a_snapshot_opens_it(tmp_path):
    from hindsight.data.deepscholar import convert_to

    closed = convert_to(DEEPSCHOLAR, tmp_path / "closed")
    assert "warning: split eval: a closed corpus" in closed
    # the targets were posted in April and May 2025; their cutoffs fall in early 2025
    snapshot = write_snapshot(tmp_path / "snapshot.json", 20_000, start=dt.date(2021, 6, 1), days=1300)
    opened = convert_to(DEEPSCHOLAR, tmp_path / "open", external=ExternalCorpus(str(snapshot)))
    assert "warning" not in opened
    eval_line = next(line for line in opened.splitlines() if line.startswith("split eval:"))
    assert float(eval_line.split(" distractors per antecedent")[0].rsplit("; ", 1)[1].replace(",", "")) > CLOSED_BELOW
    written = sum(1 for _ in open(tmp_path / "open" / "corpus.jsonl"))
    assert written == sum(1 for _ in open(tmp_path / "closed" / "corpus.jsonl")) + 20_000


def test_the_report_says_how_many_eval_antecedents_training_targets_share():
    from hindsight.corpus import Corpus
    from hindsight.data.native import prepare_instances
    from hindsight.schema import Instance

    records = make_instances(4, labels_per=2)
    records[0]["split"] = records[1]["split"] = "train"
    records[2]["labels"][0]["id"] = records[0]["labels"][0]["id"]  # one of eval target 2's two antecedents
    papers = [Paper(label["id"], "a title", dt.date(2023, 1, 1)) for r in records for label in r["labels"]]
    _, report = prepare_instances([Instance.from_dict(r) for r in records], Corpus({p.id: p for p in papers}.values()))
    assert report.openness["eval"]["labels_shared_with_train"] == pytest.approx(1 / 4)
    assert "25% of its antecedents are also train targets'" in report.summary()
