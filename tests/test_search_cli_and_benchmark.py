import json
from pathlib import Path

from hindsight.search.__main__ import main as search_main
from tests.helpers import load_file_module, random_papers, write_jsonl

ROOT = Path(__file__).resolve().parents[1]


def test_search_cli_shows_only_pre_cutoff_papers(capsys):
    code = search_main(
        [
            "--corpus",
            str(ROOT / "examples/mini_corpus.jsonl"),
            "--cutoff",
            "2024-06-01",
            "--cutoff",
            "2025-01-01",
            "-k",
            "3",
            "hindsight supervision for search agents",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    before, after = out.split("before 2024-06-01")[1].split("before 2025-01-01")
    assert "2411.10314" not in before and "2411.10314" in after  # posted 2024-11-04
    assert "(17 of 24 papers eligible)" in before


def test_search_cli_reports_a_bad_corpus_line_and_exits_2(tmp_path, capsys):
    path = write_jsonl(tmp_path / "c.jsonl", [{"id": "2401.00001", "title": "T", "date": "2024-01-01"}, "{broken"])
    assert search_main(["--corpus", str(path), "--cutoff", "2025-01-01", "q"]) == 2
    assert f"{path}:2: not valid JSON" in capsys.readouterr().err


def test_benchmark_script_runs_and_reports_the_ratio(tmp_path, capsys):
    bench = load_file_module("bench_search", ROOT / "benchmarks/search.py")
    corpus = write_jsonl(tmp_path / "c.jsonl", [p.to_dict() for p in random_papers(500, seed=4)])
    report = bench.main(
        ["--corpus", str(corpus), "--queries", "40", "--baseline-queries", "20", "--json", str(tmp_path / "out.json")]
    )
    saved = json.loads((tmp_path / "out.json").read_text())
    assert saved["hindsight_bm25"]["queries"] == 40 and saved["rank_bm25"]["queries"] == 20
    assert saved["hindsight_bm25"]["identical_run_to_run"] is True
    assert report["speedup_p50"] == saved["rank_bm25"]["p50_ms"] / saved["hindsight_bm25"]["p50_ms"]
    assert 0 <= saved["overlap_at_k"] <= 1
    assert "Speed-up at p50" in capsys.readouterr().out
