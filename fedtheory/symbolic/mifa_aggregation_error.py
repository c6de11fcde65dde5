"""MIFA's and U-MIFA's aggregation: the conditional mean of a memory row and the error
:math:`\\mathbb E\\|\nabla f(w_t)-G_t\\|^2` given the past (seed 000)."""

from __future__ import annotations

from functools import cache
from typing import Any

import sympy as sp

from fedtheory.symbolic.mifa_symbols import (
    bernoulli_expectation,
    indicators,
    p,
    prob_symbols,
    vec,
)

__all__ = ["N", "derive_conditional_means", "derive_error_terms", "mifa_bound_certificate",
           "mifa_bound_residual"]

#: The number of clients as a symbol (for statements about every n).
N = sp.Symbol("n", positive=True)


# A pure memo (one process): the derivation is a function of its arguments only (sympy
# expressions are immutable) and its readers do not modify the dict (issue 18).
@cache
def derive_conditional_means(n: int = 3) -> dict[str, Any]:
    r"""One client's new memory row and its conditional mean, for MIFA and U-MIFA.

    With indicator :math:`1_i`, update :math:`\Delta_i` and old row :math:`G_{t-1}^{(i)}`:

    .. math::

        G_t^{(i)} = 1_i\Delta_i + (1-1_i)G_{t-1}^{(i)} \quad(\text{MIFA}),\qquad
        G_t^{(i)} = 1_i\Big(\frac{\Delta_i}{p_i} - \Big(\frac1{p_i}-1\Big)G_{t-1}^{(i)}\Big)
        + (1-1_i)G_{t-1}^{(i)}\quad(\text{U-MIFA}),

    and :func:`bernoulli_expectation` gives their means given the past. Returns the rows,
    means, biases :math:`\mathbb E[G_t^{(i)}]-\Delta_i` (factored) and the solutions of
    "bias = 0".
    """
    I = indicators(n)
    ps = prob_symbols(n)
    D = vec(r"\Delta", n)
    M = [sp.Symbol(f"G_{{t-1}}^{{({i})}}", real=True) for i in range(1, n + 1)]
    mifa_rows = [I[i] * D[i] + (1 - I[i]) * M[i] for i in range(n)]
    umifa_rows = [I[i] * (D[i] / ps[i] - (1 / ps[i] - 1) * M[i]) + (1 - I[i]) * M[i]
                  for i in range(n)]
    mifa_mean = [sp.factor(bernoulli_expectation(r, I, ps)) for r in mifa_rows]
    umifa_mean = [sp.simplify(bernoulli_expectation(r, I, ps)) for r in umifa_rows]
    mifa_bias = [sp.factor(mifa_mean[i] - D[i]) for i in range(n)]
    zeros = {"p": sp.solve(mifa_bias[0], ps[0]), "Delta": sp.solve(mifa_bias[0], D[0])}
    agg_mifa = bernoulli_expectation(sum(mifa_rows) / n, I, ps)
    agg_umifa = bernoulli_expectation(sum(umifa_rows) / n, I, ps)
    return {
        "indicators": I, "p": ps, "Delta": D, "memory": M,
        "mifa_rows": mifa_rows, "umifa_rows": umifa_rows,
        "mifa_mean": mifa_mean, "umifa_mean": umifa_mean, "mifa_bias": mifa_bias,
        "mifa_bias_zero_when": zeros,
        "mifa_aggregate_mean": sp.factor(agg_mifa),
        "umifa_aggregate_mean": sp.simplify(agg_umifa),
    }


