"""The seed's table (seed 001, 'Experiments') recomputed on digits in the authors' regime:
methods x participation patterns, mean ± std over seeds of f - f*, of the training accuracy and
of the test accuracy.

FedAU (K = inf, K = 50), average participating, average all, known participation statistics;
Bernoulli, markov-0.05 and cyclic-100 participation with the authors' probabilities
(correlated with the clients' labels). The data are those of the claim
``fedau.participation_patterns``.

Usage: python paper_figures/fedau_table.py [--quick] [--out DIR] [--seed S]
"""

from __future__ import annotations

import sys
from pathlib import Path

from fedtheory.claims.fedau._data import patterns_data
from fedtheory.plotting import figure_script_args
from fedtheory.plotting.fedau import plot_patterns_table


def main(argv: list[str] | None = None) -> int:
    args = figure_script_args(__doc__, argv)
    # the claim's cached dataset: a test session that verified the claim draws from it
    tab = patterns_data("quick" if args.quick else "full", args.seed)
    paths = plot_patterns_table(tab, Path(args.out) / "fedau_table")
    for pat in tab["f_gap"]:
        print(f"{pat}:")
        for m in tab["f_gap"][pat]:
            f, a, b = (tab[k][pat][m] for k in ("f_gap", "train_acc", "test_acc"))
            print(f"  {m:24s} f - f* {f.mean():.4f} ± {f.std(ddof=1):.4f}   "
                  f"train {100 * a.mean():.1f} ± {100 * a.std(ddof=1):.1f}   "
                  f"test {100 * b.mean():.1f} ± {100 * b.std(ddof=1):.1f}")
    print("\n".join(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
