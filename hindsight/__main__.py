"""python -m hindsight COMMAND: the same as the `hindsight` command."""

import sys

from hindsight.cli import main

sys.exit(main())
