"""Speed of seed 001's table on the engine (``fedau.participation_patterns``).

Measurements (medians of ``--repeat`` runs, this process's CPU time, BLAS limited to one
thread as ``fedtheory verify`` runs its tasks):

1. one task of the quick preset: one pattern, 10 instances, 400 rounds, the five methods
   side by side in one ``simulate`` call (ProblemStack, ProcessStack, RuleStack, per-replica
   learning rates, shared streams);
2. the same runs as one ``simulate`` call per method (what the stacks save: the methods'
   local work batched in one call per step).

Target: a quick task within 9 s of CPU time (one core; 6.5 s measured when the table moved
onto the engine, against 4.7 s for the hand-written loop it replaced). Exit code 1 when it is
not met.

Usage: python benchmarks/bench_fedau_patterns.py [--repeat K]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import Targets, load_average, timed  # noqa: E402

from fedtheory.experiments import fedau_patterns as fp  # noqa: E402
from fedtheory.participation import ProcessStack  # noqa: E402
from fedtheory.problems import ProblemStack  # noqa: E402
from fedtheory.simulate import (  # noqa: E402
    DivergenceWarning,
    Execution,
    LocalWork,
    Metrics,
    MiniBatches,
    Run,
    Server,
    simulate,
)

#: CPU seconds of one quick task (one pattern, 10 instances, 400 rounds, five methods)
TASK_TARGET = 9.0


def _per_method(insts: list, data: dict, rounds: int) -> None:
    """The task's runs as one ``simulate`` call per method (no RuleStack)."""
    S = len(insts)
    problem = ProblemStack([fp.instance_problem(i, data) for i in insts])
    process = ProcessStack([fp.make_process("Bernoulli", i.p) for i in insts])
    p = np.stack([i.p for i in insts])
    for method, (g, h) in fp.LEARNING_RATES.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DivergenceWarning)
            simulate(problem, fp.method_rule(method, p), process,
                     Run(rounds=rounds, replicas=S, seed=0, dtype=np.float32),
                     LocalWork(lr=g, steps=5, batches=MiniBatches(16, wrap=True)),
                     server=Server(global_lr=h),
                     metrics=Metrics(rounds=(rounds,), skip=("f_gap", "grad_norm2", "dist2")),
                     execution=Execution(workers=1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="repeats per measurement")
    args = ap.parse_args(argv)
    print(f"medians of {args.repeat} runs, CPU time, BLAS on one thread; {load_average()}")
    cfg = fp.PRESETS["quick"]
    data = fp.digits_split(0)
    insts = fp._instances(0, 0, cfg["per_task"], cfg["clients"])
    targets = Targets()
    with threadpool_limits(1):
        task = timed(lambda: fp.pattern_run(preset="quick", seed=0, pattern="Bernoulli",
                                            first=0, count=cfg["per_task"]),
                     args.repeat, clock="cpu")
        apart = timed(lambda: _per_method(insts, data, cfg["rounds"]), args.repeat,
                      clock="cpu")
    print(f"one call per method (simulation only): median {np.median(apart):.2f} s cpu")
    targets.check("fedau_patterns quick task (5 methods x 10 instances, one call), CPU s",
                  task, "<=", TASK_TARGET, fmt=".2f", unit=" s")
    return targets.summary()


if __name__ == "__main__":
    raise SystemExit(main())
