"""Compare runs under one protocol: `hindsight compare`, run as a file; the code is hindsight.eval.compare."""

import sys

from hindsight.eval.compare import main

if __name__ == "__main__":
    sys.exit(main())
