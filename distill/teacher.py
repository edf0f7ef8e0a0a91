"""Candidate trajectories from the privileged teacher: `hindsight teacher`, run as a file; the code is hindsight.distill.teacher."""

import sys

from hindsight.distill.teacher import main

if __name__ == "__main__":
    sys.exit(main())
