"""Check a student can act before it is compared: `hindsight gate`, run as a file; the code is hindsight.eval.gate."""

import sys

from hindsight.eval.gate import main

if __name__ == "__main__":
    sys.exit(main())
