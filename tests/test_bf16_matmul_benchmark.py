"""benchmarks/bf16_matmul.py: one decoder layer's products timed in float32 and bf16, each checked against float64."""

import json

import pytest

pytest.importorskip("torch")


def test_every_product_is_timed_in_both_precisions_and_checked_against_float64(tmp_path):
    from benchmarks.bf16_matmul import QWEN05_LAYER, main

    out = tmp_path / "bf16.json"
    assert main(["--tokens", "64", "--rounds", "1", "--repeats", "1", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert [shape["product"].split()[0] for shape in report["shapes"]] == [name for name, _, _ in QWEN05_LAYER]
    for shape in report["shapes"]:
        assert shape["fp32_ms"] > 0 and shape["bf16_ms"] > 0
        # bf16 keeps 8 mantissa bits: its products stray from float64 far more than float32's
        assert shape["fp32_error"] < 1e-5 < shape["bf16_error"] < 1e-2
    assert report["cpu"]["auto_picks"] in ("bf16", "fp32") and "bf16 speed-up" in report["markdown"]


def test_a_tolerance_bf16_cannot_meet_fails_the_run(tmp_path):
    from benchmarks.bf16_matmul import main

    assert main(["--tokens", "32", "--rounds", "1", "--repeats", "1", "--bf16-tolerance", "1e-6"]) == 1
