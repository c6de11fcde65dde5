r"""Seed 002, Theorems 13, 15, 17 and 18 on exact instances: catalogues and search.

Where :mod:`fedtheory.experiments.ocs_theorems` estimates a theorem's one-step conditional
expectation by Monte Carlo from a fixed iterate, this module evaluates it exactly: on the
one-dimensional rational instances of :mod:`fedtheory.theory.ocs_exact` (every participation
pattern enumerated), in catalogues of named cases (the counterexamples CE13 and CE17 and the
cases where a bound is attained) and by a seeded adversarial search over instance parameters
(:func:`hill_climb`). Pure computation: the checks that judge these results (the exact cases,
the search's best point re-checked in exact arithmetic, the symbolic proof chains) and
``register_exact_checks`` are in :mod:`fedtheory.claims.ocs._theorems`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory.theory.ocs_exact import LineInstance, dsgd_exact, fedavg_exact, float_step
from fedtheory.theory.ocs_theorems import (
    DsgdTheorem,
    FedavgTheorem,
)

__all__ = [
    "CE13_CASE",
    "CE13_NOISY_CASE",
    "CE17_CASE",
    "CE17_FAMILY",
    "DSGD_CONVEX_SEARCH",
    "DSGD_CORRECTED_CASES",
    "DSGD_NONCONVEX_CASES",
    "DSGD_NONCONVEX_SEARCH",
    "DSGD_UNIFORM_TIGHT_CASES",
    "ExactCase",
    "FEDAVG_CONVEX_CASES",
    "FEDAVG_CONVEX_SEARCH",
    "FEDAVG_NONCONVEX_CASES",
    "FEDAVG_NONCONVEX_SEARCH",
    "SearchFamily",
    "SearchResult",
    "evaluate_case",
    "exact_strings",
    "hill_climb",
]


@dataclass(frozen=True)
class ExactCase:
    r"""A named one-dimensional instance evaluated exactly (:mod:`fedtheory.theory.ocs_exact`):
    DSGD when ``R`` is None, else FedAvg with ``R`` local steps; the step is ``theta`` times the
    theorem's largest (any ``theta > 0`` for Theorem 15), :math:`\eta_g` ``g_scale`` times its
    smallest."""

    name: str
    instance: LineInstance
    R: int | None = None
    theta: Fraction = Fraction(1)
    g_scale: Fraction = Fraction(1)

    def describe(self) -> dict[str, Any]:
        out = {"case": self.name, **self.instance.describe(), "theta": str(self.theta)}
        if self.R is not None:
            out.update(R=self.R, g_scale=str(self.g_scale))
        return out


def evaluate_case(theorem: DsgdTheorem | FedavgTheorem, case: ExactCase,
                  exact: bool = True) -> dict[str, Any]:
    """The theorem on one case (:func:`~fedtheory.theory.ocs_exact.dsgd_exact` or
    :func:`~fedtheory.theory.ocs_exact.fedavg_exact`)."""
    theta = case.theta if exact else float(case.theta)
    if case.R is None:
        if not isinstance(theorem, DsgdTheorem):
            raise ValueError(f"case {case.name!r} is a DSGD case, got {theorem.label}")
        return dsgd_exact(theorem, case.instance, theta, exact)
    if not isinstance(theorem, FedavgTheorem):
        raise ValueError(f"case {case.name!r} is a FedAvg case, got {theorem.label}")
    g = case.g_scale if exact else float(case.g_scale)
    return fedavg_exact(theorem, case.instance, case.R, theta, g, exact)


def exact_strings(out: dict[str, Any]) -> dict[str, Any]:
    """``out`` with its exact fractions as strings (for a report).

    >>> exact_strings({"lhs": Fraction(1, 3), "ok": True})
    {'lhs': '1/3', 'ok': True}
    """
    return {k: (str(v) if isinstance(v, Fraction) else v) for k, v in out.items()}


# ----------------------------------------------------------------------------- the search
@dataclass(frozen=True)
class SearchFamily:
    r"""The one-dimensional instances an adversarial search may visit.

    ``curvature``: ``"convex"`` (:math:`a_i \in [1/20, 1]`, every :math:`f_i` strongly convex)
    or ``"identical"`` (:math:`a_i = \pm 1`, finite :math:`\rho`, convex or concave); ``ns``
    the client counts; ``Rs`` the local steps (empty: DSGD); ``theta_max`` the largest
    multiple of the theorem's step (1 with a step condition; Theorem 15 allows any step).
    """

    curvature: str
    ns: tuple[int, ...] = (2, 3, 4)
    Rs: tuple[int, ...] = ()
    theta_max: float = 1.0
    full_m: bool = False  # allow m = n (full participation, gamma = 1)

    def __post_init__(self) -> None:
        if self.curvature not in ("convex", "identical"):
            raise ValueError(f"curvature must be 'convex' or 'identical', got {self.curvature!r}")


def _sigmoid(z: Any) -> Any:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -40.0, 40.0)))


# A search point's instance is decoded into exact rationals held as integer pairs (p, q),
# q > 0, not reduced: the float evaluation needs only p / q (Python's int division rounds
# correctly, as float(Fraction(p, q)) does); the Fractions are built for the best point only.
_Q = tuple[int, int]


def _nearest(v: float, max_denominator: int) -> _Q:
    """``rationalize(v, max_denominator)`` as a pair (p, q): the closest rational with
    denominator at most ``max_denominator`` (:meth:`Fraction.limit_denominator`'s choice on
    ties)."""
    num, den = float(v).as_integer_ratio()
    if den <= max_denominator:
        return num, den
    p0, q0, p1, q1 = 0, 1, 1, 0
    n, d = num, den
    while True:
        a = n // d
        q2 = q0 + a * q1
        if q2 > max_denominator:
            break
        p0, q0, p1, q1 = p1, q1, p0 + a * p1, q2
        n, d = d, n - a * d
    k = (max_denominator - q0) // q1
    pb, qb = p0 + k * p1, q0 + k * q1
    # |p1/q1 - num/den| <= |pb/qb - num/den|, cross-multiplied by q1 * qb * den > 0
    if abs(p1 * den - num * q1) * qb <= abs(pb * den - num * qb) * q1:
        return p1, q1
    return pb, qb


def _add(x: _Q, y: _Q) -> _Q:
    return x[0] * y[1] + y[0] * x[1], x[1] * y[1]


def _mul(x: _Q, y: _Q) -> _Q:
    return x[0] * y[0], x[1] * y[1]


def _less(x: _Q, y: _Q) -> bool:
    return x[0] * y[1] < y[0] * x[1]


@dataclass(frozen=True)
class _Point:
    """A search vector's instance in exact integer pairs (see :func:`_decode_point`)."""

    w: tuple[_Q, ...]
    a: tuple[_Q, ...]
    c: tuple[_Q, ...]
    x: _Q
    M: _Q
    s2: _Q
    theta: _Q
    g_scale: _Q

    def numbers(self) -> dict[str, Any]:
        """The float numbers of its :class:`LineInstance` (:meth:`LineInstance.numbers`)."""
        return {"w": [p / q for p, q in self.w], "a": [p / q for p, q in self.a],
                "c": [p / q for p, q in self.c], "x": self.x[0] / self.x[1],
                "M": self.M[0] / self.M[1], "sigma2": self.s2[0] / self.s2[1]}


