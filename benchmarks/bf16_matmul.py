"""Whether bf16 pays on this CPU: the matrix products of one Qwen2.5-0.5B decoder layer, float32
against bf16 (what bf16 autocast runs a linear layer in), timed in turn in one process, with each
product's error against a float64 reference.

    python -m benchmarks.bf16_matmul --threads 1 --json benchmarks/results/bf16_matmul-NAME.json

A training step is mostly these products (attention over 1,800 tokens and the 151k-word head
aside), so the layer's ratio says whether `train.precision: bf16` can be faster than `fp32` here.
The report names the CPU's bf16 features (AMX, AVX512-BF16) and what `precision: auto` picks on
it. The error check fails the run when a product strays further from float64 than its precision
allows (bf16 keeps 8 bits of mantissa; --bf16-tolerance).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from benchmarks.common import command_line, finish, machine
from hindsight.trainer_args import CPU_BF16_FLAGS

# (name, input features, output features) of Qwen2.5-0.5B's linear layers; k and v have 2 KV heads
QWEN05_LAYER = (
    ("q_proj", 896, 896),
    ("k_proj", 896, 128),
    ("v_proj", 896, 128),
    ("o_proj", 896, 896),
    ("gate_proj", 896, 4864),
    ("up_proj", 896, 4864),
    ("down_proj", 4864, 896),
)
FP32_TOLERANCE = 1e-5


def cpu_features() -> dict:
    import torch

    from hindsight.trainer_args import cpu_bf16_features, cpu_bf16_pays

    return {
        **cpu_bf16_features(),
        "torch": torch.__version__,
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        # the CPU's choice, not native_bf16's: on a machine with a GPU, that one speaks of the GPU
        "auto_picks": "bf16" if cpu_bf16_pays() else "fp32",
    }


def relative_error(result, reference) -> float:
    return float((result.double() - reference).norm() / reference.norm())


def time_product(a, b, repeats: int) -> float:
    a @ b  # the first call picks and builds the kernel
    start = time.perf_counter()
    for _ in range(repeats):
        a @ b
    return (time.perf_counter() - start) / repeats


def measure_shape(tokens: int, features_in: int, features_out: int, rounds: int, repeats: int) -> dict:
    import torch

    generator = torch.Generator().manual_seed(0)
    a = torch.randn(tokens, features_in, generator=generator)
    b = torch.randn(features_in, features_out, generator=generator) / features_in**0.5
    reference = a.double() @ b.double()
    times = {"fp32": [], "bf16": []}
    for _ in range(rounds):  # the arms in turn, so a slow spell of the machine falls on both
        times["fp32"].append(time_product(a, b, repeats))
        times["bf16"].append(time_product(a.bfloat16(), b.bfloat16(), repeats))
    fp32_s, bf16_s = statistics.median(times["fp32"]), statistics.median(times["bf16"])
    return {
        "fp32_ms": round(fp32_s * 1e3, 3),
        "bf16_ms": round(bf16_s * 1e3, 3),
        "bf16_speedup": round(fp32_s / bf16_s, 3),
        "fp32_error": relative_error(a @ b, reference),
        "bf16_error": relative_error(a.bfloat16() @ b.bfloat16(), reference),
    }


def measure(tokens: int, threads: int, rounds: int, repeats: int, bf16_tolerance: float) -> dict:
    import torch

    torch.set_num_threads(threads)
    shapes = []
    for name, features_in, features_out in QWEN05_LAYER:
        shape = measure_shape(tokens, features_in, features_out, rounds, repeats)
        shape["within_tolerance"] = shape["fp32_error"] <= FP32_TOLERANCE and shape["bf16_error"] <= bf16_tolerance
        shapes.append({"product": f"{name} {tokens}×{features_in} @ {features_in}×{features_out}", **shape})
    layer_fp32 = sum(shape["fp32_ms"] for shape in shapes)
    layer_bf16 = sum(shape["bf16_ms"] for shape in shapes)
    return {
        "machine": machine(),
        "threads": threads,
        "cpu": cpu_features(),
        "tokens": tokens,
        "bf16_tolerance": bf16_tolerance,
        "shapes": shapes,
        "layer_fp32_ms": round(layer_fp32, 3),
        "layer_bf16_ms": round(layer_bf16, 3),
        "layer_bf16_speedup": round(layer_fp32 / layer_bf16, 3),
    }


def markdown(report: dict) -> str:
    cpu = report["cpu"]
    lines = [
        "| product | float32 ms | bf16 ms | bf16 speed-up | bf16 error | within tolerance |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for shape in report["shapes"]:
        lines.append(
            f"| {shape['product']} | {shape['fp32_ms']:.2f} | {shape['bf16_ms']:.2f} | "
            f"{shape['bf16_speedup']:.2f}× | {shape['bf16_error']:.1e} | {'yes' if shape['within_tolerance'] else 'NO'} |"
        )
    features = ", ".join(name for name in CPU_BF16_FLAGS if cpu[name]) or "neither AMX nor AVX512-BF16"
    lines.append("")
    lines.append(
        f"One decoder layer's products: {report['layer_fp32_ms']:.1f} ms float32, {report['layer_bf16_ms']:.1f} ms "
        f"bf16, **bf16 {report['layer_bf16_speedup']:.2f}× float32**; {report['threads']} thread(s), "
        f"{report['machine']}; CPU: {features} (torch {cpu['torch']}, capability {cpu['torch_cpu_capability']}); "
        f"`precision: auto` picks {cpu['auto_picks']} here. Errors against float64, relative Frobenius norm "
        f"(tolerance {report['bf16_tolerance']:g} bf16, {FP32_TOLERANCE:g} float32)."
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=1024, help="rows of each product (tokens of a training step)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--rounds", type=int, default=5, help="timings of each arm, in turn (the median is reported)")
    parser.add_argument("--repeats", type=int, default=5, help="products a timing averages")
    parser.add_argument("--bf16-tolerance", type=float, default=1e-2, help="largest relative error of a bf16 product")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    report = measure(args.tokens, args.threads, args.rounds, args.repeats, args.bf16_tolerance)
    report = {"command": command_line("bf16_matmul", argv), **report}
    report["markdown"] = markdown(report)
    finish(report, args.json)
    return 0 if all(shape["within_tolerance"] for shape in report["shapes"]) else 1


if __name__ == "__main__":
    sys.exit(main())
