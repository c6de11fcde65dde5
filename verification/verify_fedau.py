"""Verify every claim of family `fedau` and print the verdict table.

Usage: python verification/verify_fedau.py [--quick] [--seed S] [--json PATH] [--report DIR]
(without --quick the seed's full sizes are used).
"""

import sys

from fedtheory.cli import main

if __name__ == "__main__":
    sys.exit(main(["verify", "--family", "fedau", *sys.argv[1:]]))
