"""The seed's table (seed 001, 'Experiments') recomputed on digits: methods x participation
patterns, mean ± std over seeds of f - f* and of the validation accuracy.

FedAU (K = inf, K = 50), average participating, average all, known participation statistics;
Bernoulli, Markovian and cyclic participation with the same stationary p_n, correlated with
the clients' labels. The data are those of the claim ``fedau.participation_patterns``.

Usage: python paper_figures/fedau_table.py [--quick] [--out DIR] [--seed S]
"""

from __future__ import annotations

import sys
from pathlib import Path

from fedtheory.experiments.fedau_patterns import patterns_table
from fedtheory.plotting import figure_script_args
from fedtheory.plotting.fedau import plot_patterns_table


def main(argv: list[str] | None = None) -> int:
    args = figure_script_args(__doc__, argv)
    tab = patterns_table("quick" if args.quick else "full", args.seed)
    paths = plot_patterns_table(tab, Path(args.out) / "fedau_table")
    for pat in tab["f_gap"]:
        print(f"{pat}:")
        for m in tab["f_gap"][pat]:
            f, a = tab["f_gap"][pat][m], tab["accuracy"][pat][m]
            print(f"  {m:24s} f - f* {f.mean():.4f} ± {f.std(ddof=1):.4f}   "
                  f"accuracy {a.mean():.4f} ± {a.std(ddof=1):.4f}")
    print("\n".join(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
