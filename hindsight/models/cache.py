"""Folders of converted weights under $HINDSIGHT_CACHE, each written once and published whole."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path


def cache_root(kind: str) -> Path:
    """$HINDSIGHT_CACHE/<kind> (default ~/.cache/hindsight/<kind>)."""
    return Path(os.environ.get("HINDSIGHT_CACHE", Path.home() / ".cache" / "hindsight")) / kind


def publish(folder: Path, marker: str, write: Callable[[Path], None]) -> Path:
    """`folder`, made by `write` into a private folder and renamed into place, so that two
    processes making the same folder at once (an accelerate launch, say) never see half of it;
    `write` must write the file `marker` last."""
    tmp = folder.with_name(f"{folder.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    write(tmp)
    try:
        tmp.rename(folder)
    except OSError:  # another process finished first
        if not (folder / marker).exists():
            raise
        shutil.rmtree(tmp, ignore_errors=True)
    return folder
