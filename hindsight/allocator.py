"""glibc's malloc under a CPU training: big tensors of changing sizes (one row a step, each its own
length) are freed to the heap and reused in pieces, and a process's memory grows step after step.

glibc serves an allocation above its mmap threshold with a mapping of its own, returned to the
system on free; but the threshold rises each time such a block is freed, so after a few steps the
big tensors land on the heap too. Pinning the threshold keeps them mapped (what it saved on a real
training: docs/guide/training.md, "Memory on a CPU").
"""

from __future__ import annotations

import ctypes
import os
import sys

from hindsight.log import get_logger

logger = get_logger(__name__)

M_MMAP_THRESHOLD = -3  # mallopt's parameter number, from glibc's malloc.h


def pin_mmap_threshold(threshold: int) -> bool:
    """Set glibc's mmap threshold to `threshold` bytes for this process (0: leave glibc's own);
    whether it was set. A MALLOC_MMAP_THRESHOLD_ in the environment wins; elsewhere than glibc on
    Linux nothing is done."""
    if threshold <= 0 or sys.platform != "linux" or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        pinned = bool(libc.mallopt(M_MMAP_THRESHOLD, threshold))
    except (OSError, AttributeError):  # not glibc (musl has no mallopt of this meaning)
        return False
    if pinned:
        logger.info(f"glibc's mmap threshold pinned at {threshold:,} bytes (train.malloc_mmap_threshold)")
    return pinned
