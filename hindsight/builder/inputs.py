"""What the builder reads: targets, their bibliographies, and the corpus their references
resolve in. Bad lines fail with `file:line: reason`.

    targets.jsonl         {"id": "2504.01234", "title": ..., "abstract": ..., "date": "2025-04-02"}
    bibliographies.jsonl  {"target": "2504.01234", "references": [{"id": "2301.00001", "context": "..."}]}
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hindsight.errors import UserError
from hindsight.ids import normalize_arxiv_id
from hindsight.jsonl import read_jsonl, read_keyed
from hindsight.schema import Paper


class InputError(UserError):
    pass


@dataclass(frozen=True)
class Reference:
    id: str
    context: str = ""


def _target(record: dict, where: str) -> Paper:
    paper = Paper.from_dict(record, where)
    if not paper.abstract.strip():
        raise UserError(f"{where}: field 'abstract' is empty (briefs and judges need it)")
    return paper


def read_targets(path: str | Path) -> list[Paper]:
    targets = list(read_keyed(path, _target, lambda paper: paper.id, InputError, "target").values())
    if not targets:
        raise InputError(f"{path}: no targets")
    return targets


def read_bibliographies(path: str | Path) -> dict[str, list[Reference]]:
    """target id -> its references in order, each id once (the first context kept)."""
    bibliographies: dict[str, list[Reference]] = {}
    for line_no, record, problem in read_jsonl(path):
        where = f"{path}:{line_no}"
        if problem:
            raise InputError(f"{where}: {problem}")
        if not isinstance(record, dict):
            raise InputError(f"{where}: expected a JSON object")
        target = normalize_arxiv_id(record.get("target"))
        references = record.get("references")
        if target is None:
            raise InputError(f"{where}: field 'target': {record.get('target')!r} is not an arXiv id")
        if not isinstance(references, list):
            raise InputError(f"{where}: field 'references': expected a list")
        kept = bibliographies.setdefault(target, [])
        seen = {ref.id for ref in kept}
        for i, item in enumerate(references):
            raw = item.get("id") if isinstance(item, dict) else item
            ref_id = normalize_arxiv_id(raw)
            if ref_id is None:
                raise InputError(f"{where}: references[{i}]: {raw!r} is not an arXiv id")
            context = item.get("context", "") if isinstance(item, dict) else ""
            if not isinstance(context, str):
                raise InputError(f"{where}: references[{i}].context: expected text")
            if ref_id not in seen:
                seen.add(ref_id)
                kept.append(Reference(ref_id, " ".join(context.split())))
    return bibliographies
