"""``python -m fedtheory``: the same command line as ``fedtheory``."""

import sys

from fedtheory.cli import main

if __name__ == "__main__":
    sys.exit(main())
