"""How `make test` spreads the suite over its pytest-xdist workers (tests/conftest.py)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PROBES = """
import pytest

@pytest.mark.real_model
@pytest.mark.parametrize("i", range(6))
def test_real(i):
    pass

@pytest.mark.parametrize("i", range(6))
def test_plain(i):
    pass
"""


def test_the_real_qwen_tests_share_one_xdist_worker(tmp_path):
    """The real Qwen's session fixtures are built once only if its tests share a worker; under a
    pytest that xdist cannot group for (pytest-dev/pytest-xdist#1386) they are spread and this fails."""
    pytest.importorskip("xdist")
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    real_model: the real Qwen\n")
    (tmp_path / "conftest.py").write_text("from tests.conftest import pytest_collection_modifyitems  # noqa: F401\n")
    (tmp_path / "test_probe.py").write_text(PROBES)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-v", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    ran = re.findall(r"\[(gw\d)\].*PASSED \S+::test_(real|plain)\[", result.stdout)
    assert result.returncode == 0 and len(ran) == 12, result.stdout[-2000:]
    real_workers = {worker for worker, kind in ran if kind == "real"}
    assert len(real_workers) == 1, f"the real-Qwen tests ran on {sorted(real_workers)}"
