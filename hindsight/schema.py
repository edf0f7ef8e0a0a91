"""The records every stage exchanges (docs/architecture.md, "Records"), with validation that names the bad field.

Records are plain dataclasses. `from_dict` validates and normalises (ids lose their version
suffix, dates become `datetime.date`); `to_dict` gives back the JSON form. A `where` argument
("corpus.jsonl:12") is prefixed to every error so a user can find the bad line.

The information boundary lives here too: a policy is handed a `Task` (an opaque id, the brief and
the cutoff), which `Instance.task()` builds; nothing else of an instance crosses to the policy side.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
from dataclasses import asdict, dataclass, field
from typing import Any

from hindsight.errors import UserError
from hindsight.ids import normalize_arxiv_id

SPLITS = ("train", "dev", "eval")
TIERS = ("T1", "T2", "T3")
ROLES = ("conceptual", "infrastructural")
EPISODE_STATUSES = ("submitted", "budget_exhausted", "malformed", "context_overflow", "error")
DEFAULT_GAINS = {
    ("conceptual", "T1"): 1.0,
    ("conceptual", "T2"): 3.0,
    ("conceptual", "T3"): 7.0,
    ("infrastructural", "T1"): 0.5,
    ("infrastructural", "T2"): 2.0,
    ("infrastructural", "T3"): 4.0,
}
MAX_LABELS = 10


class SchemaError(UserError):
    """A record that does not match its contract; the message names where and which field."""


def _fail(where: str, message: str) -> SchemaError:
    return SchemaError(f"{where}: {message}" if where else message)


def parse_date(value: Any, where: str = "", name: str = "date") -> dt.date:
    """A calendar date from `YYYY-MM-DD`, an ISO timestamp, or a `date`/`datetime`."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        text = value.strip()
        # A timestamp keeps only its calendar day; anything else after the day is an error.
        if len(text) == 10 or (len(text) > 10 and text[10] in "T "):
            try:
                return dt.date.fromisoformat(text[:10])
            except ValueError:
                pass
        raise _fail(where, f"field '{name}': unparseable date {value!r} (want YYYY-MM-DD)")
    raise _fail(where, f"field '{name}': expected a date string, got {type(value).__name__}")


def _get(record: Any, name: str, kind: type | tuple[type, ...], where: str, default: Any = ...) -> Any:
    if not isinstance(record, dict):
        raise _fail(where, f"expected a JSON object, got {type(record).__name__}")
    if name not in record or record[name] is None:
        if default is ...:
            raise _fail(where, f"missing required field '{name}'")
        return default
    value = record[name]
    # bool is an int in Python; a JSON `true` is never a number here.
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise _fail(where, f"field '{name}': expected {_kind_name(kind)}, got bool")
    if not isinstance(value, kind):
        raise _fail(where, f"field '{name}': expected {_kind_name(kind)}, got {type(value).__name__}")
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


def _arxiv_id(record: dict, name: str, where: str) -> str:
    raw = _get(record, name, str, where)
    base = normalize_arxiv_id(raw)
    if base is None:
        raise _fail(where, f"field '{name}': {raw!r} is not an arXiv id")
    return base


def _text(record: dict, name: str, where: str, required: bool = True) -> str:
    value = _get(record, name, str, where) if required else _get(record, name, str, where, "")
    if required and not value.strip():
        raise _fail(where, f"field '{name}' is empty")
    return value


@dataclass(frozen=True)
class Paper:
    id: str
    title: str
    date: dt.date
    abstract: str = ""
    categories: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, record: dict, where: str = "", date_field: str = "date") -> Paper:
        categories = _get(record, "categories", list, where, [])
        if not all(isinstance(c, str) for c in categories):
            raise _fail(where, "field 'categories': expected a list of strings")
        return cls(
            id=_arxiv_id(record, "id", where),
            title=_text(record, "title", where),
            date=parse_date(_get(record, date_field, str, where), where, date_field),
            abstract=_text(record, "abstract", where, required=False),
            categories=tuple(categories),
        )

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "title": self.title,
            "abstract": self.abstract,
            "date": self.date.isoformat(),
            "categories": list(self.categories),
        }


