"""Run one policy over the evaluation split: `hindsight run`, run as a file; the code is hindsight.eval.run."""

import sys

from hindsight.eval.run import main

if __name__ == "__main__":
    sys.exit(main())
