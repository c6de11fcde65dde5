r"""Derivations behind FL-FDMS's friend-discovery bounds (seed 004, Lemma 2, eqs. 16–17,
Theorem 2), and the comparison of a stated form (possibly mutated) with what they give.

- :func:`hoeffding_exponent`: Hoeffding's tail :math:`e^{-2n\epsilon^2/(b-a)^2}` for a mean of
  :math:`n \ge \beta t` scores in :math:`[a, b] = [0, 1]` at deviation :math:`\epsilon =
  \delta_{\min}/2`: exponent :math:`-\beta\delta_{\min}^2 t/2`; the union over one friend
  (low) and at most :math:`K-2` non-friends (high) counts :math:`K-1` events
  (:func:`union_count`).
- :func:`cauchy_schwarz_gap`: :math:`D\sum_k x_k^2 - (\sum_k x_k)^2 = \sum_{k<l}(x_k-x_l)^2`
  (the step :math:`\|\frac1K\sum_{k\in D}e^k\|^2 \le \frac{D}{K^2}\sum\|e^k\|^2 \le
  \frac{\alpha}{K}\sum\|e^k\|^2` of eq. 16).
- :func:`geometric_sum`: :math:`\sum_{t=0}^{T-1}x^t = \frac{1-x^T}{1-x}` (eq. 17).
- :func:`theta_union_sum`: with Theorem 2's :math:`\Theta_t`, each of the
  :math:`2K^2TB_{\max}` events of the union (client :math:`k`, friend :math:`i`, leader
  :math:`\phi`, round :math:`t`, two tails) has probability
  :math:`e^{-\beta t(\Theta_t-\delta_f)^2/2} = p/(2K^2TB_{\max})`: the union is :math:`p`.

The ``*_termwise`` functions compare a stated bound with the derived one term by term:
``"proved"`` when every term of the stated side dominates (then the stated bound follows from
the derivation), else a concrete admissible point where the stated side is smaller (it does
not follow from the derivation: a proof gap, or a mutant the derivation rules out).
"""

from __future__ import annotations

import math
from typing import Any

import sympy as sp

from fedtheory.symbolic.inequality import InequalityResult, prove_nonnegative

__all__ = [
    "SYMBOLS",
    "cauchy_schwarz_gap",
    "eq16_termwise",
    "geometric_sum",
    "hoeffding_exponent",
    "lemma_termwise",
    "psi_termwise",
    "theta_dominance",
    "theta_union_sum",
    "union_count",
]

K, beta, delta, t, n, eps = sp.symbols("K beta delta t n epsilon", positive=True)
alpha, sF2, sP2, T, p, B, df, x = sp.symbols("alpha sigma_F2 sigma_P2 T p B delta_f x",
                                             positive=True)
SYMBOLS = {"K": K, "beta": beta, "delta": delta, "t": t, "alpha": alpha, "sigma_F2": sF2,
           "sigma_P2": sP2, "T": T, "p": p, "B": B, "delta_f": df, "x": x}


def hoeffding_exponent() -> sp.Expr:
    r"""Hoeffding: :math:`P(\bar X_n - \mu \ge \epsilon) \le e^{-2n\epsilon^2/(b-a)^2}`; at
    :math:`[a, b] = [0, 1]`, :math:`\epsilon = \delta/2`, :math:`n = \beta t` the exponent is
    :math:`-\beta\delta^2t/2`.

    >>> hoeffding_exponent()
    -beta*delta**2*t/2
    """
    a, b = sp.Integer(0), sp.Integer(1)
    return sp.simplify((-2 * n * eps**2 / (b - a) ** 2).subs({eps: delta / 2, n: beta * t}))


def union_count() -> sp.Expr:
    """Events of the union in Lemma 2's argument: one friend's mean low, or one of the at most
    :math:`K-2` non-friends' means high (the dropped client and the friend excluded)."""
    return sp.Integer(1) + (K - 2)


def cauchy_schwarz_gap(D: int) -> sp.Expr:
    r""":math:`D\sum_k x_k^2 - (\sum_k x_k)^2 - \sum_{k<l}(x_k-x_l)^2` (expands to 0)."""
    xs = sp.symbols(f"x0:{D}")
    sos = sum((xs[i] - xs[j]) ** 2 for i in range(D) for j in range(i + 1, D))
    return sp.expand(D * sum(v**2 for v in xs) - sum(xs) ** 2 - sos)


