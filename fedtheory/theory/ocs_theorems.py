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

The one-step draws from a fixed iterate and the :math:`\gamma` interval are in
:mod:`fedtheory.theory.ocs_one_step`, the exact rational counterexamples in
:mod:`fedtheory.theory.ocs_counterexamples`. This module holds the theorem forms as objects
(:data:`THEOREM_13`, :data:`THEOREM_13_CORRECTED`, :data:`THEOREM_15` of DSGD,
:class:`DsgdTheorem`; :data:`THEOREM_17`, :data:`THEOREM_17_CORRECTED`, :data:`THEOREM_18` of
FedAvg, :class:`FedavgTheorem`), each naming its step-size limit, its right-hand side and the
quantity it bounds (:class:`BoundedQuantity`); the Monte Carlo scenarios that use them are in
:mod:`fedtheory.experiments.ocs_theorems`, the claims in ``fedtheory/claims/ocs/``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fedtheory.problems import NoiseModel, QuadraticProblem

__all__ = [
    "BoundedQuantity",
    "DISTANCE_TO_OPTIMUM",
    "DsgdTheorem",
    "FedavgTheorem",
    "NEXT_LOSS",
    "THEOREM_13",
    "THEOREM_13_CORRECTED",
    "THEOREM_15",
    "THEOREM_17",
    "THEOREM_17_CORRECTED",
    "THEOREM_18",
    "theorem13_corrected_eta_max",
    "theorem13_corrected_rhs",
    "theorem13_eta_max",
    "theorem13_rhs",
    "theorem15_eta",
    "theorem15_rhs",
    "theorem17_corrected_eta_g_min",
    "theorem17_corrected_eta_max",
    "theorem17_corrected_rhs",
    "theorem17_eta_g_min",
    "theorem17_eta_max",
    "theorem17_rhs",
    "theorem18_eta_g_min",
    "theorem18_eta_max",
    "theorem18_rhs",
]


# ----------------------------------------------------------------------------- the theorems
@dataclass(frozen=True)
class BoundedQuantity:
    r"""What a one-step recursion bounds, as a function of the replicas of :math:`x^{k+1}`.

    ``label`` names it in reports; ``of_next(problem, x_next)`` gives its value per replica
    (``x_next`` of shape ``(replicas, d)``); ``reference(problem, x)`` is what the bound is
    measured from at the fixed iterate :math:`x^k` (for the power statement: :math:`f(x^k)`
    for a function value, 0 for a squared distance).
    """

    label: str
    of_next: Callable[[QuadraticProblem, np.ndarray], np.ndarray]
    reference: Callable[[QuadraticProblem, np.ndarray], float]


def _squared_distance(problem: QuadraticProblem, x_next: np.ndarray) -> np.ndarray:
    r""":math:`\|x^{k+1} - x^\star\|^2` per replica."""
    return np.sum((x_next - problem.x_star) ** 2, axis=-1)


def _no_reference(problem: QuadraticProblem, x: np.ndarray) -> float:
    return 0.0


def _loss(problem: QuadraticProblem, x_next: np.ndarray) -> np.ndarray:
    r""":math:`f(x^{k+1})` per replica."""
    return problem.loss(x_next)


def _loss_at(problem: QuadraticProblem, x: np.ndarray) -> float:
    return float(problem.loss(np.asarray(x, dtype=float)))


#: :math:`\mathbb E\|r^{k+1}\|^2`, :math:`r^{k+1} = x^{k+1} - x^\star` (Theorems 13 and 17).
DISTANCE_TO_OPTIMUM = BoundedQuantity("E||r^{k+1}||^2", _squared_distance, _no_reference)
#: :math:`\mathbb E f(x^{k+1})` (Theorems 15 and 18), measured from :math:`f(x^k)`.
NEXT_LOSS = BoundedQuantity("E f(x^{k+1})", _loss, _loss_at)


