"""LoRA SFT of the student on the selected demonstrations: `hindsight sft`, run as a file; the code is hindsight.train.sft."""

import sys

from hindsight.train.sft import main

if __name__ == "__main__":
    sys.exit(main())
