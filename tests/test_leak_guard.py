"""The teacher's leak guard: a reply the validator would reject is refused and asked again, the
refusal never reaches the candidate, and a teacher that keeps leaking is still caught by replay."""

import asyncio
import json
import re

import pytest

import hindsight.distill.teacher as teacher_stage
from hindsight.distill.guard import is_refusal
from hindsight.distill.prompts import PRIVATE_HEADER
from hindsight.distill.replay import run_replay
from hindsight.distill.scripted_teacher import ScriptedTeacher
from hindsight.policy.base import Conversation, Turn
from hindsight.policy.parsing import ToolCall
from hindsight.recipe import load_recipe
from hindsight.schema import Task

_TITLE = re.compile(r"^\d+\. \[T\d/\w+\] (.*)$", re.M)


class TitleCopier:
    """A privileged teacher that searches for its best antecedent's title, spelled with a Cyrillic
    'о' so that it is not a plain copy; told no, it searches the brief's words instead (unless
    `stubborn`). It submits what its searches returned."""

    name = "title-copier"

    def __init__(self, stubborn: bool = False):
        self.stubborn, self.asked_again = stubborn, 0

    def describe(self) -> dict:
        return {"backend": self.name, "stubborn": self.stubborn}

    def _turn(self, conv: Conversation) -> Turn:
        if is_refusal(conv.messages[-1]):
            self.asked_again += 1
        results = [m for m in conv.messages if m["role"] == "tool"]
        if results:
            ids = [hit["id"] for m in results for hit in json.loads(m["content"]).get("results", [])]
            return Turn(calls=[ToolCall("submit_answer", {"papers": [{"id": pid} for pid in ids[:10]]})])
        if is_refusal(conv.messages[-1]) and not self.stubborn:
            return Turn(calls=[ToolCall("search_papers", {"query": " ".join(conv.task.brief.split()[:8])})])
        title = _TITLE.findall(conv.messages[0]["content"].split(PRIVATE_HEADER, 1)[1])[0]
        return Turn(calls=[ToolCall("search_papers", {"query": title.replace("o", "\u043e")})])

    def act(self, batch, tools):
        return [self._turn(conv) for conv in batch]


class CipherWriter(TitleCopier):
    """Searches its best antecedent's title in a keyed substitution no reading undoes; told no,
    the brief's words."""

    name = "cipher-writer"
    KEY = str.maketrans("abcdefghijklmnopqrstuvwxyz", "qwertyuiopasdfghjklzxcvbnm")

    def _turn(self, conv: Conversation) -> Turn:
        turn = super()._turn(conv)
        call = turn.calls[0]
        if call.name == "search_papers" and "\u043e" in call.arguments["query"]:
            title = call.arguments["query"].replace("\u043e", "o").lower()
            return Turn(calls=[ToolCall("search_papers", {"query": title.translate(self.KEY)})])
        return turn


class RemoteTitleCopier(TitleCopier):
    """The same teacher as an API policy: the runner drives each episode on its own."""

    async def act_one(self, conversation, tools):
        return self._turn(conversation)


def distill(tmp_path, monkeypatch, teacher, retries=2):
    monkeypatch.setattr(teacher_stage, "make_teacher", lambda *args: teacher)
    path = tmp_path / "recipe.yaml"
    path.write_text(
        f"data:\n  source: world\nprotocol:\n  budget: 4\ndistill:\n  out_dir: {tmp_path / 'out'}\n"
        f"  candidates: 2\n  max_targets: 3\n  leak_retries: {retries}\n"
    )
    recipe = load_recipe(path)
    out = teacher_stage.generate_candidates(recipe, progress=False)
    _, summary = run_replay(recipe, progress=False)
    episodes = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    return json.loads((out / "manifest.json").read_text()), summary, episodes


@pytest.mark.parametrize("make", [TitleCopier, RemoteTitleCopier], ids=["lockstep", "independent"])
def test_a_refused_reply_is_asked_again_and_never_reaches_the_candidate(tmp_path, monkeypatch, make):
    teacher = make()
    manifest, summary, episodes = distill(tmp_path, monkeypatch, teacher)
    candidates = summary["candidates"]
    assert candidates == len(episodes) == 2 * manifest["targets"]
    assert manifest["leak_guard"]["refused"] == teacher.asked_again == candidates
    assert manifest["leak_guard"]["sent_leaking"] == 0
    assert summary["valid"] == candidates and summary["flags"]["identifying_query"] == 0
    for episode in episodes:  # neither the refused reply nor the refusal is in the transcript
        text = json.dumps(episode["messages"], ensure_ascii=False)
        assert "\u043e" not in text and "Not sent" not in text


def test_a_title_in_a_cipher_is_refused_as_unreadable_and_asked_again(tmp_path, monkeypatch):
    teacher = CipherWriter()
    manifest, summary, episodes = distill(tmp_path, monkeypatch, teacher)
    assert manifest["leak_guard"]["refused"] == teacher.asked_again == summary["candidates"]
    assert summary["valid"] == summary["candidates"] and summary["flags"]["unreadable"] == 0
    (tmp_path / "off").mkdir()
    without_guard = distill(tmp_path / "off", monkeypatch, CipherWriter(), retries=0)[1]
    assert without_guard["flags"]["unreadable"] == without_guard["candidates"]


