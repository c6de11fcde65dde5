"""Seed 002, Theorems 13, 15, 17, 18: measured left side against the right side of each recursion.

One step of DSGD / FedAvg with optimal client sampling from a fixed iterate, many replicas:
the replica mean of E||r^{k+1}||^2 or E f(x^{k+1}) with its interval (level 1e-6, as the
claims' checks) beside the theorem's bound (at the lower confidence limit of gamma), over a
sweep: Theorem 13 (and its correction) over x^k on a two-client problem with weights (3/4, 1/4);
Theorem 15 over the step size where it is tight; Theorem 17 (and its correction) over n at
x^k = x*; Theorem 18 over the step size. The data come from
fedtheory.experiments.ocs_theorems.theorem_slack_data.

Usage: python paper_figures/ocs_theorem_slack.py [--quick] [--out DIR] [--seed S]
"""

from __future__ import annotations

import sys
from pathlib import Path

from fedtheory.experiments.ocs_theorems import theorem_slack_data
from fedtheory.plotting import figure_script_args
from fedtheory.plotting.ocs import plot_theorem_slack


def main(argv: list[str] | None = None) -> int:
    args = figure_script_args(__doc__, argv)
    data = theorem_slack_data(quick=args.quick, seed=args.seed)
    for key in ("thm13", "thm13c", "thm15", "thm17", "thm17c", "thm18"):
        worst = max(data[key], key=lambda p: p["mean_minus_ref"] - p["bound_minus_ref"])
        excess = worst["mean_minus_ref"] - worst["bound_minus_ref"]
        print(f"{key}: largest mean - bound = {excess:+.3g} (interval half-width "
              f"{worst['half_width']:.2g}) over {len(data[key])} points")
    paths = plot_theorem_slack(data, Path(args.out) / "ocs_theorem_slack")
    print("\n".join(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
