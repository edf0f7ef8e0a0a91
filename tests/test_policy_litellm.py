"""The litellm backend against a real OpenAI-compatible server: `transformers serve` running a
tiny random-weight Qwen3 on 127.0.0.1."""

import datetime as dt
import json
import time

import pytest

from hindsight.corpus import Corpus
from hindsight.policy.base import Conversation
from hindsight.prompts import initial_messages
from hindsight.protocol import ProtocolConfig, tool_schemas
from hindsight.runner import run_episodes
from hindsight.schema import Task
from hindsight.search.bm25 import BM25Backend
from tests.helpers import free_port, keyed, random_papers

pytest.importorskip("litellm")
from hindsight.policy.litellm_backend import LiteLLMPolicy  # noqa: E402

TOOLS = tool_schemas(ProtocolConfig())


@pytest.fixture
def server(tiny_server):
    return tiny_server


def policy(tiny_model, url, **options):
    return LiteLLMPolicy(f"openai/{tiny_model}", api_base=url, api_key="unused", max_new_tokens=12, **options)


def conversation(i=0):
    task = Task(f"t{i}", f"graph attention {i}", dt.date(2021, 1, 1))
    return Conversation(task, initial_messages(task))


def test_garbage_from_a_real_server_becomes_malformed_steps(tiny_model, server, tmp_path):
    backend = BM25Backend(Corpus(random_papers(100)))
    tasks = [conversation(i).task for i in range(3)]
    run_episodes(
        policy(tiny_model, server, cache_dir=tmp_path / "cache"),
        keyed(tasks),
        backend,
        ProtocolConfig(budget=4),
        tmp_path / "run",
        progress=False,
    )
    rows = [json.loads(line) for line in (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()]
    assert sorted(r["instance_id"] for r in rows) == ["t0", "t1", "t2"]
    assert {r["status"] for r in rows} <= {"malformed", "budget_exhausted"}
    assert all(r["tokens"]["prompt"] > 0 and r["tokens"]["completion"] > 0 for r in rows)


def test_a_repeated_request_is_served_from_the_cache(tiny_model, server, tmp_path):
    first = policy(tiny_model, server, cache_dir=tmp_path).act([conversation()], TOOLS)[0]
    again = policy(tiny_model, server, cache_dir=tmp_path).act([conversation()], TOOLS)[0]
    assert first.attempts == 1 and again.attempts == 0
    assert (again.text, again.prompt_tokens) == (first.text, first.prompt_tokens)
    assert len(list(tmp_path.rglob("*.json"))) == 1


def test_an_unreachable_server_is_retried_then_recorded(tiny_model, tmp_path):
    dead = f"http://127.0.0.1:{free_port()}/v1"
    start = time.perf_counter()
    turn = policy(tiny_model, dead, max_retries=2, backoff_s=0.05, use_cache=False).act([conversation()], TOOLS)[0]
    # litellm reports a refused connection as an InternalServerError ("Connection error")
    assert "after 3 attempts" in turn.failure and "Connection error" in turn.failure and turn.attempts == 3
    assert time.perf_counter() - start >= 0.05 * (1 + 2) * 0.5  # it waited between attempts
    backend = BM25Backend(Corpus(random_papers(50)))
    run_episodes(
        policy(tiny_model, dead, max_retries=1, backoff_s=0.01, use_cache=False),
        keyed([conversation().task]),
        backend,
        ProtocolConfig(),
        tmp_path / "run",
        progress=False,
    )
    row = json.loads((tmp_path / "run" / "episodes.jsonl").read_text())
    assert row["status"] == "error" and "after 2 attempts" in row["error"]


def test_tool_call_arguments_go_over_the_wire_as_json_text(tiny_model):
    conv = conversation()
    conv.messages.append(
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "search_papers", "arguments": {"query": "q"}}}
            ],
        }
    )
    request = policy(tiny_model, "http://unused/v1", use_cache=False).request(conv, TOOLS)
    assert request["messages"][-1]["tool_calls"][0]["function"]["arguments"] == '{"query": "q"}'
    assert conv.messages[-1]["tool_calls"][0]["function"]["arguments"] == {"query": "q"}  # the log is untouched
