"""How many iterations AOCS (seed 002, Algorithm 2) needs, against n, m and the spread of norms.

Log-normal norms e^{sigma Z}; AOCS run to completion (it then equals the closed form (7)) and
with the seed's budget j_max = 4. Left: mean iterations until the master sees C <= 1. Middle:
the fraction of rounds j_max = 4 completes. Right: the relative excess variance
V(p_{j_max=4})/V* - 1 left when it does not.

Usage: python paper_figures/aocs_iterations.py [--quick] [--out DIR] [--seed S]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from fedtheory.plotting import figure_script_args
from fedtheory.plotting.ocs import plot_aocs_iterations
from fedtheory.sampling.aocs import aocs_iteration_study


def main(argv: list[str] | None = None) -> int:
    args = figure_script_args(__doc__, argv)
    ns = (10, 100, 1000) if args.quick else (10, 100, 1000, 10_000)
    rounds = 30 if args.quick else 300
    data = aocs_iteration_study(np.random.default_rng(args.seed), ns, (0.01, 0.1, 0.3),
                                (0.5, 1.0, 2.0, 3.0), rounds)
    paths = plot_aocs_iterations(data, Path(args.out) / "aocs_iterations")
    print(f"{rounds} rounds per setting; runs beyond n - l + 1 iterations: "
          f"{int(data['bound_violations'].sum())}; max |p_AOCS - p*| = "
          f"{data['max_error'].max():.2g}")
    print(f"{'n':>6} {'m':>6} {'sigma':>5} {'mean j':>7} {'max j':>6} {'j<=4':>6} {'excess':>9}")
    for k in range(len(data["n"])):
        print(f"{int(data['n'][k]):>6} {int(data['m'][k]):>6} {data['sigma'][k]:>5.1f} "
              f"{data['mean_iterations'][k]:>7.2f} {int(data['max_iterations'][k]):>6} "
              f"{data['within_budget'][k]:>6.0%} {data['excess_at_budget'][k]:>9.2g}")
    print("\n".join(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
