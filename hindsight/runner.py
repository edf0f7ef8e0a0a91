"""Run many episodes of one policy under one protocol into `runs/<name>/`.

Every target ends with exactly one record in `episodes.jsonl`, written whole and fsync'ed as
soon as its episode ends. A restart skips the targets already recorded and cuts off a torn last
line, so an interrupted run resumes where it stopped. An episode the policy crashed in (status
`error`: an engine that died, an API that kept failing) is not an outcome of the policy's: a
restart moves its record to `errors.jsonl` and plays the target again.

Local models (hf, vLLM) advance their live episodes in lockstep: each turn is one `policy.act`
call over the whole batch, which is what makes batched generation fast. Remote APIs (policies with
`act_one`) advance each episode on its own, so a short episode never waits for a long one's reply.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from tqdm import tqdm

from hindsight.env import SearchEnv, ToolResult
from hindsight.policy.base import Conversation, IndependentPolicy, Policy, Turn
from hindsight.policy.parsing import read_leniently
from hindsight.prompts import MALFORMED_REPLY, initial_messages, prompt_texts
from hindsight.protocol import ProtocolConfig, protocol_hash
from hindsight.schema import Episode, Task
from hindsight.search import SearchBackend


class RunDirError(RuntimeError):
    pass


@dataclass
class Live:
    env: SearchEnv
    conversation: Conversation
    record_id: str  # the instance (or candidate) id the episode is recorded under; never shown to the policy
    started: float = field(default_factory=time.perf_counter)
    malformed_in_a_row: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    status: str | None = None
    error: str | None = None


ERRORS_LOG = "errors.jsonl"


def finished_ids(path: Path) -> set[str]:
    """Instance ids already recorded. A torn last line (a crash mid-write) is cut off first, and
    the records of episodes the policy crashed in (status `error`) move to errors.jsonl beside it
    (appended: nothing is lost), so their targets are played again."""
    if not path.exists():
        return set()
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        keep = data.rfind(b"\n") + 1
        with open(path, "r+b") as handle:
            handle.truncate(keep)
        data = data[:keep]
    done, kept, failed = set(), [], []
    for line_no, line in enumerate(data.decode("utf-8").splitlines(keepends=True), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            record_id = record["instance_id"]
        except (json.JSONDecodeError, KeyError):
            raise RunDirError(f"{path}:{line_no}: not an episode record; the file is damaged") from None
        if record.get("status") == "error":
            failed.append(line)
        else:
            kept.append(line)
            done.add(record_id)
    if failed:
        _set_aside(path, kept, failed)
    return done


def _set_aside(path: Path, kept: list[str], failed: list[str]) -> None:
    """`failed` appended to errors.jsonl (synced first), then episodes.jsonl replaced by `kept`."""
    with open(path.parent / ERRORS_LOG, "a", encoding="utf-8") as handle:
        handle.writelines(failed)
        handle.flush()
        os.fsync(handle.fileno())
    rest = path.with_suffix(".jsonl.tmp")
    rest.write_text("".join(kept), encoding="utf-8")
    os.replace(rest, path)


def error_summary(run_dir: Path) -> str | None:
    """None when no episode of the run ended in `error`; else how many did and the first error."""
    path = Path(run_dir) / "episodes.jsonl"
    failed = [
        row for line in path.read_text(encoding="utf-8").splitlines() if (row := json.loads(line))["status"] == "error"
    ]
    if not failed:
        return None
    return (
        f"{len(failed)} episode(s) of {path.parent} ended in an error, the first: {failed[0].get('error')}; "
        "the same command run again plays their targets again (their records move to errors.jsonl)"
    )


def _append(handle, episode: Episode) -> None:
    handle.write(json.dumps(episode.to_dict(), ensure_ascii=False, default=str) + "\n")
    handle.flush()
    os.fsync(handle.fileno())


def _read(turn: Turn, config: ProtocolConfig) -> Turn:
    """The protocol's reading of a text reply: a lenient protocol also takes fenced or embedded calls,
    a repairing one also a call left unclosed."""
    if turn.calls or turn.failure or config.tool_calls == "template":
        return turn
    # content: an API reply's text is the whole message
    parsed = read_leniently(turn.content or turn.text, repair=config.tool_calls == "repaired")
    return replace(turn, content=parsed.text, calls=parsed.calls, parse_error=None) if parsed.calls else turn


def apply_turn(live: Live, turn: Turn, config: ProtocolConfig) -> list[ToolResult]:
    """Feed one assistant turn to the environment and extend the conversation; the results of its
    tool calls. Every transcript is built here: a policy's, and a replayed candidate's."""
    turn, max_malformed = _read(turn, config), config.max_malformed
    live.prompt_tokens += turn.prompt_tokens
    live.completion_tokens += turn.completion_tokens
    if turn.cost_usd is not None:
        live.cost_usd = (live.cost_usd or 0.0) + turn.cost_usd
    messages, env = live.conversation.messages, live.env
    if turn.failure:
        live.status = "context_overflow" if turn.failure.startswith("context_overflow") else "error"
        live.error = turn.failure
        return []
    if not turn.calls:
        result = env.malformed(turn.text, turn.parse_error or "no tool call")
        messages.append({"role": "assistant", "content": turn.text})
        messages.append({"role": "user", "content": MALFORMED_REPLY.format(reason=turn.parse_error or "no tool call")})
        live.malformed_in_a_row += 1
        if result.done:
            live.status = env.status
        elif live.malformed_in_a_row >= max_malformed:
            live.status = "malformed"
        return []
    live.malformed_in_a_row = 0
    for i, call in enumerate(turn.calls):
        call.id = call.id or f"call_{len(env.steps)}_{i}"
    messages.append(
        {"role": "assistant", "content": turn.content, "tool_calls": [call.to_message() for call in turn.calls]}
    )
    results = []
    for call in turn.calls:
        results.append(result := env.call(call.name, call.arguments, raw=turn.text))
        messages.append({"role": "tool", "tool_call_id": call.id, "name": call.name, "content": result.content})
        if result.done:
            live.status = env.status
            break
    return results


def _record(live: Live, policy: Policy) -> Episode:
    episode = live.env.episode(live.record_id, policy.name)
    episode.status = live.status or "error"
    episode.error = live.error
    episode.messages = live.conversation.messages
    episode.tokens = {"prompt": live.prompt_tokens, "completion": live.completion_tokens}
    episode.latency_s = round(time.perf_counter() - live.started, 4)
    episode.cost_usd = live.cost_usd
    return episode


def run_episodes(
    policy: Policy,
    tasks: Mapping[str, Task],
    backend: SearchBackend,
    config: ProtocolConfig,
    run_dir: Path,
    manifest: dict | None = None,
    batch_size: int = 32,
    progress: bool = True,
    first_messages=None,
) -> dict:
    """Run every task not yet recorded in `run_dir`; returns the final manifest.

    `tasks` maps the id an episode is recorded under (an instance id, or a candidate id) to the
    task its policy sees; the policy never learns the former. `first_messages(task)` replaces the deployment prompt (the distillation teacher's prompt);
    evaluation never passes it."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    episodes_path, manifest_path = run_dir / "episodes.jsonl", run_dir / "manifest.json"
    prompts = prompt_texts(config.read_paper)
    manifest = {
        **(manifest or {}),
        "protocol_hash": protocol_hash(config, backend.describe(), prompts),
        "protocol": config.to_dict(),
        "search": backend.describe(),
        "policy": policy.describe(),
        "prompts": prompts,
    }
    previous: dict = {}
    if manifest_path.exists():
        previous = json.loads(manifest_path.read_text())
        for key in ("protocol_hash", "policy"):
            if previous.get(key) != manifest[key]:
                raise RunDirError(
                    f"{run_dir} holds a run with another {key}; choose another run name or delete the folder"
                )
        manifest["created"] = previous.get("created")
    manifest.setdefault("created", dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"))
    done = finished_ids(episodes_path)
    pending = [(record_id, task) for record_id, task in tasks.items() if record_id not in done]
    manifest["status"] = "running"
    manifest_path.write_text(json.dumps(manifest, indent=2, default=str) + "\n")
    bar = tqdm(
        total=len(tasks),
        initial=len(tasks) - len(pending),
        desc=f"run {run_dir.name}",
        unit="ep",
        mininterval=1.0,
        disable=not progress,
    )

    begin, started = _starter(backend, config, first_messages), time.perf_counter()
    with open(episodes_path, "a", encoding="utf-8") as handle:
        log = _Log(handle, bar, policy)
        if isinstance(policy, IndependentPolicy):
            asyncio.run(_advance_independently(policy, pending, begin, config, log, batch_size))
        else:
            _advance_in_lockstep(policy, pending, begin, config, log, batch_size)
    bar.close()
    timing = run_timing(previous.get("timing"), time.perf_counter() - started, len(pending))
    manifest.update(status="complete", counts=count_statuses(episodes_path, len(tasks)), timing=timing)
    manifest_path.write_text(json.dumps(manifest, indent=2, default=str) + "\n")
    return manifest


def run_timing(before: dict | None, seconds: float, episodes: int) -> dict:
    """The wall time a run's episodes took, summed over the invocations that ran to their end (a
    resumed run adds its own; one that crashed leaves out its time and its episodes; a policy that starts its engine at its first turn, as vllm's does,
    counts that start)."""
    before = before or {"seconds": 0.0, "episodes": 0, "invocations": 0}
    total, played = before["seconds"] + seconds, before["episodes"] + episodes
    return {
        "seconds": round(total, 1),
        "episodes": played,
        "invocations": before["invocations"] + 1,
        "seconds_per_episode": round(total / played, 2) if played else None,
    }


def play_episodes(
    policy: Policy, tasks: Mapping[str, Task], backend: SearchBackend, config: ProtocolConfig, batch_size: int = 32
) -> dict[str, Episode]:
    """Every task's episode, in memory (record id -> Episode), nothing written: the rollouts of RL
    and the dev scoring that chooses its checkpoint. The same turns as `run_episodes`."""
    episodes: dict[str, Episode] = {}

    class Keep:
        def finish(self, live: Live) -> None:
            episodes[live.record_id] = _record(live, policy)

    _advance_in_lockstep(policy, list(tasks.items()), _starter(backend, config), config, Keep(), batch_size)
    return episodes


def _starter(backend: SearchBackend, config: ProtocolConfig, first_messages=None):
    """How an episode begins: its environment, and its first messages (the deployment prompt
    unless `first_messages(task)` gives others)."""
    prompts = prompt_texts(config.read_paper)
    first_messages = first_messages or (lambda task: initial_messages(task, config.read_paper))

    def begin(record_id: str, task: Task) -> Live:
        return Live(
            env=SearchEnv(task, backend, config, prompts),
            conversation=Conversation(task, first_messages(task)),
            record_id=record_id,
        )

    return begin


class _Log:
    """Appends finished episodes and keeps the progress bar's counters."""

    def __init__(self, handle, bar, policy: Policy):
        self.handle, self.bar, self.policy = handle, bar, policy
        self.finished = self.calls = 0
        self.cost = 0.0

    def finish(self, live: Live) -> None:
        episode = _record(live, self.policy)
        _append(self.handle, episode)
        self.finished += 1
        self.calls += episode.calls
        self.cost += episode.cost_usd or 0.0
        self.bar.update(1)
        self.bar.set_postfix(calls_per_ep=f"{self.calls / self.finished:.1f}", cost=f"${self.cost:.2f}", refresh=False)


def _advance_in_lockstep(
    policy: Policy, pending: list[tuple[str, Task]], begin, config: ProtocolConfig, log: _Log, batch_size: int
) -> None:
    for start in range(0, len(pending), batch_size):
        live = [begin(*job) for job in pending[start : start + batch_size]]
        while live:
            try:
                turns = policy.act([item.conversation for item in live], live[0].env.tools)
            except Exception as exc:  # a policy crash ends these episodes as errors, never silently
                turns = [Turn(failure=f"error: {type(exc).__name__}: {exc}") for _ in live]
            for item, turn in zip(live, turns):
                apply_turn(item, turn, config)
                if item.status is not None:
                    log.finish(item)
            live = [item for item in live if item.status is None]


async def _advance_independently(
    policy: IndependentPolicy,
    pending: list[tuple[str, Task]],
    begin,
    config: ProtocolConfig,
    log: _Log,
    live_at_once: int,
) -> None:
    queue = iter(pending)  # shared by the workers; each takes the next target when its episode ends

    async def worker():
        for job in queue:
            item = begin(*job)
            while item.status is None:
                try:
                    turn = await policy.act_one(item.conversation, item.env.tools)
                except Exception as exc:  # as in lockstep: the episode ends as an error
                    turn = Turn(failure=f"error: {type(exc).__name__}: {exc}")
                apply_turn(item, turn, config)
            log.finish(item)

    await asyncio.gather(*(worker() for _ in range(max(1, min(live_at_once, len(pending))))))


def count_statuses(episodes_path: Path, expected: int) -> dict:
    counts = {"expected": expected, "attempted": 0, "completed": 0, "submitted": 0, "error": 0}
    with open(episodes_path, encoding="utf-8") as handle:
        for line in handle:
            status = json.loads(line)["status"]
            counts["attempted"] += 1
            counts["completed"] += status in ("submitted", "budget_exhausted")
            counts["submitted"] += status == "submitted"
            counts["error"] += status == "error"
    return counts
