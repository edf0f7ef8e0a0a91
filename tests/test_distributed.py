"""train/sft.py past one process, on CPU processes joined by gloo: data-parallel, a launch that asks
for FSDP, and two "nodes" started the way slurm/train.sbatch starts them.

What "equivalent" means here. A run on two processes with per-device batch 1 and no accumulation
makes the same optimiser steps from the same examples as one process accumulating over two: each
step's gradient is the mean over the same two examples, summed in another order (gloo's
all-reduce against accumulation). That is float rounding, about 1e-7 of a weight's update per
step. The bugs these runs guard against are not small: a process that trains on every example
doubles the steps, a gradient averaged twice halves the update, an unsharded sampler shows each
example twice a step. Each changes what training did to the weights by a share of order one. So
the tolerance is a share of the update itself: the two runs may differ by at most 1/1000 of how
far training moved the weights, three orders of magnitude above rounding and three below any of
those bugs. A step's loss, a mean over thousands of tokens, may differ by 1e-5 of itself:
rounding moves it by about 1e-7, another example at that step or an update of another size by
far more.
"""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import distill, write_recipe

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.slow, pytest.mark.distributed]
pytest.importorskip("trl")
SHARE, LOSS_SHARE = 1e-3, 1e-5  # see the module docstring


@pytest.fixture(scope="module")
def sft_set(tmp_path_factory):
    from hindsight.data import load_benchmark
    from hindsight.models.tiny import build_tiny_qwen

    root = tmp_path_factory.mktemp("distributed")
    corpus, _, _ = load_benchmark("world")
    model = build_tiny_qwen(root / "tiny", [f"{p.title}\n{p.abstract}" for p in corpus.papers[:2000]])
    recipe = write_recipe(
        root, model, epochs=1, per_device_batch_size=1, gradient_accumulation_steps=2, learning_rate=1e-3
    )
    distill(recipe)
    return root, model, recipe


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _env(**extra: str) -> dict:
    return {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "OMP_NUM_THREADS": "1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        **extra,
    }


