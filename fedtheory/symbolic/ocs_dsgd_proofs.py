r"""Seed 002, Theorem 15 and the corrected Theorem 13: the bounds *proved* from their proofs'
lemmas, as inequalities (symbolic).

Each proof is a chain of standard inequalities, valid for every instance the theorem admits
(the lemmas are listed below). The chain gives an upper bound :math:`U` on the bounded quantity
in terms of a few non-negative quantities (:math:`\|\nabla f(x^k)\|^2`, :math:`\rho`,
:math:`\sigma^2`, :math:`f(x^k) - f^\star`, :math:`\sum_i w_i^2Z_i`); the statement's right-hand
side :math:`B` (with the constants, factors and step limit as given, possibly a mutant of the
seed's) is proved to dominate it: the slack :math:`B - U` is linear in those quantities and
every coefficient is shown non-negative on the admissible domain by
:func:`~fedtheory.symbolic.inequality.prove_nonnegative` (a sympy sign argument, after the
substitutions :math:`\gamma = 1/(1+g)`, :math:`W = 1/(1+u)`, :math:`\sum_i w_i^2 = 1/(1+v)`,
:math:`\theta = 1/(1+t)` that make the ranges :math:`(0, 1]` sign conditions). When a
coefficient cannot be shown non-negative the chain proves nothing (an abstract point where the
chain fails is not an instance of the theorem): the result says "not proved", never "false".

Lemmas (all from the seed's Appendix C and standard facts):

* Definition 11 and Assumption 7 (the variance of the aggregate):
  :math:`\mathbb E\|G\|^2 \le \big(\frac{1+M}{\gamma} - 1\big)\sum_i w_i^2\|\nabla f_i\|^2 +
  \frac{\sigma^2}{\gamma}\sum_i w_i^2 + \|\nabla f\|^2` (an identity with the assumption's
  bound attained);
* Theorem 15: :math:`L`-smoothness of :math:`f`, :math:`\mathbb E f(x - \eta G) \le f(x) -
  \eta\|\nabla f\|^2 + \frac{L\eta^2}{2}\mathbb E\|G\|^2`; and
  :math:`\sum_i w_i^2\|\nabla f_i\|^2 \le W\sum_i w_i\|\nabla f_i\|^2 \le W(\rho +
  \|\nabla f\|^2)` (Assumption 9);
* corrected Theorem 13: strong convexity, :math:`\langle\nabla f, r\rangle \ge f - f^\star +
  \frac\mu2\|r\|^2`; the Bregman bound :math:`\sum_i w_i^2\|\nabla f_i(x)\|^2 \le 4LW(f -
  f^\star) + 4L\sum_i w_i^2Z_i` (convex :math:`L`-smooth :math:`f_i`); and
  :math:`\|\nabla f\|^2 \le 2L(f - f^\star)`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sympy as sp

from fedtheory.symbolic.inequality import prove_nonnegative

__all__ = ["LinearProof", "prove_dsgd_corrected_recursion", "prove_dsgd_descent",
           "prove_linear_slack"]


class LinearProof:
    """The outcome of :func:`prove_linear_slack`: ``proved`` (bool), ``proof`` (its method, when
    proved), ``parts`` (quantity -> coefficient, status, method) and a one-line ``summary``."""

    def __init__(self, parts: dict[str, tuple[str, str, str]]) -> None:
        self.parts = parts
        self.proved = all(status == "proved" for _, status, _ in parts.values())
        methods = sorted({method for _, status, method in parts.values() if status == "proved"})
        self.proof = (f"slack linear in {', '.join(parts)} with every coefficient >= 0 "
                      f"({'; '.join(methods)})") if self.proved else None

    @property
    def summary(self) -> str:
        return "; ".join(f"coefficient of {q}: {coef} [{status}]"
                         for q, (coef, status, _) in self.parts.items())


def prove_linear_slack(slack: sp.Expr, quantities: Sequence[sp.Symbol],
                       ranges: Mapping[sp.Symbol, tuple[Any, Any]],
                       conditions: Sequence[Any] = ()) -> LinearProof:
    r"""Prove ``slack >= 0`` for a slack linear in non-negative ``quantities``: each coefficient
    (and the constant term) non-negative on ``ranges`` (:func:`prove_nonnegative`).

    >>> x, y, a = sp.symbols("x y a", nonnegative=True)
    >>> res = prove_linear_slack(a * x + (1 + a) * y, [x, y], {a: (0, 1)})
    >>> res.proved, res.summary.split("; ")[2]
    (True, 'coefficient of y: a + 1 [proved]')
    """
    expr = sp.expand(slack)
    for q in quantities:
        if any(sp.simplify(sp.diff(expr, q, q2)) != 0 for q2 in quantities):
            raise ValueError(f"slack must be linear in the quantities, not in {q}")
    parts: dict[str, tuple[str, str, str]] = {}
    const = sp.simplify(expr.subs({q: 0 for q in quantities}))
    for name, coef in [("1", const)] + [(str(q), sp.diff(expr, q)) for q in quantities]:
        num, den = sp.fraction(sp.factor(sp.together(coef)))
        if num == 0:
            parts[name] = ("0", "proved", "identically 0")
            continue
        # a coefficient num/den: den > 0 by sign inference, num >= 0 proved (or searched)
        if not den.is_positive:
            parts[name] = (str(coef), "not proved", "denominator of unknown sign")
            continue
        if num.is_number:
            parts[name] = (str(sp.factor(coef)), "proved" if num >= 0 else "violated",
                           "a non-negative number" if num >= 0 else "a negative number")
            continue
        box = {sym: ranges[sym] for sym in num.free_symbols}
        res = prove_nonnegative(num, box, grid=2, random_points=40, conditions=[
            c for c in conditions if c.free_symbols <= num.free_symbols])
        parts[name] = (str(sp.factor(coef)), res.status, res.method)
    return LinearProof(parts)


def _unit(name: str) -> tuple[sp.Symbol, sp.Expr]:
    """A symbol ``name`` >= 0 and the quantity 1/(1 + name) in (0, 1]."""
    s = sp.Symbol(name, nonnegative=True)
    return s, 1 / (1 + s)


def prove_dsgd_descent(c: Mapping[str, Any],
                       factor: Callable[[str, Any], Any] = lambda n, v: v) -> LinearProof:
    r"""(24) of Theorem 15 with constants ``c`` (``descent_half``, ``beta_half``) and factors
    through ``factor`` (``1+M``, ``W``, ``sum_w2``), proved from the lemmas for every step
    :math:`\eta > 0` (or not proved).

    The chain: :math:`\mathbb E f(x^{k+1}) - f(x^k) \le -\eta\|\nabla f\|^2 + \frac{L\eta^2}{2}
    \big[C W(\rho + \|\nabla f\|^2) + \sigma^2 S_2/\gamma + \|\nabla f\|^2\big]`,
    :math:`C = (1+M)/\gamma - 1`; the seed's (24) is this with :math:`W\|\nabla f\|^2` raised to
    :math:`\|\nabla f\|^2` (slack :math:`\frac{L\eta^2}{2}C(1-W)\|\nabla f\|^2`).

    >>> from fractions import Fraction
    >>> prove_dsgd_descent({"descent_half": Fraction(1, 2), "beta_half": Fraction(1, 2)}).proved
    True
    """
    eta, L = sp.symbols("eta L", positive=True)
    M, gf2, rho, sig2 = sp.symbols("M gf2 rho sigma2", nonnegative=True)
    g, gamma = _unit("g")
    u, W = _unit("u")
    v, S2 = _unit("v")
    C = (1 + M) / gamma - 1
    chain = -eta * gf2 + L * eta**2 / 2 * (C * W * (rho + gf2) + sig2 * S2 / gamma + gf2)
    cd, cb = sp.Rational(c["descent_half"]), sp.Rational(c["beta_half"])
    bound = (-eta * (1 - factor("1+M", 1 + M) * L * cd / gamma * eta) * gf2
             + eta**2 * cb * L / gamma * ((1 + M - gamma) * factor("W", W) * rho
                                          + factor("sum_w2", S2) * sig2))
    ranges = {s: (0, 4) for s in (eta, L, M, g, u, v)}
    return prove_linear_slack(bound - chain, [gf2, rho, sig2], ranges)


def prove_dsgd_corrected_recursion(c: Mapping[str, Any], step_scale: Any = 1) -> LinearProof:
    r"""The corrected (20) with constants ``c`` (``beta1_Z``, ``beta2_Z``) at every step up to
    ``step_scale`` times :math:`\gamma/((1 + 2W(1+M))L)`, proved from the lemmas (or not).

    The chain: :math:`\mathbb E\|r^{k+1}\|^2 \le (1 - \mu\eta)\|r\|^2 - 2\eta D + \eta^2\big[
    C(4LWD + 4L\sum_i w_i^2Z_i) + \sigma^2S_2/\gamma + 2LD\big]`, :math:`D = f - f^\star`,
    :math:`C = (1+M)/\gamma - 1`; :math:`\eta = \theta\,s\,\gamma/((1 + 2W(1+M))L)`,
    :math:`0 < \theta \le 1`, :math:`s` = ``step_scale``.

    >>> from fractions import Fraction
    >>> prove_dsgd_corrected_recursion({"beta1_Z": 4, "beta2_Z": 4}).proved
    True
    >>> prove_dsgd_corrected_recursion({"beta1_Z": 4, "beta2_Z": 4}, step_scale=2).proved
    False
    """
    L, W = sp.symbols("L W", positive=True)
    M, D, s2z, sig2s2, r2, mu = sp.symbols("M D S2Z sigma2S2 r2 mu", nonnegative=True)
    g, gamma = _unit("g")
    t, theta = _unit("t")
    eta = theta * sp.Rational(step_scale) * gamma / ((1 + 2 * W * (1 + M)) * L)
    C = (1 + M) / gamma - 1
    chain = ((1 - mu * eta) * r2 - 2 * eta * D
             + eta**2 * (C * (4 * L * W * D + 4 * L * s2z) + sig2s2 / gamma + 2 * L * D))
    k1, k2 = sp.Rational(c["beta1_Z"]), sp.Rational(c["beta2_Z"])
    bound = (1 - mu * eta) * r2 + eta**2 * ((k1 * L * (1 + M) * s2z + sig2s2) / gamma
                                            - k2 * L * s2z)
    ranges = {s: (0, 4) for s in (L, M, W, g, t, mu)}
    return prove_linear_slack(bound - chain, [D, s2z, sig2s2, r2], ranges)
