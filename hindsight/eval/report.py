"""Print one run: its counts, funnel and end-to-end metrics (eval/compare.py compares several).

python eval/report.py base [--runs-dir runs] [--json OUT] [--plots DIR] [--html DIR]
"""

from __future__ import annotations

import sys

from hindsight.eval.compare import execute, make_parser


def main(argv: list[str] | None = None) -> int:
    return execute(make_parser(__doc__, several_runs=False).parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
