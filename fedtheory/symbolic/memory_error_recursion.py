"""One client's memory error over one round, for MIFA/SAGA and U-MIFA (seed 000)."""

from __future__ import annotations

from functools import cache
from typing import Any

import sympy as sp

from fedtheory.symbolic.mifa_symbols import (
    bernoulli_expectation,
    p,
)

__all__ = ["derive_memory_error_recursion"]


# A pure memo (one process): the derivation is a function of its arguments only (sympy
# expressions are immutable) and its readers do not modify the dict (issue 18).
@cache
def derive_memory_error_recursion() -> dict[str, Any]:
    r"""How one client's memory error :math:`e = \nabla f_i(w_t) - G^{(i)}` evolves in a round.

    With :math:`e^+ = g - G_t^{(i)}` and the old error :math:`e = g - G_{t-1}^{(i)}`:
    MIFA/SAGA store the fresh update, :math:`e^+ = (1-1_i)e`, so
    :math:`\mathbb E (e^+)^2 = (1-p)e^2`; U-MIFA stores the corrected row,
    :math:`e^+ = (1 - 1_i/p)e`, so :math:`\mathbb E(e^+)^2 = \frac{1-p}{p}e^2`, which exceeds
    :math:`e^2` exactly when :math:`p<1/2`. Pathwise, each activation multiplies the U-MIFA error
    by :math:`-(1/p - 1)`.
    """
    I = sp.Symbol("1_{i}", nonnegative=True)
    g, e = sp.symbols("g e", real=True)
    M = g - e
    mifa = g - (I * g + (1 - I) * M)
    umifa = g - (I * (g / p - (1 / p - 1) * M) + (1 - I) * M)
    mifa2 = sp.factor(bernoulli_expectation(mifa**2, [I], [p]))
    umifa2 = sp.factor(bernoulli_expectation(umifa**2, [I], [p]))
    factor = sp.simplify(umifa2 / e**2)
    growth = sp.solve(sp.Gt(factor, 1), p)
    return {
        "mifa_error_after": sp.factor(mifa), "umifa_error_after": sp.factor(umifa),
        "umifa_active_multiplier": sp.factor(umifa.subs(I, 1) / e),
        "mifa_second_moment": mifa2, "umifa_second_moment": umifa2,
        "umifa_factor": factor, "umifa_grows_when": growth,
    }
