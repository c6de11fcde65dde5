r"""Seed 002, Theorems 13, 15, 17 and 18: one step of DSGD / FedAvg with optimal client sampling.

Every theorem is a one-step recursion. It is checked exactly as stated, as a conditional
expectation from a fixed iterate :math:`x^k` (the case :math:`k = 0`, :math:`x^0` deterministic,
of the theorem's full-expectation statement), on :class:`~fedtheory.problems.QuadraticProblem`
instances whose stochastic gradients :math:`g = \nabla f_i(y) + \xi` meet Assumptions 7/8 with
equality (:class:`~fedtheory.problems.RelativeNoise`: :math:`\mathbb E\|\xi\|^2 = M\|\nabla
f_i\|^2 + \sigma^2`) and, for the non-convex theorems, Assumption 9 with
:math:`\rho = \sup_x \sum_i w_i\|\nabla f_i(x) - \nabla f(x)\|^2` (identical Hessians, so that
:math:`\rho` is finite and attained everywhere). :math:`L, \mu, M, \sigma^2, \rho, W = \max_i
w_i, Z_i = f_i(x^\star) - f_i^\star` all come from the problem.

The relative improvement factor :math:`\gamma^k = m / (\alpha^k (n - m) + m)` depends on
:math:`\alpha^k`, a ratio of expectations over the random updates (Definition 11). Given the
updates, the numerator is exact (eq. (6)): :math:`\sum_i \frac{1-p_i}{p_i}\|w_i U_i\|^2` with
:math:`p` of eq. (7); the denominator is :math:`\frac{n-m}{m}\sum_i\|w_iU_i\|^2`. So
:math:`\alpha^k` is estimated by a ratio of means over replicas of the updates drawn from an
*independent* stream (exact when there is no noise), with a delta-method confidence interval.
The theorem's step-size conditions and right-hand side are then evaluated at the end of that
interval least favourable to a refutation: step sizes that satisfy the conditions for every
:math:`\gamma` in the interval, and the right-hand side (decreasing in :math:`\gamma` for all four
theorems) at the lower limit :math:`\gamma_{lo}`. The false-alarm level is split between the
:math:`\gamma` interval and the one-sided test of the recursion (Bonferroni).

This module holds one step of each method (DSGD and FedAvg with OCS participation), the
improvement-factor interval, each theorem's step-size limit and right-hand side (and those of
the corrections), and the exact rational counterexamples; the Monte Carlo scenarios that use
them are in :mod:`fedtheory.experiments.ocs_theorems`, the claims in
``fedtheory/claims/ocs/``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from fedtheory import stats
from fedtheory.problems import NoiseModel, QuadraticProblem
from fedtheory.sampling.ocs import optimal_probabilities
from fedtheory.symbolic.enumeration import exact_expectation

__all__ = [
    "CE13",
    "CE13_TEXT",
    "CE17_TEXT",
    "GammaInterval",
    "alpha_terms",
    "dsgd_ocs_step",
    "exact_ocs_probabilities",
    "fedavg_local_updates",
    "fedavg_ocs_step",
    "improvement_interval",
    "ocs_participation",
    "theorem13_corrected_eta_max",
    "theorem13_corrected_rhs",
    "theorem13_eta_max",
    "theorem13_rhs",
    "theorem15_rhs",
    "theorem17_corrected_eta_max",
    "theorem17_corrected_rhs",
    "theorem17_eta_max",
    "theorem17_rhs",
    "theorem18_eta_max",
    "theorem18_rhs",
]


# ----------------------------------------------------------------------------- simulation
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
    r"""Replicas of one DSGD step (2) with optimal client sampling (Algorithm 1).

    .. math:: x^{k+1} = x^k - \eta \sum_{i\in S^k} \frac{w_i}{p_i^k} g_i^k,\quad
              g_i^k = \nabla f_i(x^k) + \xi_i^k .

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
    R: int,  # noqa: N803 (the paper's symbol)
    rng: np.random.Generator,
    replicas: int,
) -> np.ndarray:
    r"""Every client's update :math:`\Delta y_i = x - y_{i,R}` after ``R`` local SGD steps.

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
    R: int,  # noqa: N803
    m: float,
    rng: np.random.Generator,
    replicas: int,
) -> np.ndarray:
    r"""Replicas of one round of FedAvg with optimal client sampling (Algorithm 3).

    .. math:: x^{k+1} = x^k - \eta_g \sum_{i \in S^k} \frac{w_i}{p_i^k} \Delta y_i^k .
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


