"""Logging for library code: `get_logger(__name__)` everywhere, `cli_logging()` once in a command.

Library code never prints. A command-line entry point calls `cli_logging()`, which sends
INFO and above to stderr as plain lines; in a distributed run (RANK set by torchrun, accelerate or
slurm/train.sbatch) only rank 0's records get through, so a message is said once, not once per
process. Without `cli_logging()` (a library user, a test) Python's own defaults apply.
"""

from __future__ import annotations

import logging
import os
import sys

ROOT = "hindsight"


def get_logger(name: str) -> logging.Logger:
    """The logger for a module of this package (pass `__name__`)."""
    return logging.getLogger(name if name.startswith(ROOT) else f"{ROOT}.{name}")


class MainProcessOnly(logging.Filter):
    """Drops every record on a process whose RANK is not 0."""

    def filter(self, record: logging.LogRecord) -> bool:
        return os.environ.get("RANK", "0") == "0"


def cli_logging(level: int = logging.INFO) -> None:
    """Plain INFO lines on stderr for this package's loggers, from rank 0 only; idempotent."""
    logger = logging.getLogger(ROOT)
    logger.setLevel(level)
    if not any(getattr(h, "_hindsight_cli", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        handler.addFilter(MainProcessOnly())
        handler._hindsight_cli = True
        logger.addHandler(handler)
        logger.propagate = False