@dataclass(frozen=True)
class DsgdTheorem:
    r"""One form of a DSGD + OCS one-step recursion (Theorem 13, its correction, Theorem 15).

    Attributes
    ----------
    name:
        Short key (``"13"``, ``"13c"``, ``"15"``), used in random-stream names.
    label:
        How reports name it.
    bounds:
        The quantity the recursion bounds (:class:`BoundedQuantity`).
    eta_max:
        ``eta_max(problem, noise, gamma)``: the largest step the theorem allows at
        :math:`\gamma^k` (Theorem 15 allows any step: there :func:`theorem15_eta`, the step its
        checks are scaled from).
    rhs:
        ``rhs(problem, noise, x, eta, gamma)``: the right-hand side at the fixed iterate ``x``.
    """

    name: str
    label: str
    bounds: BoundedQuantity
    eta_max: Callable[[QuadraticProblem, NoiseModel, float], float]
    rhs: Callable[[QuadraticProblem, NoiseModel, np.ndarray, float, float], float]


@dataclass(frozen=True)
class FedavgTheorem:
    r"""One form of a FedAvg + OCS one-round recursion (Theorem 17, its correction, Theorem 18).

    Attributes
    ----------
    name, label, bounds:
        As in :class:`DsgdTheorem` (``"17"``, ``"17c"``, ``"18"``).
    eta_max:
        ``eta_max(problem, noise, gamma, R)``: the largest effective step
        :math:`\eta = R\eta_l\eta_g` the theorem allows at :math:`\gamma^k`.
    eta_g_min:
        ``eta_g_min(problem, gamma)``: the smallest global step it allows at :math:`\gamma^k`.
    rhs:
        ``rhs(problem, noise, x, eta, gamma, R)``: the right-hand side at the fixed iterate
        ``x``.
    """

    name: str
    label: str
    bounds: BoundedQuantity
    eta_max: Callable[[QuadraticProblem, NoiseModel, float, int], float]
    eta_g_min: Callable[[QuadraticProblem, float], float]
    rhs: Callable[[QuadraticProblem, NoiseModel, np.ndarray, float, float, int], float]


def _common(problem: QuadraticProblem, noise: NoiseModel) -> dict[str, float]:
    w = problem.weights
    return {
        "L": problem.L,
        "M": noise.M,
        "sigma2": noise.sigma2,
        "W": float(w.max()),
        "S2": _sum_w2(problem),
        "S2Z": float(np.sum(w**2 * problem.Z)),
        "SZ": float(np.sum(w * problem.Z)),
    }


def _sum_w2(problem: QuadraticProblem) -> float:
    r""":math:`\sum_i w_i^2`."""
    return float(np.sum(problem.weights**2))


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


def theorem15_eta(problem: QuadraticProblem, noise: NoiseModel, gamma: float) -> float:
    r"""Theorem 15 allows any step; its checks take :math:`\gamma^k/((1+M)L)` and multiples.

    That step maximises the descent term
    :math:`\eta(1 - \frac{(1+M)L}{2\gamma}\eta)\|\nabla f(x^k)\|^2` of (24) (it minimises the
    right-hand side when :math:`\beta^k = 0`); :data:`THEOREM_15` gives it as its
    :attr:`DsgdTheorem.eta_max`.
    """
    return gamma / ((1 + noise.M) * problem.L)


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


def _theorem17_eta_max(problem: QuadraticProblem, noise: NoiseModel, gamma: float,
                       R: int, w_factor: int) -> float:
    r""":math:`\frac18\min\{\frac{1}{L(2+M/R)}, \frac{\gamma}{(1+cW(1+M/R))L}\}`,
    :math:`c` = ``w_factor`` (the seed's 1, corrected 2)."""
    c = _common(problem, noise)
    L, a = c["L"], c["M"] / R
    return min(1 / (L * (2 + a)), gamma / ((1 + w_factor * c["W"] * (1 + a)) * L)) / 8