@dataclass(frozen=True)
class Label:
    """A graded antecedent. Private: it never reaches a policy."""

    id: str
    tier: str
    role: str
    gain: float
    title: str = ""
    abstract: str = ""
    date: dt.date | None = None

    @classmethod
    def from_dict(cls, record: dict, where: str = "") -> Label:
        tier = _get(record, "tier", str, where)
        role = _get(record, "role", str, where, "conceptual")
        if tier not in TIERS:
            raise _fail(where, f"field 'tier': {tier!r} is not one of {', '.join(TIERS)}")
        if role not in ROLES:
            raise _fail(where, f"field 'role': {role!r} is not one of {', '.join(ROLES)}")
        gain = float(_get(record, "gain", (int, float), where, DEFAULT_GAINS[(role, tier)]))
        if not gain > 0:
            raise _fail(where, f"field 'gain': must be positive, got {gain}")
        date = record.get("date")
        return cls(
            id=_arxiv_id(record, "id", where),
            tier=tier,
            role=role,
            gain=gain,
            title=_text(record, "title", where, required=False),
            abstract=_text(record, "abstract", where, required=False),
            date=parse_date(date, where, "date") if date is not None else None,
        )

    def to_dict(self) -> dict:
        out = asdict(self)
        out["date"] = self.date.isoformat() if self.date else None
        return out


@dataclass(frozen=True)
class Target:
    id: str
    title: str
    date: dt.date

    @classmethod
    def from_dict(cls, record: dict, where: str = "") -> Target:
        return cls(
            id=_arxiv_id(record, "id", where),
            title=_text(record, "title", where),
            date=parse_date(_get(record, "date", str, where), where),
        )

    def to_dict(self) -> dict:
        return {"id": self.id, "title": self.title, "date": self.date.isoformat()}


# Task ids are keyed hashes under a key drawn once per process: the same instance gets the same id
# within a run, but an id cannot be traced back to its target, not even by hashing every corpus id.
_TASK_KEY = secrets.token_bytes(32)


def opaque_task_id(instance_id: str, sample: int = 0) -> str:
    digest = hmac.new(_TASK_KEY, f"{instance_id}#{sample}".encode(), hashlib.sha256).hexdigest()
    return f"task-{digest[:16]}"


@dataclass(frozen=True)
class Task:
    """All a policy may see of an instance: an opaque id, the brief and the cutoff. Which instance
    a task belongs to stays with whoever built it (the runner records episodes under that id)."""

    task_id: str
    brief: str
    cutoff: dt.date
    sample: int = 0  # which attempt at the target this is (the teacher's K candidates); not private

    @classmethod
    def from_dict(cls, record: dict, where: str = "") -> Task:
        return cls(
            task_id=_text(record, "task_id", where),
            brief=_text(record, "brief", where),
            cutoff=parse_date(_get(record, "cutoff", str, where), where, "cutoff"),
            sample=_get(record, "sample", int, where, 0),
        )

    def to_dict(self) -> dict:
        return {"task_id": self.task_id, "brief": self.brief, "cutoff": self.cutoff.isoformat(), "sample": self.sample}


@dataclass(frozen=True)
class CandidateId:
    """Distillation records K candidates of a target as "<instance id>#<k>": the one place that
    id is built and read. A plain instance id reads as candidate 0. Evaluator-side only: the
    policy's task carries an opaque id and the sample number k."""

    instance_id: str
    index: int = 0

    def __str__(self) -> str:
        return f"{self.instance_id}#{self.index}"

    @classmethod
    def parse(cls, text: str) -> CandidateId:
        head, sep, tail = text.rpartition("#")
        return cls(head, int(tail)) if sep and tail.isdigit() else cls(text, 0)


@dataclass(frozen=True)
class Instance:
    id: str
    split: str
    brief: str
    cutoff: dt.date
    target: Target
    labels: tuple[Label, ...]
    audit: dict = field(default_factory=dict)
    brief_terse: str | None = None

    @classmethod
    def from_dict(cls, record: dict, where: str = "") -> Instance:
        split = _get(record, "split", str, where)
        if split not in SPLITS:
            raise _fail(where, f"field 'split': {split!r} is not one of {', '.join(SPLITS)}")
        raw_labels = _get(record, "labels", list, where)
        labels = tuple(Label.from_dict(lab, f"{where} labels[{i}]".strip()) for i, lab in enumerate(raw_labels))
        seen: set[str] = set()
        for i, label in enumerate(labels):
            if label.id in seen:
                raise _fail(where, f"labels[{i}]: duplicate label id {label.id}")
            seen.add(label.id)
        cutoff = parse_date(_get(record, "cutoff", str, where), where, "cutoff")
        target = Target.from_dict(_get(record, "target", dict, where), f"{where} target".strip())
        if target.date is not None and cutoff >= target.date:
            raise _fail(
                where, f"cutoff {cutoff} is not before the target's date {target.date}: the answer would be searchable"
            )
        return cls(
            id=_text(record, "id", where),
            split=split,
            brief=_text(record, "brief", where),
            cutoff=cutoff,
            target=target,
            labels=labels,
            audit=_get(record, "audit", dict, where, {}),
            brief_terse=_get(record, "brief_terse", str, where, None),
        )

    def to_dict(self) -> dict:
        out = {
            "id": self.id,
            "split": self.split,
            "brief": self.brief,
            "cutoff": self.cutoff.isoformat(),
            "target": self.target.to_dict(),
            "labels": [lab.to_dict() for lab in self.labels],
            "audit": dict(self.audit),
        }
        if self.brief_terse is not None:
            out["brief_terse"] = self.brief_terse
        return out

    def task(self, sample: int = 0) -> Task:
        return Task(task_id=opaque_task_id(self.id, sample), brief=self.brief, cutoff=self.cutoff, sample=sample)

    @property
    def gains(self) -> dict[str, float]:
        return {label.id: label.gain for label in self.labels}