# ----------------------------------------------------------------------------- the theorems
def _common(problem: QuadraticProblem, noise: NoiseModel) -> dict[str, float]:
    w = problem.weights
    return {
        "L": problem.L,
        "M": noise.M,
        "sigma2": noise.sigma2,
        "W": float(w.max()),
        "S2": float(np.sum(w**2)),
        "S2Z": float(np.sum(w**2 * problem.Z)),
        "SZ": float(np.sum(w * problem.Z)),
    }


def _theorem13_form(problem: QuadraticProblem, noise: NoiseModel, x: np.ndarray, eta: float,
                    gamma: float, k: int) -> float:
    r""":math:`(1-\mu\eta)\|r^k\|^2 + \eta^2(\beta_1/\gamma - \beta_2)` with
    :math:`\beta_1 = kL(1+M)\sum_i w_i^2 Z_i + \sigma^2\sum_i w_i^2`,
    :math:`\beta_2 = kL\sum_i w_i^2 Z_i` (the seed's :math:`k = 2`, corrected :math:`k = 4`)."""
    c = _common(problem, noise)
    r2 = float(np.sum((np.asarray(x) - problem.x_star) ** 2))
    beta1 = k * c["L"] * (1 + c["M"]) * c["S2Z"] + c["sigma2"] * c["S2"]
    beta2 = k * c["L"] * c["S2Z"]
    return (1 - problem.mu * eta) * r2 + eta**2 * (beta1 / gamma - beta2)


def theorem13_eta_max(problem: QuadraticProblem, noise: NoiseModel, gamma: float) -> float:
    r"""Largest step of Theorem 13: :math:`\gamma^k / ((1 + WM)L)`."""
    c = _common(problem, noise)
    return gamma / ((1 + c["W"] * c["M"]) * c["L"])


def theorem13_rhs(
    problem: QuadraticProblem, noise: NoiseModel, x: np.ndarray, eta: float, gamma: float
) -> float:
    r"""Right-hand side of (20): :math:`(1-\mu\eta)\|r^k\|^2 + \eta^2(\beta_1/\gamma - \beta_2)`.

    .. math:: \beta_1 = \sum_i w_i^2 (2L(1+M)Z_i + \sigma^2),\quad
              \beta_2 = 2L\sum_i w_i^2 Z_i .
    """
    return _theorem13_form(problem, noise, x, eta, gamma, 2)


def theorem13_corrected_eta_max(
    problem: QuadraticProblem, noise: NoiseModel, gamma: float
) -> float:
    r"""Largest step of the corrected Theorem 13: :math:`\gamma / ((1 + 2W(1+M))L)`."""
    c = _common(problem, noise)
    return gamma / ((1 + 2 * c["W"] * (1 + c["M"])) * c["L"])


def theorem13_corrected_rhs(
    problem: QuadraticProblem, noise: NoiseModel, x: np.ndarray, eta: float, gamma: float
) -> float:
    r"""Corrected (20): :math:`(1-\mu\eta)\|r^k\|^2 + \eta^2(\beta_1'/\gamma - \beta_2')`.

    .. math:: \beta_1' = \sum_i w_i^2 (4L(1+M)Z_i + \sigma^2),\quad
              \beta_2' = 4L\sum_i w_i^2 Z_i .
    """
    return _theorem13_form(problem, noise, x, eta, gamma, 4)


