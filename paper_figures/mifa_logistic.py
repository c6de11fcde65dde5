"""Seed 000's logistic-regression experiment (breast cancer, 10 non-iid clients, eta = 0.02;
p = 0.01, 0.1, 0.5): the five rules, median and 10-90% bands of f - f* over the replicas
(random seeds)
(claim mifa.logistic_experiment; the dashed line is MIFAm at the other beta).

Usage: python paper_figures/mifa_logistic.py [--quick] [--out DIR] [--seed S]
"""

from pathlib import Path

from fedtheory.claims.mifa import _runs as mifa_runs
from fedtheory.plotting import figure_script_args
from fedtheory.plotting.mifa import plot_seed_experiment


def main(argv: list[str] | None = None) -> None:
    args = figure_script_args(__doc__, argv, quick_help="24 seeds, 600 rounds")
    # the claim's cached dataset: a test session that verified the claim draws from it
    res = mifa_runs.logistic_setting("quick" if args.quick else "full", args.seed)
    paths = plot_seed_experiment(res, title="paper 000, logistic regression",
                                    path=Path(args.out) / "mifa_logistic")
    print("\n".join(paths))


if __name__ == "__main__":
    main()
