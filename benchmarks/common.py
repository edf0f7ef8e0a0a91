"""What every benchmark does last: print its Markdown table and keep the full report."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path


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
