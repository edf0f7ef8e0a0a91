"""benchmarks/allocator.py: each threshold trains in a process of its own, and the arms' losses are compared."""

import json
import sys

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform != "linux", reason="glibc's mallopt is Linux's")]


def test_every_threshold_trains_the_same_losses_and_is_timed_against_the_first(tmp_path, monkeypatch):
    from benchmarks.allocator import main

    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "65536")  # not passed on: it would override every arm
    out = tmp_path / "allocator.json"
    assert (
        main(
            [
                "--targets",
                "4",
                "--epochs",
                "1",
                "--repeats",
                "1",
                "--thresholds",
                "2097152,268435456",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    report = json.loads(out.read_text())
    arms = {arm["malloc_mmap_threshold"]: arm for arm in report["arms"]}
    assert list(arms) == [2097152, 268435456]
    assert all(arm["same_losses"] and arm["steps"] >= 1 for arm in arms.values())
    assert arms[2097152]["time_vs_first"] == 1.0
    assert all(arm["peak_rss_mb"] > 100 and arm["wall_s"] > 0 for arm in arms.values())
