"""What a manifest records about the software that made a result."""

from __future__ import annotations

import platform
import subprocess
from importlib import metadata
from pathlib import Path

PACKAGES = ("hindsight", "numpy", "bm25s", "torch", "transformers", "peft", "trl", "accelerate", "vllm", "litellm")


def software_versions() -> dict:
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def git_commit(path: Path | None = None) -> str | None:
    """The checkout's commit, with '+dirty' when it has uncommitted changes; None outside git."""
    cwd = path or Path(__file__).resolve().parents[1]
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return commit + ("+dirty" if dirty else "")