def _rho(problem: QuadraticProblem) -> float:
    if problem.rho is None:
        raise ValueError("the problem has no finite rho (Assumption 9): use identical Hessians")
    return problem.rho


def theorem15_rhs(
    problem: QuadraticProblem, noise: NoiseModel, x: np.ndarray, eta: float, gamma: float
) -> float:
    r"""Right-hand side of (24) (any :math:`\eta > 0`).

    .. math:: f(x^k) - \eta\Big(1 - \frac{(1+M)L}{2\gamma}\eta\Big)\|\nabla f(x^k)\|^2
              + \eta^2 \frac{L}{2\gamma}\Big((1+M-\gamma)W\rho + \sum_i w_i^2\sigma^2\Big).
    """
    c = _common(problem, noise)
    L, M = c["L"], c["M"]
    gf2 = float(np.sum(problem.grad(np.asarray(x, dtype=float)) ** 2))
    beta = L / (2 * gamma) * ((1 + M - gamma) * c["W"] * _rho(problem) + c["S2"] * c["sigma2"])
    fx = float(problem.loss(np.asarray(x, dtype=float)))
    return fx - eta * (1 - (1 + M) * L / (2 * gamma) * eta) * gf2 + eta**2 * beta


def theorem17_eta_max(
    problem: QuadraticProblem, noise: NoiseModel, gamma: float, R: int  # noqa: N803
) -> float:
    r""":math:`\frac18\min\{\frac{1}{L(2+M/R)}, \frac{\gamma}{(1+W(1+M/R))L}\}`."""
    c = _common(problem, noise)
    L, a = c["L"], c["M"] / R
    return min(1 / (L * (2 + a)), gamma / ((1 + c["W"] * (1 + a)) * L)) / 8


def _theorem17_form(problem: QuadraticProblem, c: dict[str, float], x: np.ndarray, eta: float,
                    beta1: float, R: int) -> float:  # noqa: N803
    r""":math:`(1 - \tfrac{\mu\eta}{2})\|r^k\|^2 - \tfrac38\eta(f(x^k) - f^\star)
    + \eta^2\beta_1^k + \eta^3\beta_2` with :math:`\beta_2 = 72L^2(1 + \frac MR)
    \sum_i w_i Z_i` (Theorem 17 and its correction differ only in :math:`\beta_1^k`)."""
    L, a = c["L"], c["M"] / R
    x = np.asarray(x, dtype=float)
    r2 = float(np.sum((x - problem.x_star) ** 2))
    gap = float(problem.loss(x)) - problem.f_star
    beta2 = 72 * L**2 * (1 + a) * c["SZ"]
    mu = problem.mu_clients
    return (1 - mu * eta / 2) * r2 - 3 / 8 * eta * gap + eta**2 * beta1 + eta**3 * beta2


def theorem17_rhs(
    problem: QuadraticProblem,
    noise: NoiseModel,
    x: np.ndarray,
    eta: float,
    gamma: float,
    R: int,  # noqa: N803
) -> float:
    r"""(27) multiplied by :math:`\eta > 0`, as an upper bound on :math:`\mathbb E\|r^{k+1}\|^2`.

    .. math:: \mathbb E\|r^{k+1}\|^2 \le (1 - \tfrac{\mu\eta}{2})\|r^k\|^2
              - \tfrac38\eta(f(x^k) - f^\star) + \eta^2\beta_1^k + \eta^3\beta_2,

    :math:`\beta_1^k = \frac{2\sigma^2}{\gamma R}\sum_i w_i^2 + 4L(\frac MR + 1 - \gamma)
    \sum_i w_i^2 Z_i`, :math:`\beta_2 = 72L^2(1 + \frac MR)\sum_i w_i Z_i`, :math:`\mu` the
    strong convexity of every :math:`f_i`.
    """
    c = _common(problem, noise)
    L, a = c["L"], c["M"] / R
    beta1 = 2 * c["sigma2"] / (gamma * R) * c["S2"] + 4 * L * (a + 1 - gamma) * c["S2Z"]
    return _theorem17_form(problem, c, x, eta, beta1, R)


