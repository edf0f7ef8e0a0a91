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
    with opener(path, "rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield line_no, None, f"not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
                continue
            if not line.strip():
                continue
            try:
                yield line_no, json.loads(line), None
            except json.JSONDecodeError as exc:
                yield line_no, None, f"not valid JSON ({exc.msg} at column {exc.colno})"


def read_keyed(path: str | Path, parse, key, error: type[Exception], what: str, torn_hint: str = "") -> dict:
    """{key: record} from a JSONL file of `what`s; `parse(record, where)` validates one record.
    Bad JSON, a record `parse` rejects (it raises ValueError) or a repeated key raises `error`
    naming the file and line."""
    records: dict = {}
    first_line: dict = {}
    for line_no, record, problem in read_jsonl(path):
        where = f"{path}:{line_no}"
        if problem:
            raise error(f"{where}: {problem}{torn_hint}")
        if not isinstance(record, dict):
            raise error(f"{where}: a {what.split()[0]} record is a JSON object, not a {type(record).__name__}")
        try:
            parsed = parse(record, where)
        except ValueError as exc:
            raise error(str(exc)) from None
        name = key(parsed)
        if name in first_line:
            raise error(f"{where}: a second {what} {name!r} (first at line {first_line[name]})")
        first_line[name] = line_no
        records[name] = parsed
    return records


def sha256_file(path: str | Path) -> str:
    """The sha256 of a file's content; a `.gz` file's is that of what it decompresses to, so a
    record kept compressed keeps the digest its manifest holds."""
    digest = hashlib.sha256()
    opener = gzip.open if Path(path).suffix == ".gz" else open
    with opener(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
