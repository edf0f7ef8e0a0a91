"""SearchEnv: one episode of the search task behind the protocol's tools.

It is built from a `Task` (brief and cutoff), never an `Instance`, so nothing graded can leak
into what the agent sees. Every call, good or bad, is logged as a `Step` and counts against the
budget; a bad call gets a tool error the agent can read, and the episode goes on. The call past
the budget is refused and ends the episode as `budget_exhausted`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hindsight.ids import normalize_arxiv_id
from hindsight.protocol import ProtocolConfig, protocol_hash, tool_schemas
from hindsight.schema import Episode, Step, SubmittedPaper, Task
from hindsight.search import Hit, SearchBackend, SearchBackendError

MALFORMED_TOOL = "(unparsed)"


class EpisodeOver(RuntimeError):
    """A call after the episode ended: a bug in the caller, not an agent mistake."""


class ToolArgumentError(ValueError):
    """An agent's call the environment refuses; the message is shown to the agent."""


@dataclass(frozen=True)
class ToolResult:
    content: str  # what the agent sees as the tool's answer
    error: str | None  # the refusal reason, if refused
    done: bool  # the episode has ended


class SearchEnv:
    def __init__(
        self, task: Task, backend: SearchBackend, config: ProtocolConfig | None = None, prompts: dict | None = None
    ):
        if not isinstance(task, Task):
            # The information boundary: an Instance carries labels and must never reach here.
            raise TypeError(f"SearchEnv takes a Task, not {type(task).__name__}; use Instance.task()")
        self.task, self.backend = task, backend
        self.config = config or ProtocolConfig()
        self.prompts = dict(prompts or {})
        self.tools = tool_schemas(self.config)
        self._parameters = {t["function"]["name"]: t["function"]["parameters"] for t in self.tools}
        self.steps: list[Step] = []
        self.submission: list[SubmittedPaper] = []
        self.status: str | None = None
        self.surfaced: set[str] = set()  # ids this episode's searches returned: all read_paper may open

    # -- public surface -------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        return self.status is not None

    @property
    def calls_left(self) -> int:
        return max(0, self.config.budget - len(self.steps))

    def protocol_hash(self) -> str:
        return protocol_hash(self.config, self.backend.describe(), self.prompts)

    def call(self, tool: str, args: Any, raw: str | None = None) -> ToolResult:
        """Run one tool call. `args` may be a dict or the JSON text a model wrote."""
        if self.done:
            raise EpisodeOver(f"episode {self.task.task_id} already ended ({self.status})")
        if self.calls_left == 0:
            return self._refuse_over_budget(tool, args, raw)
        step = Step(tool=tool, args=args, raw=raw)
        self.steps.append(step)
        try:
            parsed = self._parse_args(tool, args)
            step.args = parsed  # JSON-text arguments are logged as the object they were read as
            content = self._dispatch(tool, parsed, step)
        except ToolArgumentError as exc:
            step.error = str(exc)
            return ToolResult(content=self._error_text(step.error), error=step.error, done=False)
        return ToolResult(content=content, error=None, done=self.done)

    def malformed(self, raw: str, reason: str) -> ToolResult:
        """Log a model turn that held no usable tool call; it costs a call like any other."""
        if self.done:
            raise EpisodeOver(f"episode {self.task.task_id} already ended ({self.status})")
        if self.calls_left == 0:
            return self._refuse_over_budget(MALFORMED_TOOL, None, raw)
        message = f"could not read a tool call: {reason}"
        self.steps.append(Step(tool=MALFORMED_TOOL, args=None, raw=raw, error=message))
        return ToolResult(content=self._error_text(message), error=message, done=False)

    def episode(self, instance_id: str, policy: str = "") -> Episode:
        """The log so far, recorded under `instance_id` (the evaluator's name for this task)."""
        return Episode(
            instance_id=instance_id,
            policy=policy,
            protocol_hash=self.protocol_hash(),
            steps=list(self.steps),
            submission=list(self.submission),
            status=self.status or "error",
            calls=len(self.steps),
        )

    # -- internals ------------------------------------------------------------------------------

    def _refuse_over_budget(self, tool: str, args: Any, raw: str | None) -> ToolResult:
        message = f"budget exhausted: the {self.config.budget} tool calls of this episode are used up"
        self.steps.append(Step(tool=tool, args=args, raw=raw, error=message))
        self.status = "budget_exhausted"
        return ToolResult(content=self._error_text(message), error=message, done=True)

    def _error_text(self, message: str) -> str:
        return json.dumps({"error": message, "calls_left": self.calls_left})

    def _parse_args(self, tool: str, args: Any) -> dict:
        if tool not in self._parameters:
            raise ToolArgumentError(f"unknown tool {tool!r}; available: {', '.join(self._parameters)}")
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except json.JSONDecodeError as exc:
                raise ToolArgumentError(f"arguments are not valid JSON ({exc.msg})") from None
        if not isinstance(args, dict):
            raise ToolArgumentError(f"arguments must be a JSON object, got {type(args).__name__}")
        schema = self._parameters[tool]
        unknown = sorted(set(args) - set(schema["properties"]))
        if unknown:
            raise ToolArgumentError(f"{tool} got unexpected argument(s) {', '.join(unknown)}")
        missing = [name for name in schema["required"] if name not in args]
        if missing:
            raise ToolArgumentError(f"{tool} is missing required argument(s) {', '.join(missing)}")
        return args

    def _dispatch(self, tool: str, args: dict, step: Step) -> str:
        if tool == "search_papers":
            hits = self._search(args)
            step.returned_ids = [hit.id for hit in hits]
            self.surfaced.update(step.returned_ids)
            return json.dumps(
                {"results": [self._render(hit) for hit in hits], "calls_left": self.calls_left}, ensure_ascii=False
            )
        if tool == "read_paper":
            paper = self._read(args)
            step.returned_ids = [paper["id"]]
            return json.dumps({"paper": paper, "calls_left": self.calls_left}, ensure_ascii=False)
        self.submission = self._submission(args)
        self.status = "submitted"
        return json.dumps({"submitted": len(self.submission)})

    def _search(self, args: dict) -> list[Hit]:
        query, limit = args["query"], args.get("limit", self.config.k)
        if not isinstance(query, str):
            raise ToolArgumentError(f"query must be a string, got {type(query).__name__}")
        words = len(query.split())
        if words == 0:
            raise ToolArgumentError("query is empty")
        if words > self.config.max_query_words:
            raise ToolArgumentError(f"query has {words} words; the limit is {self.config.max_query_words}")
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise ToolArgumentError(f"limit must be an integer, got {limit!r}")
        if not 1 <= limit <= self.config.k:
            raise ToolArgumentError(f"limit must be between 1 and {self.config.k}, got {limit}")
        hits = self.backend.search(query, self.task.cutoff, limit)
        late = [hit.id for hit in hits if hit.date >= self.task.cutoff]
        if late or len(hits) > limit:
            raise SearchBackendError(
                f"backend broke the protocol for {query!r} at cutoff {self.task.cutoff}: "
                f"{len(hits)} hits for limit {limit}, post-cutoff ids {late}"
            )
        return hits

    def _render(self, hit: Hit) -> dict:
        shown = {
            "id": hit.id,
            "title": hit.title,
            "date": hit.date.isoformat(),
            "abstract": truncate_words(hit.abstract, self.config.abstract_words),
        }
        return {name: shown[name] for name in self.config.fields}

    def _read(self, args: dict) -> dict:
        paper_id = args["id"]
        if not isinstance(paper_id, str):
            raise ToolArgumentError(f"id must be a string, got {type(paper_id).__name__}")
        if normalize_arxiv_id(paper_id) not in self.surfaced:
            # Reading only what a search showed keeps read_paper from being a way to reach a
            # paper whose id the agent knows from elsewhere.
            raise ToolArgumentError(
                f"read_paper opens only papers a search of this task returned; {paper_id!r} was not among them"
            )
        corpus = getattr(self.backend, "corpus", None)
        paper = corpus.get(normalize_arxiv_id(paper_id) or "") if corpus is not None else None
        # A paper from after the cutoff is reported exactly like a missing one: no hint it exists.
        if paper is None or paper.date >= self.task.cutoff:
            raise ToolArgumentError(f"no paper {paper_id!r} posted before the cutoff")
        return {"id": paper.id, "title": paper.title, "date": paper.date.isoformat(), "abstract": paper.abstract}

    def _submission(self, args: dict) -> list[SubmittedPaper]:
        papers = args["papers"]
        if not isinstance(papers, list):
            raise ToolArgumentError(f"papers must be a list, got {type(papers).__name__}")
        if len(papers) > self.config.max_submit:
            raise ToolArgumentError(f"submit at most {self.config.max_submit} papers, got {len(papers)}")
        out = []
        for i, item in enumerate(papers):
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                raise ToolArgumentError(f"papers[{i}] must be an object with a string 'id'")
            extra = sorted(set(item) - {"id", "rationale"})
            if extra:
                raise ToolArgumentError(f"papers[{i}] has unexpected field(s) {', '.join(extra)}")
            rationale = item.get("rationale", "")
            if not isinstance(rationale, str):
                raise ToolArgumentError(f"papers[{i}].rationale must be a string")
            out.append(SubmittedPaper(id=item["id"], rationale=rationale))
        return out


def truncate_words(text: str, limit: int) -> str:
    words = text.split()
    return " ".join(words) if len(words) <= limit else " ".join(words[:limit]) + " …"