def _decode_point(vec: np.ndarray, n: int, noise: str, sign: int, family: SearchFamily,
                  fedavg: bool) -> _Point:
    """A search vector as exact rationals with small denominators (the admissible instance it
    stands for)."""
    z = np.exp(vec[:n] - vec[:n].max())
    w = [(1, 500) if _less(r, (1, 500)) else r for r in (_nearest(v, 500) for v in z / z.sum())]
    top = int(np.argmax(z))
    rest_w = (0, 1)
    for i, wi in enumerate(w):
        if i != top:
            rest_w = _add(rest_w, wi)
    w[top] = (rest_w[1] - rest_w[0], rest_w[1])  # 1 - the others
    if family.curvature == "convex":
        a = [_nearest(v, 100) for v in 0.05 + 0.95 * _sigmoid(vec[n:2 * n])]
    else:
        a = [(sign, 1)] * n
    c = [_nearest(v, 100) for v in 2 * np.tanh(vec[2 * n:3 * n])]
    rest = vec[3 * n:]
    abar, wac = (0, 1), (0, 1)
    for wi, ai, ci in zip(w, a, c, strict=True):
        abar = _add(abar, _mul(wi, ai))
        wac = _add(wac, _mul(_mul(wi, ai), ci))
    xs = (wac[0] * abar[1], wac[1] * abar[0])  # sum(w a c) / abar
    if xs[1] < 0:
        xs = (-xs[0], -xs[1])
    x = _add(xs, _nearest(float(np.clip(np.sinh(rest[0]), -30, 30)), 1000))
    root = _nearest(1.5 * _sigmoid(rest[1]), 100)
    M, s2 = (_mul(root, root), (0, 1)) if noise == "relative" else \
        ((0, 1), _mul(root, root)) if noise == "additive" else ((0, 1), (0, 1))
    top_theta = _nearest(family.theta_max, 100)
    theta = _nearest(family.theta_max * _sigmoid(rest[2]), 1000)
    theta = (1, 1000) if _less(theta, (1, 1000)) else theta
    theta = theta if _less(theta, top_theta) else top_theta
    g = _nearest(2 * _sigmoid(rest[3]), 100) if fedavg else (0, 1)
    return _Point(tuple(w), tuple(a), tuple(c), x, M, s2, theta, (g[0] + g[1], g[1]))


