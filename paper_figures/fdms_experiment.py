"""FL-FDMS against Full, Dropout and Stale under client dropout (seed 004, Section 6).

Loss curves (mean over the seeds with 10-90 % bands) for dropout ratios alpha = 0.3, 0.5, 0.7
in a clustered federation (20 clients, 5 clusters of identical data) and a general non-iid one;
FL-FDMS's pairwise similarity means at the last round (heat map); the similarity computations
with and without the complexity reduction (Theta_t of Theorem 2, 0.5 Theta_t). The data are
those of the claim ``fdms.experiment`` (quick: quadratic federations; full: digits).

Usage: python paper_figures/fdms_experiment.py [--quick] [--out DIR] [--seed S]
"""

from __future__ import annotations

import sys
from pathlib import Path

from fedtheory.experiments.fdms_runs import (
    ALPHAS,
    METHODS,
    SETTINGS,
    experiment_data,
    tail_metric,
)
from fedtheory.plotting import figure_script_args
from fedtheory.plotting.fdms import plot_complexity, plot_curves, plot_heatmap


def main(argv: list[str] | None = None) -> int:
    args = figure_script_args(__doc__, argv)
    data = experiment_data("quick" if args.quick else "full", args.seed)
    out = Path(args.out)
    paths = plot_curves(data, out / "fdms_curves")
    if "accuracy" in next(iter(data["runs"].values())):
        paths += plot_curves(data, out / "fdms_accuracy", metric="accuracy")
    paths += plot_heatmap(data, out / "fdms_similarity_heatmap")
    paths += plot_complexity(data, out / "fdms_complexity")
    for setting in SETTINGS:
        for alpha in ALPHAS:
            row = []
            for method in METHODS:
                run = data["runs"].get((setting, alpha, method))
                if run is not None:
                    row.append(f"{method} {tail_metric(run['f_gap']).mean():.4g}")
            print(f"{setting:9s} alpha = {alpha}: tail f - f*: " + ", ".join(row))
    print("\n".join(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