def theorem17_corrected_eta_max(
    problem: QuadraticProblem, noise: NoiseModel, gamma: float, R: int  # noqa: N803
) -> float:
    r""":math:`\frac18\min\{\frac{1}{L(2+M/R)}, \frac{\gamma}{(1+2W(1+M/R))L}\}`."""
    c = _common(problem, noise)
    L, a = c["L"], c["M"] / R
    return min(1 / (L * (2 + a)), gamma / ((1 + 2 * c["W"] * (1 + a)) * L)) / 8


def theorem17_corrected_rhs(
    problem: QuadraticProblem,
    noise: NoiseModel,
    x: np.ndarray,
    eta: float,
    gamma: float,
    R: int,  # noqa: N803
) -> float:
    r"""Corrected (27), as an upper bound on :math:`\mathbb E\|r^{k+1}\|^2`.

    As :func:`theorem17_rhs` with
    :math:`\beta_1^k = \frac{17\sigma^2}{8\gamma R}\sum_i w_i^2
    + \frac{8L}{\gamma}(\frac MR + 1 - \gamma)\sum_i w_i^2 Z_i`.
    """
    c = _common(problem, noise)
    L, a = c["L"], c["M"] / R
    beta1 = 17 * c["sigma2"] / (8 * gamma * R) * c["S2"] + 8 * L / gamma * (a + 1 - gamma) * c[
        "S2Z"]
    return _theorem17_form(problem, c, x, eta, beta1, R)


def theorem18_eta_max(problem: QuadraticProblem, noise: NoiseModel, R: int) -> float:  # noqa: N803
    r""":math:`1/(8L(2 + M/R))`."""
    return 1 / (8 * problem.L * (2 + noise.M / R))


def theorem18_rhs(
    problem: QuadraticProblem,
    noise: NoiseModel,
    x: np.ndarray,
    eta: float,
    gamma: float,
    R: int,  # noqa: N803
) -> float:
    r"""Right-hand side of (29).

    .. math:: f(x^k) - \frac{3\eta}{8}\Big(1 - \frac{10\eta L}{3}\Big)\|\nabla f(x^k)\|^2
              + \eta\frac\rho8 + \eta^2\Big(\frac\rho4 + \frac{\sigma^2}{\gamma R}\sum_i w_i^2
              \Big)L .
    """
    c = _common(problem, noise)
    L, rho = c["L"], _rho(problem)
    x = np.asarray(x, dtype=float)
    gf2 = float(np.sum(problem.grad(x) ** 2))
    beta = (rho / 4 + c["sigma2"] / (gamma * R) * c["S2"]) * L
    return float(problem.loss(x)) - 3 * eta / 8 * (1 - 10 * eta * L / 3) * gf2 + eta * rho / 8 \
        + eta**2 * beta


# ----------------------------------------------------------------------------- exact arithmetic
def exact_ocs_probabilities(norms: Sequence[Fraction], m: int) -> list[Fraction]:
    """Eq. (7) in exact rational arithmetic (norms sorted increasingly, as the main text)."""
    n = len(norms)
    s = sorted(norms)
    ell = max(
        l for l in range(1, n + 1) if m + l - n > 0 and (m + l - n) * s[l - 1] <= sum(s[:l])
    )
    total, thr = sum(s[:ell]), s[ell - 1]
    out = []
    for u in norms:
        if u > thr:
            out.append(Fraction(1))
        elif total == 0:
            out.append(Fraction(0))
        else:
            out.append(min(Fraction(m + ell - n) * u / total, Fraction(1)))
    return out


