"""Throughput of the Monte Carlo estimator sampler, next to this machine's raw generator.

Measures :func:`fedtheory.sampling.moments.sample_estimator` (masks drawn and multiplied by the
(n, d) matrix of importance vectors, chunk by chunk) in (replica x client) draws per second,
for each sampling design, and the raw throughput of ``rng.random`` producing the same number
of uniforms (allocating, as a user would call it), measured in the same run on the same
generator type, each estimator run right after a raw run (the ratio's median over the pairs).
Targets: the independent-sampling and the uniform b-of-n estimators reach >= 50 % of the raw
generator (the uniform one draws b of the n uniforms per replica but pays a partial shuffle).
Medians of ``--repeat`` runs (``benchmarks/_bench.py``); ``--clock cpu`` for a shared machine;
the BLAS/threading environment (e.g. OPENBLAS_CORETYPE) is left as it is. Exit code 1 when a
target is not met.

Usage: python benchmarks/bench_estimators.py [--replicas R] [--n N] [--d D] [--repeat K]
           [--clock wall|cpu]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import Targets, add_timing_args, load_average, paired  # noqa: E402

from fedtheory.sampling.designs import (  # noqa: E402
    ExplicitSampling,
    IndependentSampling,
    UniformWithoutReplacement,
)
from fedtheory.sampling.moments import sample_estimator  # noqa: E402

#: estimator throughput / raw generator throughput, for the designs that have a target
RATIO_TARGET = 0.5


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicas", type=int, default=200_000)
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--d", type=int, default=4)
    add_timing_args(ap, repeat=7)
    args = ap.parse_args(argv)
    R, n, d = args.replicas, args.n, args.d
    rng = np.random.default_rng(0)
    w = np.full(n, 1.0 / n)
    zeta = rng.normal(size=(n, d))
    draws = R * n
    env = {k: os.environ.get(k) for k in ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS",
                                          "OMP_NUM_THREADS") if os.environ.get(k)}
    print(f"replicas {R}, clients n = {n}, d = {d}; {args.clock} clock, medians of "
          f"{args.repeat} runs; numpy {np.__version__}; env {env or '{}'}; {load_average()}")

    gen = np.random.default_rng(1)
    designs = [
        ("independent (Bernoulli p_i)", IndependentSampling(rng.uniform(0.05, 1.0, n)), True),
        (f"uniform b-of-n (b = {n // 5})", UniformWithoutReplacement(n, n // 5), True),
        ("explicit (64 subsets)", ExplicitSampling(rng.random((64, n)) < 0.3,
                                                   np.full(64, 1 / 64)), False),
    ]
    targets = Targets()
    raw_all = []
    results = []
    for name, design, has_target in designs:
        if not design.proper:  # make the random explicit design proper
            design = ExplicitSampling(np.vstack([design.subsets, np.ones((1, n), bool)]),
                                      np.full(len(design.subsets) + 1,
                                              1 / (len(design.subsets) + 1)))
        t_raw, t_est = paired(lambda: gen.random((R, n)),
                              lambda design=design: sample_estimator(design, w, zeta, gen, R),
                              args.repeat, args.clock)
        raw_all += t_raw
        ratios = np.asarray(t_raw) / np.asarray(t_est)  # rate / raw rate
        results.append((name, float(np.median(t_est)), ratios, has_target))
    print(f"{'raw rng.random((R, n))':44s} {draws / np.median(raw_all) / 1e6:9.1f} M draws/s")
    for name, t_est, ratios, _ in results:
        print(f"{'estimator, ' + name:44s} {draws / t_est / 1e6:9.1f} M draws/s  "
              f"({np.median(ratios):.0%} of raw)")
    for name, _, ratios, has_target in results:
        if has_target:
            targets.check(f"estimator / raw generator, {name}", ratios, ">=", RATIO_TARGET)
    return targets.summary()


if __name__ == "__main__":
    raise SystemExit(main())
