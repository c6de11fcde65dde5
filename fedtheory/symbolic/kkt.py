r"""The KKT system of the optimal client sampling problem, with sympy (seed 002, Lemma 20).

Problem (Lemma 20's form, :math:`\Omega = V + \sum_i u_i^2`):

.. math::

    \min_p \sum_i \frac{u_i^2}{p_i}\quad\text{s.t.}\quad 0 \le p_i \le 1,\
    \sum_i p_i \le m, \qquad
    L = \sum_i \frac{u_i^2}{p_i} - \sum_i\lambda_i p_i - \sum_i\mu_i(1-p_i)
        - y\Big(m - \sum_i p_i\Big).

:func:`derive_ocs_kkt` derives, for symbolic :math:`m, n, l` and a symbolic sum
:math:`S_l = \sum_{j\le l} u_{(j)}`:

* stationarity :math:`\partial L/\partial p_i = -u_i^2/p_i^2 - \lambda_i + \mu_i + y = 0`;
* an interior client (:math:`\lambda_i = \mu_i = 0`): :math:`p_i = u_i/\sqrt y`;
* a saturated client (:math:`p_i = 1`, :math:`\lambda_i = 0`): :math:`\mu_i = u_i^2 - y`;
* the active budget :math:`(n - l) + S_l/\sqrt y = m` gives :math:`\sqrt y = S_l/(m+l-n)`,
  hence :math:`p_i = (m+l-n)u_i/S_l`;
* primal feasibility of the largest interior client, :math:`p_{(l)} \le 1`, is
  :math:`g(l) = (m+l-n)u_{(l)} - S_l \le 0`; dual feasibility of the smallest saturated one,
  :math:`\mu_{(l+1)} \ge 0`, is :math:`(m+l-n)u_{(l+1)} - S_l \ge 0`, which is
  :math:`g(l+1) \ge 0`; and :math:`g(l+1) - g(l) = (m+l-n)(u_{(l+1)} - u_{(l)}) \ge 0`, so
  the admissible :math:`l` form an interval and its largest element is the KKT point;
* the optimal value :math:`S_l^2/(m+l-n) - \sum_{i\le l} u_{(i)}^2`
  (:func:`derive_optimal_value`).

:func:`kkt_points_exact` enumerates, in exact rational arithmetic, every saturation pattern of a
small instance and returns the points that satisfy the whole KKT system; the problem is
strictly convex in the non-zero coordinates, so there is exactly one.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

__all__ = [
    "KKTPoint",
    "OCSKKTDerivation",
    "derive_ocs_kkt",
    "derive_optimal_value",
    "kkt_points_exact",
    "to_rational",
]


def to_rational(x: Any) -> sp.Rational:
    """An exact sympy Rational from an int, Fraction, decimal string or float (exact binary)."""
    if isinstance(x, sp.Rational):
        return x
    if isinstance(x, float):
        return sp.Rational(*x.as_integer_ratio())
    return sp.Rational(x)


@dataclass
class OCSKKTDerivation:
    """The symbols and derived expressions of :func:`derive_ocs_kkt` (for display)."""

    symbols: dict[str, sp.Symbol]
    lagrangian_term: sp.Expr
    stationarity: sp.Expr
    p_interior: sp.Expr
    mu_saturated: sp.Expr
    sqrt_y: sp.Expr
    p_closed_form: sp.Expr
    primal_condition: sp.Expr
    dual_condition: sp.Expr
    g_step: sp.Expr
    steps: list[tuple[str, sp.Expr]] = field(default_factory=list)


def derive_ocs_kkt() -> OCSKKTDerivation:
    r"""Derive the closed form of eq. (7) from the KKT conditions of Lemma 20's Lagrangian.

    Nothing of the seed's result is typed in: the expressions come from ``sp.diff`` and
    ``sp.solve`` applied to the Lagrangian and the budget equation.

    >>> d = derive_ocs_kkt()
    >>> d.p_closed_form
    u_i*(l + m - n)/S_l
    >>> d.g_step
    -(u_l - u_l1)*(l + m - n)
    """
    u_i, p_i, y = sp.symbols("u_i p_i y", positive=True)
    lam_i, mu_i = sp.symbols("lambda_i mu_i", nonnegative=True)
    m, n, ell = sp.symbols("m n l", positive=True)
    s_l = sp.Symbol("S_l", positive=True)
    u_l, u_l1 = sp.symbols("u_l u_l1", positive=True)  # u_(l) and u_(l+1)
    r = sp.Symbol("r", positive=True)  # r = sqrt(y)

    # the terms of L that involve p_i (y m is a constant)
    term = u_i**2 / p_i - lam_i * p_i - mu_i * (1 - p_i) + y * p_i
    stat = sp.diff(term, p_i)
    interior = [s for s in sp.solve(stat.subs({lam_i: 0, mu_i: 0}), p_i) if s.is_positive]
    if len(interior) != 1:
        raise RuntimeError(f"expected one positive stationary point, got {interior}")
    p_int = interior[0]
    mu_sat = sp.solve(stat.subs({p_i: 1, lam_i: 0}), mu_i)[0]

    # budget active: the n - l saturated clients give 1 each, the l interior ones u_j / sqrt(y)
    budget = (n - ell) + s_l / r - m
    r_sol = sp.solve(budget, r)[0]
    p_cf = sp.simplify(p_int.subs(y, r**2).subs(r, r_sol))

    # p_(l) <= 1  <=>  numerator of p_(l) - 1 (over S_l > 0) <= 0
    num, den = sp.fraction(sp.together(p_cf.subs(u_i, u_l) - 1))
    primal = sp.expand(num * sp.sign(den))
    # mu_(l+1) >= 0  <=>  u_(l+1) >= sqrt(y)  <=>  (m + l - n) u_(l+1) - S_l >= 0
    mu_l1 = mu_sat.subs({u_i: u_l1, y: r_sol**2})
    dual = sp.expand(sp.cancel(mu_l1 / (u_l1 + r_sol) * (m + ell - n)))

    g = (m + ell - n) * u_l - s_l
    g_next = (m + ell + 1 - n) * u_l1 - (s_l + u_l1)
    g_step = sp.factor(sp.expand(g_next - g))

    steps = [
        (r"L_i(p_i)", term),
        (r"\partial L/\partial p_i", stat),
        (r"p_i \text{ (interior, } \lambda_i=\mu_i=0)", p_int),
        (r"\mu_i \text{ (saturated, } p_i = 1)", mu_sat),
        (r"\sqrt{y} \text{ (active budget)}", r_sol),
        (r"p_i = u_i/\sqrt{y}", p_cf),
        (r"S_l\,(p_{(l)} - 1)", primal),
        (r"(m+l-n)\,\mu_{(l+1)}/(u_{(l+1)} + \sqrt y)", dual),
        (r"g(l+1) - g(l)", g_step),
    ]
    syms = {"u_i": u_i, "p_i": p_i, "y": y, "lambda_i": lam_i, "mu_i": mu_i, "m": m, "n": n,
            "l": ell, "S_l": s_l, "u_l": u_l, "u_l1": u_l1}
    return OCSKKTDerivation(syms, term, stat, p_int, mu_sat, r_sol, p_cf, primal, dual, g_step,
                            steps)


def derive_optimal_value(ell: int) -> tuple[sp.Expr, tuple[sp.Symbol, ...], sp.Symbol,
                                            sp.Symbol]:
    r"""Substitute the KKT solution into :math:`V(p) = \sum_i (1-p_i)u_i^2/p_i`, for a concrete
    number ``ell`` of interior clients and symbolic norms, :math:`m` and :math:`n`.

    The saturated clients contribute :math:`(1 - 1)u_i^2/1 = 0`; the interior ones get
    :math:`p_i = (m+l-n)u_i/\sum_{j\le l}u_j`. Returns ``(value, u, m, n)`` with ``value``
    simplified.

    >>> val, u, m, n = derive_optimal_value(2)
    >>> sp.simplify(val - ((u[0] + u[1]) ** 2 / (m - n + 2) - u[0] ** 2 - u[1] ** 2))
    0
    """
    if not isinstance(ell, int) or ell < 1:
        raise ValueError(f"ell must be a positive integer, got {ell!r}")
    u = sp.symbols(f"u_1:{ell + 1}", positive=True)
    m, n = sp.symbols("m n", positive=True)
    total = sp.Add(*u)
    p = [(m + ell - n) * ui / total for ui in u]
    value = sp.Add(*[(1 - pi) / pi * ui**2 for pi, ui in zip(p, u, strict=True)])
    return sp.simplify(value), u, m, n


@dataclass(frozen=True)
class KKTPoint:
    """One exact solution of the KKT system: probabilities, multipliers, objective."""

    p: tuple[sp.Rational, ...]
    y: sp.Rational
    lam: tuple[sp.Rational, ...]
    mu: tuple[sp.Rational, ...]
    saturated: tuple[int, ...]
    value: sp.Rational  # V(p) = sum (1 - p_i)/p_i u_i^2 (zero norms contribute 0)


def kkt_points_exact(norms: Sequence[Any], m: Any) -> list[KKTPoint]:
    r"""Every point satisfying the KKT system, by enumerating saturation patterns exactly.

    For each set :math:`A` of saturated clients (:math:`p_i = 1`) among the non-zero norms,
    the rest :math:`B` of the non-zero norms interior and the zero norms at :math:`p_i = 0`:

    * budget active (:math:`y > 0`): :math:`p_B = (m - |A|) u_B / \sum_B u`, needs
      :math:`m > |A|`, :math:`0 < p_B \le 1`, :math:`\mu_A = u_A^2 - y \ge 0`;
    * budget slack (:math:`y = 0`): only :math:`B = \emptyset`, :math:`|A| \le m`.

    Zero norms get :math:`\lambda_i = y`, :math:`\mu_i = 0`. Points are de-duplicated by
    :math:`p` (a tie :math:`p_i = 1` may be reached from two patterns). Exponential in the
    number of clients: for small instances only (:math:`n \le 12`).
    """
    u = [to_rational(x) for x in norms]
    mm = to_rational(m)
    n = len(u)
    if n == 0 or n > 12:
        raise ValueError(f"kkt_points_exact needs 1 <= n <= 12 clients, got {n}")
    if any(x < 0 for x in u):
        raise ValueError(f"norms must be non-negative, got {list(norms)!r}")
    if not (0 < mm <= n):
        raise ValueError(f"m must satisfy 0 < m <= n = {n}, got {m!r}")
    nz = [i for i in range(n) if u[i] > 0]
    zero = sp.Integer(0)
    found: dict[tuple[sp.Rational, ...], KKTPoint] = {}
    for k in range(len(nz) + 1):
        for sat in itertools.combinations(nz, k):
            interior = [i for i in nz if i not in sat]
            p = [zero] * n
            for i in sat:
                p[i] = sp.Integer(1)
            if interior:
                coef = mm - k
                total = sp.Add(*[u[i] for i in interior])
                if coef <= 0:
                    continue
                for i in interior:
                    p[i] = coef * u[i] / total
                y = (total / coef) ** 2
                if any(p[i] > 1 for i in interior):
                    continue
            else:
                if k > mm:
                    continue
                y = zero
            mu = [u[i] ** 2 - y if i in sat else zero for i in range(n)]
            lam = [y if u[i] == 0 else zero for i in range(n)]
            if any(x < 0 for x in mu):
                continue
            # the whole system, checked exactly
            stat_ok = all(
                (-(u[i] ** 2) / p[i] ** 2 - lam[i] + mu[i] + y == 0) if u[i] > 0
                else (-lam[i] + mu[i] + y == 0)
                for i in range(n)
            )
            budget = sp.Add(*p)
            comp_ok = (y * (mm - budget) == 0 and all(lam[i] * p[i] == 0 for i in range(n))
                       and all(mu[i] * (1 - p[i]) == 0 for i in range(n)))
            if not (stat_ok and comp_ok and budget <= mm):
                continue
            value = sp.Add(*[(1 - p[i]) / p[i] * u[i] ** 2 for i in nz])
            key = tuple(p)
            if key not in found:
                found[key] = KKTPoint(key, y, tuple(lam), tuple(mu), tuple(sat), value)
    return list(found.values())