def accelerate(recipe: Path, out: Path, *launch: str, sets: tuple[str, ...] = ()) -> str:
    """`accelerate launch LAUNCH train/sft.py RECIPE` into `out`; its stdout and stderr."""
    command = [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        *launch,
        str(ROOT / "train/sft.py"),
        str(recipe),
        "--set",
        f"train.output_dir={out}",
        *(arg for s in sets for arg in ("--set", s)),
    ]
    result = subprocess.run(command, capture_output=True, text=True, env=_env(), timeout=1800, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout + result.stderr


def one_process(root: Path, recipe: Path, *sets: str) -> Path:
    """The reference: one process accumulating over two examples (trained once per module)."""
    out = root / ("one-" + "-".join(sets).replace("/", "_") if sets else "one")
    if not (out / "train_manifest.json").exists():
        accelerate(recipe, out, "--cpu", "--num_processes", "1", sets=("train.gradient_accumulation_steps=2", *sets))
    return out


def two_processes(recipe: Path, out: Path, config: str, *sets: str) -> str:
    return accelerate(
        recipe,
        out,
        "--config_file",
        str(ROOT / "recipes/accelerate" / config),
        "--num_processes",
        "2",
        "--main_process_port",
        str(_free_port()),
        sets=("train.gradient_accumulation_steps=1", *sets),
    )


def manifest(out: Path) -> dict:
    return json.loads((out / "train_manifest.json").read_text())


def trained_change(out: Path, base: Path) -> dict:
    """What training did, tensor by tensor: the adapter's B @ A per module, or weight - base weight."""
    from safetensors.torch import load_file

    adapter = out / "adapter" / "adapter_model.safetensors"
    if adapter.exists():
        weights = load_file(adapter)
        return {key: weights[key] @ weights[key.replace("lora_B", "lora_A")] for key in weights if "lora_B" in key}
    trained, before = load_file(out / "model" / "model.safetensors"), load_file(base / "model.safetensors")
    return {key: trained[key] - before[key] for key in before}


def assert_equivalent(one: Path, two: Path, base: Path) -> None:
    first, second = manifest(one), manifest(two)
    assert first["steps"] == second["steps"] > 1
    for a, b in zip(first["losses"], second["losses"], strict=True):
        assert abs(a - b) <= LOSS_SHARE * abs(a), (first["losses"], second["losses"])
    change, other = trained_change(one, base), trained_change(two, base)
    assert change.keys() == other.keys() and change
    moved = max(delta.abs().max().item() for delta in change.values())
    differ = max((change[key] - other[key]).abs().max().item() for key in change)
    assert differ <= SHARE * moved, (differ, moved)


def reports(log: str) -> int:
    """How many processes printed the run's closing lines (only the main one should)."""
    return log.count("manifest: ")


@pytest.mark.parametrize("lora", [True, False], ids=["lora", "full"])
def test_two_processes_train_what_one_process_does_with_twice_the_accumulation(sft_set, lora):
    root, model, recipe = sft_set
    sets = () if lora else ("train.lora=null",)
    one, two = one_process(root, recipe, *sets), root / f"two-{lora}"
    log = two_processes(recipe, two, "ddp.yaml", *sets)
    assert_equivalent(one, two, model)
    record = manifest(two)
    assert (
        record["world_size"],
        record["per_device_batch_size"],
        record["gradient_accumulation_steps"],
        record["effective_batch_size"],
    ) == (2, 1, 1, 2)
    assert record["distributed_type"] == "MULTI_CPU"
    # ddp.yaml says bf16; the recipe's fp32 holds
    assert record["mixed_precision"] == "no" and "overruled" in log
    assert reports(log) == 1


def test_a_launch_asking_for_fsdp_on_cpus_says_it_trains_data_parallel(sft_set):
    root, model, recipe = sft_set
    log = two_processes(recipe, root / "fsdp", "fsdp.yaml")
    assert "accelerate runs it only on GPUs" in log
    assert manifest(root / "fsdp")["distributed_type"] == "MULTI_CPU"
    assert_equivalent(one_process(root, recipe), root / "fsdp", model)


def sbatch_two_nodes(recipe: Path, out: Path, stand_ins: Path, *sets: str) -> str:
    """slurm/train.sbatch's multi-node branch as it is, with Slurm's two commands played by
    stand-ins in `stand_ins`: `srun` starts one task per node on this host with its SLURM_NODEID,
    `scontrol` names 127.0.0.1 as the first node. The launches, ranks and rendezvous are
    accelerate's own. Its stdout and stderr."""
    stand_ins.mkdir(exist_ok=True)
    (stand_ins / "scontrol").write_text("#!/usr/bin/env bash\necho 127.0.0.1\n")
    (stand_ins / "srun").write_text(
        "#!/usr/bin/env bash\n"
        "# srun --ntasks=N --ntasks-per-node=1 COMMAND...: N copies here, SLURM_NODEID 0..N-1\n"
        "n=1; while [[ $1 == --* ]]; do [[ $1 == --ntasks=* ]] && n=${1#--ntasks=}; shift; done\n"
        'pids=(); for ((i = 0; i < n; i++)); do SLURM_NODEID=$i "$@" & pids+=($!); done\n'
        'status=0; for pid in "${pids[@]}"; do wait $pid || status=1; done; exit $status\n'
    )
    for tool in ("scontrol", "srun"):
        (stand_ins / tool).chmod(0o755)
    env = _env(
        PATH=f"{stand_ins}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        HINDSIGHT_ROOT=str(ROOT),
        VENV="",
        RECIPE=str(recipe),
        SLURM_NNODES="2",
        GPUS_PER_NODE="1",
        SLURM_JOB_NODELIST="node[0-1]",
        MAIN_PORT=str(_free_port()),
        RECIPE_SETS=" ".join((f"train.output_dir={out}", "train.gradient_accumulation_steps=1", *sets)),
    )
    result = subprocess.run(
        ["bash", "slurm/train.sbatch"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout + result.stderr


def test_the_sbatch_two_node_launch_trains_what_one_process_does(sft_set, tmp_path):
    root, model, recipe = sft_set
    out = root / "nodes"
    log = sbatch_two_nodes(recipe, out, tmp_path / "bin")
    assert_equivalent(one_process(root, recipe), out, model)
    assert manifest(out)["world_size"] == 2 and reports(log) == 1


def test_an_example_count_the_processes_do_not_divide_is_said_and_recorded(sft_set):
    """3 examples on 2 processes: accelerate completes the last step with an example from the
    epoch's start, which one process would not train on twice; the run says so once and records it."""
    root, model, recipe = sft_set
    out = root / "three"
    log = two_processes(recipe, out, "ddp.yaml", "train.max_examples=3")
    assert log.count("repeats 1 example(s)") == 1
    assert manifest(out)["repeated_examples_per_epoch"] == 1


def first_turns(sft_jsonl: Path, out: Path) -> Path:
    """Each demonstration cut after its first reply, without the tool schemas: the prompt and one
    tool call, 340-343 tokens where the first turn with its schemas is 714-717 (the forward and
    backward passes are nearly all of the real model's time; what is checked, that two processes
    train what one does, does not depend on what the rows say)."""
    from hindsight.stages import SFTRow, read_sft_set

    out.write_text("".join(SFTRow(row.messages[:3]).to_line() for row in read_sft_set(sft_jsonl)))
    return out


@pytest.mark.real_model
def test_two_processes_train_the_real_qwen_as_one_does(world_sft, qwen_folder):
    """The same equivalence with the real Qwen2.5-0.5B and LoRA: two epochs of the first turns of two
    demonstrations, a step each. (An odd count would not be equivalent: see the test above.) The
    two-node launch through slurm/train.sbatch starts the same processes with other variables;
    the tiny model's test above checks it, so the real model's three trainings are two here."""
    root, recipe = world_sft
    data = first_turns(root / "distill" / "sft.jsonl", root / "first_turns.jsonl")
    sets = ("train.max_examples=2", "train.epochs=2", f"train.data={data}")
    one = one_process(root, recipe, *sets)
    out = root / "two"
    assert reports(two_processes(recipe, out, "ddp.yaml", *sets)) == 1
    assert manifest(out)["world_size"] == 2 and manifest(out)["repeated_examples_per_epoch"] == 0
    assert manifest(out)["data"]["path"] == str(data) and manifest(out)["data"]["trained_tokens"] > 0
    assert_equivalent(one, out, qwen_folder)
