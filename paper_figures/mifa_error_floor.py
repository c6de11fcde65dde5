"""Error floors (seed 000): FedAvg-IS keeps a floor, MIFA does not, U-MIFA diverges for
p <= 1/2 and converges for p > 1/2; with the seed's printed floor eta^2 L c sigma_G^2 / 2, the
derived eta L c sigma_G^2 and the exact stationary FedAvg-IS value (claims
mifa.error_floor_average, mifa.zero_floor and their corrections). Isotropic quadratic,
10 clients, eta = 0.02, p = 0.1 (the seed's), 0.5 and 0.6.

Usage: python paper_figures/mifa_error_floor.py [--quick] [--out DIR] [--seed S]
"""

from pathlib import Path

import numpy as np

from fedtheory.experiments import mifa_experiments as mx
from fedtheory.plotting import figure_script_args
from fedtheory.plotting.mifa import plot_floor_experiment


def main(argv: list[str] | None = None) -> None:
    args = figure_script_args(__doc__, argv, quick_help="100 runs, 600 rounds")
    rounds, replicas = (600, 100) if args.quick else (3000, 500)
    results = []
    for k, p in enumerate((0.1, 0.5, 0.6)):
        seq = np.random.SeedSequence([args.seed, k]).spawn(4)
        rngs = [np.random.default_rng(s) for s in seq]
        results.append(mx.floor_experiment(
            p, rounds=rounds, replicas=replicas, eta=0.02, rng_problem=rngs[0],
            rngs={"fedavg_is": rngs[1], "mifa": rngs[2], "umifa": rngs[3]}))
    paths = plot_floor_experiment(results, path=Path(args.out) / "mifa_error_floor")
    print("\n".join(paths))


if __name__ == "__main__":
    main()
