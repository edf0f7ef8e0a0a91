"""Print one run: `hindsight report`, run as a file; the code is hindsight.eval.report."""

import sys

from hindsight.eval.report import main

if __name__ == "__main__":
    sys.exit(main())
