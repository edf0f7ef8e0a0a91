"""A built model folder shipped with the repository: sealed with its inputs, refused when stale."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hindsight.models.shipped import StaleModel, check, seal
from hindsight.models.tiny import build_tiny_qwen, main
from tests.helpers import random_papers

ROOT = Path(__file__).resolve().parents[1]
SMALL = ["--data", "world", "--hidden-size", "32", "--layers", "1"]


def test_a_sealed_folder_passes_its_check_and_a_changed_file_or_input_is_named(tmp_path):
    folder = build_tiny_qwen(tmp_path / "m", [p.title for p in random_papers(50, seed=1)], hidden_size=32, layers=1)
    inputs = {"texts_sha256": "abc", "hidden_size": 32}
    seal(folder, inputs, ["python", "-m", "hindsight.models.tiny"], seconds=1.0)
    assert check(folder, inputs)["files"]["model.safetensors"]
    with pytest.raises(StaleModel, match="hidden_size"):
        check(folder, {**inputs, "hidden_size": 64})
    weights = folder / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    with pytest.raises(StaleModel, match="model.safetensors: its sha256 differs"):
        check(folder, inputs)


def test_an_unsealed_folder_is_refused(tmp_path):
    folder = build_tiny_qwen(tmp_path / "m", ["a few words"], hidden_size=32, layers=1)
    with pytest.raises(StaleModel, match="provenance.json: missing"):
        check(folder, {})


def test_from_init_copies_a_folder_built_with_the_same_settings_and_refuses_other_settings(tmp_path, capsys):
    built, copied = tmp_path / "built", tmp_path / "copied"
    assert main(["--out", str(built), *SMALL, "--seal"]) == 0
    assert main(["--out", str(copied), *SMALL, "--from-init", str(built)]) == 0
    assert sorted(p.name for p in copied.iterdir()) == sorted(p.name for p in built.iterdir())
    assert (copied / "model.safetensors").read_bytes() == (built / "model.safetensors").read_bytes()
    capsys.readouterr()
    assert main(["--out", str(tmp_path / "other"), *SMALL, "--seed", "1", "--from-init", str(built)]) == 3
    assert "seed" in capsys.readouterr().err and not (tmp_path / "other").exists()


def test_the_shipped_demo_init_fits_this_code_and_the_demos_settings(tmp_path):
    """Fails when a change to the prompts, the chat template, the world or a BASE_* setting leaves
    assets/demo-init stale: rebuild it with scripts/build_demo_init.sh."""
    out = tmp_path / "demo"
    env = {**os.environ, "DEMO_OUT": str(out), "BASE_INIT": "assets/demo-init", "PYTHON": sys.executable}
    result = subprocess.run(
        ["bash", "scripts/demo.sh", "world", "init"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert (out / "base/init/model.safetensors").read_bytes() == (
        ROOT / "assets/demo-init/model.safetensors"
    ).read_bytes()


def test_a_crash_while_taking_the_shipped_init_stops_the_demo_instead_of_building(tmp_path):
    """Only a stale init (exit 3) falls back to building the curriculum here; any other failure of
    the copy is the user's to see. The injected python fails the copy with 1 and a build with 99."""
    fake = tmp_path / "python"
    fake.write_text(f"""#!/usr/bin/env bash
for arg in "$@"; do
  [[ "$arg" == --from-init ]] && {{ echo "injected crash" >&2; exit 1; }}
  [[ "$arg" == --seal ]] && exit 99
done
exec {sys.executable} "$@"
""")
    fake.chmod(0o755)
    env = {**os.environ, "DEMO_OUT": str(tmp_path / "demo"), "PYTHON": str(fake)}
    env.pop("BASE_INIT", None)
    result = subprocess.run(
        ["bash", "scripts/demo.sh", "world", "init"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 1, result.stderr[-2000:]
    assert "injected crash" in result.stderr and "built here" not in result.stdout
