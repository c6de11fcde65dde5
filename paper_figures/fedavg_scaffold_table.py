"""Mean test accuracy per round of SGD, SCAFFOLD and FedAvg (1 and 5 epochs) at 0 %, 10 % and 100 %
similarity, on digits (seed 003, lines 313-322: the lecture's SCAFFOLD table, Karimireddy et al.
2020).

The claim ``fedavg.scaffold_table`` is verified (all its checks, on the preset's data) and its
figure drawn with its verdict in the heading; the per-check outcomes are printed.

Usage: python paper_figures/fedavg_scaffold_table.py [--quick] [--out DIR] [--seed S]
"""

from __future__ import annotations

import sys

from fedtheory.plotting.figures import claim_figure_script


def main(argv: list[str] | None = None) -> int:
    return claim_figure_script("fedavg.scaffold_table", __doc__ or "", argv)


if __name__ == "__main__":
    sys.exit(main())
