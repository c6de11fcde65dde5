"""Wall time of ``fedtheory verify`` (every family, full preset by default) with 1 and 2 local
workers and a 2-worker Dask ``LocalCluster``, and the speed-up from 1 to 2 workers.

Each configuration is one run of the command line, timed as a whole (planning, pool or cluster
start-up and report included), with its JSON report written to ``--out``; the reports are
then compared claim by claim outside provenance and timings (they must be identical: the
executor never changes a number). Also prints, from the 1-worker report, the CPU seconds of
the longest claims and the sum over claims (the work to share out), and the longest task
(the floor of any parallel wall time).

The issue's targets on a 2-core machine: speed-up >= 1.8 from 1 to 2 workers, and <= 10
minutes with 2 workers; each printed with whether it is met (exit code 1 if one is not). A
run of the full preset takes tens of minutes, so each configuration runs once by default;
``--repeat K`` runs each K times (interleaved) and takes the medians.

Usage: python benchmarks/bench_full_verify.py [--preset full] [--out DIR] [--repeat K]
           [--configs jobs1,jobs2,dask2] [ids ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import Targets, load_average  # noqa: E402

from fedtheory.report import without_volatile  # noqa: E402

CONFIGS = {"jobs1": ["--jobs", "1"], "jobs2": ["--jobs", "2"], "dask2": ["--dask", "local:2"]}


def run(config: str, preset: str, out: Path, ids: list[str],
        tag: str = "") -> tuple[float, Path, Path]:
    report, log = out / f"{config}{tag}.json", out / f"{config}{tag}.log"
    cmd = [sys.executable, "-m", "fedtheory", "verify", *ids, "--preset", preset,
           *CONFIGS[config], "--json", str(report), "--no-record"]
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    t0 = time.perf_counter()
    with open(log, "w", encoding="utf-8") as fh:
        subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, check=False)
    return time.perf_counter() - t0, report, log


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ids", nargs="*", help="claim ids (default: all)")
    ap.add_argument("--preset", default="full", choices=("quick", "full"))
    ap.add_argument("--out", default="out/bench_full")
    ap.add_argument("--configs", default="jobs1,jobs2,dask2")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs per configuration, interleaved; medians reported (default 1)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"preset {args.preset}, {args.repeat} run(s) per configuration; {load_average()}")
    runs: dict[str, list[float]] = {}
    docs: dict[str, object] = {}
    for k in range(args.repeat):
        for config in args.configs.split(","):
            tag = f"-{k}" if args.repeat > 1 else ""
            wall, report, log = run(config, args.preset, out, args.ids, tag)
            runs.setdefault(config, []).append(wall)
            print(f"{config:6s} wall {wall:7.1f} s ({wall / 60:.1f} min)  log {log}", flush=True)
            if report.exists() and config not in docs:
                docs[config] = json.loads(report.read_text(encoding="utf-8"))
    for config, walls in runs.items():
        if len(walls) > 1:
            print(f"{config:6s} median wall {np.median(walls):7.1f} s")
    names = list(docs)
    for other in names[1:]:
        same = without_volatile(docs[names[0]]) == without_volatile(docs[other])
        print(f"report {other} identical to {names[0]} outside provenance and timings: {same}")
    targets = Targets()
    if "jobs1" in runs and "jobs2" in runs:
        speedups = np.asarray(runs["jobs1"]) / np.asarray(runs["jobs2"])
        targets.check("speed-up from 1 to 2 workers", speedups, ">=", 1.8)
    if "jobs2" in runs:
        targets.check(f"minutes with 2 workers ({args.preset} preset)",
                      np.asarray(runs["jobs2"]) / 60, "<=", 10.0, fmt=".1f")
    if "jobs1" in docs:
        claims = docs["jobs1"]["claims"]
        total = sum(c["seconds"] for c in claims)
        print(f"sum of claim seconds (1 worker, tasks included where a claim computed them): "
              f"{total:.0f} s")
        for c in sorted(claims, key=lambda c: -c["seconds"])[:8]:
            print(f"  {c['id']:45s} {c['seconds']:7.1f} s  {c['verdict']}")
    return targets.summary()


if __name__ == "__main__":
    raise SystemExit(main())
