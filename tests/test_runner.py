"""The runner: exactly one record per target whatever the policy does, and resumable."""

import asyncio
import datetime as dt
import json
import time

import pytest

from hindsight.corpus import Corpus
from hindsight.policy.base import Turn
from hindsight.policy.parsing import ToolCall
from hindsight.policy.scripted import BM25OneShot
from hindsight.prompts import SEARCH_ONLY_SYSTEM
from hindsight.protocol import ProtocolConfig
from hindsight.runner import RunDirError, error_summary, finished_ids, run_episodes
from hindsight.schema import Task
from hindsight.search.bm25 import BM25Backend
from tests.helpers import keyed, random_papers


@pytest.fixture(scope="module")
def backend():
    return BM25Backend(Corpus(random_papers(500, seed=3)))


TASKS = [
    Task(f"t{i}", f"graph attention for robot policy number {i}", dt.date(2021, 1, 1) + dt.timedelta(days=30 * i))
    for i in range(12)
]


def records(run_dir):
    return [json.loads(line) for line in (run_dir / "episodes.jsonl").read_text().splitlines()]


class Scripted:
    """A policy defined by a function of (conversation, turn number)."""

    def __init__(self, name, step):
        self.name, self.step, self.turns = name, step, {}

    def act(self, batch, tools):
        out = []
        for conv in batch:
            n = self.turns.get(conv.task.task_id, 0)
            self.turns[conv.task.task_id] = n + 1
            out.append(self.step(conv, n))
        return out

    def describe(self):
        return {"backend": self.name}


class IndependentScripted(Scripted):
    """The same, as a remote API would be driven: one conversation at a time, asynchronously."""

    def __init__(self, name, step, delay=lambda conv, n: 0.0):
        super().__init__(name, step)
        self.delay, self.in_flight, self.most_in_flight = delay, 0, 0

    async def act_one(self, conv, tools):
        n = self.turns.get(conv.task.task_id, 0)
        self.turns[conv.task.task_id] = n + 1
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay(conv, n))
            return self.step(conv, n)
        finally:
            self.in_flight -= 1


FLAVOURS = {"lockstep": Scripted, "independent": IndependentScripted}


def search(query="graph"):
    return Turn(calls=[ToolCall("search_papers", {"query": query})])


@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize(
    "name, step, status",
    [
        ("garbage", lambda conv, n: Turn(text="lorem ipsum", parse_error="no tool call found"), "malformed"),
        ("endless", lambda conv, n: search(f"graph {n}"), "budget_exhausted"),
        (
            "invalid-ids",
            lambda conv, n: (
                search() if n == 0 else Turn(calls=[ToolCall("submit_answer", {"papers": [{"id": "nonsense"}]})])
            ),
            "submitted",
        ),
        ("bad-args", lambda conv, n: Turn(calls=[ToolCall("search_papers", {"query": ""})]), "budget_exhausted"),
        ("crashing", lambda conv, n: (_ for _ in ()).throw(RuntimeError("CUDA out of memory")), "error"),
        ("overflowing", lambda conv, n: Turn(failure="context_overflow: 9000 tokens > 8192"), "context_overflow"),
    ],
)
def test_every_target_gets_exactly_one_record_whatever_the_policy_does(backend, tmp_path, name, step, status, flavour):
    manifest = run_episodes(
        FLAVOURS[flavour](name, step),
        keyed(TASKS),
        backend,
        ProtocolConfig(budget=6),
        tmp_path / name,
        batch_size=5,
        progress=False,
    )
    rows = records(tmp_path / name)
    assert sorted(r["instance_id"] for r in rows) == sorted(t.task_id for t in TASKS)
    assert {r["status"] for r in rows} == {status}
    assert manifest["counts"]["attempted"] == len(TASKS) and manifest["status"] == "complete"
    if status == "error":
        assert "CUDA out of memory" in rows[0]["error"]
    if name == "garbage":
        assert rows[0]["calls"] == 3 and rows[0]["messages"][-1]["role"] == "user"


