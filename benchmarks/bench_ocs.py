"""Speed of the OCS closed form, AOCS and the cvxpy cross-check.

1. ``optimal_probabilities(norms, m)`` for n = 10^3 ... 10^7 (log-normal norms, sigma = 2), with
   a small budget (m = 10: a partition and a sort of the m + 1 largest) and a large one
   (m = n/2: selection by bisection over ranks for long rows, a full sort for short ones),
   against ``np.sort`` of the same input, each pair of calls back to back (the ratio's median
   over the pairs). Targets: n = 10^6, both budgets, within 2x of ``np.sort``.
2. The vectorised form: 1000 rounds of n = 1000 at once, against a loop over rounds.
3. ``aocs_probabilities`` (Algorithm 2, run to completion, m = n/10) for the same sizes, and
   its iterations.
4. The cvxpy (Clarabel) cross-check and the KKT certificate at n = 1000.

Medians of ``--repeat`` runs (``benchmarks/_bench.py``); ``--clock cpu`` for a shared machine.
Exit code 1 when a target is not met.

Usage: python benchmarks/bench_ocs.py [--quick] [--seed S] [--repeat K] [--clock wall|cpu]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import Targets, add_timing_args, load_average, paired, timed  # noqa: E402

from fedtheory.convex.ocs import kkt_certificate, solve_ocs_convex  # noqa: E402
from fedtheory.sampling.aocs import aocs_probabilities  # noqa: E402
from fedtheory.sampling.ocs import optimal_probabilities  # noqa: E402

#: n = 10^6: optimal_probabilities within this factor of np.sort (the issue's target)
RATIO_TARGET = 2.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes up to 10^6 only")
    parser.add_argument("--seed", type=int, default=0)
    add_timing_args(parser, repeat=7)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    sizes = [10**k for k in range(3, 7 if args.quick else 8)]
    targets = Targets()
    k, clock = args.repeat, args.clock
    print(f"numpy {np.__version__}; {clock} clock, medians of {k} runs; {load_average()}")

    print("\n1. optimal_probabilities vs np.sort (same input, pairs of calls back to back)")
    print(f"{'n':>10} {'m':>10} {'np.sort':>11} {'OCS':>11} {'ratio':>7}")
    for n in sizes:
        u = rng.lognormal(0.0, 2.0, n)
        reps = k if n <= 10**6 else max(3, k // 2)
        for m, label in ((10.0, "10"), (n / 2, "n/2")):
            t_sort, t_ocs = paired(lambda u=u: np.sort(u),
                                   lambda u=u, m=m: optimal_probabilities(u, m), reps, clock)
            ratios = np.asarray(t_ocs) / np.asarray(t_sort)
            print(f"{n:>10} {m:>10g} {np.median(t_sort) * 1e3:>9.3f}ms "
                  f"{np.median(t_ocs) * 1e3:>9.3f}ms {np.median(ratios):>7.2f}")
            if n == 10**6:
                targets.check(f"OCS / np.sort, n = 10^6, m = {label}", ratios, "<=",
                              RATIO_TARGET)

    print("\n2. vectorised rounds: 1000 rounds x n = 1000, m = 10")
    u = rng.lognormal(0.0, 2.0, (1000, 1000))
    t_vec = np.median(timed(lambda: optimal_probabilities(u, 10.0), max(3, k // 2), clock))
    t_loop = np.median(timed(lambda: [optimal_probabilities(r, 10.0) for r in u], 1, clock,
                             warmup=False))
    print(f"   one call {t_vec * 1e3:.1f} ms, loop over rounds {t_loop * 1e3:.1f} ms "
          f"({t_loop / t_vec:.1f}x)")

    print("\n3. AOCS to completion (j_max = n + 1), m = n/10")
    print(f"{'n':>10} {'time':>11} {'iterations':>10} {'vs closed form':>15}")
    for n in sizes:
        u = rng.lognormal(0.0, 2.0, n)
        m = n / 10
        res = aocs_probabilities(u, m, j_max=n + 1)
        t = np.median(timed(lambda u=u, n=n, m=m: aocs_probabilities(u, m, j_max=n + 1), 3,
                            clock, warmup=False))
        err = float(np.max(np.abs(res.p - optimal_probabilities(u, m))))
        print(f"{n:>10} {t * 1e3:>9.3f}ms {res.iterations:>10} {err:>15.2g}")

    print("\n4. cvxpy (Clarabel) cross-check and KKT certificate, n = 1000, m = 100")
    for sigma in (1.0, 3.0):
        u = rng.lognormal(0.0, sigma, 1000)
        t_solve = np.median(timed(lambda u=u: solve_ocs_convex(u, 100.0), 3, clock))
        t_cert = np.median(timed(lambda u=u: kkt_certificate(u, 100.0), 3, clock))
        sol, cert = solve_ocs_convex(u, 100.0), kkt_certificate(u, 100.0)
        p = optimal_probabilities(u, 100.0)
        excess = (sol.objective - cert.primal_value) / cert.primal_value
        print(f"   sigma={sigma}: solve {t_solve * 1e3:.1f} ms ({sol.status}), certificate "
              f"{t_cert * 1e3:.2f} ms (gap {cert.gap:.1e}); solver objective above the closed "
              f"form by {excess:.1e} (relative), max |dp| = {np.max(np.abs(sol.p - p)):.1e}")
    return targets.summary()


if __name__ == "__main__":
    raise SystemExit(main())
