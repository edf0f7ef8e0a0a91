"""GRPO of the student on the search environment: `hindsight rl`, run as a file; the code is hindsight.rl.grpo."""

import sys

from hindsight.rl.grpo import main

if __name__ == "__main__":
    sys.exit(main())
