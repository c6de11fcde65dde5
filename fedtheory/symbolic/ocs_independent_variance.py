r"""The aggregation variance of independent sampling (seed 002, eq. (6)), symbolic, by
indicator algebra."""

from __future__ import annotations

from typing import Any

import sympy as sp

from fedtheory.symbolic.indicators import (
    expectation,
    independent_moments,
    indicator_symbols,
    vector_symbols,
)

__all__ = ["derive_independent_variance"]


def derive_independent_variance(n: int = 4, d: int = 2) -> dict[str, Any]:
    r""":math:`\mathbb E\|\sum_i (1_i/p_i - 1) w_i U_i\|^2` for independent
    :math:`1_i\sim\mathrm{Bernoulli}(p_i)`, everything symbolic.

    Returns ``derived`` (the expectation by indicator algebra), ``seed`` (eq. (6):
    :math:`\sum_i w_i^2 \frac{1-p_i}{p_i}\|U_i\|^2`) and ``difference`` (simplified).

    >>> derive_independent_variance(2, 1)["difference"]
    0
    """
    one = indicator_symbols(n)
    p = sp.symbols(f"p_0:{n}", positive=True)
    w = sp.symbols(f"w_0:{n}", positive=True)
    U = vector_symbols("U", n, d)
    err = [sp.Add(*[(one[i] / p[i] - 1) * w[i] * U[i, k] for i in range(n)]) for k in range(d)]
    derived = expectation(sum(e**2 for e in err), one, independent_moments(p))
    seed = sp.Add(*[w[i] ** 2 * (1 - p[i]) / p[i] * sum(U[i, k] ** 2 for k in range(d))
                    for i in range(n)])
    return {"derived": derived, "seed": seed, "difference": sp.simplify(derived - seed)}
