"""OpenSearch as the backend past one machine (extra `opensearch`).

The query keeps the text in `must` (it is scored) and the cutoff in a `filter` range (it is
not), so the engine ranks only pre-cutoff papers and the k results are exact, as with bm25.
Ties sort by id. `index_mapping()` sets BM25 with the same k1/b and an English analyser; the
scores will still differ from the in-process backend (Lucene's analyser is not ours), so a
protocol run on one backend is not comparable with a run on the other: the hash says which.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

from hindsight.corpus import Corpus
from hindsight.schema import parse_date
from hindsight.search.base import Hit, SearchBackendError


def index_mapping(k1: float = 0.9, b: float = 0.4) -> dict:
    return {
        "settings": {"index": {"similarity": {"default": {"type": "BM25", "k1": k1, "b": b}}}},
        "mappings": {
            "properties": {
                "id": {"type": "keyword"},
                "title": {"type": "text", "analyzer": "english"},
                "abstract": {"type": "text", "analyzer": "english"},
                "date": {"type": "date", "format": "strict_date"},
            }
        },
    }


def build_query(query: str, cutoff: dt.date | str, k: int) -> dict:
    cutoff_day = parse_date(cutoff, name="cutoff").isoformat()
    return {
        "size": k,
        "track_total_hits": False,
        "query": {
            "bool": {
                "must": [{"multi_match": {"query": query, "fields": ["title", "abstract"], "type": "most_fields"}}],
                "filter": [{"range": {"date": {"lt": cutoff_day, "format": "strict_date"}}}],
            }
        },
        "sort": [{"_score": {"order": "desc"}}, {"id": {"order": "asc"}}],
        "_source": ["id", "title", "abstract", "date"],
    }


def bulk_actions(corpus: Corpus, index: str) -> Iterator[dict]:
    """Documents for `opensearchpy.helpers.bulk`, one per paper, keyed by arXiv id."""
    for paper in corpus:
        yield {
            "_index": index,
            "_id": paper.id,
            "_source": {
                "id": paper.id,
                "title": paper.title,
                "abstract": paper.abstract,
                "date": paper.date.isoformat(),
            },
        }


def parse_response(response: dict, cutoff: dt.date | str) -> list[Hit]:
    cutoff_day = parse_date(cutoff, name="cutoff")
    hits = []
    for rank, raw in enumerate(response.get("hits", {}).get("hits", []), start=1):
        source = raw["_source"]
        date = parse_date(source["date"], name="date")
        if date >= cutoff_day:
            raise SearchBackendError(
                f"OpenSearch returned {source['id']} dated {date} for cutoff {cutoff_day}: "
                "is the 'date' field mapped as a date?"
            )
        hits.append(
            Hit(
                id=source["id"],
                title=source["title"],
                date=date,
                abstract=source.get("abstract", ""),
                score=float(raw.get("_score") or 0.0),
                rank=rank,
            )
        )
    return hits


class OpenSearchBackend:
    name = "opensearch"

    def __init__(self, client, index: str, corpus_hash: str):
        """`client` is an `opensearchpy.OpenSearch`; `corpus_hash` is the hash of the indexed corpus."""
        self.client, self.index, self.corpus_hash = client, index, corpus_hash

    def search(self, query: str, cutoff: dt.date | str, k: int) -> list[Hit]:
        if not query.strip():
            return []
        return parse_response(self.client.search(index=self.index, body=build_query(query, cutoff, k)), cutoff)

    def describe(self) -> dict:
        return {"backend": self.name, "index": self.index, "corpus_hash": self.corpus_hash}
