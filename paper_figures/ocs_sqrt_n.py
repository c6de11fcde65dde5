"""Is m = O(sqrt n) enough for OCS to match full participation? (seed 002, Section 5.4)

For several numbers of clients n (Dirichlet split of scikit-learn's digits), FedAvg with full
participation and with OCS(m) over a grid of m on common random numbers; left: the validation
accuracy gap full - OCS(m) with its one-sided upper limit; right: the smallest matching m
against n, beside c sqrt(n) with the seed's constant c = 6/sqrt(32). The data are those of
the claim ``ocs.experiment``.

Usage: python paper_figures/ocs_sqrt_n.py [--quick] [--out DIR] [--seed S]
"""

from __future__ import annotations

import sys
from pathlib import Path

from fedtheory.claims.ocs._data import sweep_run
from fedtheory.plotting import figure_script_args
from fedtheory.plotting.ocs import plot_sqrt_n


def main(argv: list[str] | None = None) -> int:
    args = figure_script_args(__doc__, argv)
    sw = sweep_run("quick" if args.quick else "full", args.seed)
    paths = plot_sqrt_n(sw, Path(args.out) / "ocs_sqrt_n")
    print(f"{sw.config['rounds']} rounds, {sw.config['replicas']} replicas, tolerance "
          f"{sw.epsilon:g} accuracy, alpha {sw.alpha:g}")
    print(f"{'n':>5} {'m*':>4} {'ceil(c sqrt n)':>14}  upper limits of acc_full - acc_OCS(m)")
    for n in sw.ns:
        ups = ", ".join(f"m={m}: {u:.4f}" for m, u in zip(sw.grids[n], sw.upper[n], strict=True))
        print(f"{n:>5} {sw.m_star[n]!s:>4} {sw.seed_budget(n):>14}  {ups}")
    print("\n".join(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
