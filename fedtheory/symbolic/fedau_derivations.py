r"""Sympy derivations for FedAU (seed 001): renewal weights, Theorem 3's bias limit,
Corollary 4's variance cost, Theorem 1's fixed point.

Each ``derive_*`` builds its result from the ingredients (survival functions, indicator
expectations, the update rule) and returns a dict of sympy expressions; the claims compare
them with the seed's formulas, the notebook shows them.
"""

from __future__ import annotations

from typing import Any

import sympy as sp

__all__ = [
    "derive_bernoulli_weight",
    "geometric_series",
    "derive_fixed_point",
    "derive_markov_weight",
    "is_zero",
]

p, q, K, j, m = sp.symbols("p q K j m", positive=True)


def is_zero(expr: Any) -> bool:
    """True when ``expr`` simplifies to 0."""
    return sp.simplify(sp.sympify(expr)) == 0


def geometric_series(r: sp.Expr) -> sp.Expr:
    r""":math:`\sum_{k\ge1} r^k` for :math:`0 < r < 1`, derived as the limit of sympy's
    partial sum :math:`\sum_{k=1}^M r^k = (r - r^{M+1})/(1-r)` with :math:`r^M\to0`."""
    rr = sp.Symbol("r", positive=True)
    M = sp.Symbol("M", positive=True, integer=True)
    part = sp.summation(rr**m, (m, 1, M))
    if isinstance(part, sp.Piecewise):
        part = next(e for e, cond in part.args if e.has(M) and cond != sp.Eq(rr, 1))
    tail = sp.simplify(part.subs(rr ** (M + 1), 0).subs(rr**M, 0))
    if tail.has(M):
        raise ValueError(f"the partial sum {part} did not reduce to a closed form")
    return tail.subs(rr, r)


def derive_bernoulli_weight() -> dict[str, sp.Expr]:
    r"""Bernoulli(:math:`p`) long-run weight, two ways.

    * Renewal mean of one interval: :math:`\mathbb E\min(G,K) = \sum_{j=0}^{K-1}P(G>j)`,
      :math:`P(G > j) = (1-p)^j`.
    * Rate of interval ends: :math:`p\,(1 + \sum_{k\ge1}P(G-1\ge kK))`, with
      :math:`P(G-1\ge kK) = (1-p)^{kK}`; the weight is its inverse.

    Also the bias of :math:`p\omega_\infty - 1` and its square (Theorem 3's bias term).
    """
    qq = 1 - p
    mean_interval = sp.simplify(sp.summation(qq**j, (j, 0, K - 1)))
    cut_sum = geometric_series(q**K)
    by_rate = sp.simplify((1 / (p * (1 + cut_sum))).subs(q, qq))
    bias = sp.simplify(p * mean_interval - 1)
    return {"mean_interval": mean_interval, "by_rate": by_rate, "bias": bias,
            "bias_squared": sp.expand(bias**2)}


def derive_markov_weight() -> dict[str, sp.Expr]:
    r"""Long-run weight under the on/off Markov chain with stationary :math:`p`, correlation
    :math:`\lambda`: join :math:`b = p(1-\lambda)`, leave :math:`a = (1-p)(1-\lambda)`.
    From a participation the next gap has :math:`P(G-1\ge i) = a(1-b)^{i-1}`
    (:math:`i\ge1`), so the cutoffs per participation are
    :math:`\sum_{k\ge1} a(1-b)^{kK-1}` and :math:`\omega_\infty = 1/(p(1+\cdot))`.
    Returns the weight, its :math:`\lambda = 0` value and its :math:`K\to\infty` limit
    (taken through :math:`r = (1-b)^K \to 0`)."""
    lam, r = sp.symbols("lambda r", nonnegative=True)
    a = (1 - p) * (1 - lam)
    b = p * (1 - lam)
    u = sp.Symbol("u", positive=True)  # u = 1 - b in (0, 1)
    cuts_u = a / u * geometric_series(u**K)
    cuts = sp.simplify(cuts_u.subs(u, 1 - b))
    weight = sp.simplify(1 / (p * (1 + cuts)))
    at_zero = sp.simplify(weight.subs(lam, 0))
    # K -> oo: (1 - b)^K -> 0 for b in (0, 1]
    limit = sp.simplify((1 / (p * (1 + cuts_u.subs(u**K, r)))).subs(r, 0))
    return {"weight": weight, "lambda_zero": at_zero, "K_infinity": limit, "cuts": cuts,
            "lam": lam}


def derive_fixed_point(n: int = 3, local_steps: int = 1) -> dict[str, Any]:
    r"""Theorem 1 on scalar quadratics :math:`F_i = \frac{a_i}2(x-c_i)^2`, time-constant
    :math:`\omega_i`, :math:`1_i\sim\mathrm{Bernoulli}(p_i)`, :math:`I` exact local steps of
    size :math:`\gamma`: a client's update is :math:`\Delta_i = ((1-\gamma a_i)^I-1)(x-c_i)`,
    the server step :math:`x^+ = x + \frac{\eta}{N}\sum_i\omega_i1_i\Delta_i`.

    Returns the expected update (indicator expectation :math:`\mathbb E1_i = p_i`, taken
    term by term), its fixed point, the stationary point of
    :math:`h = \frac1P\sum_i\omega_ip_iF_i` and of :math:`f = \frac1N\sum_iF_i`, and the
    fixed point's first-order expansion in :math:`\gamma`.
    """
    a = sp.symbols(f"a1:{n + 1}", positive=True)
    c = sp.symbols(f"c1:{n + 1}", real=True)
    pp = sp.symbols(f"p1:{n + 1}", positive=True)
    w = sp.symbols(f"omega1:{n + 1}", positive=True)
    ind = sp.symbols(f"I1:{n + 1}")  # indicators
    x, gamma, eta = sp.symbols("x gamma eta", positive=True)
    delta = [((1 - gamma * a[i]) ** local_steps - 1) * (x - c[i]) for i in range(n)]
    update = x + eta / n * sum(w[i] * ind[i] * delta[i] for i in range(n))
    expected = sp.expand(update).subs({ind[i]: pp[i] for i in range(n)})  # linear in each 1_i
    fixed = sp.solve(sp.Eq(expected, x), x)[0]
    P = sum(w[i] * pp[i] for i in range(n))
    h = sum(w[i] * pp[i] * a[i] / 2 * (x - c[i]) ** 2 for i in range(n)) / P
    f = sum(a[i] / 2 * (x - c[i]) ** 2 for i in range(n)) / n
    argmin_h = sp.solve(sp.diff(h, x), x)[0]
    argmin_f = sp.solve(sp.diff(f, x), x)[0]
    first_order = sp.simplify(sp.limit(fixed, gamma, 0))
    return {"a": a, "c": c, "p": pp, "omega": w, "x": x, "gamma": gamma, "eta": eta,
            "expected_update": expected, "fixed_point": sp.simplify(fixed),
            "argmin_h": sp.simplify(argmin_h), "argmin_f": sp.simplify(argmin_f),
            "gamma_to_zero": first_order, "h": h, "f": f}
