"""The committed real-model comparisons are what their kept episodes give, by one command."""

import shutil
import subprocess
from pathlib import Path

from tests.helpers import load_file_module

ROOT = Path(__file__).resolve().parents[1]


def load_recompute():
    return load_file_module("recompute_results", ROOT / "scripts/recompute_results.py")


def test_every_committed_comparison_is_what_its_kept_episodes_give():
    recompute = load_recompute()
    assert recompute.seed_folders(ROOT), "no kept runs found under benchmarks/results/*/seed*/*/runs"
    assert recompute.main(["--check"]) == 0


def test_a_comparison_edited_by_hand_is_found(tmp_path):
    recompute = load_recompute()
    source = recompute.seed_folders(ROOT)[-1]
    folder = tmp_path / source.relative_to(ROOT)
    shutil.copytree(source, folder)
    text = (folder / "comparison.md").read_text()
    edited = text.replace("+0.0", "+0.1", 1)
    assert edited != text
    (folder / "comparison.md").write_text(edited)
    again = recompute.recomputed(folder, tmp_path)
    assert again[folder / "comparison.md"] == text
    assert again[folder / "comparison.json"] == (folder / "comparison.json").read_text()


def test_the_kept_episodes_are_not_ignored_by_git():
    # a clean clone has only what git tracks: an ignored kept run passes here and fails there
    recompute = load_recompute()
    kept = [path for folder in recompute.seed_folders(ROOT) for path in (folder / "runs").rglob("*") if path.is_file()]
    assert kept
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", *map(str, kept)], cwd=ROOT, capture_output=True, text=True
    ).stdout.split()
    assert ignored == []