def geometric_sum() -> tuple[sp.Expr, sp.Expr]:
    r"""(:math:`\sum_{t=0}^{T-1}x^t` by sympy, the closed form :math:`(1-x^T)/(1-x)`)."""
    s = sp.Symbol("s", integer=True, nonnegative=True)
    Ti = sp.Symbol("T", integer=True, positive=True)
    derived = sp.summation(x**s, (s, 0, Ti - 1))
    return derived, (1 - x**Ti) / (1 - x)


def theta_union_sum(theta: sp.Expr) -> sp.Expr:
    r"""Theorem 2's union bound if every round's events had round :math:`t`'s probability:
    :math:`2K^2TB\,e^{-\beta t(\Theta_t-\delta_f)^2/2}`, simplified for a given
    :math:`\Theta_t` (for the theorem's: :math:`p`, whatever :math:`t`)."""
    return sp.simplify(sp.expand_log(2 * K**2 * T * B * sp.exp(
        -beta * t * sp.expand((theta - df) ** 2) / 2), force=True))


# ------------------------------------------------------------------ stated vs derived


def _check(expr: sp.Expr, ranges: dict[sp.Symbol, tuple[Any, Any]]) -> Any:
    e = sp.expand(sp.sympify(expr))
    if not e.free_symbols:  # a number: its sign decides
        ok = bool(e >= 0)
        return InequalityResult("proved" if ok else "violated", "exact number", 1,
                                {} if ok else {"value": str(e)}, None if ok else e)
    return prove_nonnegative(e, ranges)


def lemma_termwise(pref: Any, rate: Any, kf: Any, bf: Any, d2f: Any) -> dict[str, Any]:
    r"""Stated :math:`pref\cdot K_f\,e^{-rate\,\beta_f\,\delta^2_f\,t}` (the ``*_f`` are
    :math:`K, \beta, \delta^2` or 1 when a mutant drops them) against the derived
    :math:`(K-1)e^{-\beta\delta^2t/2}`, on :math:`K\ge2`, :math:`\beta,\delta\in(0,1]`,
    :math:`t\ge0`: the prefactor and the exponent compared separately (both dominate: the
    stated bound follows); a violation gives a point where stated < derived."""
    k = sp.Symbol("k", nonnegative=True)
    pre = _check((sp.sympify(pref) * kf - union_count()).subs(K, 2 + k), {k: (0, 48)})
    e_s = -sp.sympify(rate) * bf * d2f * t
    expo = _check((e_s - hoeffding_exponent()) / t, {beta: (sp.Rational(1, 100), 1),
                                                      delta: (sp.Rational(1, 100), 1)})
    out = {"prefactor": pre.status, "exponent": expo.status,
           "derived": str(union_count() * sp.exp(hoeffding_exponent()))}
    if pre.status == "proved" and expo.status == "proved":
        return {**out, "status": "proved", "proof": (
            f"stated prefactor - (K-1) >= 0 ({pre.method}) and stated exponent - "
            f"(-beta delta^2 t/2) >= 0 ({expo.method}): every term dominates")}
    if pre.status == "violated":
        kv = 2 + sp.Rational(pre.instance["k"])
        pt = {"K": str(kv), "t": "0", "stated": str(sp.sympify(pref * kf).subs(K, kv)),
              "derived": str(kv - 1)}
        return {**out, "status": "violated", "instance": pt}
    if expo.status == "violated":
        sub = {s: sp.Rational(v) for s, v in zip((beta, delta), (
            expo.instance.get("beta", "1"), expo.instance.get("delta", "1")), strict=True)}
        slope = float(-(e_s - hoeffding_exponent()).subs(sub) / t)  # > 0: stated decays faster
        kv = 2
        ratio0 = float(sp.sympify(pref * kf).subs(K, kv)) / (kv - 1)
        tv = math.ceil(max(math.log(max(ratio0, 1.0)) / slope, 0.0)) + 1
        stated = float((sp.sympify(pref * kf) * sp.exp(e_s)).subs({**sub, K: kv, t: tv}))
        derived = float((union_count() * sp.exp(hoeffding_exponent())).subs(
            {**sub, K: kv, t: tv}))
        return {**out, "status": "violated", "instance": {
            "K": kv, "beta": str(sub[beta]), "delta": str(sub[delta]), "t": tv,
            "stated": stated, "derived": derived}}
    return {**out, "status": "not violated"}


