import datetime as dt
import json

import pytest

from hindsight.corpus import Corpus
from hindsight.env import MALFORMED_TOOL, EpisodeOver, SearchEnv
from hindsight.protocol import ProtocolConfig, protocol_hash, tool_schemas
from hindsight.schema import Instance, Paper, Task
from hindsight.search.base import Hit
from hindsight.search.bm25 import BM25Backend
from tests.helpers import random_papers

CUTOFF = dt.date(2020, 6, 1)


@pytest.fixture(scope="module")
def backend():
    papers = random_papers(400, seed=5)
    papers.append(
        Paper(
            id="2601.00001",
            title="quantum compiler from the future",
            date=dt.date(2026, 1, 2),
            abstract="a paper dated after every cutoff used here",
        )
    )
    return BM25Backend(Corpus(papers))


def make_env(backend, **config) -> SearchEnv:
    return SearchEnv(Task("t1", "We want a better quantum compiler.", CUTOFF), backend, ProtocolConfig(**config))


def test_search_returns_protocol_fields_and_logs_the_step(backend):
    env = make_env(backend, abstract_words=5)
    result = env.call("search_papers", {"query": "quantum compiler", "limit": 4}, raw="<tool_call>…")
    body = json.loads(result.content)
    assert result.error is None and not result.done
    assert len(body["results"]) == 4 and body["calls_left"] == env.config.budget - 1
    assert set(body["results"][0]) == {"id", "title", "date", "abstract"}
    assert all(len(r["abstract"].split()) <= 6 for r in body["results"])  # 5 words and the ellipsis
    assert all(r["date"] < CUTOFF.isoformat() for r in body["results"])
    step = env.steps[0]
    assert step.tool == "search_papers" and step.raw == "<tool_call>…" and step.error is None
    assert step.returned_ids == [r["id"] for r in body["results"]]


def test_arguments_may_arrive_as_json_text(backend):
    env = make_env(backend)
    assert env.call("search_papers", '{"query": "quantum"}').error is None


def test_result_fields_follow_the_protocol(backend):
    env = make_env(backend, fields=("id", "title"))
    results = json.loads(env.call("search_papers", {"query": "quantum"}).content)["results"]
    assert results and all(set(r) == {"id", "title"} for r in results)


def test_post_cutoff_papers_never_come_back(backend):
    env = make_env(backend)
    ids = json.loads(env.call("search_papers", {"query": "quantum compiler from the future"}).content)
    assert "2601.00001" not in {r["id"] for r in ids["results"]}
    late_env = SearchEnv(Task("t2", "brief", dt.date(2027, 1, 1)), backend)
    late = json.loads(late_env.call("search_papers", {"query": "quantum compiler from the future"}).content)
    assert late["results"][0]["id"] == "2601.00001"


@pytest.mark.parametrize(
    "tool, args, message",
    [
        ("search_papers", {"query": ""}, "query is empty"),
        ("search_papers", {"query": "   \n\t "}, "query is empty"),
        ("search_papers", {"query": "word " * 10_000}, "10000 words; the limit is 64"),
        ("search_papers", {"query": 42}, "query must be a string"),
        ("search_papers", {"query": "q", "limit": 0}, "limit must be between 1 and 10"),
        ("search_papers", {"query": "q", "limit": 11}, "limit must be between 1 and 10"),
        ("search_papers", {"query": "q", "limit": "5"}, "limit must be an integer"),
        ("search_papers", {"query": "q", "limit": True}, "limit must be an integer"),
        ("search_papers", {}, "missing required argument"),
        ("search_papers", {"query": "q", "year": 2020}, "unexpected argument"),
        ("search_papers", "{not json", "not valid JSON"),
        ("search_papers", ["query"], "must be a JSON object"),
        ("read_paper", {"id": "2001.00001"}, "unknown tool 'read_paper'"),
        ("browse_web", {"url": "x"}, "unknown tool 'browse_web'"),
        ("submit_answer", {"papers": "2001.00001"}, "papers must be a list"),
        ("submit_answer", {"papers": [{"id": f"2001.{i:05d}"} for i in range(11)]}, "at most 10 papers"),
        ("submit_answer", {"papers": [{"paper": "2001.00001"}]}, "papers[0] must be an object with a string 'id'"),
        ("submit_answer", {"papers": [{"id": "2001.00001", "score": 1}]}, "unexpected field"),
        ("submit_answer", {"papers": [{"id": "2001.00001", "rationale": 3}]}, "rationale must be a string"),
    ],
)
def test_bad_calls_get_a_readable_error_and_the_episode_goes_on(backend, tool, args, message):
    env = make_env(backend)
    result = env.call(tool, args)
    assert result.error and not result.done and not env.done
    assert message in result.error and json.loads(result.content)["error"] == result.error
    assert env.steps[-1].error == result.error and env.steps[-1].tool == tool
    assert env.call("search_papers", {"query": "quantum"}).error is None  # still usable


def test_budget_counts_every_call_and_the_call_past_it_ends_the_episode(backend):
    env = make_env(backend, budget=3)
    env.call("search_papers", {"query": "quantum"})
    env.call("search_papers", {"query": ""})  # an error still costs a call
    env.malformed("I think I will search", "no tool call found")  # so does unreadable output
    assert env.calls_left == 0 and not env.done
    result = env.call("submit_answer", {"papers": []})
    assert result.done and "budget exhausted" in result.error
    episode = env.episode("t1", "scripted")
    assert episode.status == "budget_exhausted" and episode.submission == [] and episode.calls == 4
    assert [s.tool for s in episode.steps] == ["search_papers", "search_papers", MALFORMED_TOOL, "submit_answer"]
    with pytest.raises(EpisodeOver):
        env.call("search_papers", {"query": "quantum"})