def tasks_of(instances) -> dict[str, Task]:
    """instance id -> the task a policy gets: what `run_episodes` takes."""
    return {inst.id: inst.task() for inst in instances}


@dataclass
class Step:
    """One tool call as the environment saw it."""

    tool: str
    args: Any
    raw: str | None = None
    error: str | None = None
    returned_ids: list[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, record: dict, where: str = "") -> Step:
        ids = _get(record, "returned_ids", list, where, [])
        return cls(
            tool=_get(record, "tool", str, where),
            args=record.get("args"),
            raw=_get(record, "raw", str, where, None),
            error=_get(record, "error", str, where, None),
            returned_ids=[str(i) for i in ids],
        )

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class SubmittedPaper:
    id: str
    rationale: str = ""

    def to_dict(self) -> dict:
        return {"id": self.id, "rationale": self.rationale}


@dataclass
class Episode:
    instance_id: str
    policy: str
    protocol_hash: str
    steps: list[Step] = field(default_factory=list)
    submission: list[SubmittedPaper] = field(default_factory=list)
    status: str = "error"
    calls: int = 0
    tokens: dict = field(default_factory=dict)
    latency_s: float = 0.0
    cost_usd: float | None = None
    messages: list[dict] = field(default_factory=list)
    error: str | None = None

    @classmethod
    def from_dict(cls, record: dict, where: str = "") -> Episode:
        status = _get(record, "status", str, where)
        if status not in EPISODE_STATUSES:
            raise _fail(where, f"field 'status': {status!r} is not one of {', '.join(EPISODE_STATUSES)}")
        submission = []
        for i, item in enumerate(_get(record, "submission", list, where, [])):
            item_where = f"{where} submission[{i}]".strip()
            # Submitted ids are kept as written: canonicalisation is the scorer's job.
            submission.append(
                SubmittedPaper(
                    id=_get(item, "id", str, item_where), rationale=_get(item, "rationale", str, item_where, "")
                )
            )
        return cls(
            instance_id=_text(record, "instance_id", where),
            policy=_get(record, "policy", str, where, ""),
            protocol_hash=_get(record, "protocol_hash", str, where, ""),
            steps=[
                Step.from_dict(s, f"{where} steps[{i}]".strip())
                for i, s in enumerate(_get(record, "steps", list, where, []))
            ],
            submission=submission,
            status=status,
            calls=_get(record, "calls", int, where, 0),
            tokens=_get(record, "tokens", dict, where, {}),
            latency_s=float(_get(record, "latency_s", (int, float), where, 0.0)),
            cost_usd=_get(record, "cost_usd", (int, float), where, None),
            messages=_get(record, "messages", list, where, []),
            error=_get(record, "error", str, where, None),
        )

    def to_dict(self) -> dict:
        return {
            "instance_id": self.instance_id,
            "policy": self.policy,
            "protocol_hash": self.protocol_hash,
            "steps": [s.to_dict() for s in self.steps],
            "submission": [p.to_dict() for p in self.submission],
            "status": self.status,
            "calls": self.calls,
            "tokens": dict(self.tokens),
            "latency_s": self.latency_s,
            "cost_usd": self.cost_usd,
            "messages": list(self.messages),
            "error": self.error,
        }

    def exposure_order(self) -> list[str]:
        """Unique returned ids in order of first exposure."""
        seen: dict[str, None] = {}
        for step in self.steps:
            for paper_id in step.returned_ids:
                seen.setdefault(paper_id, None)
        return list(seen)
