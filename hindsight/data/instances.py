"""Reading instances in the native JSONL format (DESIGN §3), with file:line errors."""

from __future__ import annotations

from pathlib import Path

from hindsight.jsonl import read_jsonl
from hindsight.schema import Instance, SchemaError


class InstanceError(ValueError):
    """An instances file that cannot be used; the message names file and line."""


def load_instances(path: str | Path) -> list[Instance]:
    path = Path(path)
    if not path.exists():
        raise InstanceError(f"{path}: no such instances file")
    instances: list[Instance] = []
    first_line: dict[str, int] = {}
    for line_no, record, error in read_jsonl(path):
        where = f"{path}:{line_no}"
        if error:
            raise InstanceError(f"{where}: {error}")
        try:
            instance = Instance.from_dict(record, where=where)
        except SchemaError as exc:
            raise InstanceError(str(exc)) from None
        if instance.id in first_line:
            raise InstanceError(f"{where}: duplicate instance id {instance.id!r} (first at line {first_line[instance.id]})")
        first_line[instance.id] = line_no
        instances.append(instance)
    if not instances:
        raise InstanceError(f"{path}: no instances")
    return instances
