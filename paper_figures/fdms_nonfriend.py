"""FL-FDMS's friend discovery (seed 004): Lemma 2 and Theorem 2's complexity reduction.

Left figure: P(a dropped client gets a non-friend) against the round on the tightest instance
of Lemma 2 (scores in {0, 1} whose friend and non-friend values sum to 1): exact curves for
beta = 1 and beta ~ 1/4 and the simulated algorithm with Clopper-Pearson bands, each against
2K exp(-beta delta_min^2 t/2). Second figure: similarity scores computed per round without the
reduction and with Theta_t and 0.5 Theta_t (20 clients in 5 Gaussian clusters), and Theta_t.
The data are those of the claims ``fdms.nonfriend_probability`` and
``fdms.complexity_reduction``.

Usage: python paper_figures/fdms_nonfriend.py [--quick] [--out DIR] [--seed S]
"""

from __future__ import annotations

import sys
from pathlib import Path

from fedtheory.experiments.fdms_friends import complexity_figure_data, nonfriend_figure_data
from fedtheory.plotting import figure_script_args
from fedtheory.plotting.fdms_friends import plot_complexity, plot_nonfriend


def main(argv: list[str] | None = None) -> int:
    args = figure_script_args(__doc__, argv)
    preset = "quick" if args.quick else "full"
    nf = nonfriend_figure_data(preset, args.seed)
    cx = complexity_figure_data(preset, args.seed)
    out = Path(args.out)
    paths = plot_nonfriend(nf, out / "fdms_nonfriend") + plot_complexity(cx, out /
                                                                         "fdms_complexity")
    for period, c in nf["curves"].items():
        print(f"period {period}: beta = {c['beta']:.3g}, largest exact/bound = "
              f"{(c['P'] / c['bound']).max():.3g}")
    for name, run in cx["runs"].items():
        print(f"{name}: {run['total']:.0f} scores, friend lost in "
              f"{100 * run['friend_eliminated']:.0f}% of runs")
    print("\n".join(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
