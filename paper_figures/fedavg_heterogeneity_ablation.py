"""FedAvg's test accuracy per round for Dirichlet label splits (alpha 0.1, 0.5, 2.5) and a
homogeneous split, on digits (seed 003, line 153: the lecture's Table 2, Mendieta et al. 2022).

The claim ``fedavg.heterogeneity_ablation`` is verified (all its checks, on the preset's data)
and its figure drawn with its verdict in the heading; the per-check outcomes are printed.

Usage: python paper_figures/fedavg_heterogeneity_ablation.py [--quick] [--out DIR] [--seed S]
"""

from __future__ import annotations

import sys

from fedtheory.plotting.figures import claim_figure_script


def main(argv: list[str] | None = None) -> int:
    return claim_figure_script("fedavg.heterogeneity_ablation", __doc__ or "", argv)


if __name__ == "__main__":
    sys.exit(main())
