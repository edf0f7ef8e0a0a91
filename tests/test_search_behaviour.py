"""benchmarks.search_behaviour: how a run searched and answered, from its episodes."""

import json

import pytest

from benchmarks.search_behaviour import behaviour, main, measure
from hindsight.schema import Episode
from tests.helpers import write_jsonl


def episode(instance_id: str, queries: list[str], submitted: list[str]) -> Episode:
    steps = [{"tool": "search_papers", "args": {"query": query}, "returned_ids": []} for query in queries]
    steps.append({"tool": "(unparsed)", "args": None, "error": "could not read a tool call"})
    return Episode.from_dict(
        {
            "instance_id": instance_id,
            "policy": "test",
            "status": "submitted" if submitted else "malformed",
            "steps": steps,
            "submission": [{"id": pid} for pid in submitted],
        }
    )


def test_repeated_queries_count_within_an_episode_only_and_ignore_case_and_spacing():
    found = behaviour(
        [episode("a", ["graph nets", "Graph  nets", "trees"], ["1", "2"]), episode("b", ["graph nets"], ["1"])]
    )
    assert found.searches_per_episode == pytest.approx(2.0)
    assert found.repeated_query_share == pytest.approx(1 / 4)
    assert found.words_per_query == pytest.approx((2 + 2 + 1 + 2) / 4)


def test_answers_name_each_paper_once_and_reuse_across_targets_lowers_the_distinct_share():
    found = behaviour([episode("a", ["q"], ["1", "2", "1"]), episode("b", ["q"], ["1", "2"]), episode("c", ["q"], [])])
    assert found.answers == 2 and found.papers_per_answer == pytest.approx(2.0)
    assert found.distinct_submitted_share == pytest.approx(2 / 4)
    assert found.answers_repeating_a_paper == pytest.approx(1 / 2)


def test_a_run_folder_is_measured_from_its_episodes_file(tmp_path):
    (tmp_path / "base").mkdir()
    write_jsonl(tmp_path / "base" / "episodes.jsonl", [episode("a", ["x y"], ["1"]).to_dict()])
    report = measure([tmp_path / "base"])
    assert report["runs"][str(tmp_path / "base")]["episodes"] == 1
    assert "| 1 | 1.0 | 2.0 | 0% | 1 | 1.0 | 0% | 100% |" in report["markdown"]


def sft_row(queries: list[str], submitted: list[str]) -> dict:
    calls = [("search_papers", {"query": query}) for query in queries]
    calls.append(("submit_answer", {"papers": [{"id": pid, "reason": "r"} for pid in submitted]}))
    messages = [{"role": "user", "content": "brief"}]
    for number, (name, args) in enumerate(calls):
        call = {"id": f"call_{number}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        messages += [{"role": "assistant", "content": "", "tool_calls": [call]}, {"role": "tool", "content": "[]"}]
    return {"messages": messages, "tools": []}


def test_demonstration_rows_are_measured_like_the_episodes_of_a_run(tmp_path):
    rows = tmp_path / "sft.jsonl"
    write_jsonl(rows, [sft_row(["graph nets", "graph  Nets"], ["1", "2", "1"]), sft_row(["trees"], ["3"])])
    found = report_row(measure([rows]), rows)
    assert found["episodes"] == 2 and found["searches_per_episode"] == pytest.approx(1.5)
    assert found["repeated_query_share"] == pytest.approx(1 / 3)
    assert found["papers_per_answer"] == pytest.approx(1.5) and found["answers_repeating_a_paper"] == pytest.approx(0.5)


def report_row(report: dict, source) -> dict:
    return report["runs"][str(source)]


def test_a_demonstration_file_with_a_broken_line_is_refused_by_file_and_line(tmp_path, capsys):
    rows = tmp_path / "sft.jsonl"
    rows.write_text(json.dumps(sft_row(["q"], ["1"])) + "\n{not json\n")
    assert main([str(rows)]) == 2
    assert f"{rows}:2: not valid JSON" in capsys.readouterr().err
