"""FL-FDMS against Full, Dropout and Stale under client dropout (seed 004, Section 6), as the
authors' code ran it on an offline stand-in (digits, softmax regression).

Test accuracy per round (mean over the seeds with 10-90 % bands) for dropout ratios alpha =
0.3, 0.5, 0.7 in the clustered setting (5 groups of 4 clients sharing 2 classes) and the
general one (3 label-sorted shards per client), with the authors' friend-preserving dropout
(Figs. 1 and 3); FL-FDMS's pairwise similarity means at the last round (Fig. 4); the similarity
computations and test accuracy with the complexity reduction (Fig. 5). The data are those of
the claim ``fdms.experiment`` (quick: 100 rounds, 12 seeds; full: 250 rounds, 16 seeds).

Usage: python paper_figures/fdms_experiment.py [--quick] [--out DIR] [--seed S]
"""

from __future__ import annotations

import sys
from pathlib import Path

from fedtheory.claims.fdms._data import paper_data
from fedtheory.experiments.fdms_paper import (
    ALPHAS,
    METHODS,
    SETTINGS,
    final_accuracy,
    mean_accuracy,
)
from fedtheory.plotting import figure_script_args
from fedtheory.plotting.fdms import plot_complexity, plot_curves, plot_heatmap


def main(argv: list[str] | None = None) -> int:
    args = figure_script_args(__doc__, argv)
    data = paper_data("quick" if args.quick else "full", args.seed)
    out = Path(args.out)
    paths = plot_curves(data, out / "fdms_test_accuracy")
    paths += plot_heatmap(data, out / "fdms_similarity_heatmap")
    paths += plot_complexity(data, out / "fdms_complexity")
    for setting in SETTINGS:
        acc = data[setting]["acc"]
        full = acc[("Full", "Full")]
        print(f"{setting:9s} Full: test accuracy {final_accuracy(full).mean():.4f}, "
              f"mean over the rounds {mean_accuracy(full).mean():.4f}")
        for alpha in ALPHAS:
            row = [f"{m} {final_accuracy(acc[(f'alpha={alpha}', m)]).mean():.4f}/"
                   f"{mean_accuracy(acc[(f'alpha={alpha}', m)]).mean():.4f}" for m in METHODS]
            print(f"{setting:9s} alpha = {alpha}: (final/mean) " + ", ".join(row))
    print("\n".join(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