def test_messages_follow_the_openai_format_and_start_from_the_task(backend, tmp_path):
    run_episodes(BM25OneShot(), keyed(TASKS[:2]), backend, ProtocolConfig(), tmp_path / "r", progress=False)
    row = records(tmp_path / "r")[0]
    roles = [m["role"] for m in row["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert row["messages"][0]["content"] == SEARCH_ONLY_SYSTEM
    assert row["messages"][2]["tool_calls"][0]["function"]["name"] == "search_papers"
    assert row["messages"][3]["tool_call_id"] == row["messages"][2]["tool_calls"][0]["id"]
    assert row["status"] == "submitted" and len(row["submission"]) == len(row["steps"][0]["returned_ids"])


def strip_timing(rows):
    return {r["instance_id"]: {k: v for k, v in r.items() if k != "latency_s"} for r in rows}


class Interrupt(BaseException):
    """Stands in for a kill: not an Exception, so the runner does not catch it."""


def test_a_crashed_run_resumes_to_the_same_records_as_an_uninterrupted_one(backend, tmp_path):
    config = ProtocolConfig(budget=8)
    run_episodes(BM25OneShot(), keyed(TASKS), backend, config, tmp_path / "whole", batch_size=4, progress=False)
    policy = BM25OneShot()
    real_act, calls = policy.act, {"n": 0}

    def dying_act(batch, tools):
        calls["n"] += 1
        if calls["n"] == 4:
            raise Interrupt()
        return real_act(batch, tools)

    policy.act = dying_act
    with pytest.raises(Interrupt):
        run_episodes(policy, keyed(TASKS), backend, config, tmp_path / "resumed", batch_size=4, progress=False)
    partial = records(tmp_path / "resumed")
    assert 0 < len(partial) < len(TASKS)
    with open(tmp_path / "resumed" / "episodes.jsonl", "a") as handle:  # a write cut short by the kill
        handle.write('{"instance_id": "t11", "stat')
    assert "t11" not in finished_ids(tmp_path / "resumed" / "episodes.jsonl")
    run_episodes(BM25OneShot(), keyed(TASKS), backend, config, tmp_path / "resumed", batch_size=4, progress=False)
    assert strip_timing(records(tmp_path / "resumed")) == strip_timing(records(tmp_path / "whole"))
    assert len(records(tmp_path / "resumed")) == len(TASKS)


def test_a_resumed_run_adds_its_episodes_and_wall_time_to_the_manifests_timing(backend, tmp_path):
    def timing(tasks):
        run_episodes(BM25OneShot(), keyed(tasks), backend, ProtocolConfig(), tmp_path / "r", progress=False)
        return json.loads((tmp_path / "r" / "manifest.json").read_text())["timing"]

    first = timing(TASKS[:3])
    assert first["episodes"] == 3 and first["invocations"] == 1 and first["seconds"] >= 0
    second = timing(TASKS[:5])
    assert second["episodes"] == 5 and second["invocations"] == 2 and second["seconds"] >= first["seconds"]
    third = timing(TASKS[:5])  # nothing left to play
    assert third["episodes"] == 5 and third["invocations"] == 3
    assert abs(third["seconds_per_episode"] * 5 - third["seconds"]) < 0.1


def test_a_run_folder_is_not_reused_under_another_protocol(backend, tmp_path):
    run_episodes(BM25OneShot(), keyed(TASKS[:1]), backend, ProtocolConfig(), tmp_path / "r", progress=False)
    with pytest.raises(RunDirError, match="another protocol_hash"):
        run_episodes(BM25OneShot(), keyed(TASKS[:1]), backend, ProtocolConfig(budget=5), tmp_path / "r", progress=False)


def submit_on_third_turn(conv, n):
    return search(f"graph {n}") if n < 2 else Turn(calls=[ToolCall("submit_answer", {"papers": []})])


def test_an_api_policy_episode_never_waits_for_a_slow_one(backend, tmp_path):
    slow_first = lambda conv, n: 0.05 if conv.task.task_id == "t0" else 0.0  # noqa: E731
    policy = IndependentScripted("api", submit_on_third_turn, delay=slow_first)
    start = time.perf_counter()
    run_episodes(policy, keyed(TASKS), backend, ProtocolConfig(budget=6), tmp_path / "r", batch_size=4, progress=False)
    rows = records(tmp_path / "r")
    # in lockstep t0 would hold back t1-t3 for three slow turns; here the other eleven finish first
    assert [r["instance_id"] for r in rows][-1] == "t0" and {r["status"] for r in rows} == {"submitted"}
    assert policy.most_in_flight == 4  # batch_size bounds the episodes in progress
    assert time.perf_counter() - start < 3 * 0.05 * 3  # the slow turns overlapped the rest


def test_a_crashed_api_run_resumes_to_the_same_records_as_an_uninterrupted_one(backend, tmp_path):
    config = ProtocolConfig(budget=8)
    run_episodes(
        IndependentScripted("api", submit_on_third_turn),
        keyed(TASKS),
        backend,
        config,
        tmp_path / "whole",
        batch_size=3,
        progress=False,
    )

    def dies_on_t7(conv, n):
        if conv.task.task_id == "t7":
            raise Interrupt()
        return submit_on_third_turn(conv, n)

    with pytest.raises(Interrupt):
        run_episodes(
            IndependentScripted("api", dies_on_t7),
            keyed(TASKS),
            backend,
            config,
            tmp_path / "resumed",
            batch_size=3,
            progress=False,
        )
    assert 0 < len(records(tmp_path / "resumed")) < len(TASKS)
    run_episodes(
        IndependentScripted("api", submit_on_third_turn),
        keyed(TASKS),
        backend,
        config,
        tmp_path / "resumed",
        batch_size=3,
        progress=False,
    )
    assert strip_timing(records(tmp_path / "resumed")) == strip_timing(records(tmp_path / "whole"))
    assert len(records(tmp_path / "resumed")) == len(TASKS)


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_targets_whose_episode_the_policy_crashed_in_are_played_again_on_restart(backend, tmp_path, flavour):
    """A crash is not the policy's answer (a dead engine made every episode of a real run one):
    the restart moves those records to errors.jsonl and ends with the records of a run that never
    crashed."""
    config = ProtocolConfig(budget=6)

    def run(folder, step):
        return run_episodes(
            FLAVOURS[flavour]("p", step), keyed(TASKS), backend, config, tmp_path / folder, batch_size=4, progress=False
        )

    def engine_dies_on_t5(conv, n):
        if conv.task.task_id == "t5":
            raise RuntimeError("EngineDeadError: the worker was killed")
        return submit_on_third_turn(conv, n)

    run("whole", submit_on_third_turn)
    crashed = run("resumed", engine_dies_on_t5)
    failed = [r["instance_id"] for r in records(tmp_path / "resumed") if r["status"] == "error"]
    assert "t5" in failed and crashed["counts"]["error"] == len(failed)
    assert "EngineDeadError" in error_summary(tmp_path / "resumed")
    assert error_summary(tmp_path / "whole") is None

    restarted = run("resumed", submit_on_third_turn)
    assert strip_timing(records(tmp_path / "resumed")) == strip_timing(records(tmp_path / "whole"))
    assert restarted["counts"]["error"] == 0 and error_summary(tmp_path / "resumed") is None
    set_aside = [json.loads(line) for line in (tmp_path / "resumed" / "errors.jsonl").read_text().splitlines()]
    assert sorted(r["instance_id"] for r in set_aside) == sorted(failed)