def eq16_termwise(a2f: Any, friend: Any, pref: Any, rate: Any, kf: Any) -> dict[str, Any]:
    r"""Stated :math:`A_f\big(c_F\sigma_F^2 + pref\,K_f\,e^{-rate\,\beta\delta^2t}
    (\sigma_P^2-\sigma_F^2)\big)` (:math:`A_f = \alpha^2` or 1) against the derivation
    :math:`\alpha^2\big(\sigma_F^2 + (K-1)e^{-\beta\delta^2t/2}(\sigma_P^2-\sigma_F^2)\big)`
    (Cauchy–Schwarz, conditioning on the choice, Lemma 2's Hoeffding bound): termwise."""
    if sp.simplify(sp.sympify(a2f) - alpha**2) == 0 or sp.sympify(a2f) == 1:  # alpha in [0, 1]
        a = InequalityResult("proved", "A_f is alpha^2 or 1 >= alpha^2 (alpha <= 1)", 0)
    else:
        a = _check(a2f - alpha**2, {alpha: (0, 1)})
    c = _check(sp.sympify(friend) - 1, {})
    lem = lemma_termwise(pref, rate, kf, beta, delta**2)
    out = {"alpha^2": a.status, "friend": c.status, "lemma": lem}
    if a.status == "proved" and c.status == "proved" and lem["status"] == "proved":
        return {**out, "status": "proved", "proof": (
            f"A_f >= alpha^2 ({a.method}), friend coefficient >= 1 ({c.method}), "
            f"{lem['proof']}")}
    if a.status == "violated" or c.status == "violated":
        av = sp.Rational(a.instance.get("alpha", "1/2")) if a.instance else sp.Rational(1, 2)
        stated = sp.sympify(a2f * friend).subs(alpha, av)
        return {**out, "status": "violated", "instance": {
            "alpha": str(av), "sigma_F2": "1", "sigma_P2": "1", "t": "any",
            "stated": str(stated), "derived": str(av**2)}}
    if lem["status"] == "violated":
        return {**out, "status": "violated", "instance": {
            **lem["instance"], "alpha": "1", "sigma_F2": "0", "sigma_P2": "1"}}
    return {**out, "status": "not violated"}


def psi_termwise(star: Any, pref: Any, rate: Any, kf: Any) -> dict[str, Any]:
    r"""Stated :math:`c^*\Psi^* + pref\,K_f\bar\Psi\,S(x_s)/T` against the sum of the derived
    eq. (16), :math:`\Psi^* + (K-1)(\bar\Psi-\Psi^*)S(x)/T` with :math:`S(x) = \sum_{t<T}x^t`,
    :math:`x = e^{-\beta\delta^2/2}`, :math:`x_s = e^{-rate\,\beta\delta^2}`: termwise
    (:math:`c^* \ge 1`; :math:`x_s \ge x`, :math:`S` increasing; :math:`pref\,K_f\bar\Psi \ge
    (K-1)(\bar\Psi-\Psi^*)` as :math:`0 \le \Psi^* \le \bar\Psi`)."""
    c = _check(sp.sympify(star) - 1, {})
    lem = lemma_termwise(pref, rate, kf, beta, delta**2)
    out = {"psi_star": c.status, "lemma": lem}
    if c.status == "proved" and lem["status"] == "proved":
        return {**out, "status": "proved", "proof": (
            f"c* >= 1 ({c.method}); {lem['proof']}; S increasing in x")}
    if c.status == "violated":
        return {**out, "status": "violated", "instance": {
            "psi_star": "1", "psi_bar": "1", "T": "large", "stated": f"{star} + O(1/T)",
            "derived": "1 + 0"}}
    if lem["status"] == "violated":
        return {**out, "status": "violated", "instance": {**lem["instance"],
                                                          "psi_star": "0", "psi_bar": "1"}}
    return {**out, "status": "not violated"}


def theta_dominance(theta_stated: sp.Expr, theta_derived: sp.Expr,
                    grid: list[dict[sp.Symbol, float]]) -> dict[str, Any]:
    r"""Whether a stated threshold is at least the derived one (a larger threshold eliminates
    less: the union bound still gives :math:`p`): identical (``"proved"``), or the first grid
    point where it is smaller (``"violated"``), else ``"not violated"``."""
    diff = sp.simplify(theta_stated - theta_derived)
    if diff == 0:
        return {"status": "proved", "proof": "the stated threshold is the derived one (sympy)"}
    f = sp.lambdify(list(SYMBOLS.values()), diff, "math")
    order = list(SYMBOLS)
    for pt in grid:
        vals = [pt.get(SYMBOLS[nm], 1.0) for nm in order]
        v = f(*vals)
        if v < -1e-9:
            return {"status": "violated", "difference": v,
                    "instance": {str(s): val for s, val in pt.items()}}
    return {"status": "not violated"}
