"""The capability gate (hindsight.eval.gate, eval/gate.py) and the demo's check (scripts/check_demo.py)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hindsight.config import ConfigError
from hindsight.eval.gate import GateConfig, copied_from, failures, measure
from hindsight.recipe import load_recipe
from hindsight.schema import Episode

ROOT = Path(__file__).resolve().parents[1]
BRIEF = (
    "We study sparse vintuz kelpelclav routing under drifting ulloeskv loads. "
    "Prior methods assume stationary traffic and fail when demand shifts."
)


def episode(instance_id, query, returned, submitted, status="submitted"):
    return Episode.from_dict(
        {
            "instance_id": instance_id,
            "policy": "p",
            "status": status,
            "steps": [{"tool": "search_papers", "args": {"query": query}, "returned_ids": returned}],
            "submission": [{"id": i} for i in submitted],
        }
    )


def test_the_brief_first_sentence_is_a_copy():
    assert copied_from("We study sparse vintuz kelpelclav routing under drifting ulloeskv loads", BRIEF)


def test_a_copy_with_one_word_wrong_is_still_a_copy():
    assert copied_from("We study sparse vintuz kelpelclav routing under drifting zemorv loads", BRIEF)


def test_a_memorised_sentence_sharing_only_stock_phrases_is_not_a_copy():
    assert not copied_from("We study dense zemorv baltic routing under fixed orrun loads", BRIEF)


def test_a_two_word_query_is_too_short_to_count():
    assert not copied_from("sparse routing", BRIEF)


def test_measure_counts_copies_surfaced_ids_and_malformed_endings():
    briefs = {"a": BRIEF, "b": BRIEF, "c": BRIEF, "d": BRIEF}
    episodes = [
        episode("a", "sparse vintuz kelpelclav routing", ["2401.00001", "2401.00002"], ["2401.00001", "2401.00002"]),
        episode("b", "graph neural networks for proteins", ["2401.00003"], ["2401.00003", "2401.00009"]),
        episode("c", "drifting ulloeskv loads prior methods", [], [], status="malformed"),
        episode("d", "unrelated words entirely here", [], [], status="malformed"),
    ]
    measured = measure(episodes, briefs)
    assert measured.copied_first_queries == pytest.approx(2 / 4)
    assert measured.surfaced_submissions == pytest.approx(3 / 4)
    assert measured.malformed == pytest.approx(2 / 4)
    assert measured.submitted_ids == 4


def test_each_missing_capability_is_named_with_what_to_try():
    measured = measure(
        [episode("a", "nothing from the brief at all", ["2401.00001"], ["2401.00007"], "malformed")], {"a": BRIEF}
    )
    lines = failures(measured, GateConfig())
    assert [line.split()[0] for line in lines] == ["copied_first_queries", "surfaced_submissions", "malformed"]
    assert all("curriculum" in line or "epochs" in line for line in lines)
    healthy = measure([episode("a", "sparse vintuz kelpelclav routing", ["2401.00001"], ["2401.00001"])], {"a": BRIEF})
    assert failures(healthy, GateConfig()) == []


def test_a_gate_on_the_eval_split_is_refused(tmp_path):
    recipe = tmp_path / "r.yaml"
    recipe.write_text("gate:\n  split: eval\n")
    with pytest.raises(ConfigError, match="gate.split may not be eval"):
        GateConfig.from_recipe(load_recipe(recipe))


def test_an_unknown_gate_key_is_refused(tmp_path):
    recipe = tmp_path / "r.yaml"
    recipe.write_text("gate:\n  min_copied: 0.5\n")
    with pytest.raises(ConfigError, match="unknown key"):
        GateConfig.from_recipe(load_recipe(recipe))


def comparison(low_exposed=0.01, low_selected=0.01, low_final=0.01, hits=10, surfaced=9):
    diff = lambda low: {"diff": low + 0.02, "low": low, "high": low + 0.04}  # noqa: E731
    return {
        "differences": {
            "sft - base": {
                "exposed_gain": diff(low_exposed),
                "selected_gain": diff(low_selected),
                "ndcg10": diff(low_final),
            }
        },
        "runs": {
            "sft": {"summary": {"sources": {"hits": hits, "hits_surfaced": surfaced}}},
            "base": {"summary": {"sources": {"hits": 1, "hits_surfaced": 1}}},
        },
    }


def check(tmp_path, report) -> subprocess.CompletedProcess:
    path = tmp_path / "comparison.json"
    path.write_text(json.dumps(report))
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts/check_demo.py"), str(path)], capture_output=True, text=True
    )


def test_the_check_passes_when_every_claim_holds(tmp_path):
    done = check(tmp_path, comparison())
    assert done.returncode == 0, done.stdout
    assert "  FAIL" not in done.stdout


@pytest.mark.parametrize(
    "broken, failing",
    [
        ({"low_exposed": 0.0}, "exposed gain"),
        ({"low_selected": -0.01}, "selected gain"),
        ({"low_final": -0.002}, "final nDCG@10"),
        ({"hits": 10, "surfaced": 7}, "hits surfaced"),
        ({"hits": 0, "surfaced": 0}, "hits surfaced"),
    ],
)
def test_the_check_fails_naming_the_claim_that_did_not_hold(tmp_path, broken, failing):
    done = check(tmp_path, comparison(**broken))
    assert done.returncode == 1
    (failed,) = [line for line in done.stdout.splitlines() if line.startswith("  FAIL")]
    assert failing in failed
    assert "did NOT show the effect" in done.stdout


def test_the_check_names_a_file_that_is_not_a_comparison(tmp_path):
    path = tmp_path / "comparison.json"
    path.write_text("{}")
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts/check_demo.py"), str(path)], capture_output=True, text=True
    )
    assert done.returncode == 2 and str(path) in done.stderr
