"""One row per demo base: what its copying curriculum took and the capability gate's numbers.

    python scripts/gate_table.py outputs/demo-t1 outputs/demo-seed1-t1 ...

Reads <folder>/base/init/curriculum.json, <folder>/runs/gate-base/gate.json and
<folder>/base/base_stage (the gate's verdict, the stage's seconds and the further epochs it took),
which scripts/demo.sh writes. The phases are those of the attempt kept; restarts counts the
attempts given up before it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

PHASES = ("copying", "copying ids", "copying queries")


def row(folder: Path) -> str:
    curriculum = json.loads((folder / "base/init/curriculum.json").read_text())
    gate_path = folder / "runs/gate-base/gate.json"
    gate = json.loads(gate_path.read_text()) if gate_path.exists() else None
    stage = folder / "base/base_stage"
    _verdict, seconds, retrains = stage.read_text().split() if stage.exists() else ("-", "?", "?")
    phases = [f"{p['steps']} ({p['final_mean_loss']:.3f})" if (p := curriculum.get(name)) else "-" for name in PHASES]
    cells = [str(folder), *phases, str(len(curriculum.get("given_up", []))), retrains]
    if gate:
        cells += [
            f"{gate['copied_first_queries']:.0%}",
            f"{gate['surfaced_submissions']:.0%}",
            f"{gate['malformed']:.0%}",
            "passed" if gate["passed"] else "FAILED",
        ]
    else:
        cells += ["-", "-", "-", "no gate run"]
    cells.append(f"{seconds} s")
    return "| " + " | ".join(cells) + " |"


def main(folders: list[str]) -> int:
    print(
        "| base | copying: steps (final loss) | copying ids: steps (final loss) | copying queries: steps (final loss) "
        "| restarts | further epochs | "
        "first queries copied | submitted ids surfaced | malformed | gate | base stage |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for folder in folders:
        print(row(Path(folder)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
