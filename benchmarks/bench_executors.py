"""Per-task overhead of the executors (fedtheory.executors) on many tiny tasks.

Maps a task that does nothing (``abs``) over ``--tasks`` items with the serial executor, the
local process pool (2 workers) and a Dask ``LocalCluster`` (2 single-threaded workers, if
``distributed`` is installed), and prints the wall time and the overhead per task: the wall
time over the number of tasks (the tasks themselves cost nothing). Cluster and pool start-up
are included in the wall time and also shown apart, measured with 1 task. Medians of
``--repeat`` runs. No target: the numbers say how small a task may be worth sending.

Usage: python benchmarks/bench_executors.py [--tasks N] [--repeat K]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import load_average  # noqa: E402

from fedtheory.executors import DaskExecutor, ProcessExecutor, SerialExecutor  # noqa: E402


def timed(executor, n: int) -> float:
    out: dict[int, int] = {}
    t0 = time.perf_counter()
    executor.map(abs, list(range(n)), out.__setitem__)
    seconds = time.perf_counter() - t0
    assert len(out) == n
    return seconds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    args = ap.parse_args(argv)
    print(f"medians of {args.repeat} runs; {load_average()}; no target (informational)")
    makers = [("serial", SerialExecutor), ("processes x2", lambda: ProcessExecutor(2))]
    try:
        import distributed  # noqa: F401

        makers.append(("dask LocalCluster x2", lambda: DaskExecutor("local:2")))
    except ImportError:
        print("distributed not installed: Dask skipped")
    print(f"{'executor':22s} {'1 task (start-up)':>18s} {f'{args.tasks} tasks':>12s} "
          f"{'per task':>10s}")
    for name, make in makers:
        start = float(np.median([timed(make(), 1) for _ in range(args.repeat)]))
        many = float(np.median([timed(make(), args.tasks) for _ in range(args.repeat)]))
        print(f"{name:22s} {start:16.3f} s {many:10.3f} s {1e3 * many / args.tasks:8.3f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
