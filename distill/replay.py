"""Replay every candidate through the ordinary interface and flag leaks: `hindsight replay`, run as a file; the code is hindsight.distill.replay."""

import sys

from hindsight.distill.replay import main

if __name__ == "__main__":
    sys.exit(main())
