"""eval/run.py end to end on the synthetic world, and recipes."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hindsight.config import ConfigError
from hindsight.eval.compare import main as compare_main
from hindsight.eval.run import main as run_main
from hindsight.recipe import load_recipe

ROOT = Path(__file__).resolve().parents[1]


def recipe(tmp_path, extra: str = "") -> Path:
    path = tmp_path / "recipe.yaml"
    path.write_text(
        f"data:\n  source: world\nprotocol:\n  budget: 6\npolicy:\n  backend: bm25-oneshot\n"
        f"runs_dir: {tmp_path / 'runs'}\n{extra}"
    )
    return path


def test_run_then_compare_on_the_world(tmp_path, capsys):
    path = recipe(tmp_path)
    assert run_main([str(path), "--name", "a", "--limit", "15"]) == 0
    assert run_main([str(path), "--name", "b", "--limit", "15"]) == 0
    manifest = json.loads((tmp_path / "runs" / "a" / "manifest.json").read_text())
    assert manifest["counts"] == {"expected": 15, "attempted": 15, "completed": 15, "submitted": 15, "error": 0}
    assert manifest["instances"]["split"] == "eval" and manifest["policy"]["backend"] == "bm25-oneshot"
    assert manifest["recipe"]["protocol"]["budget"] == 6 and manifest["software"]["python"]
    capsys.readouterr()
    assert compare_main(["a", "b", "--runs-dir", str(tmp_path / "runs"), "--resamples", "200"]) == 0
    assert "b - a" in capsys.readouterr().out
    # resuming a finished run adds nothing
    assert run_main([str(path), "--name", "a", "--limit", "15"]) == 0
    assert len((tmp_path / "runs" / "a" / "episodes.jsonl").read_text().splitlines()) == 15


def test_runs_over_other_targets_are_not_compared(tmp_path, capsys):
    path = recipe(tmp_path)
    run_main([str(path), "--name", "a", "--limit", "5"])
    run_main([str(path), "--name", "b", "--limit", "6"])
    assert compare_main(["a", "b", "--runs-dir", str(tmp_path / "runs")]) == 2
    assert "instances.sha256" in capsys.readouterr().err


def test_recipe_errors_name_the_file_section_and_key(tmp_path):
    with pytest.raises(ConfigError, match=r"recipe.yaml: policy: unknown key\(s\) temprature"):
        load_recipe(recipe(tmp_path, "").parent / "recipe.yaml", ["policy.temprature=0.5"])
    with pytest.raises(ConfigError, match=r"unknown section\(s\) evaluation"):
        load_recipe(recipe(tmp_path, "evaluation:\n  x: 1\n"))
    with pytest.raises(ConfigError, match=r"protocol.budget: expected int"):
        load_recipe(recipe(tmp_path), ["protocol.budget=many"])
    assert load_recipe(recipe(tmp_path), ["policy.temperature=0.7"]).policy.temperature == 0.7


def test_every_recipe_in_the_repo_loads():
    recipes = sorted((ROOT / "recipes").glob("*.yaml"))
    assert recipes
    for path in recipes:
        load_recipe(path)


def test_eval_run_as_a_script_reports_bad_input(tmp_path):
    result = subprocess.run(
        [sys.executable, str(ROOT / "eval/run.py"), str(tmp_path / "missing.yaml"), "--name", "x"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "no such recipe" in result.stderr


def test_every_stage_builds_the_same_search_backend_from_the_recipe(tmp_path, small_corpus):
    from hindsight.recipe import SearchConfig

    backend = SearchConfig(backend="bm25", model="ignored-for-bm25", cache_dir=str(tmp_path / "idx")).build(
        small_corpus
    )
    assert backend.index_dir.parent == tmp_path / "idx"
    assert (
        backend.describe()
        == SearchConfig(backend="bm25", cache_dir=str(tmp_path / "idx")).build(small_corpus).describe()
    )


def write_training_manifest(folder, lora: bool, base_model: str):
    import json

    folder.mkdir(parents=True, exist_ok=True)
    output = folder / ("adapter" if lora else "model")
    (folder / "train_manifest.json").write_text(
        json.dumps(
            {
                "base_model": base_model,
                "output": f"somewhere/else/{output.name}",
                "hyperparameters": {"lora": {"rank": 16} if lora else None},
            }
        )
    )
    return output


def test_a_student_trained_with_lora_is_its_adapter_on_the_policy_model(tmp_path):
    from hindsight.eval.evaluation import trained_student

    adapter = write_training_manifest(tmp_path / "sft", lora=True, base_model="Qwen/Qwen3-0.6B")
    assert trained_student(tmp_path / "sft", "Qwen/Qwen3-0.6B") == ("Qwen/Qwen3-0.6B", str(adapter))


def test_a_fully_fine_tuned_student_is_its_own_model(tmp_path):
    from hindsight.eval.evaluation import trained_student

    model = write_training_manifest(tmp_path / "sft", lora=False, base_model="Qwen/Qwen3-0.6B")
    assert trained_student(tmp_path / "sft", "Qwen/Qwen3-0.6B") == (str(model), None)


def test_an_adapter_trained_on_another_base_is_refused(tmp_path):
    from hindsight.eval.evaluation import trained_student

    write_training_manifest(tmp_path / "sft", lora=True, base_model="Qwen/Qwen3-8B")
    with pytest.raises(ValueError, match="trained on Qwen/Qwen3-8B, but policy.model is Qwen/Qwen3-0.6B"):
        trained_student(tmp_path / "sft", "Qwen/Qwen3-0.6B")


def test_a_student_folder_without_a_training_manifest_is_named(tmp_path):
    from hindsight.eval.evaluation import trained_student

    with pytest.raises(FileNotFoundError, match="train_manifest.json does not exist"):
        trained_student(tmp_path / "nothing", "Qwen/Qwen3-0.6B")


def test_an_adapter_trained_on_other_gguf_weights_is_refused(tmp_path):
    from hindsight.eval.evaluation import trained_student
    from hindsight.jsonl import sha256_file

    model = tmp_path / "student.gguf"
    model.write_bytes(b"GGUF weights as they were at training time")
    adapter = write_training_manifest(tmp_path / "sft", lora=True, base_model=str(model))
    manifest = json.loads((tmp_path / "sft" / "train_manifest.json").read_text())
    (tmp_path / "sft" / "train_manifest.json").write_text(json.dumps({**manifest, "gguf_sha256": sha256_file(model)}))
    assert trained_student(tmp_path / "sft", str(model)) == (str(model), str(adapter))
    model.write_bytes(b"GGUF weights replaced in place")
    with pytest.raises(ValueError, match="now holds other weights"):
        trained_student(tmp_path / "sft", str(model))


def test_data_max_targets_evaluates_the_first_n_targets_of_the_split(tmp_path):
    from hindsight.eval.evaluation import evaluate
    from hindsight.recipe import load_recipe

    recipe = tmp_path / "r.yaml"
    recipe.write_text(f"data: {{source: world, max_targets: 3}}\nruns_dir: {tmp_path / 'runs'}\n")
    run_dir = evaluate(load_recipe(recipe), "oneshot", progress=False)
    assert len((run_dir / "episodes.jsonl").read_text().splitlines()) == 3
    assert json.loads((run_dir / "manifest.json").read_text())["instances"]["count"] == 3


def _episodes_by_target(run_dir: Path) -> dict:
    timing = ("latency_s", "started_at")
    records = [json.loads(line) for line in (run_dir / "episodes.jsonl").read_text().splitlines()]
    return {r["instance_id"]: {k: v for k, v in r.items() if k not in timing} for r in records}


@pytest.mark.parametrize("policy", ["bm25-oneshot", "hf"])
def test_merged_evaluation_shards_equal_an_unsharded_run(tmp_path, tiny_model, policy):
    extra = (
        "" if policy == "bm25-oneshot" else f"  model: {tiny_model}\n  max_new_tokens: 24\n  batch_size: 1\n"
    )  # one episode a batch: no padding differs
    path = tmp_path / "recipe.yaml"
    path.write_text(
        f"data:\n  source: world\n  max_targets: 7\nprotocol:\n  budget: 3\npolicy:\n  backend: {policy}\n"
        f"{extra}runs_dir: {tmp_path / 'runs'}\n"
    )
    assert run_main([str(path), "--name", "whole"]) == 0
    for index in range(3):
        assert run_main([str(path), "--name", "sharded", "--shard", f"{index}/3"]) == 0
    assert run_main([str(path), "--name", "sharded", "--merge", "3"]) == 0
    whole, merged = tmp_path / "runs" / "whole", tmp_path / "runs" / "sharded"
    assert _episodes_by_target(merged) == _episodes_by_target(whole) and len(_episodes_by_target(whole)) == 7
    assert (merged / "instances.jsonl").read_bytes() == (whole / "instances.jsonl").read_bytes()
    manifest, expected = (json.loads((run / "manifest.json").read_text()) for run in (merged, whole))
    assert manifest["counts"] == expected["counts"] and manifest["instances"] == expected["instances"]
    assert manifest["merged_shards"] == 3
    assert manifest["timing"] is None and [t["episodes"] for t in manifest["shard_timings"]] == [3, 2, 2]


def test_merging_evaluation_shards_of_other_targets_is_refused(tmp_path, capsys):
    path = recipe(tmp_path)
    for index in range(2):
        assert run_main([str(path), "--name", "s", "--limit", "4", "--shard", f"{index}/2"]) == 0
    assert run_main([str(path), "--name", "s", "--limit", "6", "--merge", "2"]) == 2
    assert "do not cover the split's 6 targets" in capsys.readouterr().err