def _exact_gamma(u: Sequence[Fraction], m: int) -> tuple[Fraction, list[Fraction]]:
    n = len(u)
    p = exact_ocs_probabilities(u, m)
    opt = sum((ui * ui * (1 - pi) / pi for ui, pi in zip(u, p, strict=True) if pi > 0), Fraction(0))
    unif = Fraction(n - m, m) * sum(ui * ui for ui in u)
    alpha = opt / unif
    return Fraction(m) / (alpha * (n - m) + m), p


def _fraction_sqrt(q: Fraction) -> Fraction:
    """Exact square root of a rational that is a perfect square (ValueError otherwise)."""
    a, b = math.isqrt(q.numerator), math.isqrt(q.denominator)
    if a * a != q.numerator or b * b != q.denominator:
        raise ValueError(f"q must be the square of a rational, got {q}")
    return Fraction(a, b)


def exact_dsgd_counterexample(
    weights: Sequence[Fraction],
    centers: Sequence[Fraction],
    x: Fraction,
    m: int,
    corrected: bool = False,
) -> dict[str, Fraction]:
    r"""Theorem 13 (or its correction) in exact arithmetic on :math:`f_i = \tfrac12(x-c_i)^2`.

    One dimension, :math:`L = \mu = 1`, exact gradients (Assumption 7 with
    :math:`M = \sigma^2 = 0`), so :math:`\gamma^k` is exact; :math:`\eta^k` is the largest step
    allowed, and :math:`\mathbb E\|r^{k+1}\|^2` enumerates all :math:`2^n` participation patterns
    of the independent sampling with the probabilities (7).

    >>> F = Fraction
    >>> out = exact_dsgd_counterexample([F(3, 4), F(1, 4)], [F(0), F(1)], F(1, 2), 1)
    >>> out["lhs"] > out["rhs"]
    True
    """
    n = len(weights)
    x_star = sum((w * c for w, c in zip(weights, centers, strict=True)), Fraction(0))
    g = [x - c for c in centers]
    u = [w * abs(gi) for w, gi in zip(weights, g, strict=True)]
    gamma, p = _exact_gamma(u, m)
    W = max(weights)
    eta = gamma / (1 + 2 * W) if corrected else gamma  # M = 0, L = 1
    Z = [(x_star - c) ** 2 / 2 for c in centers]
    s2z = sum((w * w * z for w, z in zip(weights, Z, strict=True)), Fraction(0))
    k = 4 if corrected else 2
    beta1, beta2 = k * s2z, k * s2z  # sigma^2 = M = 0, L = 1

    def sq_dist(pattern: np.ndarray) -> Fraction:
        G = sum((weights[i] / p[i] * g[i] for i in range(n) if pattern[i]), Fraction(0))
        return (x - eta * G - x_star) ** 2

    lhs = exact_expectation(sq_dist, n, p)
    rhs = (1 - eta) * (x - x_star) ** 2 + eta**2 * (beta1 / gamma - beta2)
    return {"lhs": lhs, "rhs": rhs, "gamma": gamma, "eta": eta, "x_star": x_star,
            "p": p, "beta1": beta1, "beta2": beta2}