def _case_of(point: _Point, m: int, R: int | None, noise: str) -> ExactCase:
    """The exact case of a decoded point."""
    F = Fraction
    inst = LineInstance([F(*v) for v in point.w], [F(*v) for v in point.a],
                        [F(*v) for v in point.c], F(*point.x), m, F(*point.M), F(*point.s2))
    n = len(point.w)
    return ExactCase(f"search n={n} m={m}" + (f" R={R}" if R else "") + f" noise={noise}",
                     inst, R, F(*point.theta), F(*point.g_scale))


def _decode(vec: np.ndarray, n: int, m: int, R: int | None, noise: str, sign: int,
            family: SearchFamily) -> ExactCase:
    """A search vector as an admissible exact case (rationals with small denominators)."""
    return _case_of(_decode_point(vec, n, noise, sign, family, R is not None), m, R, noise)


def _float_ratio(theorem: DsgdTheorem | FedavgTheorem, point: _Point, m: int,
                 R: int | None) -> float:
    """The float ratio of a point (-inf where it certifies nothing or rounding dominates):
    :func:`evaluate_case` with ``exact=False`` on its case, without building the case."""
    if any(p < 0 for p, _ in point.w):  # not admissible: LineInstance says why
        _case_of(point, m, R, "none")
    out = float_step(theorem, point.numbers(), m, R, point.theta[0] / point.theta[1],
                     point.g_scale[0] / point.g_scale[1])
    inc, lhs = out["increment"], out["lhs"]
    if not out.get("ok", True) or not inc > 1e-9 * max(1.0, abs(lhs), abs(out["rhs"] - inc)):
        return -np.inf
    return float(out["ratio"])


@dataclass(frozen=True)
class SearchResult:
    """What :func:`hill_climb` found: the best admissible case (None if none was) with its
    float ratio, and how many float evaluations it took."""

    case: ExactCase | None
    float_ratio: float
    evaluations: int
    restarts: int


