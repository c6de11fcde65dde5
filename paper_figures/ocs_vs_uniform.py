"""FedAvg with full, uniform(m), OCS(m) and AOCS(m) participation (seed 002, Section 5.2).

Multinomial logistic regression on an unbalanced federated split of scikit-learn's digits (the
Section 5.2 recipe): validation accuracy and f - f* against communication rounds and against
bits sent client -> master, bands over replicas. The data are those of the claim
``ocs.experiment`` (same preset and seed give the same numbers).

Usage: python paper_figures/ocs_vs_uniform.py [--quick] [--out DIR] [--seed S]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from fedtheory.claims.ocs._data import experiment_run
from fedtheory.experiments.ocs_fedavg import area_per_bit, area_per_round
from fedtheory.plotting import figure_script_args
from fedtheory.plotting.ocs import plot_ocs_vs_uniform


def main(argv: list[str] | None = None) -> int:
    args = figure_script_args(__doc__, argv)
    run = experiment_run("quick" if args.quick else "full", args.seed)
    paths = plot_ocs_vs_uniform(run, Path(args.out) / "ocs_vs_uniform")
    log_gap = np.log(run.loss - run.f_star)
    per_round, per_bit = area_per_round(run, log_gap), area_per_bit(run, log_gap)
    cfg = run.config
    print(f"n = {cfg['n']} clients (sizes {cfg['sizes']}), d = {cfg['d']}, "
          f"{cfg['rounds']} rounds, {cfg['replicas']} replicas; local steps (tuned as the seed "
          f"tunes them): " + ", ".join(f"{s} {lr:g}" for s, lr in zip(run.schemes,
                                                                      cfg["local_lr"],
                                                                      strict=True)))
    print(f"{'scheme':>8} {'final acc':>9} {'mean log gap/round':>19} {'per bit':>8} "
          f"{'bits (mean)':>12} {'senders/round':>13}")
    for i, s in enumerate(run.schemes):
        print(f"{s:>8} {run.accuracy[i, :, -1].mean():>9.4f} {per_round[i].mean():>19.3f} "
              f"{per_bit[i].mean():>8.3f} {run.bits[i, :, -1].mean():>12.3g} "
              f"{run.senders[i].mean():>13.2f}")
    print(f"AOCS = closed form in {run.aocs_equals_ocs.mean():.1%} of (replica, round) pairs")
    print("\n".join(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
