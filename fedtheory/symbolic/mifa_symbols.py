r"""Symbols and indicator algebra shared by the ``mifa`` family's derivations (seed 000).

Participation is independent, :math:`1_i\sim\mathrm{Bernoulli}(p_i)`; conditional
expectations over one round are taken with :func:`bernoulli_expectation`
(:math:`\mathbb E 1_i = p_i`, :math:`1_i^2 = 1_i`, independence). The scalar symbols below are
the ones the derivations and the claims of :mod:`fedtheory.claims.mifa` share.
"""

from __future__ import annotations

from typing import Any

import sympy as sp

from fedtheory.symbolic.indicators import expectation, independent_moments

__all__ = [
    "L", "T", "bernoulli_expectation", "c_sym", "delta0", "delta1", "eta", "grad2",
    "indicators", "is_zero", "p", "prob_symbols", "sigma2", "vec",
]

# ------------------------------------------------------------------------------ symbols
p, eta, L, T, sigma2 = sp.symbols(r"p \eta L T \sigma_G^2", positive=True)
c_sym = sp.Symbol("c", positive=True)
grad2 = sp.Symbol(r"\|\nabla{f}(w_{t})\|^{2}", nonnegative=True)
#: delta0 = f(w_0) - f*, delta1 = f(w_1) - f*
delta0 = sp.Symbol(r"\delta_{0}", nonnegative=True)
delta1 = sp.Symbol(r"\delta_{1}", positive=True)


def vec(name: str, n: int) -> list[sp.Symbol]:
    return [sp.Symbol(f"{name}_{{{i}}}", real=True) for i in range(1, n + 1)]


def indicators(n: int) -> list[sp.Symbol]:
    return [sp.Symbol(f"1_{{{i}}}", nonnegative=True) for i in range(1, n + 1)]


def prob_symbols(n: int) -> list[sp.Symbol]:
    return [sp.Symbol(f"p_{{{i}}}", positive=True) for i in range(1, n + 1)]


def bernoulli_expectation(expr: sp.Expr, indicators: list[sp.Symbol], probs: list[Any]
                          ) -> sp.Expr:
    r"""Expectation of a polynomial in independent Bernoulli indicators.

    Uses only :math:`1_i^k = 1_i` (:math:`k\ge1`), :math:`\mathbb E\,1_i = p_i` and
    independence (the expectation of a product of distinct indicators is the product of the
    :math:`p_i`): :func:`fedtheory.symbolic.indicators.expectation` with
    :func:`~fedtheory.symbolic.indicators.independent_moments`.

    >>> a, b = sp.symbols("a b")
    >>> I1, I2 = indicators(2)
    >>> bernoulli_expectation((I1 * a + I2 * b) ** 2, [I1, I2], [p, p])
    a**2*p + 2*a*b*p**2 + b**2*p
    """
    return expectation(expr, indicators, independent_moments(probs))


def is_zero(expr: sp.Expr) -> bool:
    return sp.simplify(sp.expand(expr)) == 0
