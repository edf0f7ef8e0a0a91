"""train.malloc_mmap_threshold: with glibc's threshold pinned, a big allocation made after a bigger
one was freed still gets a mapping of its own (returned to the system on free), where glibc's
default would have raised its threshold and put it on the heap."""

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="glibc's mallopt is Linux's")

# What both probes share: the threshold pinned as the recipe would, and glibc's malloc counters.
SETUP = """
import ctypes, sys
from hindsight.allocator import pin_mmap_threshold

pinned = pin_mmap_threshold(int(sys.argv[1]))
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype, libc.free.argtypes = ctypes.c_void_p, [ctypes.c_void_p]
fields = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()
libc.mallinfo2.restype = type("MallInfo2", (ctypes.Structure,), {"_fields_": [(f, ctypes.c_size_t) for f in fields]})
"""

PROBE = SETUP + textwrap.dedent(
    """
    libc.free(libc.malloc(8 << 20))  # freeing a mapped 8 MiB block raises glibc's own threshold to 8 MiB
    mapped_before = libc.mallinfo2().hblkhd
    block = libc.malloc(4 << 20)
    print(pinned, libc.mallinfo2().hblkhd - mapped_before >= 4 << 20)
    """
)


def run_probe(code: str, threshold: int, **environment: str) -> list[str]:
    """Run a probe in a fresh process (glibc reads MALLOC_* at start: none of this one's pass on)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("MALLOC_")} | environment
    done = subprocess.run([sys.executable, "-c", code, str(threshold)], env=env, capture_output=True, text=True)
    if "mallinfo2" in done.stderr:
        pytest.skip("this C library has no mallinfo2 (glibc 2.33 or later)")
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def probe(threshold: int) -> list[str]:
    return run_probe(PROBE, threshold)


def test_a_pinned_threshold_keeps_big_blocks_mapped_after_a_bigger_one_was_freed():
    assert probe(2 * 1024 * 1024) == ["True", "True"]


def test_glibcs_own_threshold_puts_them_on_the_heap_instead():
    assert probe(0) == ["False", "False"]


def test_the_environment_variable_wins_over_the_recipe(monkeypatch):
    from hindsight.allocator import pin_mmap_threshold

    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "65536")
    assert pin_mmap_threshold(2 * 1024 * 1024) is False


TRIM_PROBE = SETUP + textwrap.dedent(
    """
    heap_before = libc.mallinfo2().arena
    libc.free(libc.malloc(3 << 20))  # below the threshold: from the heap's top, then freed there
    print(pinned, libc.mallinfo2().arena - heap_before >= 3 << 20)
    """
)


def heap_after_a_free(threshold: int, **environment: str) -> list[str]:
    return run_probe(TRIM_PROBE, threshold, **environment)


def test_the_heap_keeps_a_freed_block_below_twice_the_pinned_threshold_for_the_next_step():
    assert heap_after_a_free(4 << 20) == ["True", "True"]


def test_a_trim_threshold_in_the_environment_wins_and_the_heap_gives_the_block_back():
    assert heap_after_a_free(4 << 20, MALLOC_TRIM_THRESHOLD_="131072") == ["True", "False"]


def test_a_threshold_glibc_cannot_take_is_refused_naming_the_field(tmp_path):
    from hindsight.config import ConfigError
    from hindsight.recipe import load_recipe
    from hindsight.train.config import TrainConfig

    recipe = tmp_path / "recipe.yaml"
    recipe.write_text("train:\n  malloc_mmap_threshold: 4294967296\n")
    with pytest.raises(ConfigError, match=r"recipe\.yaml: train\.malloc_mmap_threshold: between 0 and 2,147,483,647"):
        TrainConfig.from_recipe(load_recipe(recipe))
