"""The naive explorer: the demo base's demonstrations, which teach acting and copying, never where to look."""

from collections import Counter

import pytest

from hindsight.data import load_benchmark
from hindsight.policy.scripted import NaiveExplorer, first_sentence_query
from hindsight.protocol import ProtocolConfig
from hindsight.runner import run_episodes
from hindsight.runs import read_episodes
from hindsight.search.bm25 import BM25Backend


@pytest.fixture(scope="module")
def episodes(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("explorer")
    corpus, instances, _ = load_benchmark("world")
    tasks = {inst.id: inst.task() for inst in instances if inst.split == "train"}
    run_episodes(
        NaiveExplorer(),
        tasks,
        BM25Backend(corpus, cache_dir=tmp / "index"),
        ProtocolConfig(k=5, budget=8, fields=("id", "title")),
        tmp / "run",
        progress=False,
    )
    return read_episodes(tmp / "run" / "episodes.jsonl")


def test_explorer_searches_the_briefs_sentences_in_order(episodes):
    for episode in episodes.values():
        brief = episode.messages[1]["content"].split("Research brief:\n", 1)[1]
        queries = [step.args["query"] for step in episode.steps if step.tool == "search_papers"]
        assert queries[0] == first_sentence_query(brief)
        sentences = brief.split(". ")
        assert all(query.split() == sentences[i].split()[:12] for i, query in enumerate(queries[1:], start=1))


def test_explorer_submits_what_came_back_in_the_order_it_came_back(episodes):
    for episode in episodes.values():
        assert episode.status == "submitted"
        surfaced = list(dict.fromkeys(pid for step in episode.steps for pid in step.returned_ids))
        assert [paper.id for paper in episode.submission] == surfaced[:10]


def test_targets_get_one_to_three_searches(episodes):
    searches = Counter(sum(step.tool == "search_papers" for step in e.steps) for e in episodes.values())
    assert set(searches) == {1, 2, 3} and min(searches.values()) > 0.2 * len(episodes)
