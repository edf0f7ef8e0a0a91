"""A model folder built once and shipped with the repository, sealed with what it was built from.

The demo's base starts from the copying curriculum's result (hindsight.models.tiny). That
curriculum's losses fall late and abruptly, at a step that depends on the seed and on the
machine's float kernels, so a base built on each user's machine is a different base on each.
Built once and shipped, it is the same everywhere; the stages after it (fine-tuning, SFT,
evaluation) are ordinary training and run where the user runs them.

`seal` writes `provenance.json`: a key over every input of the build (the text the tokenizer
learns, the protocol's text, the chat template, the id pieces, every setting), the sha256 of
each file, and how and where it was built. `check` refuses a folder whose files changed or
whose key differs from the one the current code computes for the same settings: a stale
folder, never silently used.
"""

from __future__ import annotations

import hashlib
import json
import platform
import time
from pathlib import Path

from hindsight.errors import UserError
from hindsight.jsonl import sha256_file
from hindsight.provenance import git_commit, software_versions

PROVENANCE = "provenance.json"


class StaleModel(UserError):
    pass


def digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def seal(folder: str | Path, inputs: dict, command: list[str], seconds: float) -> dict:
    """Write `folder`/provenance.json for a folder just built from `inputs`; returns it."""
    import torch

    folder = Path(folder)
    record = {
        "key": digest(inputs),
        "inputs": inputs,
        "command": command,
        "files": {
            path.name: sha256_file(path)
            for path in sorted(folder.iterdir())
            if path.is_file() and path.name != PROVENANCE
        },
        "built": {
            "seconds": round(seconds),
            "date": time.strftime("%Y-%m-%d"),
            "cpu": _cpu(),
            "torch_threads": torch.get_num_threads(),
            "git_commit": git_commit(),
            "software": software_versions(),
        },
    }
    (folder / PROVENANCE).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return record


def check(folder: str | Path, inputs: dict) -> dict:
    """The provenance of `folder` when it is intact and was built from `inputs`; StaleModel otherwise."""
    folder = Path(folder)
    path = folder / PROVENANCE
    if not path.is_file():
        raise StaleModel(f"{path}: missing; this folder was not sealed by a build")
    record = json.loads(path.read_text())
    for name, sha in record["files"].items():
        if not (folder / name).is_file():
            raise StaleModel(f"{folder / name}: missing (listed in {path})")
        if sha256_file(folder / name) != sha:
            raise StaleModel(f"{folder / name}: its sha256 differs from {path}'s: the file was changed or damaged")
    if record["key"] != digest(inputs):
        changed = sorted(
            name for name in inputs.keys() | record["inputs"].keys() if inputs.get(name) != record["inputs"].get(name)
        )
        raise StaleModel(
            f"{folder} was built from other inputs than this code and these settings give ({', '.join(changed)} differ)"
        )
    return record