def exact_fedavg_counterexample(
    n: int = 8, m: int = 1, R: int = 2, corrected: bool = False  # noqa: N803
) -> dict[str, Fraction]:
    r"""Theorem 17 (or its correction) in exact arithmetic at :math:`x^k = x^\star`.

    :math:`f_i = \tfrac12(x - c_i)^2` in one dimension with :math:`c_i = \pm 1` (half each,
    ``n`` even), :math:`w_i = 1/n`, exact gradients (:math:`M = \sigma^2 = 0`), so every update
    has the same norm, :math:`p_i = m/n` and :math:`\gamma = m/n` exactly; :math:`\eta_g` at its
    lower limit (:math:`\sqrt{\gamma/\sum_i w_i^2} = 1`), :math:`\eta` the largest step allowed,
    :math:`\eta_l = \eta/(R\eta_g)`. Returns both sides of (27) multiplied by :math:`\eta`.

    >>> out = exact_fedavg_counterexample()
    >>> out["lhs"] > out["rhs"], out["gamma"]
    (True, Fraction(1, 8))
    """
    if n % 2 or n < 2:
        raise ValueError(f"n must be even and >= 2, got {n!r}")
    w = [Fraction(1, n)] * n
    centers = [Fraction(1 if i % 2 == 0 else -1) for i in range(n)]
    x = Fraction(0)  # = x* (centers symmetric)
    W, S2 = Fraction(1, n), Fraction(1, n)
    gamma0 = Fraction(m, n)
    eta_g = max(Fraction(1), _fraction_sqrt(gamma0 / S2)) if corrected else \
        _fraction_sqrt(gamma0 / S2)
    wfac = 2 * W if corrected else W
    eta = min(Fraction(1, 2), gamma0 / (1 + wfac)) / 8  # L = 1, M = 0
    eta_l = eta / (R * eta_g)
    kappa = 1 - (1 - eta_l) ** R
    U = [(x - c) * kappa for c in centers]  # Delta y_i after R exact local steps
    gamma, p = _exact_gamma([wi * abs(ui) for wi, ui in zip(w, U, strict=True)], m)
    if gamma != gamma0:
        raise AssertionError("gamma differs from m/n")
    Z = [c * c / 2 for c in centers]  # x* = 0
    s2z = sum((wi * wi * z for wi, z in zip(w, Z, strict=True)), Fraction(0))
    sz = sum((wi * z for wi, z in zip(w, Z, strict=True)), Fraction(0))

    def sq_dist(pattern: np.ndarray) -> Fraction:
        agg = sum((w[i] / p[i] * U[i] for i in range(n) if pattern[i]), Fraction(0))
        return (x - eta_g * agg) ** 2

    lhs = exact_expectation(sq_dist, n, p)
    zc = 8 / gamma * (1 - gamma) if corrected else 4 * (1 - gamma)
    beta1 = zc * s2z
    beta2 = 72 * sz
    rhs = eta**2 * beta1 + eta**3 * beta2  # r^k = 0 and f(x^k) = f*
    return {"lhs": lhs, "rhs": rhs, "gamma": gamma, "eta": eta, "eta_l": eta_l,
            "eta_g": eta_g, "beta1": beta1, "beta2": beta2}

# ----------------------------------------------------------------------------- counterexamples
_F = Fraction
#: Theorem 13's exact counterexample (two clients on a line, non-uniform weights).
CE13 = {"weights": [_F(3, 4), _F(1, 4)], "centers": [_F(0), _F(1)], "x": _F(1, 2), "m": 1}
CE13_TEXT = ("n=2, d=1, f_i(x) = (x - c_i)^2/2 with c = (0, 1) (L = mu = 1), w = (3/4, 1/4) "
              "(x* = 1/4, Z = (1/32, 9/32)), exact gradients (M = sigma^2 = 0), m = 1, "
              "x^k = 1/2, eta^k = gamma^k/((1+WM)L) = gamma^k")

#: Theorem 17's exact counterexample (eight clients on a line, m = 1, R = 2).
CE17_TEXT = ("n=8, d=1, f_i(x) = (x - c_i)^2/2 with c_i = +1, -1, +1, ... (L = mu = 1, x* = 0, "
              "Z_i = 1/2), w_i = 1/8, exact gradients (M = sigma^2 = 0), m = 1, R = 2, "
              "x^k = x*: all updates have equal norms, p_i = 1/8, gamma = 1/8; eta_g = "
              "sqrt(gamma/sum w_i^2) = 1 (its lower limit), eta = (1/8) min{1/(L(2+M/R)), "
              "gamma/((1+W(1+M/R))L)} = 1/72, eta_l = eta/(R eta_g)")
