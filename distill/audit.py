"""Leak audit of an SFT set: `hindsight audit`, run as a file; the code is hindsight.distill.audit."""

import sys

from hindsight.distill.audit import main

if __name__ == "__main__":
    sys.exit(main())
