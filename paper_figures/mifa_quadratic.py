"""Seed 000's simple quadratic experiment (10 clients, eta = 0.02; p = 0.01, 0.1, 0.5):
FedAvg-IS, MIFA, U-MIFA, MIFAm, U-MIFAm, median and 10-90% bands of f - f* over the
replicas (random seeds)
(claim mifa.quadratic_experiment; the dashed line answers "can momentum speed things up?"
with MIFAm at the other beta).

Usage: python paper_figures/mifa_quadratic.py [--quick] [--out DIR] [--seed S]
"""

from pathlib import Path

from fedtheory.claims.mifa import _runs as mifa_runs
from fedtheory.plotting import figure_script_args
from fedtheory.plotting.mifa import plot_seed_experiment


def main(argv: list[str] | None = None) -> None:
    args = figure_script_args(__doc__, argv, quick_help="24 seeds, 1000 rounds")
    # the claim's cached dataset: a test session that verified the claim draws from it
    res = mifa_runs.quadratic_setting("quick" if args.quick else "full", args.seed)
    paths = plot_seed_experiment(res, title="paper 000, simple quadratic",
                                    path=Path(args.out) / "mifa_quadratic")
    print("\n".join(paths))


if __name__ == "__main__":
    main()
