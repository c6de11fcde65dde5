"""SAGA, SAG, MIFA and U-MIFA given the same memory and active set (seed 000)."""

from __future__ import annotations

from functools import cache
from typing import Any

import sympy as sp

from fedtheory.symbolic.mifa_symbols import (
    bernoulli_expectation,
    indicators,
    prob_symbols,
    vec,
)

__all__ = ["derive_saga_umifa"]


# A pure memo (one process): the derivation is a function of its arguments only (sympy
# expressions are immutable) and its readers do not modify the dict (issue 18).
@cache
def derive_saga_umifa(n: int = 3) -> dict[str, Any]:
    r"""SAGA, SAG, MIFA and U-MIFA given the same memory :math:`\alpha_i` and active set.

    .. math::

        G^{\text{SAGA}} = \bar\alpha + \frac1n\sum_i\frac{1_i}{p_i}(g_i-\alpha_i),\quad
        \alpha_i^+ = 1_ig_i + (1-1_i)\alpha_i;\qquad
        G^{\text{SAG}} = \bar\alpha + \frac1n\sum_i 1_i(g_i-\alpha_i),\ \text{same }\alpha^+ .

    U-MIFA's direction equals SAGA's (identically in the indicators); its stored row differs from
    SAGA's by :math:`1_i(\frac1{p_i}-1)(g_i-\alpha_i)`. MIFA's direction and memory equal SAG's.
    Under a different sampling law the one-step estimators differ in law: with one client
    drawn uniformly (SAGA's usual sampling, :math:`p_i = 1/n`) the variance given the memory is
    :math:`\frac1n\sum_i e_i^2-\bar e^2`, with independent Bernoulli(:math:`1/n`) it is
    :math:`\frac{n-1}{n^2}\sum_ie_i^2` (:math:`e_i = g_i-\alpha_i`).
    """
    I = indicators(n)
    ps = prob_symbols(n)
    g = vec("g", n)
    a = vec(r"\alpha", n)
    abar = sum(a) / n
    saga = abar + sum(I[i] / ps[i] * (g[i] - a[i]) for i in range(n)) / n
    saga_mem = [I[i] * g[i] + (1 - I[i]) * a[i] for i in range(n)]
    umifa_mem = [I[i] * (g[i] / ps[i] - (1 / ps[i] - 1) * a[i]) + (1 - I[i]) * a[i]
                 for i in range(n)]
    umifa = sum(umifa_mem) / n
    sag = abar + sum(I[i] * (g[i] - a[i]) for i in range(n)) / n
    mifa = sum(I[i] * g[i] + (1 - I[i]) * a[i] for i in range(n)) / n
    e = [g[i] - a[i] for i in range(n)]
    # variance of the direction given the memory: Bernoulli(1/n) vs one uniform client
    var_bern = bernoulli_expectation((saga - sum(g) / n) ** 2, I,
                                     [sp.Rational(1, n)] * n).subs(
        {ps[i]: sp.Rational(1, n) for i in range(n)})
    one = [abar + (g[j] - a[j]) for j in range(n)]  # p_j = 1/n, |S| = 1
    var_unif = sum((x - sum(g) / n) ** 2 for x in one) / n
    ebar = sum(e) / n
    return {
        "saga": saga, "umifa": umifa, "direction_difference": sp.simplify(saga - umifa),
        "memory_difference": [sp.factor(umifa_mem[i] - saga_mem[i]) for i in range(n)],
        "sag": sag, "mifa": mifa, "mifa_minus_sag": sp.simplify(mifa - sag),
        "variance_bernoulli": sp.factor(sp.expand(var_bern)),
        "variance_bernoulli_formula": sp.Rational(n - 1, n**2) * sum(x**2 for x in e),
        "variance_uniform_one": sp.factor(sp.expand(var_unif)),
        "variance_uniform_one_formula": sum(x**2 for x in e) / n - ebar**2,
    }
