"""Speed of the OCS closed form, AOCS and the cvxpy cross-check.

1. ``optimal_probabilities(norms, m)`` for n = 10^3 ... 10^7 (log-normal norms, sigma = 2), with
   a small budget (m = 10: the partition path) and a large one (m = n/2: the sort path), against
   ``np.sort`` of the same input measured in the same run (best of several repeats).
   Target: n = 10^6 within 3x of ``np.sort``.
2. The vectorised form: 1000 rounds of n = 1000 at once, against a loop over rounds.
3. ``aocs_probabilities`` (Algorithm 2, run to completion, m = n/10) for the same sizes, and
   its iterations.
4. The cvxpy (Clarabel) cross-check and the KKT certificate at n = 1000.

Usage: python benchmarks/bench_ocs.py [--quick] [--seed S]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from fedtheory.convex.ocs import kkt_certificate, solve_ocs_convex
from fedtheory.sampling.aocs import aocs_probabilities
from fedtheory.sampling.ocs import optimal_probabilities


def best_of(func, repeats: int) -> float:
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - t)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes up to 10^6 only")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    sizes = [10**k for k in range(3, 7 if args.quick else 8)]

    print("1. optimal_probabilities vs np.sort (same input, best of repeats)")
    print(f"{'n':>10} {'m':>10} {'np.sort':>11} {'OCS':>11} {'ratio':>7}")
    for n in sizes:
        u = rng.lognormal(0.0, 2.0, n)
        reps = 7 if n <= 10**6 else 3
        t_sort = best_of(lambda u=u: np.sort(u), reps)
        for m in (10.0, n / 2):
            t_ocs = best_of(lambda u=u, m=m: optimal_probabilities(u, m), reps)
            print(f"{n:>10} {m:>10g} {t_sort * 1e3:>9.3f}ms {t_ocs * 1e3:>9.3f}ms "
                  f"{t_ocs / t_sort:>7.2f}")
            if n == 10**6:
                verdict = "meets" if t_ocs <= 3 * t_sort else "MISSES"
                print(f"{'':>10} target n = 10^6 within 3x of np.sort: {verdict}")

    print("\n2. vectorised rounds: 1000 rounds x n = 1000, m = 10")
    u = rng.lognormal(0.0, 2.0, (1000, 1000))
    t_vec = best_of(lambda: optimal_probabilities(u, 10.0), 3)
    t_loop = best_of(lambda: [optimal_probabilities(r, 10.0) for r in u], 1)
    print(f"   one call {t_vec * 1e3:.1f} ms, loop over rounds {t_loop * 1e3:.1f} ms "
          f"({t_loop / t_vec:.1f}x)")

    print("\n3. AOCS to completion (j_max = n + 1), m = n/10")
    print(f"{'n':>10} {'time':>11} {'iterations':>10} {'vs closed form':>15}")
    for n in sizes:
        u = rng.lognormal(0.0, 2.0, n)
        m = n / 10
        res = aocs_probabilities(u, m, j_max=n + 1)
        t = best_of(lambda u=u, n=n, m=m: aocs_probabilities(u, m, j_max=n + 1), 3)
        err = float(np.max(np.abs(res.p - optimal_probabilities(u, m))))
        print(f"{n:>10} {t * 1e3:>9.3f}ms {res.iterations:>10} {err:>15.2g}")

    print("\n4. cvxpy (Clarabel) cross-check and KKT certificate, n = 1000, m = 100")
    for sigma in (1.0, 3.0):
        u = rng.lognormal(0.0, sigma, 1000)
        solve_ocs_convex(u, 100.0)  # compile once
        t0 = time.perf_counter()
        sol = solve_ocs_convex(u, 100.0)
        t_solve = time.perf_counter() - t0
        t0 = time.perf_counter()
        cert = kkt_certificate(u, 100.0)
        t_cert = time.perf_counter() - t0
        p = optimal_probabilities(u, 100.0)
        excess = (sol.objective - cert.primal_value) / cert.primal_value
        print(f"   sigma={sigma}: solve {t_solve * 1e3:.1f} ms ({sol.status}), certificate "
              f"{t_cert * 1e3:.2f} ms (gap {cert.gap:.1e}); solver objective above the closed "
              f"form by {excess:.1e} (relative), max |dp| = {np.max(np.abs(sol.p - p)):.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
