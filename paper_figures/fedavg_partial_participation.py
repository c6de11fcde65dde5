"""Partial participation amplifies heterogeneity: variance against m (seed 003, Theorem 3).

Left: the variance of one FedAvg server update (K noisy local steps, m of n clients uniformly
without replacement): exact, its leading order gamma^2 K/m (sigma^2 + K zeta^2 (n-m)/(n-1)), the
lecture's gamma^2 K/m (sigma^2 + K zeta^2 (1 - m/n)), and Monte Carlo points. Right: the part of
the error after R rounds due to heterogeneity (paired runs at zeta^2 = 1 and 0), exact and Monte
Carlo, with (1 - m/n)/m scaled to it. The data are those of ``fedavg.partial_participation``.

Usage: python paper_figures/fedavg_partial_participation.py [--quick] [--out DIR] [--seed S]
"""

from __future__ import annotations

import sys
from pathlib import Path

from fedtheory.claims.fedavg._data import partial_participation_data
from fedtheory.plotting import figure_script_args
from fedtheory.plotting.fedavg import plot_partial_participation


def main(argv: list[str] | None = None) -> int:
    args = figure_script_args(__doc__, argv)
    update, floor = partial_participation_data("quick" if args.quick else "full", args.seed)
    paths = plot_partial_participation(update, floor,
                                       Path(args.out) / "fedavg_partial_participation")
    for j, m in enumerate(update["participants"]):
        print(f"m = {m:2d}: Var(x_1) Monte Carlo {update['samples'][j].mean():.5g}, exact "
              f"{update['variance'][j]:.5g} (heterogeneity part {update['heterogeneity'][j]:.5g})")
    print("\n".join(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