# A pure memo (one process): the derivation is a function of its arguments only (sympy
# expressions are immutable) and its readers do not modify the dict (issue 18).
@cache
def derive_error_terms(n: int = 3) -> dict[str, Any]:
    r"""The error :math:`\mathbb E\|\nabla f(w_t)-G_t\|^2` of MIFA and U-MIFA given the past.

    Per coordinate, with :math:`g_i = \nabla f_i(w_t)` and memory error
    :math:`e_i = g_i - G_{t-1}^{(i)}`, the rows of :func:`derive_conditional_means` give
    :math:`g_i - G_t^{(i)} = (1-1_i)e_i` (MIFA) and :math:`(1 - 1_i/p)e_i` (U-MIFA); the
    expectation of the square of their mean over clients is derived with equal :math:`p` and,
    for MIFA, with general :math:`p_i`. Returns the derived values, the seed's expressions, the
    Jensen step, and the sum-of-squares certificate of the MIFA bound:

    .. math::

        \frac{1-p}{n}\sum_i e_i^2 - \mathbb E\Big(\frac1n\sum_i(1-1_i)e_i\Big)^2
        = \frac{1-p}{n^2}\Big((1-p)\sum_{i<j}(e_i-e_j)^2 + p(n-1)\sum_i e_i^2\Big)\ \ge 0 .
    """
    I = indicators(n)
    g = vec("g", n)
    e = vec("e", n)
    M = [g[i] - e[i] for i in range(n)]  # memory G_{t-1}^{(i)} written through e_i
    ps = prob_symbols(n)
    mifa_rows = [I[i] * g[i] + (1 - I[i]) * M[i] for i in range(n)]
    umifa_rows = [I[i] * (g[i] / p - (1 / p - 1) * M[i]) + (1 - I[i]) * M[i] for i in range(n)]
    err_mifa = sum(g[i] - mifa_rows[i] for i in range(n)) / n
    err_umifa = sum(g[i] - umifa_rows[i] for i in range(n)) / n
    S1, S2 = sum(e), sum(x**2 for x in e)
    mifa_exact = sp.factor(bernoulli_expectation(err_mifa**2, I, [p] * n))
    mifa_exact_general = bernoulli_expectation(err_mifa**2, I, ps)
    umifa_exact = sp.factor(bernoulli_expectation(err_umifa**2, I, [p] * n))
    jensen_mean = sp.factor(bernoulli_expectation(
        sum((g[i] - mifa_rows[i]) ** 2 for i in range(n)) / n, I, [p] * n))
    umifa_diag = sp.factor(bernoulli_expectation(
        sum((g[i] - umifa_rows[i]) ** 2 for i in range(n)) / n**2, I, [p] * n))
    pairs = sum((e[i] - e[j]) ** 2 for i in range(n) for j in range(i + 1, n))
    sos = (1 - p) / n**2 * ((1 - p) * pairs + p * (n - 1) * S2)
    return {
        "e": e, "p_i": ps,
        "mifa_exact": mifa_exact,
        "mifa_exact_formula": ((1 - p) ** 2 * S1**2 + p * (1 - p) * S2) / n**2,
        "mifa_exact_general": mifa_exact_general,
        "mifa_exact_general_formula": (sum((1 - ps[i]) * e[i] for i in range(n)) ** 2
                                       + sum(ps[i] * (1 - ps[i]) * e[i] ** 2
                                             for i in range(n))) / n**2,
        "mifa_bound_seed": (1 - p) / n * S2,
        "mifa_jensen_mean": jensen_mean,
        "mifa_sos": sos,
        "mifa_worst_ratio": ((1 - p) * n + p) / n,
        "umifa_exact": umifa_exact,
        "umifa_diagonal_seed_step": umifa_diag,
        "umifa_seed": (1 - p) / (n**2 * p) * S2,
    }


def mifa_bound_residual(k: sp.Expr) -> sp.Expr:
    r"""For a bound :math:`k(p, n)\sum_i e_i^2` on MIFA's error, the residual

    .. math:: r(p, n) = k(p, n) - \frac{(1-p)\big((1-p)n + p\big)}{n^2},

    the slack per :math:`\sum_i e_i^2` at equal :math:`e_i` (the worst case). ``k`` is a sympy
    expression in :data:`~fedtheory.symbolic.mifa_symbols.p` and :data:`N`; the seed's
    :math:`k = (1-p)/n` leaves :math:`r = p(1-p)(n-1)/n^2`.

    >>> from fedtheory.symbolic.mifa_symbols import p
    >>> mifa_bound_residual((1 - p) / N)
    -p*(n - 1)*(p - 1)/n**2
    """
    return sp.factor(sp.together(k - (1 - p) * ((1 - p) * N + p) / N**2))


def mifa_bound_certificate(n: int, k: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
    r"""The slack of a bound :math:`k(p, n)\sum_i e_i^2` on MIFA's error for ``n`` clients and
    its certificate:

    .. math::

        k\sum_i e_i^2 - \mathbb E\Big\|\frac1n\sum_i(1-1_i)e_i\Big\|^2
        = \frac{(1-p)^2}{n^2}\sum_{i<j}(e_i-e_j)^2 + r(p, n)\sum_i e_i^2

    (Lagrange's identity :math:`n\sum_ie_i^2-(\sum_ie_i)^2 = \sum_{i<j}(e_i-e_j)^2`;
    :math:`r` of :func:`mifa_bound_residual`). The first term is a sum of squares that
    vanishes at equal :math:`e_i`, so the bound holds for every :math:`e` exactly when
    :math:`r(p, n)\ge0`. The expectation is the one derived by
    :func:`derive_error_terms` (indicator algebra). Returns (slack, certificate); their
    difference expands to 0.

    >>> from fedtheory.symbolic.mifa_symbols import p
    >>> slack, cert = mifa_bound_certificate(3, (1 - p) / N)
    >>> sp.expand(slack - cert)
    0
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    d = derive_error_terms(n)
    e = d["e"]
    S2 = sum(x**2 for x in e)
    pairs = sum((e[i] - e[j]) ** 2 for i in range(n) for j in range(i + 1, n))
    slack = k.subs(N, n) * S2 - d["mifa_exact"]
    cert = (1 - p) ** 2 / n**2 * pairs + mifa_bound_residual(k).subs(N, n) * S2
    return slack, cert
