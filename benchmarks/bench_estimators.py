"""Throughput of the Monte Carlo estimator sampler, next to this machine's raw generator.

Measures :func:`fedtheory.sampling.moments.sample_estimator` (masks drawn and multiplied by the
(n, d) matrix of importance vectors, chunk by chunk) in (replica x client) draws per second,
for each sampling design, and the raw throughput of ``rng.random`` producing the same number
of uniforms (allocating, as a user would call it), measured in the same run on the same
generator type. The issue's target: the independent-sampling estimator reaches >= 50% of the
raw generator. Best of ``--repeat`` runs; the BLAS/threading environment (e.g.
OPENBLAS_CORETYPE) is left as it is.

Usage: python benchmarks/bench_estimators.py [--replicas R] [--n N] [--d D] [--repeat K]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

import numpy as np

from fedtheory.sampling.designs import (
    ExplicitSampling,
    IndependentSampling,
    UniformWithoutReplacement,
)
from fedtheory.sampling.moments import sample_estimator


def best_seconds(func: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicas", type=int, default=200_000)
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--d", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    R, n, d = args.replicas, args.n, args.d
    rng = np.random.default_rng(0)
    w = np.full(n, 1.0 / n)
    zeta = rng.normal(size=(n, d))
    draws = R * n
    env = {k: os.environ.get(k) for k in ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS",
                                          "OMP_NUM_THREADS") if os.environ.get(k)}
    print(f"replicas {R}, clients n = {n}, d = {d}; best of {args.repeat}; numpy "
          f"{np.__version__}; env {env or '{}'}")

    gen = np.random.default_rng(1)
    t_raw = best_seconds(lambda: gen.random((R, n)), args.repeat)
    raw = draws / t_raw
    print(f"{'raw rng.random((R, n))':44s} {raw / 1e6:9.1f} M draws/s")

    designs = [
        ("independent (Bernoulli p_i)", IndependentSampling(rng.uniform(0.05, 1.0, n))),
        (f"uniform without replacement (b = {n // 5})", UniformWithoutReplacement(n, n // 5)),
        ("explicit (64 subsets)", ExplicitSampling(rng.random((64, n)) < 0.3,
                                                   np.full(64, 1 / 64))),
    ]
    ratio_independent = None
    for name, design in designs:
        if not design.proper:  # make the random explicit design proper
            design = ExplicitSampling(np.vstack([design.subsets, np.ones((1, n), bool)]),
                                      np.full(len(design.subsets) + 1,
                                              1 / (len(design.subsets) + 1)))
        t = best_seconds(lambda design=design: sample_estimator(design, w, zeta, gen, R),
                         args.repeat)
        rate = draws / t
        ratio = rate / raw
        if ratio_independent is None:
            ratio_independent = ratio
        print(f"{'estimator, ' + name:44s} {rate / 1e6:9.1f} M draws/s  ({ratio:.0%} of raw)")
    verdict = "meets" if ratio_independent >= 0.5 else "misses"
    print(f"independent-sampling estimator / raw generator = {ratio_independent:.2f} "
          f"({verdict} the >= 0.50 target)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
