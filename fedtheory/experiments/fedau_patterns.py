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

import math
from typing import Any

import numpy as np

__all__ = ["METHODS", "PATTERNS", "PRESETS", "pattern_probabilities", "patterns_table"]

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


def patterns_table(preset: str = "quick", seed: int = 0) -> dict[str, Any]:
    r"""Run every method under every pattern in the engine (:func:`fedtheory.simulate.simulate`);
    per replica (seed) the mean of :math:`f(x_t) - f^\star` over the rounds recorded in the
    last 10% (every ``stride`` rounds, about 5 of them) and the final validation accuracy.

    Every method of a pattern runs with the same engine seed, so replica :math:`r` sees the
    same participation record under every method (the engine draws participation from its own
    stream of ``(seed, r)``): the comparisons are paired.

    Returns ``{"f_gap": {pattern: {method: (R,)}}, "accuracy": {...}, "p": (N,),
    "config": {...}}``.
    """
    from fedtheory.algorithms import get_rule
    from fedtheory.participation import get_process
    from fedtheory.problems.logistic import make_logistic_problem
    from fedtheory.simulate import simulate

    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {sorted(PRESETS)}, got {preset!r}")
    cfg = PRESETS[preset]
    prob = make_logistic_problem("digits", n_clients=cfg["clients"], alpha=0.5, seed=seed,
                                 lam=1e-2, weights="uniform", val_fraction=0.5)
    p = pattern_probabilities(prob)
    lr = 1.0 / prob.L
    T, R = cfg["rounds"], cfg["seeds"]
    last = max(1, T // 10)
    stride = max(1, last // 5)  # f at about 5 rounds of the last 10%
    engine_seed = int(np.random.SeedSequence([seed, 1]).generate_state(1)[0])
    out: dict[str, Any] = {"f_gap": {}, "accuracy": {}, "p": p,
                           "config": {**cfg, "lr": lr, "dataset": "digits", "lam": 1e-2,
                                      "val_fraction": 0.5, "seed": seed, "L": prob.L,
                                      "engine_seed": engine_seed}}
    for pat, (pname, pkw) in PATTERNS.items():
        out["f_gap"][pat], out["accuracy"][pat] = {}, {}
        for label, (rname, rkw) in METHODS.items():
            res = simulate(prob, get_rule(rname, **rkw), get_process(pname, p=p, **pkw),
                           rounds=T, replicas=R, lr=lr, local_steps=cfg["local_steps"],
                           seed=engine_seed, keep_replicas=True, record_every=stride)
            tail = res.rounds > T - last
            out["f_gap"][pat][label] = res.f_gap.replicas[:, tail].mean(axis=1)
            out["accuracy"][pat][label] = np.asarray(prob.accuracy(res.x))
    return out
