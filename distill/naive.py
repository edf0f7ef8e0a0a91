"""Naive demonstrations (the demo's first-query rows): `hindsight naive`, run as a file; the code is hindsight.distill.naive."""

import sys

from hindsight.distill.naive import main

if __name__ == "__main__":
    sys.exit(main())
