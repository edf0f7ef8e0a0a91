"""benchmarks.query_sources: how much of each query the searcher could read before writing it."""

import json

import pytest

from benchmarks.query_sources import main, measure, sources
from hindsight.schema import Episode
from tests.helpers import write_jsonl


def call(number: int, name: str, args: dict, as_text: bool = True) -> dict:
    arguments = json.dumps(args) if as_text else args
    return {"id": f"call_{number}", "type": "function", "function": {"name": name, "arguments": arguments}}


def conversation(brief: str, searches: list[tuple[str, str]]) -> list[dict]:
    """The brief, then each (query, titles the search returned) as a turn and its tool answer."""
    messages = [{"role": "system", "content": "Find prior work."}, {"role": "user", "content": brief}]
    for number, (query, titles) in enumerate(searches):
        messages.append(
            {"role": "assistant", "content": "", "tool_calls": [call(number, "search_papers", {"query": query})]}
        )
        messages.append({"role": "tool", "content": json.dumps({"results": [{"id": "1", "title": titles}]})})
    return messages


def test_a_query_copied_from_the_brief_is_wholly_seen_and_a_word_from_nowhere_is_not():
    found = sources([conversation("Sparse graph attention is slow", [("sparse graph", "x"), ("sparse zorblat", "y")])])
    assert found.first_searches == 1 and found.first_seen_share == pytest.approx(1.0)
    assert found.later_searches == 1 and found.later_seen_share == pytest.approx(0.5)
    assert found.later_wholly_seen == pytest.approx(0.0)


def test_words_count_as_seen_only_once_written_before_the_query():
    # "kernels" first appears in the answer to the query that uses it: not seen when it was written
    early = sources([conversation("graph attention", [("kernels", "Fast kernels"), ("kernels again", "z")])])
    assert early.first_seen_share == pytest.approx(0.0)
    # the second search may use a title the first search returned, and repeat its own earlier query
    assert early.later_seen_share == pytest.approx(0.5)
    titled = sources([conversation("graph attention", [("graph", "Fast kernels"), ("fast kernels", "z")])])
    assert titled.later_seen_share == pytest.approx(1.0) and titled.later_wholly_seen == pytest.approx(1.0)


def test_case_and_punctuation_do_not_make_a_word_new():
    found = sources([conversation("Graph-Attention, at scale.", [("graph attention SCALE", "x")])])
    assert found.first_seen_share == pytest.approx(1.0)


def test_arguments_written_as_objects_read_as_those_written_as_json_text():
    messages = conversation("graph attention", [])
    messages.append(
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [call(0, "search_papers", {"query": "graph q"}, as_text=False)],
        }
    )
    assert sources([messages]).first_seen_share == pytest.approx(0.5)


def test_a_run_folder_and_a_file_of_sft_rows_are_read_alike(tmp_path):
    messages = conversation("graph attention", [("graph", "Fast kernels"), ("zorblat", "z")])
    rows = tmp_path / "sft.jsonl"
    write_jsonl(rows, [{"messages": messages, "tools": []}])
    (tmp_path / "run").mkdir()
    episode = Episode(instance_id="t1", policy="p", protocol_hash="h", status="malformed", messages=messages)
    write_jsonl(tmp_path / "run" / "episodes.jsonl", [episode.to_dict()])
    report = measure([rows, tmp_path / "run"])
    assert report["runs"][str(rows)] == report["runs"][str(tmp_path / "run")]
    assert report["runs"][str(rows)]["later_seen_share"] == pytest.approx(0.0)
    assert "| 1 | 100% | 1 | 0% | 0% | 0% | 0% |" in report["markdown"]


def test_a_row_that_is_not_an_sft_row_is_named(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"messages": []}\n[1, 2]\n')
    assert main([str(bad)]) == 2
    assert f"{bad}:2" in capsys.readouterr().err


def test_a_repeated_query_is_told_apart_from_a_fresh_one():
    searches = [("graph", "Fast kernels"), ("Graph", "a"), ("fast zorblat", "b"), ("graph kernels", "c")]
    found = sources([conversation("graph attention", searches)])
    assert found.later_searches == 3 and found.later_repeats == pytest.approx(1 / 3)
    assert found.later_seen_share == pytest.approx((1 + 0.5 + 1) / 3)
    assert found.fresh_seen_share == pytest.approx((0.5 + 1) / 2)
