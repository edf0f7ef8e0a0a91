"""The demonstrations, the best flag-free replay per train target: `hindsight select`, run as a
file; the code is hindsight.distill.select. (Not select.py: a file of that name in this folder
would stand in for Python's own `select` module in every script here.)"""

import sys

from hindsight.distill.select import main

if __name__ == "__main__":
    sys.exit(main())
