"""Reading instances in the native JSONL format (docs/architecture.md, "Records"), with file:line errors."""

from __future__ import annotations

from pathlib import Path

from hindsight.errors import UserError
from hindsight.jsonl import read_keyed
from hindsight.schema import Instance


class InstanceError(UserError):
    """An instances file that cannot be used; the message names file and line."""


def load_instances(path: str | Path) -> list[Instance]:
    path = Path(path)
    if not path.exists():
        raise InstanceError(f"{path}: no such instances file")
    instances = read_keyed(
        path,
        lambda record, where: Instance.from_dict(record, where=where),
        lambda instance: instance.id,
        InstanceError,
        "instance id",
    )
    if not instances:
        raise InstanceError(f"{path}: no instances")
    return list(instances.values())
