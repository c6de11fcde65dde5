r"""Seed 002, Theorems 13 and 17 in exact rational arithmetic: the counterexamples.

:func:`exact_dsgd_counterexample` and :func:`exact_fedavg_counterexample` evaluate a theorem's
one-step conditional expectation by enumerating all :math:`2^n` participation patterns of the
independent sampling with the optimal probabilities (7), computed exactly
(:func:`exact_ocs_probabilities`), and compare it with the stated right-hand side; :data:`CE13`
and the texts name the instances the claims report.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from fedtheory.symbolic.enumeration import exact_expectation
from fedtheory.theory.ocs_exact import ocs_probabilities

__all__ = [
    "CE13",
    "CE13_LATEX",
    "CE17_LATEX",
    "exact_dsgd_counterexample",
    "exact_fedavg_counterexample",
    "exact_ocs_probabilities",
]


def exact_ocs_probabilities(norms: Sequence[Fraction], m: int) -> list[Fraction]:
    """Eq. (7) in exact rational arithmetic (norms sorted increasingly, as the main text):
    :func:`fedtheory.theory.ocs_exact.ocs_probabilities` on rationals."""
    return ocs_probabilities(norms, m)


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
    n: int = 8, m: int = 1, R: int = 2, corrected: bool = False
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
#: Theorem 13's counterexample as Markdown with inline LaTeX (for the claims' derivations).
CE13_LATEX = (r"$n = 2$, $d = 1$, $f_i(x) = (x - c_i)^2/2$ with $c = (0, 1)$ ($L = \mu = 1$), "
              r"$w = (3/4, 1/4)$ ($x^\star = 1/4$, $Z = (1/32, 9/32)$), exact gradients "
              r"($M = \sigma^2 = 0$), $m = 1$, $x^k = 1/2$, "
              r"$\eta^k = \gamma^k/((1+WM)L) = \gamma^k$")

#: Theorem 17's exact counterexample (eight clients on a line, m = 1, R = 2), as Markdown with
#: inline LaTeX (for the claims' derivations).
CE17_LATEX = (r"$n = 8$, $d = 1$, $f_i(x) = (x - c_i)^2/2$ with $c_i = +1, -1, +1, \dots$ "
              r"($L = \mu = 1$, $x^\star = 0$, $Z_i = 1/2$), $w_i = 1/8$, exact gradients "
              r"($M = \sigma^2 = 0$), $m = 1$, $R = 2$, $x^k = x^\star$: all updates have equal "
              r"norms, $p_i = 1/8$, $\gamma = 1/8$; $\eta_g = \sqrt{\gamma/\sum_i w_i^2} = 1$ "
              r"(its lower limit), $\eta = \frac18\min\{\frac{1}{L(2+M/R)}, "
              r"\frac{\gamma}{(1+W(1+M/R))L}\} = 1/72$, $\eta_l = \eta/(R\eta_g)$")
