r"""The aggregation variance of independent sampling (seed 002, eq. (6)), symbolic, by
indicator algebra."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sympy as sp

from fedtheory.symbolic.indicators import (
    expectation,
    independent_moments,
    indicator_symbols,
    vector_symbols,
)

__all__ = ["derive_independent_variance"]


def derive_independent_variance(
    n: int = 4, d: int = 2,
    term: Callable[[sp.Expr, sp.Expr, sp.Expr], sp.Expr] | None = None,
) -> dict[str, Any]:
    r""":math:`\mathbb E\|\sum_i (1_i/p_i - 1) w_i U_i\|^2` for independent
    :math:`1_i\sim\mathrm{Bernoulli}(p_i)`, everything symbolic.

    ``term(w_i, p_i, ||U_i||^2)`` is the seed's per-client term, default eq. (6)'s
    :math:`w_i^2 \frac{1-p_i}{p_i}\|U_i\|^2` (a claim passes its stated factors).

    Returns ``derived`` (the expectation by indicator algebra), ``seed`` (the sum of the
    terms), ``difference`` (simplified) and ``symbols`` (``{"p": ..., "w": ..., "U": ...}``).

    >>> derive_independent_variance(2, 1)["difference"]
    0
    >>> derive_independent_variance(2, 1, lambda w, p, u2: w**2 / p * u2)["difference"] != 0
    True
    """
    if term is None:
        def term(w: sp.Expr, p: sp.Expr, u2: sp.Expr) -> sp.Expr:
            return w**2 * (1 - p) / p * u2
    one = indicator_symbols(n)
    p = sp.symbols(f"p_0:{n}", positive=True)
    w = sp.symbols(f"w_0:{n}", positive=True)
    U = vector_symbols("U", n, d)
    err = [sp.Add(*[(one[i] / p[i] - 1) * w[i] * U[i, k] for i in range(n)]) for k in range(d)]
    derived = expectation(sum(e**2 for e in err), one, independent_moments(p))
    seed = sp.Add(*[term(w[i], p[i], sum(U[i, k] ** 2 for k in range(d))) for i in range(n)])
    return {"derived": derived, "seed": seed, "difference": sp.simplify(derived - seed),
            "symbols": {"p": p, "w": w, "U": U}}
