"""The evaluation protocol: tool schemas, result fields, budget and the hash that pins them.

Two runs are comparable only when their protocol hashes match. The hash covers the tool
schemas, returned fields and abstract truncation, k, the budget, the prompt text, the scorer
version, how text replies are read for tool calls, and the search backend with its corpus hash.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

from hindsight.config import from_mapping

SCORER_VERSION = "1"
RESULT_FIELDS = ("id", "title", "date", "abstract")
TOOL_CALL_READINGS = ("template", "lenient", "repaired")


@dataclass(frozen=True)
class ProtocolConfig:
    k: int = 10  # most results a search returns (and the default `limit`)
    budget: int = 30  # tool calls per episode, the submission included
    fields: tuple[str, ...] = (
        RESULT_FIELDS  # what a search result shows of a paper: id (required), title, date, abstract
    )
    abstract_words: int = 120  # abstracts in search results are cut to this many words
    max_query_words: int = 64  # longer queries are refused with a tool error
    max_submit: int = 10  # most papers one submission may list
    read_paper: bool = False  # the full-tool variant adds read_paper(id)
    max_malformed: int = 3  # consecutive unreadable replies that end an episode as `malformed`
    tool_calls: str = "template"  # how text replies are read: "template" (the chat template's own
    # format), "lenient" (also fenced JSON and call objects in prose) or
    # "repaired" (lenient, and a call cut short of its closing brackets closed)

    def __post_init__(self):
        for name in ("k", "budget", "abstract_words", "max_query_words", "max_submit", "max_malformed"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.tool_calls not in TOOL_CALL_READINGS:
            raise ValueError(f"tool_calls must be one of {', '.join(TOOL_CALL_READINGS)}; got {self.tool_calls!r}")
        unknown = [f for f in self.fields if f not in RESULT_FIELDS]
        if unknown or "id" not in self.fields:
            raise ValueError(
                f"fields must include 'id' and come from {', '.join(RESULT_FIELDS)}; got {list(self.fields)}"
            )

    @classmethod
    def from_dict(cls, data: dict | None, where: str = "protocol") -> ProtocolConfig:
        return from_mapping(cls, data, where)

    def to_dict(self) -> dict:
        out = asdict(self)
        out["fields"] = list(self.fields)
        return out


def tool_schemas(config: ProtocolConfig) -> list[dict]:
    """The tools in the OpenAI function-calling format, in a fixed order."""
    tools = [
        _function(
            "search_papers",
            "Search the paper collection. Only papers first posted before the task's cutoff date are "
            "searchable. Returns up to `limit` papers with id, title, date and the start of the abstract.",
            {
                "query": {"type": "string", "description": "Keywords or a short description of what to find."},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": config.k,
                    "description": f"How many papers to return (1 to {config.k}, default {config.k}).",
                },
            },
            ["query"],
        ),
        _function(
            "submit_answer",
            f"Submit your final ranked list of up to {config.max_submit} papers, most useful first. "
            "This ends the task.",
            {
                "papers": {
                    "type": "array",
                    "maxItems": config.max_submit,
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string", "description": "arXiv id from a search result."},
                            "rationale": {"type": "string", "description": "Why this paper helps."},
                        },
                        "required": ["id"],
                    },
                }
            },
            ["papers"],
        ),
    ]
    if config.read_paper:
        tools.insert(
            1,
            _function(
                "read_paper",
                "Read the full abstract and metadata of one paper that a search returned, by its arXiv id.",
                {"id": {"type": "string", "description": "arXiv id of a paper from your search results."}},
                ["id"],
            ),
        )
    return tools


def _function(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


def protocol_hash(
    config: ProtocolConfig, backend: dict, prompts: dict | None = None, scorer_version: str = SCORER_VERSION
) -> str:
    """sha256 over everything a policy's view and its score depend on. `backend` is
    `SearchBackend.describe()`; `prompts` maps prompt names to their exact text."""
    payload = {
        "config": config.to_dict(),
        "tools": tool_schemas(config),
        "backend": backend,
        "prompts": prompts or {},
        "scorer_version": scorer_version,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