def test_submission_ends_the_episode_and_is_recorded_as_written(backend):
    env = make_env(backend)
    env.call("search_papers", {"query": "quantum"})
    result = env.call("submit_answer", {"papers": [{"id": "2001.00001v2", "rationale": "closest"}, {"id": "junk"}]})
    assert result.done and result.error is None
    episode = env.episode("t1", "p")
    assert episode.status == "submitted" and episode.calls == 2
    assert [(p.id, p.rationale) for p in episode.submission] == [("2001.00001v2", "closest"), ("junk", "")]


def test_read_paper_opens_only_papers_a_search_returned(backend):
    env = make_env(backend, read_paper=True)
    found = env.call("search_papers", {"query": "quantum compiler"})
    shown = json.loads(found.content)["results"][0]["id"]
    body = json.loads(env.call("read_paper", {"id": f"arXiv:{shown}v1"}).content)
    assert body["paper"]["id"] == shown and body["paper"]["abstract"] == backend.corpus.get(shown).abstract
    assert env.steps[-1].returned_ids == [shown]
    unseen = next(p.id for p in backend.corpus.papers if p.id not in env.surfaced and p.date < CUTOFF)
    for paper_id in (unseen, "2601.00001", "1901.99999"):  # a real earlier paper, a future one, none at all
        refused = env.call("read_paper", {"id": paper_id})
        assert refused.error == (
            f"read_paper opens only papers a search of this task returned; {paper_id!r} was not among them"
        )
    assert not env.done


def test_json_text_arguments_are_logged_as_the_object_they_were_read_as(backend):
    env = make_env(backend)
    env.call("search_papers", '{"query": "quantum compiler", "limit": 3}')
    assert env.steps[0].args == {"query": "quantum compiler", "limit": 3}


def test_the_environment_refuses_an_instance(backend):
    instance = Instance.from_dict(
        {
            "id": "i",
            "split": "eval",
            "brief": "b",
            "cutoff": "2020-06-01",
            "target": {"id": "2101.00001", "title": "T", "date": "2020-09-01"},
            "labels": [{"id": "2001.00001", "tier": "T3"}],
        }
    )
    with pytest.raises(TypeError, match="takes a Task"):
        SearchEnv(instance, backend)
    assert SearchEnv(instance.task(), backend).task.brief == "b"


class LeakyBackend:
    corpus_hash = "x"

    def search(self, query, cutoff, k):
        return [Hit(id="2601.00001", title="t", date=dt.date(2026, 1, 2), abstract="", score=1.0, rank=1)]

    def describe(self):
        return {"backend": "leaky"}


def test_a_backend_that_leaks_past_the_cutoff_stops_the_run():
    from hindsight.search import SearchBackendError

    env = SearchEnv(Task("t", "b", CUTOFF), LeakyBackend())
    with pytest.raises(SearchBackendError, match="post-cutoff"):
        env.call("search_papers", {"query": "q"})


def test_tool_schemas_are_openai_functions():
    tools = tool_schemas(ProtocolConfig(read_paper=True))
    assert [t["function"]["name"] for t in tools] == ["search_papers", "read_paper", "submit_answer"]
    search = tools[0]["function"]["parameters"]
    assert search["required"] == ["query"] and search["properties"]["limit"]["maximum"] == 10


def test_protocol_hash_changes_with_everything_it_covers(backend):
    base = protocol_hash(ProtocolConfig(), backend.describe(), {"system": "S"})
    variants = [
        protocol_hash(ProtocolConfig(k=5), backend.describe(), {"system": "S"}),
        protocol_hash(ProtocolConfig(budget=20), backend.describe(), {"system": "S"}),
        protocol_hash(ProtocolConfig(abstract_words=50), backend.describe(), {"system": "S"}),
        protocol_hash(ProtocolConfig(fields=("id", "title")), backend.describe(), {"system": "S"}),
        protocol_hash(ProtocolConfig(read_paper=True), backend.describe(), {"system": "S"}),
        protocol_hash(ProtocolConfig(tool_calls="lenient"), backend.describe(), {"system": "S"}),
        protocol_hash(ProtocolConfig(), {**backend.describe(), "corpus_hash": "other"}, {"system": "S"}),
        protocol_hash(ProtocolConfig(), backend.describe(), {"system": "S."}),
        protocol_hash(ProtocolConfig(), backend.describe(), {"system": "S"}, scorer_version="2"),
    ]
    assert len({base, *variants}) == len(variants) + 1
    assert base == protocol_hash(ProtocolConfig(), backend.describe(), {"system": "S"})
    env = SearchEnv(Task("t", "b", CUTOFF), backend, prompts={"system": "S"})
    assert env.protocol_hash() == base == env.episode("t").protocol_hash


def test_identical_calls_give_identical_answers(backend):
    first, second = make_env(backend), make_env(backend)
    for query in ("quantum compiler", "graph attention", "robot"):
        assert (
            first.call("search_papers", {"query": query}).content
            == second.call("search_papers", {"query": query}).content
        )
