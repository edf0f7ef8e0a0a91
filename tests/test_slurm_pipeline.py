"""slurm/pipeline.sh on a real one-node Slurm (no GPUs): the demo recipe at tiny sizes, every
stage as a job, distill as a two-task array merged before selection."""

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

from hindsight.schema import CandidateId
from tests.slurm_cluster import LocalSlurm, SlurmUnavailable

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.slow, pytest.mark.slurm]

TARGETS_PER_SPLIT, CANDIDATES, EVAL_LIMIT, SHARDS = 5, 4, 4, 2


@pytest.fixture
def slurm(tmp_path):
    cluster = LocalSlurm(tmp_path / "cluster")
    try:
        cluster.start()
    except SlurmUnavailable as exc:
        pytest.skip(f"no Slurm here: {exc}")
    yield cluster
    cluster.stop()


def test_pipeline_runs_every_stage_and_merges_shards_to_one_record_per_candidate(slurm, tmp_path):
    work = tmp_path / "work"
    # The demo recipe with every output under tmp_path; sizes come through RECIPE_SETS, which
    # the pipeline must hand to every job.
    recipe = yaml.safe_load((ROOT / "recipes" / "demo.yaml").read_text())
    recipe["policy"]["model"] = recipe["train"]["base_model"] = str(work / "base" / "model")
    recipe["distill"]["out_dir"], recipe["train"]["output_dir"] = str(work / "distill"), str(work / "sft")
    recipe["runs_dir"] = str(work / "runs")
    # a base this small cannot act: the gate runs and records its numbers but lets it through
    recipe["gate"] = {
        "split": "dev",
        "max_targets": EVAL_LIMIT,
        "min_copied_first_queries": 0.0,
        "min_surfaced_submissions": 0.0,
        "max_malformed": 1.0,
        "retrain_epochs": 0,
    }
    (tmp_path / "demo.yaml").write_text(yaml.safe_dump(recipe))
    sets = [
        f"distill.max_targets={TARGETS_PER_SPLIT}",
        f"distill.candidates={CANDIDATES}",
        "train.epochs=1",
        "policy.max_new_tokens=48",
    ]
    env = {
        **slurm.env,
        "RECIPE": str(tmp_path / "demo.yaml"),
        "RECIPE_SETS": " ".join(sets),
        "SHARDS": str(SHARDS),
        "CPU_ONLY": "1",
        "DEMO_BASE": "1",
        "CPUS_PER_TASK": "1",
        "EVAL_LIMIT": str(EVAL_LIMIT),
        "BASE_HIDDEN": "32",
        "BASE_LAYERS": "1",
        "BASE_COPY_STEPS": "2",
        "BASE_ID_COPY_STEPS": "2",
        "BASE_QUERY_COPY_STEPS": "2",
        "BASE_EPOCHS": "0.05",
        "LOG_DIR": str(work / "logs"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "VENV": "",
    }
    if (Path(sys.prefix) / "bin" / "activate").exists():
        env["VENV"] = sys.prefix
    submitted = subprocess.run(
        ["bash", "slurm/pipeline.sh"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert submitted.returncode == 0, submitted.stderr
    record = json.loads(next((work / "logs").glob("pipeline-*.json")).read_text())
    jobs = record["jobs"]
    assert all(jobs.values()), jobs

    states = slurm.wait(list(jobs.values()), timeout=900)
    logs = "\n".join(
        f"--- {p.name}\n" + "\n".join(p.read_text(errors="replace").splitlines()[-25:])
        for p in sorted((work / "logs").glob("*.out"))
    )
    assert all(s and set(s) == {"COMPLETED"} for s in states.values()), f"{states}\n{logs}\n{slurm.logs()}"
    assert len(states[jobs["distill"]]) == SHARDS

    # every stage left its outputs
    assert (work / "base" / "model" / "config.json").exists()
    assert (work / "runs" / "gate-base" / "gate.json").exists()
    for index in range(SHARDS):
        assert (work / "distill" / "candidates" / "shards" / f"{index}-of-{SHARDS}" / "episodes.jsonl").exists()
    for name in ("replays.jsonl", "selection.json", "sft.jsonl"):
        assert (work / "distill" / name).exists(), name
    sft_manifest = json.loads((work / "sft" / "train_manifest.json").read_text())
    assert (work / "sft" / Path(sft_manifest["output"]).name / "config.json").exists()  # a full model
    assert sft_manifest["data"]["rows"] <= TARGETS_PER_SPLIT  # the overrides reached the jobs
    for run in ("base", "sft"):
        lines = (work / "runs" / run / "episodes.jsonl").read_text().splitlines()
        assert len(lines) == EVAL_LIMIT
    assert json.loads((work / "runs" / "sft" / "manifest.json").read_text())["student"] == str(work / "sft")
    assert "nDCG@10" in (work / "runs" / "comparison.md").read_text()

    # the merge: exactly one record per candidate, every target with all of its candidates
    merged = [
        json.loads(line)["instance_id"]
        for line in (work / "distill" / "candidates" / "episodes.jsonl").read_text().splitlines()
    ]
    assert len(merged) == len(set(merged)) == 2 * TARGETS_PER_SPLIT * CANDIDATES
    per_target = Counter(CandidateId.parse(task).instance_id for task in merged)
    assert set(per_target.values()) == {CANDIDATES} and len(per_target) == 2 * TARGETS_PER_SPLIT