def hill_climb(theorem: DsgdTheorem | FedavgTheorem, family: SearchFamily,
               budget: tuple[int, int], rng: np.random.Generator) -> SearchResult:
    r"""Seeded hill climbing for the instance that makes ``theorem``'s bound tightest.

    ``budget = (restarts, steps)``. Each restart draws a client count, a budget :math:`m`, the
    local steps, a noise kind (none, relative :math:`M`, additive :math:`\sigma^2`; FedAvg
    with :math:`nR > 6` noise-free, to keep the :math:`2^{nR}` noise patterns few) and, for
    identical curvatures, their sign; then climbs the float ratio
    (lhs - rhs + increment)/increment over the weights, curvatures, centres, iterate, noise
    level, step multiple and :math:`\eta_g` multiple (Gaussian proposals, step halved after
    misses). Each point is decoded into exact rationals held as integer pairs and evaluated in
    floats (:func:`~fedtheory.theory.ocs_exact.float_step`: what :func:`evaluate_case` with
    ``exact=False`` gives on its case, bit for bit); the exact case is built for the best point
    only, which the caller re-checks exactly (:func:`evaluate_case`).
    """
    thm = theorem
    restarts, steps = budget
    fedavg = bool(family.Rs)
    if fedavg != isinstance(thm, FedavgTheorem):
        raise ValueError(f"a family with local steps Rs = {family.Rs} needs a FedAvg theorem, "
                         f"one without a DSGD theorem; got {thm.label}")
    best: tuple[float, _Point, int, int | None, str] | None = None
    evaluations = 0
    for _ in range(restarts):
        n = int(rng.choice(family.ns))
        m = int(rng.integers(1, n + 1 if family.full_m else n))
        R = int(rng.choice(family.Rs)) if family.Rs else None
        noise = str(rng.choice(["none", "relative", "additive"]))
        if R is not None and n * R > 6:  # at most 2^6 noisy local paths per evaluation
            noise = "none"
        sign = int(rng.choice([1, -1])) if family.curvature == "identical" else 1
        vec = rng.standard_normal(3 * n + 4)
        vec[3 * n + 2] = 3.0  # start at the largest step
        point = _decode_point(vec, n, noise, sign, family, fedavg)
        cur = _float_ratio(thm, point, m, R)
        evaluations += 1
        scale = 1.0
        for _ in range(steps):
            prop = vec + scale * rng.standard_normal(vec.shape)
            cand = _decode_point(prop, n, noise, sign, family, fedavg)
            val = _float_ratio(thm, cand, m, R)
            evaluations += 1
            if val > cur:
                vec, cur, point = prop, val, cand
            else:
                scale = max(0.05, scale * 0.8)
        if np.isfinite(cur) and (best is None or cur > best[0]):
            best = (cur, point, m, R, noise)
    if best is None:
        return SearchResult(None, -np.inf, evaluations, restarts)
    cur, point, m, R, noise = best
    return SearchResult(_case_of(point, m, R, noise), cur, evaluations, restarts)


# ----------------------------------------------------------------------------- the catalogue
_F = Fraction


def _line_case(name: str, weights: Sequence[Any], curvatures: Sequence[Any],
               centers: Sequence[Any], x: Any, m: int, M: Any = 0, sigma2: Any = 0,
               R: int | None = None, theta: Any = 1) -> ExactCase:
    return ExactCase(name, LineInstance(weights, curvatures, centers, x, m, M, sigma2), R,
                     _F(theta))


_U4 = [_F(1, 4)] * 4
_C4 = [-1, 0, 0, 1]
_SKEW4 = [_F(7, 10), _F(1, 10), _F(1, 10), _F(1, 10)]

#: Theorem 13's counterexample (two clients, weights (3/4, 1/4), x^k = 1/2, exact gradients).
CE13_CASE = _line_case("CE13: w = (3/4, 1/4), c = (0, 1), x^k = 1/2, m = 1, exact gradients",
                       [_F(3, 4), _F(1, 4)], [1, 1], [0, 1], _F(1, 2), 1)

#: Where (20) is attained (w = 1/n at x*: exact gradients, or noise that dominates).
DSGD_UNIFORM_TIGHT_CASES = [
    _line_case("n=2 uniform at x*, exact gradients", [_F(1, 2)] * 2, [1, 1], [0, 1], _F(1, 2),
               1),
    _line_case("n=4 uniform at x*, additive noise sigma^2 = 100", _U4, [1] * 4, _C4, 0, 1,
               sigma2=100),
    _line_case("n=4 uniform at x*, relative noise M = 1/4", _U4, [1] * 4, _C4, 0, 1, M=_F(1, 4)),
]

#: Theorem 13 fails far more with relative noise: one heavy client (w = 97/100), M = 1.
CE13_NOISY_CASE = _line_case("w = (97/100, 3/100), c = (-5/3, 8/5), x^k = 0, m = 1, relative "
                             "noise M = 1", [_F(97, 100), _F(3, 100)], [1, 1],
                             [_F(-5, 3), _F(8, 5)], 0, 1, M=1)

#: The corrected (20): its tightest cases and far iterates with m > n/2 (where a step
#: above the stated limit breaks the contraction).
DSGD_CORRECTED_CASES = [
    *DSGD_UNIFORM_TIGHT_CASES,
    _line_case("n=4 uniform, m=3, x^k = x* + 10, exact gradients", _U4, [1] * 4, _C4, 10, 3),
    _line_case("skewed w = (7/10, 1/10, 1/10, 1/10) near x*, exact gradients", _SKEW4,
               [1, _F(1, 2), 1, _F(1, 4)], [0, 1, -1, 2], _F(1, 10), 1),
    CE13_NOISY_CASE,
]

