"""`precision: auto`: bf16 autocast where the hardware computes bf16 natively, float32 elsewhere."""

import json
from pathlib import Path

import pytest

from hindsight.trainer_args import cpu_bf16_supported, native_bf16
from tests.helpers import distil_and_train

torch = pytest.importorskip("torch")


@pytest.mark.parametrize(
    "flags, native",
    [
        ("fpu sse2 avx2 fma avx512f avx512bw amx_bf16 amx_tile amx_int8", True),
        ("fpu sse2 avx2 avx512f avx512_bf16 avx512_vnni", True),
        ("fpu sse2 avx2 fma avx512f avx512bw avx512_vnni", False),
        ("fp asimd bf16 sve", False),  # an Arm CPU: its bf16 is not an x86 flag the probe knows
    ],
)
def test_a_cpu_is_native_bf16_only_with_amx_or_avx512_bf16(flags, native):
    assert cpu_bf16_supported(f"processor\t: 0\nflags\t\t: {flags}\n") is native


@pytest.mark.skipif(not Path("/proc/cpuinfo").exists(), reason="needs /proc/cpuinfo to read the flags")
def test_torchs_probe_agrees_with_the_cpus_own_flags():
    # two independent readings of the same fact: torch's cpuinfo probes and the kernel's flag list
    assert cpu_bf16_supported() is cpu_bf16_supported(Path("/proc/cpuinfo").read_text())


@pytest.mark.slow
@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU path; test_gpu.py checks a GPU's")
def test_precision_auto_trains_under_bf16_autocast_exactly_where_the_cpu_has_it(tiny_model, tmp_path):
    manifest = distil_and_train(tmp_path, tiny_model, precision="auto", epochs=1)
    assert manifest["mixed_precision"] == ("bf16" if native_bf16() else "no")
    assert manifest["steps"] > 0 and all(loss == loss for loss in manifest["losses"])  # no NaN
    assert (
        json.loads((tmp_path / "sft" / "train_manifest.json").read_text())["mixed_precision"]
        == manifest["mixed_precision"]
    )
