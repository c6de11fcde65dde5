"""The objective each weighting reaches (seed 001, Theorem 1), on heterogeneous quadratics.

The fixed point argmin h of Algorithm 1 with time-constant weights omega_n (one local step)
and its excess true objective f - f*: omega = 1/p (known statistics) reaches argmin f,
omega = 1 (average all) does not; FedAU's long-run weights with cutoff K = 5 under Bernoulli,
Markovian and cyclic participation (same stationary p_n) land in between. The instance is the
claim ``fedau.objective_inconsistency``'s.

Usage: python paper_figures/fedau_objectives.py [--quick] [--out DIR] [--seed S]
"""

from __future__ import annotations

import sys
from pathlib import Path

from fedtheory.experiments.fedau_runs import objective_by_weighting, quadratic_instance
from fedtheory.plotting import figure_script_args
from fedtheory.plotting.fedau import plot_objectives


def main(argv: list[str] | None = None) -> int:
    args = figure_script_args(__doc__, argv)
    inst = quadratic_instance()
    data = objective_by_weighting(inst["A"], inst["c"], inst["p"], K=5)
    paths = plot_objectives(data, Path(args.out) / "fedau_objectives")
    for name, val in data["excess"].items():
        print(f"{name:32s} f - f* = {val:.4g}")
    print("\n".join(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
