"""The engine runs of the ``fedavg`` claims (seed 003) cut into replica ranges, and the exact
exponents of the rate experiment: pure compute (the claims' datasets, which run these pieces
as tasks, are in :mod:`fedtheory.claims.fedavg._data`).

An engine run of :func:`~fedtheory.experiments.fedavg_experiments.run_final` is cut into
replica ranges of about :data:`TASK_SECONDS` of work each (:func:`replica_pieces`: a fixed
function of the run's sizes, never of the executor); concatenated
(:func:`~fedtheory.experiments.fedavg_experiments.concat_runs`), the pieces have bitwise the
iterates of the uncut run (``first_replica``: the engine's per-replica streams).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedtheory.experiments import fedavg_experiments as fx
from fedtheory.validation import integer_at_least

__all__ = ["TASK_SECONDS", "exact_exponent_windows", "problem", "replica_pieces",
           "run_in_pieces"]

#: Estimated seconds of work per piece: an engine run is cut into replica ranges of about
#: this cost (a fixed function of the run's sizes, so of the preset: never of the executor).
TASK_SECONDS = 8.0

#: Rough seconds per replica x round x local step x client x coordinate (one core), for the
#: pieces' cost estimates (scheduling and time left only).
_SECONDS_PER_UNIT = 1e-8


def _ranges(replicas: int, per: int) -> list[tuple[int, int]]:
    """``(first, count)`` of nearly equal consecutive ranges of at most ``per`` replicas."""
    k = -(-replicas // per)
    sizes = [replicas // k + (1 if j < replicas % k else 0) for j in range(k)]
    return list(zip([sum(sizes[:j]) for j in range(k)], sizes, strict=True))


def replica_pieces(specs: list[dict[str, Any]], task_seconds: float = TASK_SECONDS
                   ) -> list[list[tuple[str, dict[str, Any], float]]]:
    """Each keyword dict of ``specs`` (of :func:`~fedtheory.experiments.fedavg_experiments.
    run_final`) cut into replica ranges of about ``task_seconds`` each: per spec, the pieces
    ``(name, keywords, cost)``, ``name`` ``run{j}-r{first}``.

    >>> prob = fx.make_problem(1.0, n=4, d=2, mu=0.5, L=1.0, problem_seed=0)
    >>> spec = {"problem": prob, "rounds": 10, "local_steps": 1, "replicas": 5}
    >>> [name for name, _, _ in replica_pieces([spec], task_seconds=2.5e-6)[0]]
    ['run0-r0', 'run0-r3']
    """
    if not task_seconds > 0:
        raise ValueError(f"task_seconds must be > 0, got {task_seconds!r}")
    out = []
    for j, spec in enumerate(specs):
        prob = spec["problem"]
        per_replica = (spec["rounds"] * spec["local_steps"] * prob.n * prob.d
                       * _SECONDS_PER_UNIT)
        per = max(1, int(task_seconds / per_replica))
        out.append([(f"run{j}-r{first}", {**spec, "replicas": count, "first_replica": first},
                     count * per_replica) for first, count in _ranges(spec["replicas"], per)])
    return out


def run_in_pieces(specs: list[dict[str, Any]], task_seconds: float = TASK_SECONDS
                  ) -> list[dict[str, Any]]:
    """:func:`~fedtheory.experiments.fedavg_experiments.run_final` of each spec, computed
    piece by piece (:func:`replica_pieces`) and concatenated: what a run's tasks give."""
    return [fx.concat_runs([fx.run_final(**kw) for _, kw, _ in pieces])
            for pieces in replica_pieces(specs, task_seconds)]


def problem(params: dict[str, Any]) -> Any:
    """An experiment's problem: ``make_problem(params["zeta2"], **params["problem_kw"])``."""
    return fx.make_problem(params["zeta2"], **params["problem_kw"])


def exact_exponent_windows(params: dict[str, Any], windows: int = 8) -> dict[str, np.ndarray]:
    """Exact exponents of the final E||grad f||^2 in R over windows [R, 16 R], R = R_0 4^j, for
    FedAvg and parallel SGD on the rate experiment's problem (its ``params``; closed-form
    moments), and the exact ratio FedAvg / SGD at the window ends."""
    integer_at_least("windows", windows)
    prob = problem(params)

    def final(R: int) -> tuple[float, float]:
        return fx.fedavg_and_sgd_final(prob, rounds=R, local_steps=params["local_steps"],
                                       c=params["c"], sigma2=params["sigma2"], x0=prob.x_star)

    lo = np.array([params["rounds_grid"][0] * 4**j for j in range(windows)])
    a = np.array([final(int(r)) for r in lo])
    b = np.array([final(int(16 * r)) for r in lo])
    out: dict[str, np.ndarray] = {"R": lo}
    for j, key in enumerate(("fedavg", "sgd")):
        out[key] = np.log(b[:, j] / a[:, j]) / np.log(16.0)
        out[f"{key}_end"] = b[:, j]
    out["ratio"] = out["fedavg_end"] / out["sgd_end"]
    return out