def theorem17_eta_max(
    problem: QuadraticProblem, noise: NoiseModel, gamma: float, R: int
) -> float:
    r""":math:`\frac18\min\{\frac{1}{L(2+M/R)}, \frac{\gamma}{(1+W(1+M/R))L}\}`."""
    return _theorem17_eta_max(problem, noise, gamma, R, 1)


def theorem17_eta_g_min(problem: QuadraticProblem, gamma: float) -> float:
    r"""Theorem 17's smallest global step: :math:`\sqrt{\gamma^k/\sum_i w_i^2}`."""
    return float(np.sqrt(gamma / _sum_w2(problem)))


def _theorem17_form(problem: QuadraticProblem, c: dict[str, float], x: np.ndarray, eta: float,
                    beta1: float, R: int) -> float:
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
    problem: QuadraticProblem, noise: NoiseModel, x: np.ndarray, eta: float, gamma: float,
    R: int,
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
    problem: QuadraticProblem, noise: NoiseModel, gamma: float, R: int
) -> float:
    r""":math:`\frac18\min\{\frac{1}{L(2+M/R)}, \frac{\gamma}{(1+2W(1+M/R))L}\}`."""
    return _theorem17_eta_max(problem, noise, gamma, R, 2)


def theorem17_corrected_eta_g_min(problem: QuadraticProblem, gamma: float) -> float:
    r"""The corrected smallest global step: :math:`\max\{1, \sqrt{\gamma^k/\sum_i w_i^2}\}`."""
    return max(1.0, theorem17_eta_g_min(problem, gamma))


def theorem17_corrected_rhs(
    problem: QuadraticProblem, noise: NoiseModel, x: np.ndarray, eta: float, gamma: float,
    R: int,
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


def theorem18_eta_max(
    problem: QuadraticProblem, noise: NoiseModel, gamma: float, R: int
) -> float:
    r""":math:`1/(8L(2 + M/R))`, whatever :math:`\gamma^k` (the argument keeps the signature
    of :attr:`FedavgTheorem.eta_max`)."""
    return 1 / (8 * problem.L * (2 + noise.M / R))


def theorem18_eta_g_min(problem: QuadraticProblem, gamma: float) -> float:
    r"""Theorem 18's smallest global step: :math:`\sqrt{5\gamma^k/(4\sum_i w_i^2)}`."""
    return float(np.sqrt(5 * gamma / (4 * _sum_w2(problem))))


def theorem18_rhs(
    problem: QuadraticProblem, noise: NoiseModel, x: np.ndarray, eta: float, gamma: float,
    R: int,
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


#: Theorem 13 as printed (refuted for non-uniform weights).
THEOREM_13 = DsgdTheorem("13", "Theorem 13", DISTANCE_TO_OPTIMUM, theorem13_eta_max,
                         theorem13_rhs)
#: Theorem 13 re-derived for any weights.
THEOREM_13_CORRECTED = DsgdTheorem("13c", "Theorem 13 (corrected)", DISTANCE_TO_OPTIMUM,
                                   theorem13_corrected_eta_max, theorem13_corrected_rhs)
#: Theorem 15 (any step; checked at :func:`theorem15_eta` and multiples of it).
THEOREM_15 = DsgdTheorem("15", "Theorem 15", NEXT_LOSS, theorem15_eta, theorem15_rhs)
#: Theorem 17 as printed (refuted).
THEOREM_17 = FedavgTheorem("17", "Theorem 17", DISTANCE_TO_OPTIMUM, theorem17_eta_max,
                           theorem17_eta_g_min, theorem17_rhs)
#: Theorem 17 re-derived on strongly convex quadratics.
THEOREM_17_CORRECTED = FedavgTheorem("17c", "Theorem 17 (corrected)", DISTANCE_TO_OPTIMUM,
                                     theorem17_corrected_eta_max, theorem17_corrected_eta_g_min,
                                     theorem17_corrected_rhs)
#: Theorem 18.
THEOREM_18 = FedavgTheorem("18", "Theorem 18", NEXT_LOSS, theorem18_eta_max,
                           theorem18_eta_g_min, theorem18_rhs)
