r"""The seed's table (seed 001, 'Experiments'), recomputed: methods x participation patterns on
ℓ2-regularised multinomial logistic regression on the digits data set.

* Clients: :func:`~fedtheory.problems.logistic.make_logistic_problem` (digits, Dirichlet
  label split), objective :math:`f = \frac1N\sum_nF_n` (uniform weights, as in the seed).
* Participation correlated with the data: :math:`p_n = p_{\min} + (p_{\max}-p_{\min})
  \bar y_n/9`, :math:`\bar y_n` the mean label of client :math:`n`'s training samples.
* Patterns with the same stationary :math:`p_n`: Bernoulli, Markov (on/off chain, lag-one
  correlation 0.5, started in its stationary law) and cyclic (period 10, random phase).
* Methods: FedAU (:math:`K=\infty` and :math:`K=50`), "average participating"
  (``fedavg``), "average all" (``fedavg_all``), "known participation statistics"
  (``fedavg_is``, :math:`\omega_n = 1/p_n`).

Every method of a pattern runs in the engine with the same engine seed, so replica :math:`r`
sees the same participation draws under every method (common random numbers): the
comparisons are paired.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from fedtheory.tasks import dataset, gather_calls

__all__ = ["METHODS", "PATTERNS", "PRESETS", "pattern_probabilities", "pattern_run",
           "patterns_data", "patterns_table"]

#: method label -> (rule name, parameters).
METHODS: dict[str, tuple[str, dict[str, Any]]] = {
    "FedAU (K=inf)": ("fedau", {"K": math.inf}),
    "FedAU (K=50)": ("fedau", {"K": 50}),
    "average participating": ("fedavg", {}),
    "average all": ("fedavg_all", {}),
    "known statistics": ("fedavg_is", {}),
}

#: pattern label -> (process name, parameters besides p).
PATTERNS: dict[str, tuple[str, dict[str, Any]]] = {
    "Bernoulli": ("bernoulli", {}),
    "Markovian": ("markov", {"correlation": 0.5}),
    "cyclic": ("cyclic", {"period": 10}),
}

#: sizes per preset: seeds (replicas), rounds, clients, local steps.
PRESETS: dict[str, dict[str, int]] = {
    "quick": {"seeds": 10, "rounds": 150, "clients": 10, "local_steps": 1},
    "full": {"seeds": 20, "rounds": 600, "clients": 20, "local_steps": 2},
}


def pattern_probabilities(problem: Any, p_min: float = 0.1, p_max: float = 0.9) -> np.ndarray:
    r""":math:`p_n = p_{\min} + (p_{\max}-p_{\min})\,r_n/(N-1)`, :math:`r_n` the rank of
    client :math:`n`'s mean label among the clients: participation grows with the label mix
    (correlated with the data)."""
    ybar = np.array([np.mean(y) for y in problem.data.y_clients])
    rank = np.argsort(np.argsort(ybar, kind="stable"), kind="stable")
    return p_min + (p_max - p_min) * rank / max(1, problem.n - 1)


@functools.lru_cache(maxsize=2)
def _problem(clients: int, seed: int) -> Any:
    from fedtheory.problems.logistic import make_logistic_problem

    return make_logistic_problem("digits", n_clients=clients, alpha=0.5, seed=seed, lam=1e-2,
                                 weights="uniform", val_fraction=0.5)


def _setup(preset: str, seed: int) -> dict[str, Any]:
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {sorted(PRESETS)}, got {preset!r}")
    cfg = PRESETS[preset]
    prob = _problem(cfg["clients"], seed)
    T = cfg["rounds"]
    last = max(1, T // 10)
    return {"cfg": cfg, "prob": prob, "p": pattern_probabilities(prob), "lr": 1.0 / prob.L,
            "last": last, "stride": max(1, last // 5),  # f at about 5 rounds of the last 10%
            "engine_seed": int(np.random.SeedSequence([seed, 1]).generate_state(1)[0])}


def pattern_run(*, preset: str, seed: int, pattern: str, method: str) -> dict[str, np.ndarray]:
    r"""One method under one pattern (:func:`patterns_table`'s runs; a task): per replica the
    tail mean of :math:`f - f^\star` and the final validation accuracy."""
    from fedtheory.algorithms import get_rule
    from fedtheory.participation import get_process
    from fedtheory.simulate import simulate

    su = _setup(preset, seed)
    cfg, prob, T = su["cfg"], su["prob"], su["cfg"]["rounds"]
    (pname, pkw), (rname, rkw) = PATTERNS[pattern], METHODS[method]
    res = simulate(prob, get_rule(rname, **rkw), get_process(pname, p=su["p"], **pkw),
                   rounds=T, replicas=cfg["seeds"], lr=su["lr"], local_steps=cfg["local_steps"],
                   seed=su["engine_seed"], keep_replicas=True, record_every=su["stride"])
    tail = res.rounds > T - su["last"]
    return {"f_gap": res.f_gap.replicas[:, tail].mean(axis=1),
            "accuracy": np.asarray(prob.accuracy(res.x))}


def patterns_table(preset: str = "quick", seed: int = 0,
                   run_many: Callable[[list[dict[str, Any]]], list[Any]] | None = None
                   ) -> dict[str, Any]:
    r"""Run every method under every pattern in the engine (:func:`fedtheory.simulate.simulate`);
    per replica (seed) the mean of :math:`f(x_t) - f^\star` over the rounds recorded in the
    last 10% (every ``stride`` rounds, about 5 of them) and the final validation accuracy.

    Every method of a pattern runs with the same engine seed, so replica :math:`r` sees the
    same participation record under every method (the engine draws participation from its own
    stream of ``(seed, r)``): the comparisons are paired. Each (pattern, method) is one
    :func:`pattern_run`, all made by ``run_many`` (keyword dicts to results; default: here,
    one after the other; :func:`patterns_data`: as tasks).

    Returns ``{"f_gap": {pattern: {method: (R,)}}, "accuracy": {...}, "p": (N,),
    "config": {...}}``.
    """
    su = _setup(preset, seed)
    cfg, prob = su["cfg"], su["prob"]
    specs = [{"preset": preset, "seed": seed, "pattern": pat, "method": label}
             for pat in PATTERNS for label in METHODS]
    runs = (run_many or (lambda ss: [pattern_run(**x) for x in ss]))(specs)
    out: dict[str, Any] = {"f_gap": {pat: {} for pat in PATTERNS},
                           "accuracy": {pat: {} for pat in PATTERNS}, "p": su["p"],
                           "config": {**cfg, "lr": su["lr"], "dataset": "digits", "lam": 1e-2,
                                      "val_fraction": 0.5, "seed": seed, "L": prob.L,
                                      "engine_seed": su["engine_seed"]}}
    for spec, run in zip(specs, runs, strict=True):
        out["f_gap"][spec["pattern"]][spec["method"]] = run["f_gap"]
        out["accuracy"][spec["pattern"]][spec["method"]] = run["accuracy"]
    return out


#: Rough seconds per replica x round x local step x client of a run (one core): the tasks'
#: cost estimates (scheduling and time left only).
_SECONDS_PER_UNIT = 2e-5


@dataset("fedau.participation_patterns")
def patterns_data(ctx: Any) -> dict[str, Any]:
    """:func:`patterns_table` of the claim's preset and seed (cached), each (pattern, method)
    a task."""
    cfg = PRESETS[ctx.preset]
    cost = cfg["seeds"] * cfg["rounds"] * cfg["local_steps"] * cfg["clients"] * _SECONDS_PER_UNIT
    return patterns_table(ctx.preset, ctx.seed,
                          run_many=lambda specs: gather_calls(pattern_run, specs, cost=cost,
                                                              name="run"))
