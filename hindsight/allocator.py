"""glibc's malloc under a CPU training: big tensors of changing sizes (one row a step, each its own
length) are freed to the heap and reused in pieces, and a process's memory grows step after step.

glibc serves an allocation above its mmap threshold with a mapping of its own, returned to the
system on free; but the threshold rises each time such a block is freed, so after a few steps the
big tensors land on the heap too. Pinning the threshold keeps them mapped (what it saved on a real
training: docs/guide/training.md, "Memory on a CPU").

Every mapping the kernel hands out is zeroed page by page, so a threshold far below a step's
tensors costs time: a small model's whole step fits under a high one, its blocks then stay on the
heap and are reused. The trim threshold (how much free memory the heap's top may hold before it is
given back) is pinned with it at twice the mmap threshold, glibc's own pairing when it moves its
threshold; left at its default (128 KiB) the heap would shrink and grow again every step.
"""

from __future__ import annotations

import ctypes
import os
import sys

from hindsight.log import get_logger

logger = get_logger(__name__)

M_TRIM_THRESHOLD = -1  # mallopt's parameter numbers, from glibc's malloc.h
M_MMAP_THRESHOLD = -3
INT_MAX = 2**31 - 1  # mallopt takes an int


def pin_mmap_threshold(threshold: int) -> bool:
    """Set glibc's mmap threshold to `threshold` bytes for this process (0: leave glibc's own), and
    its trim threshold to twice that; whether the mmap threshold was set. A MALLOC_MMAP_THRESHOLD_
    in the environment wins (and a MALLOC_TRIM_THRESHOLD_ over the trim threshold); elsewhere than
    glibc on Linux nothing is done."""
    if threshold <= 0 or sys.platform != "linux" or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    if threshold > INT_MAX:
        raise ValueError(f"train.malloc_mmap_threshold: at most {INT_MAX:,} bytes (glibc's limit), got {threshold:,}")
    try:
        libc = ctypes.CDLL("libc.so.6")
        pinned = bool(libc.mallopt(M_MMAP_THRESHOLD, threshold))
    except (OSError, AttributeError):  # not glibc (musl has no mallopt of this meaning)
        return False
    if not pinned:
        return False
    if "MALLOC_TRIM_THRESHOLD_" not in os.environ:
        libc.mallopt(M_TRIM_THRESHOLD, min(2 * threshold, INT_MAX))
    logger.info(f"glibc's mmap threshold pinned at {threshold:,} bytes (train.malloc_mmap_threshold)")
    return True