def test_a_teacher_that_keeps_leaking_is_sent_through_and_rejected_by_replay(tmp_path, monkeypatch):
    teacher = TitleCopier(stubborn=True)
    manifest, summary, episodes = distill(tmp_path, monkeypatch, teacher, retries=2)
    candidates = summary["candidates"]
    assert teacher.asked_again == manifest["leak_guard"]["refused"] == 2 * candidates
    assert manifest["leak_guard"]["sent_leaking"] == candidates
    assert summary["valid"] == 0  # every candidate flagged: its query copies a private title
    assert summary["flags"]["private_copy"] + summary["flags"]["identifying_query"] >= candidates


def test_without_the_guard_the_copied_title_reaches_the_candidate(tmp_path, monkeypatch):
    """The positive control: the leak the guard refuses is one the validator sees."""
    manifest, summary, episodes = distill(tmp_path, monkeypatch, TitleCopier(), retries=0)
    assert "leak_guard" not in manifest
    assert summary["valid"] == 0
    assert summary["flags"]["private_copy"] + summary["flags"]["identifying_query"] >= summary["candidates"]


def test_the_scripted_teacher_moves_to_its_next_query_when_one_is_refused():
    idf = {"alpha": 3.0, "beta": 2.5, "gamma": 2.0, "delta": 1.5, "omega": 1.0}
    system = (
        f"{PRIVATE_HEADER}\nrules\n\n1. [T3/conceptual] Alpha beta gamma\n   Abstract: alpha beta gamma delta omega"
        f"\n\n2. [T2/conceptual] Beta gamma delta\n   Abstract: beta gamma delta omega alpha"
    )
    messages = [{"role": "system", "content": system}, {"role": "user", "content": "Brief: We study things.\n"}]
    teacher = ScriptedTeacher(idf, queries=3, words_per_query=2)
    conv = Conversation(Task("t", "We study things.", None), messages)
    plan = teacher._plan(conv)
    first = teacher.act([conv], [])[0].calls[0].arguments["query"]
    refused = messages + [
        {"role": "assistant", "content": "", "tool_calls": []},
        {"role": "user", "content": "Not sent: identifying_query: a title. ..."},
    ]
    second = teacher.act([Conversation(conv.task, refused)], [])[0].calls[0].arguments["query"]
    assert (first, second) == (plan[0], plan[1])
    # the real conversation holds the second query, not the refused first: next comes the third
    sent = messages + [
        {"role": "assistant", "content": "", "tool_calls": []},
        {"role": "tool", "content": json.dumps({"results": []})},
    ]
    after = teacher.act([Conversation(conv.task, sent)], [])[0].calls[0].arguments["query"]
    assert len(plan) == 3 and after == plan[2]


def test_the_guard_reads_a_reply_as_the_runner_would_record_it():
    from hindsight.distill.guard import LeakGuard
    from hindsight.leaks import PrivateText

    private = PrivateText.build(
        "private block about sparse mixture routing", "Sparse Mixture Routing for Robots", "2301.00001", [], 5
    )
    guard = LeakGuard(TitleCopier(), {"t": private}, 5, 0.6)
    conv = Conversation(Task("t", "We want robots that learn.", None), [{"role": "user", "content": "brief"}])
    copy = Turn(calls=[ToolCall("search_papers", json.dumps({"query": "sparse mixture routing robots"}))])
    assert "title" in guard.why_refused(conv, copy)
    assert guard.why_refused(conv, Turn(calls=[ToolCall("search_papers", {"query": "robot learning"})])) is None
    assert "2301.00001" in guard.why_refused(conv, Turn(text="see 2301 00001", content="see 2301 00001"))
    assert asyncio.iscoroutinefunction(LeakGuard(RemoteTitleCopier(), {}, 5, 0.6).act_one)


def test_given_the_index_the_guard_refuses_free_text_that_finds_an_unsurfaced_label():
    import datetime as dt

    from hindsight.data import load_benchmark
    from hindsight.distill.guard import LeakGuard
    from hindsight.leaks import PrivateText, content_words, spelled, terms
    from hindsight.search.bm25 import BM25Backend

    corpus, instances, _ = load_benchmark("world")
    backend = BM25Backend(corpus)
    for instance in (inst for inst in instances if inst.split == "train"):
        label = instance.labels[0]
        # ten words of the label's abstract that neither its title nor the brief holds, reversed: no phrase,
        # no title words, nothing public
        known = terms(instance.brief) | terms(label.title)
        text = " ".join(reversed([w for w in content_words(label.abstract) if spelled(w) not in known][:10]))
        best = backend.search(text, dt.date.max, 1)
        if best and best[0].id == label.id:
            break
    private = PrivateText.build(
        f"{label.title}\n{label.abstract}", instance.target.title, instance.target.id, instance.labels, 5
    )
    conv = Conversation(Task("t", instance.brief, instance.cutoff), [{"role": "user", "content": instance.brief}])
    turn = Turn(text=text, content=text)
    assert LeakGuard(TitleCopier(), {"t": private}, 5, 0.6).why_refused(conv, turn) is None  # the rules see nothing
    guard = LeakGuard(TitleCopier(), {"t": private}, 5, 0.6, backend=backend, retrieval_words=4)
    assert label.id in guard.why_refused(conv, turn)
