"""FedAvg with K local steps vs parallel SGD with the same number of gradient steps (seed 003).

Left: E||grad f||^2 at the end of a run against T = KR gradient steps per client, step
gamma = c/sqrt(T) for both methods (exact lines, Monte Carlo points with two-sided intervals at
alpha = 1e-6, a T^{-1/2} guide): the same rate. Right: the exact expected trajectories against
communication rounds: FedAvg gets in R rounds where parallel SGD gets in KR. The data are those
of ``fedavg.local_steps``.

Usage: python paper_figures/fedavg_local_steps.py [--quick] [--out DIR] [--seed S]
"""

from __future__ import annotations

import sys
from pathlib import Path

from fedtheory.claims.fedavg._data import local_steps_data
from fedtheory.experiments.fedavg_experiments import fit_exponent
from fedtheory.plotting import figure_script_args
from fedtheory.plotting.fedavg import plot_local_steps


def main(argv: list[str] | None = None) -> int:
    args = figure_script_args(__doc__, argv)
    rate, _ = local_steps_data("quick" if args.quick else "full", args.seed)
    paths = plot_local_steps(rate, rate["curves"], Path(args.out) / "fedavg_local_steps")
    for key in ("fedavg", "sgd"):
        slope, se = fit_exponent(rate["rounds"], rate[key])
        print(f"{key}: exponent in R {slope:.4f} (standard error {se:.4f})")
    print("\n".join(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
