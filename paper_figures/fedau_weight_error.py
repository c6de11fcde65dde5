"""Theorem 3's weight error of FedAU (seed 001) against T for several cutoffs K, exact.

Bernoulli participation, p = (0.1, 0.3, 0.5): the weight error
(1/NT) sum_t sum_n E[(p_n omega_t^n - 1)^2], computed exactly from the law of Algorithm 2's
intervals, for K in {2, 4, 8, 16, inf}; dotted lines: the bias term (1/N) sum_n (1-p_n)^{2K}.
The data are those of the claim ``fedau.weight_error``.

Usage: python paper_figures/fedau_weight_error.py [--quick] [--out DIR] [--seed S]
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from fedtheory.experiments.fedau_runs import weight_error_curves
from fedtheory.plotting import figure_script_args
from fedtheory.plotting.fedau import plot_weight_error
from fedtheory.theory.fedau import corollary4_K


def main(argv: list[str] | None = None) -> int:
    args = figure_script_args(__doc__, argv)
    T_max = 400 if args.quick else 4000
    p = (0.1, 0.3, 0.5)
    data = weight_error_curves(p, (2, 4, 8, 16, math.inf), T_max)
    paths = plot_weight_error(data, Path(args.out) / "fedau_weight_error")
    for K, err in data["error"].items():
        print(f"K = {K}: error at T = {T_max}: {err[-1]:.5g} (bias term {data['bias'][K]:.3g})")
    print(f"Corollary 4's K at T = {T_max}: {corollary4_K(T_max, min(p))}")
    print("\n".join(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
