r"""Seed 002, one step of DSGD / FedAvg with optimal client sampling from a fixed iterate.

Nothing here runs a trajectory: :func:`dsgd_ocs_step` and :func:`fedavg_ocs_step` draw
independent replicas of :math:`x^{k+1}` from one fixed iterate :math:`x^k`, whose mean estimates
the one-step conditional expectation :math:`\mathbb E[\,\cdot \mid x^k]` that Theorems 13, 15, 17
and 18 bound (:mod:`fedtheory.theory.ocs_theorems`). The trajectory engine is
:func:`fedtheory.simulate.simulate`.

The relative improvement factor :math:`\gamma^k = m / (\alpha^k (n - m) + m)` depends on
:math:`\alpha^k`, a ratio of expectations over the random updates (Definition 11). Given the
updates, the numerator is exact (eq. (6)): :math:`\sum_i \frac{1-p_i}{p_i}\|w_i U_i\|^2` with
:math:`p` of eq. (7); the denominator is :math:`\frac{n-m}{m}\sum_i\|w_iU_i\|^2`. So
:math:`\alpha^k` is estimated by a ratio of means over replicas of the updates drawn from an
*independent* stream (exact when there is no noise), with a delta-method confidence interval
(:func:`improvement_interval`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedtheory import stats
from fedtheory.problems import NoiseModel, QuadraticProblem
from fedtheory.sampling.ocs import optimal_probabilities

__all__ = [
    "GammaInterval",
    "alpha_terms",
    "dsgd_ocs_step",
    "fedavg_local_updates",
    "fedavg_ocs_step",
    "improvement_interval",
    "ocs_participation",
]


def ocs_participation(
    updates: np.ndarray, weights: np.ndarray, m: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    r"""Sample clients with the optimal probabilities (7) of the realised updates.

    Parameters
    ----------
    updates:
        :math:`U_i`, shape ``(replicas, n, d)``.
    weights:
        :math:`w`, shape ``(n,)``.
    m:
        Budget on the expected number of participants.
    rng:
        Source of the participation coins.

    Returns
    -------
    coef, p:
        ``coef[r, i]`` :math:`= 1_i w_i / p_i` (0 for absent clients and for :math:`p_i = 0`)
        and the probabilities, both ``(replicas, n)``; the master's aggregate is
        :math:`\sum_i` ``coef[r, i]`` :math:`U_i`.
    """
    norms = weights * np.linalg.norm(updates, axis=-1)
    p = optimal_probabilities(norms, m)
    present = rng.random(p.shape) < p
    coef = np.where(present & (p > 0), weights / np.where(p > 0, p, 1.0), 0.0)
    return coef, p


def dsgd_ocs_step(
    problem: QuadraticProblem,
    noise: NoiseModel,
    x: np.ndarray,
    eta: float,
    m: float,
    rng: np.random.Generator,
    replicas: int,
) -> np.ndarray:
    r"""Independent replicas of one DSGD step (2) with optimal client sampling (Algorithm 1),
    all from the same fixed iterate ``x``.

    .. math:: x^{k+1} = x^k - \eta \sum_{i\in S^k} \frac{w_i}{p_i^k} g_i^k,\quad
              g_i^k = \nabla f_i(x^k) + \xi_i^k .

    Each replica draws its own noise and participation given :math:`x^k`, so their mean
    estimates the one-step conditional expectation :math:`\mathbb E[\,\cdot \mid x^k]`; no
    replica is stepped twice (this is not a trajectory).

    Returns :math:`x^{k+1}`, shape ``(replicas, d)``.
    """
    x = np.asarray(x, dtype=float)
    grads = np.broadcast_to(problem.client_grads(x), (replicas, problem.n, problem.d))
    g = grads + noise.sample(grads, rng)
    coef, _ = ocs_participation(g, problem.weights, m, rng)
    return x - eta * np.einsum("rn,rnd->rd", coef, g)


def fedavg_local_updates(
    problem: QuadraticProblem,
    noise: NoiseModel,
    x: np.ndarray,
    eta_l: float,
    R: int,
    rng: np.random.Generator,
    replicas: int,
) -> np.ndarray:
    r"""Every client's update :math:`\Delta y_i = x - y_{i,R}` after ``R`` local SGD steps,
    in independent replicas that all start from the same fixed iterate ``x``.

    .. math:: y_{i,0} = x,\quad y_{i,r} = y_{i,r-1} - \eta_l\,(\nabla f_i(y_{i,r-1}) +
              \xi_{i,r-1}) .

    Returns shape ``(replicas, n, d)``.
    """
    n, d = problem.n, problem.d
    y = np.broadcast_to(np.asarray(x, dtype=float), (replicas, n, d)).copy()
    clients = np.tile(np.arange(n), replicas)
    for _ in range(R):
        grads = problem.client_gradients(y.reshape(-1, d), clients).reshape(y.shape)
        y -= eta_l * (grads + noise.sample(grads, rng))
    return x - y


def fedavg_ocs_step(
    problem: QuadraticProblem,
    noise: NoiseModel,
    x: np.ndarray,
    eta_l: float,
    eta_g: float,
    R: int,
    m: float,
    rng: np.random.Generator,
    replicas: int,
) -> np.ndarray:
    r"""Independent replicas of one round of FedAvg with optimal client sampling (Algorithm 3),
    all from the same fixed iterate ``x``.

    .. math:: x^{k+1} = x^k - \eta_g \sum_{i \in S^k} \frac{w_i}{p_i^k} \Delta y_i^k .

    As :func:`dsgd_ocs_step`: samples of :math:`x^{k+1}` given :math:`x^k` for the one-step
    conditional expectation, not a trajectory. Returns shape ``(replicas, d)``.
    """
    U = fedavg_local_updates(problem, noise, x, eta_l, R, rng, replicas)
    coef, _ = ocs_participation(U, problem.weights, m, rng)
    return np.asarray(x, dtype=float) - eta_g * np.einsum("rn,rnd->rd", coef, U)


@dataclass(frozen=True)
class GammaInterval:
    r"""Estimate and confidence interval of :math:`\gamma^k` (Definition 11)."""

    gamma: float
    lower: float
    upper: float
    alpha_hat: float
    replicas: int
    level: float

    def summary(self) -> dict[str, float]:
        return {"gamma": self.gamma, "gamma_lower": self.lower, "gamma_upper": self.upper,
                "alpha_hat": self.alpha_hat, "replicas": self.replicas, "level": self.level}


def alpha_terms(
    updates: np.ndarray, weights: np.ndarray, m: float
) -> tuple[np.ndarray, np.ndarray]:
    r"""Per replica, the OCS variance :math:`A` and the uniform-sampling variance :math:`B`.

    With :math:`u_i = w_i\|U_i\|` and :math:`p` of eq. (7),

    .. math:: A = \sum_i \frac{1-p_i}{p_i} u_i^2 ,\qquad B = \frac{n-m}{m}\sum_i u_i^2 ,

    the two variances of Definition 11 given the updates (eq. (6), exact over the sampling);
    :math:`\alpha = \mathbb E A / \mathbb E B`. ``updates`` ``(replicas, n, d)``.
    """
    u = weights * np.linalg.norm(updates, axis=-1)
    n = u.shape[-1]
    p = optimal_probabilities(u, m)
    A = np.sum(np.where(p > 0, u**2 * (1 - p) / np.where(p > 0, p, 1.0), 0.0), axis=-1)
    B = (n - m) / m * np.sum(u**2, axis=-1)
    return A, B


def improvement_interval(
    updates: np.ndarray | tuple[np.ndarray, np.ndarray],
    weights: np.ndarray,
    m: float,
    level: float = stats.DEFAULT_ALPHA,
) -> GammaInterval:
    r"""Interval for :math:`\gamma = m/(\alpha(n-m)+m)` from replicas of the updates.

    :math:`\hat\alpha = \bar A / \bar B` (see :func:`alpha_terms`) with the delta-method
    standard error :math:`\mathrm{sd}(A - \hat\alpha B)/(\sqrt N \bar B)`; the two-sided
    interval at false-alarm level ``level`` is clipped to :math:`[0, 1]` and mapped to
    :math:`\gamma` (decreasing in :math:`\alpha`).

    Parameters
    ----------
    updates:
        ``(replicas, n, d)``, or the pair ``(A, B)`` already computed by :func:`alpha_terms`.
    weights, m:
        As in eq. (7); ``m >= n`` gives :math:`\gamma = 1`.
    level:
        False-alarm level of the interval.

    Examples
    --------
    >>> import numpy as np
    >>> U = np.ones((5, 4, 2))  # equal updates: alpha = 1, gamma = m / n
    >>> improvement_interval(U, np.full(4, 0.25), 1).gamma
    0.25
    """
    n = len(weights)
    A, B = updates if isinstance(updates, tuple) else alpha_terms(updates, weights, m)
    reps = len(A)
    if m >= n:
        return GammaInterval(1.0, 1.0, 1.0, 0.0, reps, level)
    b = float(np.mean(B))
    if b <= 0:  # every update is zero: no sampling variance, gamma = 1 by continuity
        return GammaInterval(1.0, 1.0, 1.0, 0.0, reps, level)
    a_hat = float(np.mean(A)) / b
    se = float(np.std(A - a_hat * B, ddof=1)) / (np.sqrt(reps) * b) if reps > 1 else np.inf
    z = stats.z_quantile(level, "two")
    a_lo, a_hi = max(0.0, a_hat - z * se), min(1.0, a_hat + z * se)

    def g(a: float) -> float:
        return m / (a * (n - m) + m)

    return GammaInterval(g(a_hat), g(a_hi), g(a_lo), a_hat, reps, level)
