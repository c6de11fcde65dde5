r"""The optimal variance of independent sampling (seed 002, Appendix B, after Lemma 20):
:math:`V(p)` at the KKT point, for a symbolic number :math:`l` of interior clients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sympy as sp

__all__ = ["derive_optimal_variance"]


def derive_optimal_variance(
    coefficient: Callable[[sp.Expr], sp.Expr] | None = None,
) -> dict[str, Any]:
    r"""Substitute :math:`p_i = (m+l-n)u_i/S_l` into
    :math:`\sum_{i\le l}\frac{1-p_i}{p_i}u_i^2` (:math:`u` the increasing norms,
    :math:`S_l = \sum_{i\le l}u_i`; saturated clients contribute 0).

    Returns ``value`` (the substituted sum, with :math:`\sum_{i\le l}u_i` written
    :math:`S_l`) and ``seed`` (the appendix's :math:`S_l^2/(m-(n-l)) - \sum_{i\le l}u_i^2`,
    its factor :math:`1/(m-(n-l))` passed through ``coefficient``, default the identity: a
    claim passes its stated factor).

    >>> d = derive_optimal_variance()
    >>> sp.simplify(d["value"] - d["seed"])
    0
    """
    i, ell = sp.symbols("i l", integer=True, positive=True)
    m, n = sp.symbols("m n", positive=True)
    u = sp.IndexedBase("u", positive=True)
    s_l = sp.Symbol("S_l", positive=True)
    c = (m + ell - n) / s_l
    value = sp.factor_terms(sp.expand(
        sp.Sum(sp.expand((1 - c * u[i]) / (c * u[i]) * u[i] ** 2), (i, 1, ell)).doit()))
    value = sp.simplify(value.subs(sp.Sum(u[i], (i, 1, ell)), s_l))
    inverse = 1 / (m - (n - ell))
    seed = (coefficient(inverse) if coefficient else inverse) * s_l**2 - sp.Sum(u[i] ** 2,
                                                                                (i, 1, ell))
    return {"value": value, "seed": seed}
