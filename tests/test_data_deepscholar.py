import csv
import re
import shutil

import pytest

from hindsight.data import load_benchmark
from hindsight.data.deepscholar import (
    ConversionError,
    cite_counts,
    convert,
    redact,
    target_names,
)
from tests.helpers import SHARED_DATA

DEEPSCHOLAR = SHARED_DATA / "deepscholar-bench"


def require_deepscholar():
    if not (DEEPSCHOLAR / "papers.csv").exists():
        pytest.skip(f"DeepScholar-Bench CSVs not found at {DEEPSCHOLAR} (they live in ../shared/data)")
    return DEEPSCHOLAR


def test_cite_counts_every_key_of_every_cite_command():
    latex = r"A \cite{a, b} and \citep[see][p.~3]{a} and \citet*{c}; also \nocite{d} and~\cite{a}."
    assert cite_counts(latex) == {"a": 3, "b": 1, "c": 1, "d": 1}


def test_redaction_stops_at_the_first_contribution_sentence_and_removes_names():
    abstract = (
        "Large models are costly to serve. Existing caches ignore reuse across requests. "
        "In this paper, we propose FastKV, a cache that shares prefixes. FastKV is 3x faster."
    )
    brief = redact(abstract, "FastKV: Sharing Prefix Caches for LLM Serving")
    assert brief.startswith("Large models are costly to serve. Existing caches ignore reuse across requests.")
    assert "FastKV" not in brief and "propose" not in brief
    assert redact("We introduce X. It works.", "X: a thing") is None
    assert target_names("Need for zkSpeed: Accelerating HyperPlonk for Zero-Knowledge Proofs") == [
        "Need for zkSpeed",
        "HyperPlonk",
        "zkSpeed",
    ]


@pytest.mark.shared_data
def test_real_csvs_convert_under_the_rules(tmp_path):
    src = require_deepscholar()
    corpus, instances, report = load_benchmark(src, cache_dir=tmp_path)
    assert len(instances) >= 30 and {i.split for i in instances} == {"train", "dev", "eval"}
    with open(src / "papers.csv", newline="", encoding="utf-8") as handle:
        titles = {" ".join(row["title"].split()) for row in csv.DictReader(handle)}
    for inst in instances:
        assert all(lab.date < inst.cutoff for lab in inst.labels), inst.id
        assert all((inst.target.date - lab.date).days <= 4 * 366 for lab in inst.labels), inst.id
        assert inst.target.id not in {lab.id for lab in inst.labels}
        assert 2 <= len(inst.labels) <= 10
        for name in target_names(inst.target.title):
            assert not re.search(rf"(?<![\w-]){re.escape(name)}(?!\w)", inst.brief), (inst.id, name)
        head = inst.target.title.split(":")[0]
        if ":" in inst.target.title and len(head.split()) == 1:  # "AWDIT: ...", "Lumos: ...": the method's name
            assert not re.search(rf"\b{re.escape(head)}\b", inst.brief), (inst.id, head)
        assert inst.target.title in titles
        assert 0 <= inst.audit["title_overlap"] <= 1
    assert {lab.tier for inst in instances for lab in inst.labels} == {"T1", "T2", "T3"}
    assert corpus.get(instances[0].labels[0].id) is not None


@pytest.mark.shared_data
def test_a_malformed_csv_row_fails_with_file_and_line(tmp_path):
    src = require_deepscholar()
    for name in ("papers.csv", "citations.csv", "related_works_combined.csv"):
        shutil.copy(src / name, tmp_path / name)
    rows = (tmp_path / "papers.csv").read_text(encoding="utf-8")
    (tmp_path / "papers.csv").write_text(
        rows + "not-an-id,Some title,authors,abstract,cs.LG,2025-05-01,,\n", encoding="utf-8"
    )
    with pytest.raises(ConversionError, match=r"papers.csv:\d+: arxiv_id 'not-an-id' is not an arXiv id"):
        convert(tmp_path)
    (tmp_path / "papers.csv").write_text(rows.replace("published_date", "published"), encoding="utf-8")
    with pytest.raises(ConversionError, match="papers.csv:1: missing column"):
        convert(tmp_path)


@pytest.mark.shared_data
def test_model_written_briefs_through_a_real_server_fall_back_when_empty(tiny_model, tiny_server, tmp_path):
    """The tiny random model answers with nothing usable: every target keeps its rule-based brief,
    and the summary says so; the requests themselves went through the server and were cached."""
    src = require_deepscholar()
    from hindsight.data.deepscholar import convert_to

    options = {
        "model": f"openai/{tiny_model}",
        "api_base": tiny_server,
        "api_key": "unused",
        "cache_dir": str(tmp_path / "cache"),
        "max_tokens": "8",
    }
    summary = convert_to(src, tmp_path / "out", options)
    assert "model-written briefs: 0; kept the rule-based brief after a failed request: 43" in summary
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 43


@pytest.mark.shared_data
def test_a_model_written_brief_is_used_and_stripped_of_the_targets_name(tmp_path):
    src = require_deepscholar()
    from hindsight.data.briefs import brief_request
    from hindsight.data.deepscholar import read_csv
    from hindsight.policy.litellm_backend import ResponseCache

    cache = ResponseCache(tmp_path / "cache")
    rows = [row for _, row in read_csv(src / "papers.csv", ("arxiv_id", "title", "abstract"))]
    lumos = next(row for row in rows if row["title"].startswith("Lumos"))
    request = brief_request("openai/recorded", lumos["title"], lumos["abstract"], None)
    reply = "We want to predict training time. Lumos-like tools fall short; Lumos is not named here. Which papers?"
    cache.put(cache.key(request), {"choices": [{"message": {"content": reply}}]})
    papers, instances, info = convert(src, {"model": "openai/recorded", "cache_dir": str(tmp_path / "cache")})
    target = next(i for i in instances if i.target.title.startswith("Lumos"))
    assert target.audit["brief_by"] == "model" and info["model_briefs"] == 1
    assert "Lumos" not in target.brief and target.brief.startswith("We want to predict training time.")
