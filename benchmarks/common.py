"""What every benchmark does last: print its Markdown table and keep the full report."""

from __future__ import annotations

import json
from pathlib import Path


def finish(report: dict, json_path: Path | None) -> dict:
    print(report["markdown"])
    if json_path:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(report, indent=2) + "\n")
    return report
