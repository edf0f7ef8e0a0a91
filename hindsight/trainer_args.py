"""TrainingArguments flags every stage that trains (SFT, RL) needs on this machine and launcher."""

from __future__ import annotations

from pathlib import Path

from hindsight.log import get_logger

logger = get_logger(__name__)


def checkpointing_flag(config_class, enabled: bool) -> dict:
    """transformers 5 renamed gradient_checkpointing to activation_checkpointing and warns on the
    old name; older versions know only the old one."""
    import dataclasses

    names = {f.name for f in dataclasses.fields(config_class)}
    return {"activation_checkpointing" if "activation_checkpointing" in names else "gradient_checkpointing": enabled}


def quiet_upstream_deprecations() -> None:
    """PEFT 0.21 (wrapping the model) and TRL 1.16 (its GRPO and model utilities) still read
    `model.is_gradient_checkpointing`, which transformers 5 deprecates with a FutureWarning in
    every run; ours use the current names (checkpointing_flag), and a user can do nothing about
    theirs. That one warning is silenced; every other stays."""
    import warnings

    warnings.filterwarnings("ignore", message=r"`is_gradient_checkpointing` is deprecated", category=FutureWarning)


CPU_BF16_FLAGS = ("amx_bf16", "avx512_bf16")  # /proc/cpuinfo's names for bf16 arithmetic in hardware


def cpu_bf16_features(cpuinfo: str | None = None) -> dict[str, bool]:
    """Which of AMX and AVX512-BF16 this CPU has, by their /proc/cpuinfo names. `cpuinfo`:
    /proc/cpuinfo's text to read instead of asking torch (tests)."""
    if cpuinfo is None:
        import torch

        probes = {"amx_bf16": "_is_amx_tile_supported", "avx512_bf16": "_is_avx512_bf16_supported"}
        if all(hasattr(torch.cpu, probe) for probe in probes.values()):
            return {name: bool(getattr(torch.cpu, probe)()) for name, probe in probes.items()}
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            cpuinfo = ""
    flags = set(cpuinfo.split())
    return {name: name in flags for name in CPU_BF16_FLAGS}


def cpu_bf16_pays(cpuinfo: str | None = None) -> bool:
    """Whether bf16 is the faster choice on this CPU without measuring it: with AMX, yes (a LoRA
    step of the real Qwen 2.7x float32); with AVX512-BF16 alone it depends on the chip (a decoder
    layer's products ran 0.57x float32 on a virtual Xeon whose AMX was hidden,
    benchmarks/results/bf16_matmul-avx512bf16-vm.json), so float32; without either, bf16 has no
    hardware path."""
    features = cpu_bf16_features(cpuinfo)
    if features["avx512_bf16"] and not features["amx_bf16"]:
        logger.info(
            "this CPU has AVX512-BF16 but no AMX: `precision: auto` trains in float32 (bf16 is faster on "
            "some such CPUs and slower on others; `python -m benchmarks.bf16_matmul` measures this one, "
            "`precision: bf16` chooses it)"
        )
    return features["amx_bf16"]


def native_bf16() -> bool:
    """bf16 where the hardware that trains makes it pay: a GPU that supports it, or, with no GPU,
    a CPU with AMX."""
    import torch

    if torch.cuda.is_available():
        return torch.cuda.is_bf16_supported()
    return cpu_bf16_pays()


def precision_flags(precision: str) -> dict:
    """The recipe's `train.precision` as TrainingArguments flags. The launcher's own setting
    (`mixed_precision` of an accelerate config, ACCELERATE_MIXED_PRECISION) is overruled: with
    precision fp32 under recipes/accelerate/ddp.yaml (bf16), transformers took the launcher's
    bf16 and trained under autocast."""
    import os

    if precision == "auto":
        precision = "bf16" if native_bf16() else "fp32"
    mixed = {"fp32": "no"}.get(precision, precision)
    launcher = os.environ.get("ACCELERATE_MIXED_PRECISION")
    if launcher not in (None, mixed):
        logger.info(f"precision {precision}: the launcher's mixed precision {launcher!r} is overruled")
    os.environ["ACCELERATE_MIXED_PRECISION"] = mixed
    return {"bf16": precision == "bf16", "fp16": precision == "fp16"}


def without_accelerator() -> dict:
    """On a machine with no GPU, transformers must be told to use the CPU, or a multi-process launch
    (torchrun, `accelerate launch --multi_gpu`) gives every process a world of its own: each
    trains on every example and writes the outputs. Told, accelerate joins them with gloo."""
    import torch

    if hasattr(torch, "accelerator"):  # torch 2.6 and later: CUDA, XPU, MPS, ...
        return {"use_cpu": torch.accelerator.current_accelerator() is None}
    return {"use_cpu": not torch.cuda.is_available()}


def check_sharding(distributed_type: str) -> None:
    """accelerate shards (FSDP, DeepSpeed) only on GPUs and their kin: on CPU processes a launch
    asking for either trains plain data-parallel. Said, not silently done."""
    import os

    asked = [
        name
        for name, flag in (("FSDP", "ACCELERATE_USE_FSDP"), ("DeepSpeed", "ACCELERATE_USE_DEEPSPEED"))
        if os.environ.get(flag, "false").lower() == "true"
    ]
    if asked and distributed_type not in ("FSDP", "DEEPSPEED"):
        logger.info(
            f"the launcher asked for {asked[0]}, but accelerate runs it only on GPUs: this run is "
            f"{distributed_type} (every process holds the whole model)"
        )


def repeated_examples(examples: int, per_device_batch: int, world_size: int, even_batches: bool = True) -> int:
    """How many examples each epoch of a data-parallel run shows twice. accelerate gives every
    process the same number of full batches (`even_batches`), completing the epoch's last round
    with examples from its start: 3 examples on 2 processes make a last step of two examples,
    one of them seen already, where one process accumulating over two trains that step on one.
    0 when processes × per-device batch divides the example count, and for one process, whose
    loader accelerate does not shard (its last batch is just smaller)."""
    return -examples % (per_device_batch * world_size) if even_batches and world_size > 1 else 0


def batch_sizes(args) -> dict:
    """What one optimiser step sees: the effective batch is per-device batch × accumulation × processes."""
    return {
        "world_size": args.world_size,
        "per_device_batch_size": args.per_device_train_batch_size,
        "gradient_accumulation_steps": args.gradient_accumulation_steps,
        "effective_batch_size": args.per_device_train_batch_size * args.gradient_accumulation_steps * args.world_size,
    }
