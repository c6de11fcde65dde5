"""Verify every claim of family `fdms` and print the verdict table.

Usage: python verification/verify_fdms.py [--quick] [--seed S] [--json PATH] [--report DIR]
(without --quick the seed's full sizes are used).
"""

import sys

from fedtheory.cli import main

if __name__ == "__main__":
    sys.exit(main(["verify", "--family", "fdms", *sys.argv[1:]]))
