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

Every form is a formula in the problem's quantities (:func:`problem_quantities`: :math:`L, \mu,
M, \sigma^2, W, \sum_i w_i^2, \dots` and the point's :math:`\|r^k\|^2, f(x^k) - f^\star,
\|\nabla f(x^k)\|^2`), written once and evaluated in floating point (Monte Carlo) or in exact
rational arithmetic (:mod:`fedtheory.theory.ocs_exact`). Its printed constants are named
(:attr:`DsgdTheorem.constants`: the seed's values, exact) and its droppable factors pass through
:attr:`DsgdTheorem.factor`, so that a claim's checks evaluate the statement as the claim
declares it (:meth:`DsgdTheorem.restated`: constants, factors and step condition read from the
check's context, mutated under ``fedtheory verify --power``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

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
    "point_quantities",
    "problem_quantities",
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

#: The quantities a form reads: ``L, mu, mu_clients, M, sigma2, W, S2, S2Z, SZ, rho`` (the
#: problem's) and ``r2, gap, gf2, fx`` (the point's); floats or exact rationals.
Quantities = Mapping[str, Any]
#: ``factor(name, value)``: the value of a droppable factor (``value``, or 1 when dropped).
Factor = Callable[[str, Any], Any]


def _keep(name: str, value: Any) -> Any:
    return value


def _as_stated(value: Any) -> Any:
    return value


def problem_quantities(problem: QuadraticProblem, noise: NoiseModel) -> dict[str, Any]:
    r"""The problem's quantities the theorems read (floats): :math:`L`, :math:`\mu` (of
    :math:`f`), ``mu_clients`` (:math:`\min_i\lambda_{\min}(A_i)`), :math:`M, \sigma^2`,
    :math:`W = \max_i w_i`, ``S2`` :math:`= \sum_i w_i^2`, ``S2Z`` :math:`= \sum_i w_i^2 Z_i`,
    ``SZ`` :math:`= \sum_i w_iZ_i` (None unless every :math:`f_i` is convex) and :math:`\rho`
    (None unless the Hessians are identical)."""
    w = problem.weights
    convex = problem.clients_convex
    return {
        "L": problem.L, "mu": problem.mu, "mu_clients": problem.mu_clients,
        "M": noise.M, "sigma2": noise.sigma2, "W": float(w.max()), "S2": float(np.sum(w**2)),
        "S2Z": float(np.sum(w**2 * problem.Z)) if convex else None,
        "SZ": float(np.sum(w * problem.Z)) if convex else None,
        "rho": problem.rho,
    }


def point_quantities(problem: QuadraticProblem, x: np.ndarray) -> dict[str, float]:
    r"""The fixed iterate's quantities (floats): ``r2`` :math:`= \|x - x^\star\|^2`, ``gap``
    :math:`= f(x) - f(x^\star)`, ``gf2`` :math:`= \|\nabla f(x)\|^2`, ``fx`` :math:`= f(x)`."""
    x = np.asarray(x, dtype=float)
    fx = float(problem.loss(x))
    return {"r2": float(np.sum((x - problem.x_star) ** 2)), "gap": fx - problem.f_star,
            "gf2": float(np.sum(problem.grad(x) ** 2)), "fx": fx}


def _rho(q: Quantities) -> Any:
    if q["rho"] is None:
        raise ValueError("the problem has no finite rho (Assumption 9): use identical Hessians")
    return q["rho"]


def _convex(q: Quantities) -> None:
    if q["S2Z"] is None:
        raise ValueError("Z_i needs convex f_i (finite f_i^*): the theorem assumes it")


class _Stated:
    """What both theorem forms share: their constants as floats, and :meth:`restated`."""

    constants: Mapping[str, Fraction]
    step: str | None

    def floats(self) -> dict[str, float]:
        """The constants as floats (for the floating-point evaluation)."""
        return {k: float(v) for k, v in self.constants.items()}

    def _constants_like(self, value: Any) -> Mapping[str, Any]:
        return self.constants if isinstance(value, Fraction) else self.floats()

    def restated(self, ctx: Any) -> Any:
        """This form with its constants, factors and step limit read from a check's context
        (:class:`~fedtheory.claims.Context`: as the claim states them, or a mutant of them)."""
        return replace(self, constants={k: ctx.const(k) for k in self.constants},
                       factor=ctx.factor, limit=ctx.step_limit if self.step else _as_stated)


@dataclass(frozen=True)
class _Recursion(_Stated):
    """The fields and evaluation both recursion forms share; a FedAvg form's functions take the
    number of local steps :math:`R` after :math:`\\gamma` (the ``*R`` of the methods)."""

    name: str
    label: str
    bounds: BoundedQuantity
    step_of: Callable[..., Any]
    bound_of: Callable[..., tuple[Any, Any]]
    constants: Mapping[str, Fraction] = field(default_factory=dict)
    step: str | None = None
    factors: tuple[str, ...] = ()
    factor: Factor = _keep
    limit: Callable[[Any], Any] = _as_stated
    stronger: Mapping[str, str] = field(default_factory=dict)

    def step_max(self, q: Quantities, gamma: Any, *R: int) -> Any:
        """The (effective) step limit on quantities ``q`` (float or exact), as stated or
        relaxed."""
        return self.limit(self.step_of(q, gamma, *R, self._constants_like(gamma)))

    def bound(self, q: Quantities, eta: Any, gamma: Any, *R: int) -> tuple[Any, Any]:
        """``(rhs, increment)`` on quantities ``q`` (float or exact)."""
        return self.bound_of(q, eta, gamma, *R, self._constants_like(gamma), self.factor)

    def eta_max(self, problem: QuadraticProblem, noise: NoiseModel, gamma: float,
                *R: int) -> float:
        """The largest (effective) step at :math:`\\gamma^k` on ``problem`` (float)."""
        return float(self.step_max(problem_quantities(problem, noise), float(gamma), *R))

    def rhs(self, problem: QuadraticProblem, noise: NoiseModel, x: np.ndarray, eta: float,
            gamma: float, *R: int) -> float:
        """The right-hand side at the fixed iterate ``x`` (float)."""
        q = {**problem_quantities(problem, noise), **point_quantities(problem, x)}
        return float(self.bound(q, float(eta), float(gamma), *R)[0])

    def increment(self, problem: QuadraticProblem, noise: NoiseModel, x: np.ndarray,
                  eta: float, gamma: float, *R: int) -> float:
        """The bound's increment at ``x`` (see ``bound_of``)."""
        q = {**problem_quantities(problem, noise), **point_quantities(problem, x)}
        return float(self.bound(q, float(eta), float(gamma), *R)[1])


def _no_global_step(q: Quantities, gamma: Any) -> Any:
    raise ValueError("this FedAvg form declares no global step (eta_g_sq_of)")


@dataclass(frozen=True)
class DsgdTheorem(_Recursion):
    r"""One form of a DSGD + OCS one-step recursion (Theorem 13, its correction, Theorem 15).

    Attributes
    ----------
    name:
        Short key (``"13"``, ``"13c"``, ``"15"``), used in random-stream names.
    label:
        How reports name it.
    bounds:
        The quantity the recursion bounds (:class:`BoundedQuantity`).
    step_of:
        ``step_of(q, gamma, c)``: the largest step the theorem allows at :math:`\gamma^k`
        (Theorem 15 allows any step: there the step its checks are scaled from).
    bound_of:
        ``bound_of(q, eta, gamma, c, factor)``: the right-hand side and its *increment*: the
        terms of order :math:`\eta^2` and higher (for Theorem 18 also :math:`\eta\rho/8`)
        that the bound adds to the contraction or descent it states. The tightness ratio
        compares what the step adds with what the statement allows,
        ``(lhs - (rhs - increment)) / increment`` (above 1 exactly when the bound fails;
        1 = attained); a bare ``lhs / rhs`` would tend to 1 for every contraction as
        :math:`\eta \to 0` and say nothing about the constants.
    constants:
        The printed constants by name (exact), as the seed states them.
    step:
        The name of the step-size condition (None: any step is allowed).
    factors:
        The names of the factors a reader might drop (passed through ``factor``).
    factor, limit:
        The droppable factors' values and the step limit's relaxation (identity, unless
        :meth:`restated` under a mutant).
    stronger:
        The constants that make the statement stronger when *larger* (``{name: "larger"}``,
        for :class:`~fedtheory.claimkit.stated.Stated`): a constant subtracted on the
        right-hand side (:math:`\beta_2` of Theorem 13, the :math:`\frac38` of
        :math:`f - f^\star` in Theorem 17, the :math:`\frac38` of the descent in Theorem 18);
        the others are stronger when smaller (the default of an upper bound).
    """


@dataclass(frozen=True)
class FedavgTheorem(_Recursion):
    r"""One form of a FedAvg + OCS one-round recursion (Theorem 17, its correction, Theorem 18).

    As :class:`DsgdTheorem`, with the number of local steps :math:`R`: ``step_of(q, gamma, R,
    c)`` is the largest effective step :math:`\eta = R\eta_l\eta_g`, ``bound_of(q, eta, gamma,
    R, c, factor)``, and ``eta_g_sq_of(q, gamma)`` (a keyword) the square of the smallest
    global step :math:`\eta_g` (exact when ``q`` is).
    """

    eta_g_sq_of: Callable[[Quantities, Any], Any] = _no_global_step

    def eta_g_min(self, problem: QuadraticProblem, gamma: float) -> float:
        """The smallest global step at :math:`\\gamma^k` (float)."""
        return float(np.sqrt(self.eta_g_sq_of({"S2": float(np.sum(problem.weights**2))},
                                              float(gamma))))


# -- Theorem 13 and its correction ----------------------------------------------------------
def _theorem13_step(q: Quantities, gamma: Any, c: Mapping[str, Any]) -> Any:
    r""":math:`\gamma^k / ((1 + WM)L)`."""
    return gamma / ((1 + q["W"] * q["M"]) * q["L"])


def _theorem13_corrected_step(q: Quantities, gamma: Any, c: Mapping[str, Any]) -> Any:
    r""":math:`\gamma^k / ((1 + 2W(1+M))L)`."""
    return gamma / ((1 + 2 * q["W"] * (1 + q["M"])) * q["L"])


def _theorem13_bound(q: Quantities, eta: Any, gamma: Any, c: Mapping[str, Any],
                     factor: Factor) -> tuple[Any, Any]:
    r"""(20): :math:`(1-\mu\eta)\|r^k\|^2 + \eta^2(\beta_1/\gamma - \beta_2)` with
    :math:`\beta_1 = \sum_i w_i^2(c_1L(1+M)Z_i + \sigma^2)`, :math:`\beta_2 = c_2L\sum_i w_i^2Z_i`
    (``beta1_Z`` :math:`= c_1`, ``beta2_Z`` :math:`= c_2`: the seed's 2 and 2, corrected 4 and
    4)."""
    _convex(q)
    beta1 = c["beta1_Z"] * q["L"] * (1 + q["M"]) * q["S2Z"] + q["sigma2"] * q["S2"]
    beta2 = c["beta2_Z"] * q["L"] * q["S2Z"]
    inc = eta**2 * (beta1 / gamma - beta2)
    return (1 - q["mu"] * eta) * q["r2"] + inc, inc


# -- Theorem 15 ------------------------------------------------------------------------------
def _theorem15_step(q: Quantities, gamma: Any, c: Mapping[str, Any]) -> Any:
    r"""Theorem 15 allows any step; its checks take :math:`\gamma^k/((1+M)L)` and multiples.

    That step maximises the descent term
    :math:`\eta(1 - \frac{(1+M)L}{2\gamma}\eta)\|\nabla f(x^k)\|^2` of (24) (it minimises the
    right-hand side when :math:`\beta^k = 0`).
    """
    return gamma / ((1 + q["M"]) * q["L"])


def _theorem15_bound(q: Quantities, eta: Any, gamma: Any, c: Mapping[str, Any],
                     factor: Factor) -> tuple[Any, Any]:
    r"""(24), any :math:`\eta > 0`:

    .. math:: f(x^k) - \eta\Big(1 - \frac{(1+M)L}{2\gamma}\eta\Big)\|\nabla f(x^k)\|^2
              + \eta^2 \frac{L}{2\gamma}\Big((1+M-\gamma)W\rho + \sum_i w_i^2\sigma^2\Big)

    (``descent_half`` and ``beta_half`` the two :math:`\tfrac12`; factors ``1+M``, ``W``,
    ``sum_w2``); the increment is :math:`\eta^2\beta^k`.
    """
    L, M = q["L"], q["M"]
    beta = c["beta_half"] * L / gamma * (
        (1 + M - gamma) * factor("W", q["W"]) * _rho(q) + factor("sum_w2", q["S2"]) * q["sigma2"])
    descent = eta * (1 - factor("1+M", 1 + M) * L * c["descent_half"] / gamma * eta) * q["gf2"]
    inc = eta**2 * beta
    return q["fx"] - descent + inc, inc


# -- Theorem 17 and its correction ----------------------------------------------------------
def _theorem17_step(q: Quantities, gamma: Any, R: int, c: Mapping[str, Any]) -> Any:
    r""":math:`\frac18\min\{\frac{1}{L(2+M/R)}, \frac{\gamma}{(1+W(1+M/R))L}\}`."""
    L, a = q["L"], q["M"] / R
    return min(1 / (L * (2 + a)), gamma / ((1 + q["W"] * (1 + a)) * L)) / 8


def _theorem17_corrected_step(q: Quantities, gamma: Any, R: int, c: Mapping[str, Any]) -> Any:
    r""":math:`\frac18\min\{\frac{1}{L(2+M/R)}, \frac{\gamma}{(1+2W(1+M/R))L}\}`."""
    L, a = q["L"], q["M"] / R
    return min(1 / (L * (2 + a)), gamma / ((1 + 2 * q["W"] * (1 + a)) * L)) / 8


def _theorem17_eta_g_sq(q: Quantities, gamma: Any) -> Any:
    r""":math:`\eta_g \ge \sqrt{\gamma^k/\sum_i w_i^2}`, squared."""
    return gamma / q["S2"]


def _theorem17_corrected_eta_g_sq(q: Quantities, gamma: Any) -> Any:
    r""":math:`\eta_g \ge \max\{1, \sqrt{\gamma^k/\sum_i w_i^2}\}`, squared."""
    return max(gamma / q["S2"], gamma**0)


def _theorem17_form(q: Quantities, eta: Any, gamma: Any, R: int, c: Mapping[str, Any],
                    over_gamma: bool) -> tuple[Any, Any]:
    r"""(27) multiplied by :math:`\eta > 0`, an upper bound on :math:`\mathbb E\|r^{k+1}\|^2`:

    .. math:: (1 - \tfrac{\mu\eta}{2})\|r^k\|^2 - c_g\eta(f(x^k) - f^\star) + \eta^2\beta_1^k
              + \eta^3\beta_2,\quad \beta_1^k = \frac{c_\sigma\sigma^2}{\gamma R}\sum_i w_i^2
              + c_ZL\Big(\frac MR + 1 - \gamma\Big)\sum_i w_i^2Z_i\ \Big(\times\frac1\gamma\Big),
              \quad \beta_2 = c_2L^2(1 + \tfrac MR)\sum_i w_iZ_i

    (``gap`` :math:`= c_g = 3/8`, ``beta1_sigma`` :math:`= c_\sigma` (2; corrected 17/8),
    ``beta1_Z`` :math:`= c_Z` (4; corrected 8, with the :math:`1/\gamma`), ``beta2``
    :math:`= c_2 = 72`), :math:`\mu` the strong convexity of every :math:`f_i`.
    """
    _convex(q)
    L, a = q["L"], q["M"] / R
    z = c["beta1_Z"] * L * (a + 1 - gamma) * q["S2Z"]
    beta1 = c["beta1_sigma"] * q["sigma2"] / (gamma * R) * q["S2"] + (z / gamma if over_gamma
                                                                         else z)
    beta2 = c["beta2"] * L**2 * (1 + a) * q["SZ"]
    inc = eta**2 * beta1 + eta**3 * beta2
    return (1 - q["mu_clients"] * eta / 2) * q["r2"] - c["gap"] * eta * q["gap"] + inc, inc


def _theorem17_bound(q: Quantities, eta: Any, gamma: Any, R: int, c: Mapping[str, Any],
                     factor: Factor) -> tuple[Any, Any]:
    """Theorem 17 as printed: (27) times eta, see :func:`_theorem17_form`."""
    return _theorem17_form(q, eta, gamma, R, c, over_gamma=False)


def _theorem17_corrected_bound(q: Quantities, eta: Any, gamma: Any, R: int,
                               c: Mapping[str, Any], factor: Factor) -> tuple[Any, Any]:
    """The corrected (27) times eta: the Z-term of beta_1 divided by gamma."""
    return _theorem17_form(q, eta, gamma, R, c, over_gamma=True)


# -- Theorem 18 ------------------------------------------------------------------------------
def _theorem18_step(q: Quantities, gamma: Any, R: int, c: Mapping[str, Any]) -> Any:
    r""":math:`1/(8L(2 + M/R))`, whatever :math:`\gamma^k`."""
    return 1 / (8 * q["L"] * (2 + q["M"] / R))


def _theorem18_eta_g_sq(q: Quantities, gamma: Any) -> Any:
    r""":math:`\eta_g \ge \sqrt{5\gamma^k/(4\sum_i w_i^2)}`, squared."""
    return 5 * gamma / (4 * q["S2"])


def _theorem18_bound(q: Quantities, eta: Any, gamma: Any, R: int, c: Mapping[str, Any],
                     factor: Factor) -> tuple[Any, Any]:
    r"""(29):

    .. math:: f(x^k) - \frac{3\eta}{8}\Big(1 - \frac{10\eta L}{3}\Big)\|\nabla f(x^k)\|^2
              + \eta\frac\rho8 + \eta^2\Big(\frac\rho4 + \frac{\sigma^2}{\gamma R}\sum_i w_i^2
              \Big)L

    (``descent`` = 3/8, ``descent_eta`` = 10/3, ``rho_eta`` = 1/8, ``rho_eta2`` = 1/4; factor
    ``sum_w2``); the increment is :math:`\eta\rho/8 + \eta^2\beta^k`.
    """
    L, rho = q["L"], _rho(q)
    beta = (c["rho_eta2"] * rho + q["sigma2"] / (gamma * R) * factor("sum_w2", q["S2"])) * L
    inc = c["rho_eta"] * eta * rho + eta**2 * beta
    descent = c["descent"] * eta * (1 - c["descent_eta"] * eta * L) * q["gf2"]
    return q["fx"] - descent + inc, inc


_F = Fraction
#: The step condition's name in the claims' :class:`~fedtheory.claimkit.stated.Stated`.
_STEP13 = "eta <= gamma/((1+WM)L)"

#: Theorem 13 as printed (refuted for non-uniform weights).
THEOREM_13 = DsgdTheorem("13", "Theorem 13", DISTANCE_TO_OPTIMUM, _theorem13_step,
                         _theorem13_bound, {"beta1_Z": _F(2), "beta2_Z": _F(2)}, _STEP13,
                         stronger={"beta2_Z": "larger"})
#: Theorem 13 re-derived for any weights.
THEOREM_13_CORRECTED = DsgdTheorem(
    "13c", "Theorem 13 (corrected)", DISTANCE_TO_OPTIMUM, _theorem13_corrected_step,
    _theorem13_bound, {"beta1_Z": _F(4), "beta2_Z": _F(4)}, "eta <= gamma/((1+2W(1+M))L)",
    stronger={"beta2_Z": "larger"})
#: Theorem 15 (any step; checked at gamma/((1+M)L) and multiples of it).
THEOREM_15 = DsgdTheorem("15", "Theorem 15", NEXT_LOSS, _theorem15_step, _theorem15_bound,
                         {"descent_half": _F(1, 2), "beta_half": _F(1, 2)},
                         factors=("1+M", "W", "sum_w2"))
#: Theorem 17 as printed (refuted).
THEOREM_17 = FedavgTheorem(
    "17", "Theorem 17", DISTANCE_TO_OPTIMUM, _theorem17_step, _theorem17_bound,
    {"gap": _F(3, 8), "beta1_sigma": _F(2), "beta1_Z": _F(4), "beta2": _F(72)},
    "eta <= min{1/(L(2+M/R)), gamma/((1+W(1+M/R))L)}/8", stronger={"gap": "larger"},
    eta_g_sq_of=_theorem17_eta_g_sq)
#: Theorem 17 re-derived on strongly convex quadratics.
THEOREM_17_CORRECTED = FedavgTheorem(
    "17c", "Theorem 17 (corrected)", DISTANCE_TO_OPTIMUM, _theorem17_corrected_step,
    _theorem17_corrected_bound,
    {"gap": _F(3, 8), "beta1_sigma": _F(17, 8), "beta1_Z": _F(8), "beta2": _F(72)},
    "eta <= min{1/(L(2+M/R)), gamma/((1+2W(1+M/R))L)}/8", stronger={"gap": "larger"},
    eta_g_sq_of=_theorem17_corrected_eta_g_sq)
#: Theorem 18.
THEOREM_18 = FedavgTheorem(
    "18", "Theorem 18", NEXT_LOSS, _theorem18_step, _theorem18_bound,
    {"descent": _F(3, 8), "descent_eta": _F(10, 3), "rho_eta": _F(1, 8), "rho_eta2": _F(1, 4)},
    "eta <= 1/(8L(2+M/R))", factors=("sum_w2",), stronger={"descent": "larger"},
    eta_g_sq_of=_theorem18_eta_g_sq)
