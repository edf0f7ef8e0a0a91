"""A run directory: `runs/<name>/episodes.jsonl` (one Episode a line) and `manifest.json`.
A run kept for the record (`archive_run`) holds episodes.jsonl.gz and instances.jsonl.gz
instead, and reads the same.

The manifest fields that decide comparability (read by `eval/compare.py`):
  protocol_hash     the protocol the episodes ran under (see hindsight.protocol)
  scorer_version    the scorer the run is meant for
  instances         {"path": ..., "sha256": ...}: the instance file the run covers
Everything else (policy, model revision, decoding, counts, software) is recorded for people.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from hindsight.errors import UserError
from hindsight.jsonl import read_keyed
from hindsight.schema import Episode

COMPARED_FIELDS = ("protocol_hash", "scorer_version", "instances.sha256")


class RunError(UserError):
    """A run directory that cannot be read as asked; the message names the file and line."""


@dataclass
class Run:
    name: str
    path: Path
    manifest: dict
    episodes: dict[str, Episode]

    def field(self, dotted: str):
        value = self.manifest
        for part in dotted.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return value

    @property
    def instances_path(self) -> Path:
        raw = self.field("instances.path")
        if not raw:
            raise RunError(f"{self.path / 'manifest.json'}: no instances.path recorded")
        path = Path(raw)
        path = path if path.is_absolute() else (self.path / path)
        return kept(path)


def kept(path: Path) -> Path:
    """`path`, or its compressed copy `path.gz` where only that exists (an archived run)."""
    compressed = path.with_name(path.name + ".gz")
    return compressed if not path.exists() and compressed.exists() else path


def read_episodes(path: Path) -> dict[str, Episode]:
    """The episodes of `path` (a run's episodes.jsonl), or of its kept copy episodes.jsonl.gz."""
    return read_keyed(
        kept(Path(path)),
        lambda record, where: Episode.from_dict(record, where=where),
        lambda episode: episode.instance_id,
        RunError,
        "episode for",
        torn_hint=" (an interrupted run leaves a torn last line: resume it to repair)",
    )


def load_run(run_dir: str | Path) -> Run:
    run_dir = Path(run_dir)
    manifest_path, episodes_path = run_dir / "manifest.json", kept(run_dir / "episodes.jsonl")
    for needed in (manifest_path, episodes_path):
        if not needed.exists():
            raise RunError(f"{needed}: missing (is {run_dir} a run directory?)")
    try:
        manifest = json.loads(manifest_path.read_text())
    except json.JSONDecodeError as exc:
        raise RunError(f"{manifest_path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(manifest, dict):
        raise RunError(f"{manifest_path}: expected a JSON object")
    episodes = read_episodes(episodes_path)
    expected_hash = manifest.get("protocol_hash")
    for episode in episodes.values():
        if expected_hash and episode.protocol_hash and episode.protocol_hash != expected_hash:
            raise RunError(
                f"{episodes_path}: episode {episode.instance_id!r} ran under protocol "
                f"{episode.protocol_hash[:12]}…, the manifest says {expected_hash[:12]}…"
            )
    return Run(name=run_dir.name, path=run_dir, manifest=manifest, episodes=episodes)


def archive_run(run_dir: str | Path, dest: str | Path) -> Path:
    """Keep a finished run for the record: <dest>/<name>/ with its manifest, and its episodes
    and instances gzip-compressed beside it (byte-for-byte reproducible: no timestamp), which
    `load_run` and eval/compare.py read like the original. The manifest is kept as it is but for
    instances.path, which names the copy beside it (the digest is of the same content).
    Returns the new folder."""
    import gzip
    import shutil

    run = load_run(run_dir)
    out = Path(dest) / run.name
    out.mkdir(parents=True, exist_ok=True)
    manifest = dict(run.manifest)
    manifest["instances"] = {**manifest.get("instances", {}), "path": "instances.jsonl"}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    for source, name in (
        (kept(run.path / "episodes.jsonl"), "episodes.jsonl"),
        (run.instances_path, "instances.jsonl"),
    ):
        if source.suffix == ".gz":
            shutil.copyfile(source, out / f"{name}.gz")
            continue
        with open(source, "rb") as raw, open(out / f"{name}.gz", "wb") as handle:
            with gzip.GzipFile(filename="", mode="wb", fileobj=handle, mtime=0) as packed:
                shutil.copyfileobj(raw, packed)
    return out
