"""benchmarks/train.py's precision arms: float32 against bf16 autocast on the same batches."""

import pytest

from benchmarks.train import BF16_LOSS_TOLERANCE
from benchmarks.train import main as train_benchmark

pytest.importorskip("trl")


@pytest.mark.slow
def test_bf16_autocast_arm_trains_the_same_batches_and_its_loss_is_checked(tmp_path):
    report = train_benchmark(
        ["--targets", "24", "--batch-size", "2", "--steps", "2", "--threads", "1", "--precision-arms"]
        + ["--json", str(tmp_path / "train.json")]
    )
    full, autocast = report["padded"], report["bf16 autocast"]
    assert full["steps"] == autocast["steps"] == 2
    # the same examples in the same order: the first step's loss differs only by bf16's rounding
    assert autocast["losses"][0] == pytest.approx(full["losses"][0], rel=BF16_LOSS_TOLERANCE)
    assert autocast["losses"][0] != full["losses"][0]  # and autocast did run: bf16 rounds somewhere
    bf16 = report["bf16"]
    assert bf16["agrees"] and bf16["relative_difference"] <= BF16_LOSS_TOLERANCE
    assert bf16["speedup"] == pytest.approx(autocast["tokens_per_s"] / full["tokens_per_s"])
    assert "bf16 autocast / float32" in report["markdown"]
