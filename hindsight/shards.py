"""Splitting a run's targets across jobs and merging the jobs' runs back into one.

Distillation (`distill/teacher.py --shard I/N`, then `--merge N`) and evaluation
(`eval/run.py --shard I/N`, then `--merge N`) shard the same way: shard I of N takes every N-th
target starting at the I-th, runs into a folder of its own, and the merge concatenates complete
shards into the folder an unsharded run would have filled, refusing a missing or unfinished shard
and any record found twice.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

from hindsight.errors import UserError
from hindsight.jsonl import read_jsonl

Item = TypeVar("Item")


def parse_shard(text: str) -> tuple[int, int]:
    """ "I/N" → (I, N) with 0 <= I < N."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise UserError(f"--shard wants INDEX/COUNT such as 0/8, got {text!r}") from None
    if not 0 <= index < count:
        raise UserError(f"--shard {text}: the index must be in 0..{count - 1}")
    return index, count


def shard_of(items: Sequence[Item], shard: tuple[int, int] | None) -> list[Item]:
    """Every N-th item starting at the I-th (all of them without a shard)."""
    return list(items) if shard is None else list(items[shard[0] :: shard[1]])


def shard_folder(parent: Path, index: int, count: int) -> Path:
    return Path(parent) / "shards" / f"{index}-of-{count}"


def merge_runs(parent: Path, count: int) -> tuple[list[dict], set[str]]:
    """Concatenate the episodes of `parent`'s N shard folders into `parent`/episodes.jsonl, as
    the runner wrote them; returns the shards' manifests (the caller writes the merged one) and
    the ids the episodes are recorded under."""
    seen: set[str] = set()
    lines: list[str] = []
    manifests = []
    for index in range(count):
        folder = shard_folder(parent, index, count)
        manifest_path = folder / "manifest.json"
        if not manifest_path.exists():
            raise FileNotFoundError(f"{folder}: shard {index} of {count} has no manifest; run --shard {index}/{count}")
        manifest = json.loads(manifest_path.read_text())
        if manifest.get("status") != "complete":
            raise UserError(f"{manifest_path}: shard {index} of {count} is {manifest.get('status')!r}, not complete")
        for number, record, problem in read_jsonl(folder / "episodes.jsonl"):
            if problem:
                raise UserError(f"{folder / 'episodes.jsonl'}:{number}: {problem}")
            record_id = record["instance_id"]
            if record_id in seen:
                raise UserError(f"{folder / 'episodes.jsonl'}:{number}: {record_id} is already in an earlier shard")
            seen.add(record_id)
            lines.append(json.dumps(record, ensure_ascii=False) + "\n")
        manifests.append(manifest)
    Path(parent).mkdir(parents=True, exist_ok=True)
    (Path(parent) / "episodes.jsonl").write_text("".join(lines), encoding="utf-8")
    return manifests, seen


def merged_manifest(manifests: list[dict], **fields) -> dict:
    """The first shard's manifest, its counts summed over every shard, marked as a merge."""
    return {
        **manifests[0],
        "shard": None,
        "merged_shards": len(manifests),
        "counts": {key: sum(m["counts"].get(key, 0) for m in manifests) for key in manifests[0]["counts"]},
        "timing": None,  # shards run side by side: each one's own wall time below, no sum
        "shard_timings": [m.get("timing") for m in manifests],
        **fields,
    }