#: Theorem 15: attained at x* (A_i = L I, w = 1/n) and, with full participation and exact
#: gradients, at every x^k and step; full participation with relative noise away from x*.
DSGD_NONCONVEX_CASES = [
    _line_case("A_i = L I, w = 1/n, at x*, relative noise M = 1/4", _U4, [1] * 4, _C4, 0, 2,
               M=_F(1, 4)),
    _line_case("A_i = L I, w = 1/n, at x*, additive noise sigma^2 = 1/4", _U4, [1] * 4, _C4, 0, 2,
               sigma2=_F(1, 4)),
    _line_case("m = n, exact gradients, x^k = x* + 5", _U4, [1] * 4, _C4, 5, 4),
    _line_case("m = n, exact gradients, x^k = x* + 5, twice the step", _U4, [1] * 4, _C4, 5, 4,
               theta=2),
    _line_case("m = n, relative noise M = 1/4, x^k = x* + 5", _U4, [1] * 4, _C4, 5, 4,
               M=_F(1, 4)),
    _line_case("concave (A_i = -L I) near the stationary point, M = 1/4", _U4, [-1] * 4, _C4,
               _F(1, 10), 2, M=_F(1, 4)),
]

#: Theorem 17's counterexample (eight clients, m = 1, R = 2, at x*).
CE17_CASE = _line_case("CE17: n=8, w = 1/8, c = +1, -1, ..., m = 1, R = 2, x^k = x*, exact "
                       "gradients", [_F(1, 8)] * 8, [1] * 8, [1, -1] * 4, 0, 1, R=2)

#: The family of CE17 with more clients (the missing 1/gamma grows with n).
CE17_FAMILY = [CE17_CASE] + [
    _line_case(f"CE17 family: n={n}, w = 1/n, m = 1, R = 2, x^k = x*, exact gradients",
               [_F(1, n)] * n, [1] * n, [1, -1] * (n // 2), 0, 1, R=2) for n in (12, 16)]

#: The corrected (27): near x* (its Z and sigma^2 terms), uniform and skewed weights.
FEDAVG_CONVEX_CASES = [
    _line_case("n=4 uniform, m=1, R=2, at x*, exact gradients", _U4, [1] * 4, [1, -1, 1, -1],
               0, 1, R=2),
    _line_case("n=4 uniform, m=1, R=2, at x*, additive noise sigma^2 = 1/4", _U4, [1] * 4,
               [1, -1, 1, -1], 0, 1, sigma2=_F(1, 4), R=2),
    _line_case("skewed w = (7/10, 1/10, 1/10, 1/10), m=1, R=2, near x*", _SKEW4,
               [1, _F(1, 2), 1, _F(1, 4)], [0, 1, -1, 2], _F(1, 10), 1, R=2),
]

#: Theorem 18: at x* (A_i = L I), W/gamma > 1 (W = 7/10, equal updates w_i|U_i|, m = 1:
#: gamma = 1/4), and near the stationary point of a concave f.
FEDAVG_NONCONVEX_CASES = [
    _line_case("A_i = L I, w = 1/n, at x*, additive noise sigma^2 = 1/4, R=2", _U4, [1] * 4, _C4,
               0, 1, sigma2=_F(1, 4), R=2),
    _line_case("W/gamma = 2.8: w = (7/10, 1/10, 1/10, 1/10), equal w_i|grad f_i|, m=1, R=2",
               _SKEW4, [1] * 4, [_F(-1, 7), 1, -1, 1], 0, 1, R=2),
    _line_case("concave (A_i = -L I) near the stationary point, exact gradients, R=2", _U4,
               [-1] * 4, _C4, _F(1, 10), 1, R=2),
]

#: The adversarial searches' instance families.
DSGD_CONVEX_SEARCH = SearchFamily("convex", (2, 3, 4))
DSGD_NONCONVEX_SEARCH = SearchFamily("identical", (2, 3, 4), theta_max=3.0, full_m=True)
FEDAVG_CONVEX_SEARCH = SearchFamily("convex", (2, 3), Rs=(2, 3))
FEDAVG_NONCONVEX_SEARCH = SearchFamily("identical", (2, 3), Rs=(2, 3), full_m=True)


