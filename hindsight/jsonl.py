"""JSON Lines reading that reports bad lines by file and line number, and file hashing."""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path


def read_jsonl(path: str | Path) -> Iterator[tuple[int, object, str | None]]:
    """(line number, record, error) for each non-blank line; `error` says why a line is not JSON.
    `.gz` files are decompressed."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield line_no, json.loads(line), None
            except json.JSONDecodeError as exc:
                yield line_no, None, f"not valid JSON ({exc.msg} at column {exc.colno})"


def sha256_file(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
