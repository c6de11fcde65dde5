r"""Monte Carlo runs for the ``fedau`` claims (seed 001): Algorithm 2 on sampled
participation, Algorithm 1 with time-constant weights on quadratics (engine).

Every function takes a :class:`numpy.random.Generator` (or a seed) and is deterministic
given it; replicas, rounds and clients are array axes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fedtheory.algorithms import get_rule
from fedtheory.algorithms.fedau import fedau_state
from fedtheory.participation import BernoulliParticipation
from fedtheory.problems import QuadraticProblem
from fedtheory.simulate import simulate
from fedtheory.theory.fedau import argmin_h, bernoulli_weight_error, long_run_weight

__all__ = [
    "fixed_point_run",
    "objective_by_weighting",
    "omega_after_intervals",
    "quadratic_instance",
    "sample_masks",
    "weight_error_curves",
    "weight_error_samples",
]


def sample_masks(process: Any, rng: np.random.Generator, replicas: int,
                 rounds: int) -> np.ndarray:
    """``rounds`` masks of ``replicas`` copies of a participation process, as
    ``(replicas, rounds, n)`` (the layout of :func:`~fedtheory.algorithms.fedau_weights`)."""
    return np.moveaxis(process.sample(rng, replicas, rounds), 0, 1)


def omega_after_intervals(p: Any, K: float, m: int, replicas: int,
                          rng: np.random.Generator) -> np.ndarray:
    r"""Per replica and client, Algorithm 2's weight right after its ``m``-th recorded
    interval, under Bernoulli(:math:`p_n`) participation: ``(replicas, n)``.

    The intervals are i.i.d. :math:`\min(G, K)`, so this is the mean of ``m`` of them and
    :math:`\mathbb E = \mathbb E\min(G,K)` exactly. With finite ``K`` the horizon
    :math:`mK + 1` guarantees ``m`` intervals; with ``K = inf`` it is :math:`40m/\min p`
    and a replica that still has fewer raises ``RuntimeError`` (never dropped silently).
    """
    p = np.atleast_1d(np.asarray(p, float))
    T = int(m * K + 1) if math.isfinite(K) else int(math.ceil(40 * m / p.min()))
    masks = sample_masks(BernoulliParticipation(p), rng, replicas, T)
    st = fedau_state(masks, K)
    reached = st["intervals"] >= m
    if not reached[:, -1].all():
        raise RuntimeError(f"some replica recorded fewer than m={m} intervals in {T} rounds")
    first = np.argmax(reached, axis=1)  # (R, n): first round whose weight averages m
    return np.take_along_axis(st["omega"], first[:, None, :], axis=1)[:, 0, :]


def weight_error_samples(p: Any, K: float, T: int, replicas: int,
                         rng: np.random.Generator) -> np.ndarray:
    r"""Per replica :math:`\frac1{NT}\sum_{t<T}\sum_n(p_n\omega_t^n-1)^2` under
    Bernoulli(:math:`p_n`) participation, ``(replicas,)``."""
    p = np.atleast_1d(np.asarray(p, float))
    masks = sample_masks(BernoulliParticipation(p), rng, replicas, T)
    omega = fedau_state(masks, K)["omega"]
    return np.mean((p * omega - 1.0) ** 2, axis=(1, 2))


def fixed_point_run(A: np.ndarray, c: np.ndarray, p: np.ndarray, omega: np.ndarray, *,
                    lr: float, global_lr: float, rounds: int, replicas: int, seed: int,
                    local_steps: int = 1) -> np.ndarray:
    r"""Algorithm 1 with time-constant weights :math:`\omega_n` (rule ``fedavg_weighted``)
    on the diagonal quadratics :math:`F_n = \frac12\sum_k a_{nk}(x_k-c_{nk})^2` with
    Bernoulli(:math:`p_n`) participation, in the engine: the final iterates ``(R, d)``.
    The participation streams depend on ``seed`` only, so runs with different weights share
    their participation draws (common random numbers)."""

    prob = QuadraticProblem(np.asarray(A, float), np.asarray(c, float))
    res = simulate(prob, get_rule("fedavg_weighted", omega=np.asarray(omega, float)),
                   BernoulliParticipation(np.asarray(p, float)), rounds=rounds,
                   replicas=replicas, lr=lr, global_lr=global_lr, local_steps=local_steps,
                   x0=np.zeros(prob.d), seed=seed, record_every=rounds, workers=1)
    return res.x


def weight_error_curves(p: Any, Ks: Any, T_max: int) -> dict[str, Any]:
    r"""Theorem 3's left side, exactly (:func:`~fedtheory.theory.fedau.bernoulli_weight_error`),
    for every horizon :math:`T\le T_{\max}` and each cutoff in ``Ks``: ``{"T": (T_max,),
    "error": {K: (T_max,)}, "bias": {K: float}, "p": list}`` with
    :math:`\frac1{NT}\sum_{t<T}\sum_n\mathbb E[(p_n\omega_t^n-1)^2]` and the bias term
    :math:`\frac1N\sum_n(1-p_n)^{2K}`."""

    p = np.atleast_1d(np.asarray(p, float))
    T = np.arange(1, T_max + 1)
    out: dict[str, Any] = {"T": T, "error": {}, "bias": {}, "p": p.tolist()}
    for K in Ks:
        e = np.mean([bernoulli_weight_error(float(x), K, T_max) for x in p], axis=0)
        out["error"][K] = np.cumsum(e) / T
        out["bias"][K] = float(np.mean((1 - p) ** (2 * K))) if math.isfinite(K) else 0.0
    return out


def objective_by_weighting(A: np.ndarray, c: np.ndarray, p: np.ndarray,
                           K: int = 5) -> dict[str, Any]:
    r"""The point each weighting drives Algorithm 1 to (Theorem 1, one local step:
    :math:`\arg\min h`) on diagonal quadratics, and its true excess objective
    :math:`f(x) - f^\star`, :math:`f = \frac1N\sum_nF_n`: :math:`\omega = 1/p` (known
    statistics), :math:`\omega = 1` (average all) and FedAU's long-run weights with cutoff
    ``K`` under Bernoulli, Markov (correlation 0.5) and cyclic (period 10) participation."""

    A, c, p = (np.asarray(v, float) for v in (A, c, p))
    ones = np.ones(len(p))

    def excess(x: np.ndarray) -> float:
        xs = argmin_h(A, c, ones, ones)
        F = lambda z: 0.5 * np.sum(A * (z[None, :] - c) ** 2) / len(p)  # noqa: E731
        return float(F(x) - F(xs))

    weightings = {"known statistics (1/p)": 1 / p, "average all (1)": ones}
    for pattern, kw in (("bernoulli", {}), ("markov", {"correlation": 0.5}),
                        ("cyclic", {"period": 10})):
        weightings[f"FedAU K={K}, {pattern}"] = np.array(
            [float(long_run_weight(pattern, float(x), K, **kw)) for x in p])
    points = {k: argmin_h(A, c, p, w) for k, w in weightings.items()}
    return {"points": points, "excess": {k: excess(x) for k, x in points.items()},
            "weights": {k: w.tolist() for k, w in weightings.items()}, "K": K}


def quadratic_instance() -> dict[str, np.ndarray]:
    """The instance of ``fedau.objective_inconsistency``: N = 6 heterogeneous diagonal
    quadratics in d = 2 (Hessian diagonals ``A``, optima ``c``), :math:`p_n` increasing with
    the optimum's first coordinate (participation correlated with the data)."""
    A = np.array([[1.0, 2.0], [2.0, 1.0], [0.5, 1.5], [1.5, 0.5], [1.0, 1.0], [2.0, 2.0]])
    c = np.array([[-3.0, 1.0], [-2.0, -1.0], [-1.0, 2.0], [1.0, 0.0], [2.0, -2.0], [3.0, 1.0]])
    p = np.array([0.1, 0.2, 0.35, 0.5, 0.7, 0.9])
    return {"A": A, "c": c, "p": p}
