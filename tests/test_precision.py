"""`precision: auto`: bf16 autocast where the hardware makes it pay (a GPU with bf16, a CPU with AMX), float32 elsewhere."""

import json
from pathlib import Path

import pytest

from hindsight.trainer_args import cpu_bf16_features, cpu_bf16_pays, native_bf16
from tests.helpers import distil_and_train

torch = pytest.importorskip("torch")


@pytest.mark.parametrize(
    "flags, pays",
    [
        ("fpu sse2 avx2 fma avx512f avx512bw avx512_bf16 amx_bf16 amx_tile amx_int8", True),
        # AVX512-BF16 alone: a layer's bf16 products ran 0.57x float32 on one such (virtual) CPU
        ("fpu sse2 avx2 avx512f avx512_bf16 avx512_vnni", False),
        ("fpu sse2 avx2 fma avx512f avx512bw avx512_vnni", False),
        ("fp asimd bf16 sve", False),  # an Arm CPU: its bf16 is not an x86 flag the probe knows
    ],
)
def test_auto_trains_a_cpu_in_bf16_only_where_it_has_amx(flags, pays):
    assert cpu_bf16_pays(f"processor\t: 0\nflags\t\t: {flags}\n") is pays


def test_a_cpu_with_avx512_bf16_alone_is_told_why_it_trains_in_float32(caplog, monkeypatch):
    import logging

    monkeypatch.setattr(logging.getLogger("hindsight"), "propagate", True)  # a command's cli_logging turns it off
    with caplog.at_level("INFO", logger="hindsight"):
        cpu_bf16_pays("flags\t\t: avx512f avx512_bf16\n")
    assert "AVX512-BF16 but no AMX" in caplog.text and "benchmarks.bf16_matmul" in caplog.text


@pytest.mark.skipif(not Path("/proc/cpuinfo").exists(), reason="needs /proc/cpuinfo to read the flags")
def test_torchs_probes_agree_with_the_cpus_own_flags():
    # two independent readings of the same facts: torch's cpuinfo probes and the kernel's flag list
    assert cpu_bf16_features() == cpu_bf16_features(Path("/proc/cpuinfo").read_text())


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
