"""What every benchmark shares: the line on where it ran, its Markdown table printed and the full report kept."""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from collections.abc import Callable
from pathlib import Path


def machine() -> str:
    """The report's line on where it ran: architecture, the cores this process may use, Python."""
    return f"{platform.machine()}, {len(os.sched_getaffinity(0))} cores, Python {platform.python_version()}"


def command_line(module: str, argv: list[str] | None) -> str:
    """The command that made a report: `python -m benchmarks.MODULE` and its arguments (this
    process's own when `argv` is None)."""
    return f"python -m benchmarks.{module} {' '.join(sys.argv[1:] if argv is None else argv)}".strip()


def finish(report: dict, json_path: Path | None) -> dict:
    print(report["markdown"])
    if json_path:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(report, indent=2) + "\n")
    return report


def run_folders_main(measure: Callable[[list[Path]], dict], description: str, argv: list[str] | None) -> int:
    """The command line of a benchmark that reads run folders: RUN... [--json OUT]."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", type=Path, help="run folders (runs/<name>)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    finish(measure(args.runs), args.json)
    return 0
