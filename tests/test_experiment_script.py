"""scripts/experiment.sh end to end on the tiny model: the base, the format control and the
hindsight student trained and evaluated under one protocol, the three-way comparison, and a
second run that keeps what the first finished."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow
pytest.importorskip("trl")


def experiment(folder: Path, recipe: Path, *stages: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PYTHON": sys.executable,
        "EVAL_PYTHON": sys.executable,
        "OMP_NUM_THREADS": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    return subprocess.run(
        ["bash", "scripts/experiment.sh", str(recipe), *stages],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=1200,
        env=env,
    )


def test_the_experiment_trains_and_compares_base_format_control_and_hindsight_and_resumes(tiny_model, tmp_path):
    for folder in ("scripts", "distill", "train", "eval"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(
        json.dumps(
            {
                "data": {"source": "world", "split": "eval", "max_targets": 4},
                "protocol": {"budget": 6, "abstract_words": 20},
                "policy": {"backend": "hf", "model": str(tiny_model), "max_new_tokens": 48},
                "distill": {"out_dir": "out/distill", "candidates": 1, "max_targets": 8, "keep_quantile": 1.0},
                "train": {
                    "base_model": str(tiny_model),
                    "output_dir": "out/sft",
                    "lora": {"rank": 8, "alpha": 16, "target_modules": ["q_proj", "v_proj"]},
                    "learning_rate": 1.0e-3,
                    "epochs": 1,
                    "per_device_batch_size": 4,
                    "gradient_accumulation_steps": 1,
                    "max_length": 8192,
                    "precision": "fp32",
                    "warmup_ratio": 0.0,
                    "lr_scheduler": "constant",
                },
                "runs_dir": "out/runs",
            }
        )
    )
    stages = ("world", "distill", "format", "train", "train_format", "eval", "compare")
    first = experiment(tmp_path, recipe, *stages)
    assert first.returncode == 0, first.stderr[-3000:]
    hindsight = [json.loads(line) for line in (tmp_path / "out/distill/sft.jsonl").read_text().splitlines()]
    control = [json.loads(line) for line in (tmp_path / "out/distill/format_sft.jsonl").read_text().splitlines()]
    assert len(control) == len(hindsight) > 0
    for arm in ("sft", "format-sft"):
        manifest = json.loads((tmp_path / "out" / arm / "train_manifest.json").read_text())
        assert manifest["steps"] > 0
    trained_on = {
        arm: json.loads((tmp_path / "out" / arm / "train_manifest.json").read_text())["data"]["path"]
        for arm in ("sft", "format-sft")
    }
    assert trained_on == {"sft": "out/distill/sft.jsonl", "format-sft": "out/distill/format_sft.jsonl"}
    report = json.loads((tmp_path / "out/runs/comparison.json").read_text())
    assert list(report["runs"]) == ["base", "format", "sft"]
    assert set(report["differences"]) == {"format - base", "sft - base", "sft - format"}
    assert "both-submitted" in report["slices"]

    episodes = {arm: (tmp_path / "out/runs" / arm / "episodes.jsonl").read_bytes() for arm in report["runs"]}
    again = experiment(tmp_path, recipe, "train", "train_format", "eval")
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stdout.count("is already trained") == 2
    for arm, before in episodes.items():  # every target was kept: no episode ran again
        assert (tmp_path / "out/runs" / arm / "episodes.jsonl").read_bytes() == before
