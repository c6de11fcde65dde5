"""Speed of the logistic-regression problems and of the ``ocs.experiment`` driver.

Measurements (medians of ``--repeat`` runs, wall clock and this process's CPU time, which
other users of a shared machine disturb less):

1. building the unbalanced digits problem (split + Newton solve for x*, certified);
2. one local step of every (scheme, replica, client) -- ``minibatch_grads_at`` on
   (S=4, R=60, n=20, B=20) -- in float64 and float32: gradients per second;
3. the quick presets of the claim: the full/uniform/OCS/AOCS comparison (30 rounds, 60
   replicas) and the m = O(sqrt n) sweep (n = 8, 16, 32; 30 rounds, 30 replicas).

Target: the quick preset of the whole claim (comparison and sweep) within 20 s of CPU time
(one core). Exit code 1 when it is not met.

Usage: python benchmarks/bench_ocs_experiment.py [--repeat K]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import Targets, load_average  # noqa: E402

from fedtheory.experiments import ocs_fedavg as ox  # noqa: E402
from fedtheory.experiments import ocs_runs  # noqa: E402
from fedtheory.problems.datasets import federated_split  # noqa: E402
from fedtheory.problems.logistic import LogisticProblem  # noqa: E402

#: CPU seconds of the claim's quick preset (comparison and sweep)
QUICK_TARGET = 20.0


def _median(fn, repeat: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``repeat`` calls."""
    wall, cpu = [], []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return float(np.median(wall)), float(np.median(cpu))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="repeats per measurement")
    args = ap.parse_args(argv)
    k = args.repeat
    print(f"medians of {k} runs; {load_average()}")

    data = federated_split("digits", n_clients=32, alpha=0.5, seed=0, unbalance=(0.5, 12, 54))
    w, c = _median(lambda: LogisticProblem(data, lam=1e-3), k)
    prob = LogisticProblem(data, lam=1e-3)
    print(f"problem build (n={prob.n}, d={prob.d}, Newton {prob.newton_iterations} its, "
          f"|grad f(x*)| = {prob.grad_norm_star:.1e}): {w:.3f} s wall, {c:.3f} s cpu")

    S, R, B = 4, 60, 20
    rng = np.random.default_rng(0)
    batch = np.minimum(rng.integers(0, 100, size=(R, prob.n, B)), prob.sizes[:, None] - 1)
    for dtype in (np.float64, np.float32):
        y = (0.1 * rng.normal(size=(S, R, prob.n, prob.d))).astype(dtype)
        w, c = _median(lambda y=y: prob.minibatch_grads_at(y, batch), 5 * k)
        print(f"local step, {np.dtype(dtype).name}: {w * 1e3:.1f} ms wall ({S * R * prob.n / w:.3g}"
              f" client gradients/s, batch {B}), {c * 1e3:.1f} ms cpu")

    w, c = _median(lambda: ox.ocs_vs_uniform("quick", 0, rng=0), k)
    print(f"quick comparison (4 schemes, 30 rounds, 60 replicas): {w:.2f} s wall, {c:.2f} s cpu")
    w2, c2 = _median(lambda: ocs_runs.sqrt_n_sweep("quick", 0, rng=0), k)
    print(f"quick sqrt-n sweep (n = 8, 16, 32): {w2:.2f} s wall, {c2:.2f} s cpu")
    targets = Targets()
    targets.check("ocs.experiment quick preset (comparison + sweep), CPU seconds", c + c2, "<=",
                  QUICK_TARGET, fmt=".1f", unit=" s")
    return targets.summary()


if __name__ == "__main__":
    sys.exit(main())
