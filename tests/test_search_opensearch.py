"""OpenSearch query building and response parsing, without a server."""

import datetime as dt

import pytest

from hindsight.corpus import Corpus
from hindsight.search import SearchBackendError
from hindsight.search.opensearch import (
    OpenSearchBackend,
    build_query,
    bulk_actions,
    index_mapping,
)
from tests.helpers import random_papers


def test_text_is_scored_in_must_and_the_cutoff_filters_strictly():
    body = build_query("graph attention", "2025-03-01", 7)
    assert body["size"] == 7
    boolean = body["query"]["bool"]
    assert boolean["must"][0]["multi_match"]["query"] == "graph attention"
    assert boolean["filter"] == [{"range": {"date": {"lt": "2025-03-01", "format": "strict_date"}}}]
    assert body["sort"] == [{"_score": {"order": "desc"}}, {"id": {"order": "asc"}}]


def test_mapping_uses_the_same_bm25_parameters_and_a_date_field():
    mapping = index_mapping()
    assert mapping["settings"]["index"]["similarity"]["default"] == {"type": "BM25", "k1": 0.9, "b": 0.4}
    assert mapping["mappings"]["properties"]["date"]["type"] == "date"
    assert mapping["mappings"]["properties"]["id"]["type"] == "keyword"


def test_bulk_actions_carry_every_paper():
    corpus = Corpus(random_papers(20))
    actions = list(bulk_actions(corpus, "papers"))
    assert [a["_id"] for a in actions] == [p.id for p in corpus]
    assert actions[0]["_source"]["date"] == corpus.papers[0].date.isoformat()


class RecordingClient:
    """Stands in for the cluster: records the request, answers with the given hits."""

    def __init__(self, hits):
        self.hits, self.requests = hits, []

    def search(self, index, body):
        self.requests.append((index, body))
        return {"hits": {"hits": self.hits}}


def source(pid, date, score):
    return {"_score": score, "_source": {"id": pid, "title": f"t{pid}", "abstract": "a", "date": date}}


def test_response_becomes_ranked_hits():
    client = RecordingClient([source("2401.00001", "2024-01-02", 3.5), source("2401.00002", "2024-01-03", 1.0)])
    backend = OpenSearchBackend(client, "papers", corpus_hash="abc")
    hits = backend.search("q", "2024-02-01", 10)
    assert [(h.id, h.rank, h.score, h.date) for h in hits] == [
        ("2401.00001", 1, 3.5, dt.date(2024, 1, 2)),
        ("2401.00002", 2, 1.0, dt.date(2024, 1, 3)),
    ]
    assert client.requests[0][0] == "papers" and client.requests[0][1] == build_query("q", "2024-02-01", 10)
    assert backend.describe() == {"backend": "opensearch", "index": "papers", "corpus_hash": "abc"}


def test_a_misconfigured_index_that_leaks_future_papers_is_caught():
    backend = OpenSearchBackend(RecordingClient([source("2403.00001", "2024-03-05", 2.0)]), "papers", "abc")
    with pytest.raises(SearchBackendError, match="dated 2024-03-05 for cutoff 2024-02-01"):
        backend.search("q", "2024-02-01", 10)
