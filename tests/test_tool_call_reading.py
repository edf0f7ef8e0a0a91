"""How text replies are read for tool calls: the template's own format, or leniently (fenced JSON
and call objects in prose, as untrained models write them), a protocol setting."""

import datetime as dt
import json

import pytest

from hindsight.config import ConfigError
from hindsight.corpus import Corpus
from hindsight.policy.base import Turn
from hindsight.policy.parsing import parse_tool_calls, read_leniently
from hindsight.protocol import ProtocolConfig
from hindsight.recipe import load_recipe
from hindsight.runner import run_episodes
from hindsight.schema import Task
from hindsight.search.bm25 import BM25Backend
from tests.helpers import keyed, random_papers

SEARCH = {"name": "search_papers", "arguments": {"query": "graph attention"}}
# What the real Qwen2.5-Coder-0.5B-Instruct wrote when first given the search tool
FENCED = "```json\n" + json.dumps(SEARCH, indent=2) + "\n```"


def test_a_fenced_call_is_unreadable_under_the_template_reading():
    assert parse_tool_calls(FENCED, "auto").calls == []
    assert parse_tool_calls(FENCED, "qwen").calls == []


@pytest.mark.parametrize(
    "reply",
    [
        FENCED,
        "```\n" + json.dumps(SEARCH) + "\n```",
        "I will search first.\n" + FENCED + "\nThen I will read the results.",
        "Let me search: " + json.dumps(SEARCH) + " and see.",
        "```json\n" + json.dumps({"name": "search_papers", "arguments": json.dumps(SEARCH["arguments"])}) + "\n```",
    ],
)
def test_the_lenient_reading_finds_the_call_wherever_it_was_written(reply):
    parsed = read_leniently(reply)
    assert [(c.name, c.arguments) for c in parsed.calls] == [("search_papers", {"query": "graph attention"})]
    assert "```" not in parsed.text


def test_the_lenient_reading_takes_the_template_format_as_it_is():
    reply = '<tool_call>\n{"name": "submit_answer", "arguments": {"papers": [{"id": "2101.00001"}]}}\n</tool_call>'
    assert read_leniently(reply).calls == parse_tool_calls(reply).calls != []


@pytest.mark.parametrize(
    "reply",
    [
        "I cannot help with that.",
        "```python\nprint({'a': 1})\n```",
        '```json\n{"query": "no name here"}\n```',
        "{not json at all}",
        "",
    ],
)
def test_the_lenient_reading_invents_no_call(reply):
    assert read_leniently(reply).calls == []


def test_the_reading_is_a_protocol_setting_checked_on_load(tmp_path):
    recipe = tmp_path / "r.yaml"
    recipe.write_text("protocol:\n  tool_calls: sloppy\n")
    with pytest.raises(ConfigError, match="tool_calls must be one of template, lenient"):
        load_recipe(recipe)


class FencedWriter:
    """A policy that writes its calls as fenced JSON text, as an untrained model does; with
    `short`, its submission one closing brace short, as the untrained Qwen2.5 often ends it."""

    name = "fenced"

    def __init__(self, short: bool = False):
        self.short = short

    def act(self, batch, tools):
        turns = []
        for conv in batch:
            searched = any(m["role"] == "tool" for m in conv.messages)
            call = (
                {"name": "submit_answer", "arguments": {"papers": [{"id": "2201.00001", "rationale": "a {b} [c]"}]}}
                if searched
                else SEARCH
            )
            body = json.dumps(call)[:-1] if searched and self.short else json.dumps(call)
            text = "```json\n" + body + "\n```"
            turns.append(Turn(text=text, content=text, parse_error="no tool call found"))
        return turns

    def describe(self):
        return {"backend": self.name}


@pytest.mark.parametrize("reading, status, calls", [("template", "malformed", 3), ("lenient", "submitted", 2)])
def test_the_runner_reads_replies_as_the_protocol_says(tmp_path, reading, status, calls):
    backend = BM25Backend(Corpus(random_papers(200, seed=4)))
    tasks = [Task(f"t{i}", "graph attention for robots", dt.date(2022, 1, 1)) for i in range(3)]
    run_episodes(
        FencedWriter(), keyed(tasks), backend, ProtocolConfig(tool_calls=reading), tmp_path / reading, progress=False
    )
    rows = [json.loads(line) for line in (tmp_path / reading / "episodes.jsonl").read_text().splitlines()]
    assert {r["status"] for r in rows} == {status} and {r["calls"] for r in rows} == {calls}
    if reading == "lenient":
        assert rows[0]["steps"][0]["args"] == {"query": "graph attention"}
        assert rows[0]["messages"][2]["tool_calls"][0]["function"]["name"] == "search_papers"


@pytest.mark.parametrize("reading, status", [("lenient", "malformed"), ("repaired", "submitted")])
def test_a_submission_one_brace_short_is_read_only_by_the_repairing_reading(tmp_path, reading, status):
    backend = BM25Backend(Corpus(random_papers(200, seed=4)))
    tasks = [Task("t0", "graph attention for robots", dt.date(2022, 1, 1))]
    run_episodes(
        FencedWriter(short=True),
        keyed(tasks),
        backend,
        ProtocolConfig(tool_calls=reading),
        tmp_path / reading,
        progress=False,
    )
    row = json.loads((tmp_path / reading / "episodes.jsonl").read_text())
    assert row["status"] == status
    if reading == "repaired":  # what it wrote, closed: the braces inside the string are text, not structure
        assert row["steps"][-1]["args"] == {"papers": [{"id": "2201.00001", "rationale": "a {b} [c]"}]}


@pytest.mark.parametrize(
    "reply, query",
    [
        ('{"name": "search_papers", "arguments": {"query": "cut sho', "cut sho"),
        ('<tool_call>{"name": "search_papers", "arguments": {"query": "x"}', "x"),
        ('I would search {"name": "search_papers", "arguments": {"query": "a \\"b\\" c"', 'a "b" c'),
    ],
)
def test_the_repairing_reading_closes_an_unclosed_call_and_invents_nothing_else(reply, query):
    calls = read_leniently(reply, repair=True).calls
    assert [(call.name, call.arguments) for call in calls] == [("search_papers", {"query": query})]
    assert read_leniently(reply).calls == [] or reply.startswith("<tool_call>")
    assert read_leniently("no call at all {not json", repair=True).calls == []


def test_the_reading_benchmark_reads_the_same_replies_both_ways(tmp_path):
    from benchmarks.tool_call_reading import measure
    from tests.helpers import make_instances, write_jsonl, write_run

    tags = '<tool_call>\n{"name": "submit_answer", "arguments": {"papers": []}}\n</tool_call>'
    steps = [
        {"tool": "search_papers", "args": {"query": "graph attention"}, "raw": FENCED},
        {"tool": "(unparsed)", "args": None, "raw": "I am not sure.", "error": "no tool call"},
        {"tool": "submit_answer", "args": {"papers": []}, "raw": tags},
    ]
    instances = write_jsonl(tmp_path / "instances.jsonl", make_instances(1))
    run = write_run(
        tmp_path / "runs",
        "base",
        [{"instance_id": "t0", "policy": "p", "status": "submitted", "calls": 3, "steps": steps, "submission": []}],
        instances,
    )
    shares = measure([run])["runs"]["base"]
    assert (shares["all"]["replies"], shares["all"]["template"], shares["all"]["lenient"]) == (3, 1, 2)
    assert (shares["first"]["template"], shares["first"]["lenient"]) == (0, 1)
