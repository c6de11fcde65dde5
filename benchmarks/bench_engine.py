"""Speed of the simulator (fedtheory.simulate) against a research-script reference
(benchmarks/reference_loop.py) and against this machine's raw limits.

Four measurements, each the median of ``--repeat`` runs (``benchmarks/_bench.py``; ``--quick``
shrinks the rounds), each target printed with whether it is met (exit code 1 if one is not):

1. noise-bound, n=100, d=100, tau=5, T=1000, R=10, FedAvg, full participation, additive
   Gaussian noise: client-rounds per second, and the fraction of this machine's raw numpy
   normal-generation throughput achieved (the rate of normals a step-by-step simulation needs,
   tau*d per client-round, divided by the raw rate); targets >= 70 % and >= 3x the reference
   (float64, PCG64, step by step, one worker: one core against one core's raw rate). Shown
   step by step (tau*d normals per client-round) and with the exact fused form (d).
2. overhead-bound, n=1000, d=10, tau=1, T=1000, R=100, FedAvg, Bernoulli(0.1) and full
   participation, additive noise: client-rounds per second; target >= 30x the reference (one
   worker, each participation).
3. bandwidth, n=1000, d=1000, R=8, U-MIFA, Bernoulli(0.5), noise-free: the bytes a round
   must move (each active pair reads and writes its table row and reads a_i and c_i: 4 d
   floats) per second, as a fraction of the measured in-place bandwidth (``a += b`` on two
   32 MiB arrays, the better of 1 and 2 threads); target >= 30 % (float64, the better of 1
   and 2 workers, with the kernels numba provides when installed). Both the wall-clock
   fraction and the CPU-time fraction (bytes per CPU-second of the process against one
   thread's ``a += b`` per CPU-second) are shown, and, for reference, the fraction of the
   bandwidth measured on arrays four times the size of the last-level cache (the 32 MiB
   arrays are partly served from a 32 MiB cache on some machines).
4. problem hot path: ``QuadraticProblem.client_gradients`` (rows of a diagonal problem,
   n=1000, d=1000, a block of K=128 rows of one replica) and ``loss`` (R=64 points) against
   their research-script forms (fancy indexing; the sum over clients); no target.

Numbers on a shared machine vary from run to run: the raw references are measured in the same
run, right before each scenario, and the load average is printed at the start and the end.
Besides wall-clock rates, runs show rates per second of this process's CPU time (``cpu``),
which other users of the machine disturb less.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import Targets, load_average  # noqa: E402
from reference_loop import (  # noqa: E402
    reference_client_gradients,
    reference_loss,
    reference_run,
)

from fedtheory.compiled import use_numba  # noqa: E402
from fedtheory.participation import BernoulliParticipation  # noqa: E402
from fedtheory.problems import GaussianNoise, QuadraticProblem  # noqa: E402
from fedtheory.simulate import simulate  # noqa: E402


def raw_normals_per_second(dtype=np.float64, bit_generator=np.random.PCG64, size=1 << 22,
                           repeats=7) -> tuple[float, float]:
    """Median rates (wall clock, CPU time) of ``Generator.standard_normal(out=...)``, one
    core."""
    g = np.random.Generator(bit_generator(0))
    buf = np.empty(size, dtype=dtype)
    g.standard_normal(out=buf, dtype=dtype)  # warm-up
    wall, cpu = [], []
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        g.standard_normal(out=buf, dtype=dtype)
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return size / np.median(wall), size / max(float(np.median(cpu)), 1e-9)


#: runs per measurement (``--repeat``)
REPEAT = 3


def timed_simulate(*args, **kwargs):
    """:func:`simulate` run :data:`REPEAT` times: the result of the run of median wall time,
    and the median CPU time (all threads of this process); ``res.seconds`` is that median."""
    runs = []
    for _ in range(REPEAT):
        c = time.process_time()
        res = simulate(*args, **kwargs)
        runs.append((res.seconds, time.process_time() - c, res))
    runs.sort(key=lambda r: r[0])
    cpu = float(np.median([r[1] for r in runs]))
    return runs[len(runs) // 2][2], cpu


def inplace_bandwidth(size=1 << 22, repeats=7, threads=1) -> tuple[float, float]:
    """Bytes/s (wall clock, CPU time per thread) of ``a += b`` on two float64 arrays of
    ``size`` elements (default 32 MiB each; 3 x 8 bytes per element: read a, read b, write a),
    split over ``threads``."""
    a = np.ones(size)
    b = np.ones(size)
    parts = np.array_split(np.arange(size), threads)
    bounds = [(int(p[0]), int(p[-1]) + 1) for p in parts]

    def work(lo, hi):
        a[lo:hi] += b[lo:hi]

    wall, cpu = [], []
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        if threads == 1:
            work(0, size)
        else:
            ts = [threading.Thread(target=work, args=bd) for bd in bounds]
            for th in ts:
                th.start()
            for th in ts:
                th.join()
        wall.append(time.perf_counter() - t)
        cpu.append((time.process_time() - c) / threads)
    return (3 * 8 * size / np.median(wall),
            3 * 8 * size / max(float(np.median(cpu)), 1e-9))


def last_level_cache_bytes(default: int = 32 << 20) -> int:
    """The largest CPU cache of this machine (Linux sysfs), or ``default``."""
    sizes = []
    for f in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        text = f.read_text().strip()
        unit = {"K": 1 << 10, "M": 1 << 20}.get(text[-1:], 1)
        sizes.append(int(text.rstrip("KM")) * unit)
    return max(sizes, default=default)


def _problem(n, d, seed=0):
    prob = QuadraticProblem.heterogeneous(n, d, L=1.0, mu=0.1, sigma_G2=1.0,
                                          rng=np.random.default_rng(seed))
    # cached constants (x*, f*, A_bar: BLAS calls whose worker threads spin for a while
    # afterwards) are computed here, not inside the first timed run
    repr(prob), prob.f_star
    time.sleep(0.2)
    return prob


def _reference(prob, p, rounds, lr, tau, sigma2, rule="fedavg"):
    """Client-rounds per second of the research-script loop (median of :data:`REPEAT`)."""
    rates = []
    for _ in range(REPEAT):
        t = time.perf_counter()
        _, cr = reference_run(prob.hessians, prob.centers, np.full(prob.n, p), rounds, lr,
                              tau, sigma2, rule)
        rates.append(cr / (time.perf_counter() - t))
    return float(np.median(rates))


def noise_bound(quick: bool, targets: Targets) -> None:
    n, d, tau, T, R = 100, 100, 5, (100 if quick else 1000), 10
    prob = _problem(n, d)
    print(f"\n[1] noise-bound: n={n} d={d} tau={tau} T={T} R={R}, FedAvg, p=1, sigma2=1")
    ref = _reference(prob, 1.0, max(T // 10, 10), 0.05, tau, 1.0)
    print(f"    reference loop (1 replica): {ref:12,.0f} client-rounds/s")
    combos = ((np.float64, "pcg64", np.random.PCG64), (np.float32, "sfc64", np.random.SFC64))
    for dtype, bg_name, bg in combos:
        raw, raw_cpu = raw_normals_per_second(dtype, bg)
        print(f"    raw normals {np.dtype(dtype).name} {bg_name}: {raw / 1e6:8.1f} M/s "
              f"(cpu {raw_cpu / 1e6:.1f} M/s)")
        for fuse in (False, True):
            for workers in (1, 2):
                res, cpu = timed_simulate(
                    prob, "fedavg", BernoulliParticipation(1.0, n=n), rounds=T,
                    replicas=R, lr=0.05, local_steps=tau, noise=GaussianNoise(1.0),
                    dtype=dtype, workers=workers, bit_generator=bg_name,
                    fuse_local_steps=fuse, record_every=T)
                cr = res.client_rounds / res.seconds
                frac = cr * tau * d / raw
                label = "fused " if fuse else "steps "
                extra = ""
                if workers == 1:
                    extra = f", cpu {res.client_rounds * tau * d / cpu / raw_cpu:6.1%}"
                print(f"      {label} workers={workers}: {cr:12,.0f} client-rounds/s = "
                      f"{frac:6.1%} of raw normal rate{extra}, {cr / ref:6.1f}x reference "
                      f"({res.seconds:.2f} s)")
                if dtype == np.float64 and not fuse and workers == 1:
                    targets.check("[1] noise-bound, float64 steps, 1 worker: fraction of the "
                                  "raw normal rate", frac, ">=", 0.70)
                    targets.check("[1] noise-bound, float64 steps, 1 worker: x reference",
                                  cr / ref, ">=", 3.0, fmt=".1f")


def overhead_bound(quick: bool, targets: Targets) -> None:
    n, d, tau, T, R = 1000, 10, 1, (100 if quick else 1000), 100
    prob = _problem(n, d)
    print(f"\n[2] overhead-bound: n={n} d={d} tau={tau} T={T} R={R}, FedAvg, sigma2=1")
    for p in (0.1, 1.0):
        ref = _reference(prob, p, max(T // 10, 10), 0.05, tau, 1.0)
        print(f"    p={p}: reference loop (1 replica): {ref:12,.0f} client-rounds/s")
        for workers in (1, 2):
            res, cpu = timed_simulate(
                prob, "fedavg", BernoulliParticipation(p, n=n), rounds=T, replicas=R, lr=0.05,
                noise=GaussianNoise(1.0), workers=workers, record_every=T)
            cr = res.client_rounds / res.seconds
            extra = f" (cpu: {res.client_rounds / cpu:,.0f}/s)" if workers == 1 else ""
            print(f"      engine workers={workers}: {cr:12,.0f} client-rounds/s{extra}, "
                  f"{cr / ref:6.1f}x reference ({res.seconds:.2f} s)")
            if workers == 1:
                targets.check(f"[2] overhead-bound, p = {p}, 1 worker: x reference", cr / ref,
                              ">=", 30.0, fmt=".1f")


def bandwidth(quick: bool, targets: Targets) -> None:
    n, d, R, T, p = 1000, 1000, 8, (20 if quick else 200), 0.5
    prob = _problem(n, d)
    print(f"\n[3] bandwidth: n={n} d={d} R={R} T={T}, U-MIFA, Bernoulli({p}), noise-free")
    bw1, bw1_cpu = inplace_bandwidth(threads=1)
    bw2, _ = inplace_bandwidth(threads=2)
    bw = max(bw1, bw2)
    big = 4 * last_level_cache_bytes() // 8
    dram1, _ = inplace_bandwidth(size=big, repeats=3, threads=1)
    dram2, _ = inplace_bandwidth(size=big, repeats=3, threads=2)
    dram = max(dram1, dram2)
    print(f"    in-place a += b, 2 x 32 MiB: {bw1 / 1e9:6.1f} GB/s (1 thread; cpu "
          f"{bw1_cpu / 1e9:.1f}), {bw2 / 1e9:6.1f} GB/s (2 threads)  <- the target's reference")
    print(f"    in-place a += b, 2 x {big * 8 >> 20} MiB: {dram1 / 1e9:6.1f} GB/s (1 thread), "
          f"{dram2 / 1e9:6.1f} GB/s (2 threads)")
    ref = _reference(prob, p, 2, 0.05, 1, 0.0, rule="umifa")
    print(f"    reference loop (1 replica): {ref:12,.0f} client-rounds/s")
    kernels = [True, False] if use_numba(True) else [False]  # numba installed: both
    best64 = 0.0  # float64, the default kernels: the better of 1 and 2 workers
    for dtype in (np.float64, np.float32):  # compile (or load) the kernels before timing
        simulate(prob, "umifa", BernoulliParticipation(p, n=n), rounds=1, replicas=2, lr=0.05,
                 dtype=dtype, record_every=1)
    for numba_on, dtype, workers in itertools.product(kernels, (np.float64, np.float32),
                                                      (1, 2)):
        if workers == 1 and dtype == np.float64:
            use_numba(numba_on)
            print(f"    {'numba kernels' if numba_on else 'numpy only'} "
                  "(fedtheory.compiled, the same numbers):")
        res, cpu = timed_simulate(
            prob, "umifa", BernoulliParticipation(p, n=n), rounds=T, replicas=R, lr=0.05,
            dtype=dtype, workers=workers, record_every=T)
        nbytes = res.client_rounds * 4 * d * np.dtype(dtype).itemsize
        rate = nbytes / res.seconds
        cr = res.client_rounds / res.seconds
        print(f"      {np.dtype(dtype).name} workers={workers}: {rate / 1e9:6.2f} GB/s = "
              f"{rate / bw:6.1%} of the measured bandwidth (wall; {rate / dram:6.1%} of the "
              f"large-array one), cpu: {nbytes / cpu / bw1_cpu:6.1%} of 1 thread's per "
              f"cpu-second, {cpu / res.seconds:.2f} cores busy; {cr:10,.0f} "
              f"client-rounds/s, {cr / ref:6.1f}x reference ({res.seconds:.2f} s)")
        if numba_on == kernels[0] and dtype == np.float64:
            best64 = max(best64, rate / bw)
    use_numba(None)
    targets.check("[3] bandwidth, float64, better of 1 and 2 workers: fraction of the measured "
                  "bandwidth", best64, ">=", 0.30)


def _median_seconds(fn, args, reps: int, repeats: int = 5) -> float:
    """Median over ``repeats`` of the seconds per call of ``fn(*args)`` (``reps`` calls)."""
    runs = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(reps):
            fn(*args)
        runs.append((time.perf_counter() - t) / reps)
    return float(np.median(runs))


def hot_path(quick: bool, targets: Targets) -> None:
    n, d, K, R = 1000, 1000, 128, 64
    prob = _problem(n, d)
    rng = np.random.default_rng(1)
    print(f"\n[4] problem hot path: QuadraticProblem n={n} d={d} (diagonal)")
    reps = 20 if quick else 200
    for dtype in (np.float64, np.float32):
        A, c = prob.hessians.astype(dtype), prob.centers.astype(dtype)
        clients = np.sort(rng.choice(n, K, replace=False))
        y = np.broadcast_to(rng.standard_normal(d).astype(dtype), (K, d))
        out = np.empty((K, d), dtype=dtype)
        prob.client_gradients(y, clients, out=out)
        np.testing.assert_allclose(out, reference_client_gradients(A, c, y, clients), rtol=1e-5)
        fast = K / _median_seconds(lambda y, cl, o: prob.client_gradients(y, cl, out=o),
                                 (y, clients, out), reps)
        slow = K / _median_seconds(reference_client_gradients, (A, c, y, clients), reps)
        print(f"    client_gradients {np.dtype(dtype).name}, K={K}: {fast:12,.0f} rows/s "
              f"({fast * 2 * d * np.dtype(dtype).itemsize / 1e9:5.1f} GB/s of a_i, c_i rows), "
              f"research script {slow:12,.0f} rows/s: {fast / slow:5.1f}x")
    x = rng.standard_normal((R, d))
    fast = R / _median_seconds(prob.loss, (x,), max(2, reps // 10), 3)
    slow = R / _median_seconds(reference_loss, (prob, x), max(2, reps // 10), 3)
    print(f"    loss, R={R} points: {fast:12,.0f} points/s, sum over clients "
          f"{slow:12,.0f} points/s: {fast / slow:7.0f}x")


def main(argv: list[str] | None = None) -> int:
    global REPEAT
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds")
    ap.add_argument("--only", choices=["noise", "overhead", "bandwidth", "hot-path"],
                    default=None)
    ap.add_argument("--repeat", type=int, default=REPEAT,
                    help=f"runs per measurement, the median reported (default {REPEAT})")
    args = ap.parse_args(argv)
    REPEAT = max(1, args.repeat)
    print(f"numpy {np.__version__}; medians of {REPEAT} runs; {load_average()}")
    use_numba()
    targets = Targets()
    if args.only in (None, "noise"):
        noise_bound(args.quick, targets)
    if args.only in (None, "overhead"):
        overhead_bound(args.quick, targets)
    if args.only in (None, "bandwidth"):
        bandwidth(args.quick, targets)
    if args.only in (None, "hot-path"):
        hot_path(args.quick, targets)
    return targets.summary()


if __name__ == "__main__":
    raise SystemExit(main())
