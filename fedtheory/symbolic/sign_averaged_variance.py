r"""The sign-averaged variance of the importance-sampled aggregate, derived by indicator and
sign algebra.

With independent Rademacher signs :math:`\varepsilon_i`, :math:`\mathbb E[\varepsilon_i
\varepsilon_j] = \delta_{ij}` removes the off-diagonal part of the variance of
:math:`X(\varepsilon\circ\zeta) = \sum_{i\in S}\varepsilon_i w_i\zeta_i/p_i` for ANY sampling
(symbolic pair matrix): :func:`derive_sign_averaged_variance` returns it beside the variance of
independent sampling with the same marginals (they are equal) and the unsigned variance.

>>> import sympy as sp
>>> r = derive_sign_averaged_variance(2, 1)
>>> sp.simplify(r.sign_average - r.var_independent)
0
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from fedtheory.symbolic.estimator_variance import derive_variance_arbitrary
from fedtheory.symbolic.indicators import (
    derive_estimator_moments,
    independent_moments,
    pairwise_moments,
    sign_expectation,
    sign_symbols,
)

__all__ = ["SignAveragedVariance", "derive_sign_averaged_variance"]


@dataclass(frozen=True)
class SignAveragedVariance:
    """E_eps Var_S(eps o zeta), Var_ind(zeta) and Var_S(zeta) for a symbolic pair matrix."""

    zeta: sp.Matrix
    w: list
    p: sp.Matrix
    P: sp.Matrix
    sign_average: sp.Expr
    var_independent: sp.Expr
    var_design: sp.Expr


def derive_sign_averaged_variance(n: int = 3, d: int = 2) -> SignAveragedVariance:
    """Derive the three variances for symbolic positive w, vectors zeta and pair matrix P (the
    unsigned one by :func:`~fedtheory.symbolic.estimator_variance.derive_variance_arbitrary`)."""
    unsigned = derive_variance_arbitrary(n, d, positive_weights=True)
    zeta, w, p, P = unsigned.zeta, unsigned.w, unsigned.p, unsigned.P
    eps = sign_symbols(n)
    signed = sp.Matrix(n, d, lambda i, k: eps[i] * zeta[i, k])
    _, var_s = derive_estimator_moments(w, signed, list(p), pairwise_moments(P))
    avg = sign_expectation(var_s, eps)
    _, var_i = derive_estimator_moments(w, zeta, list(p), independent_moments(list(p)))
    return SignAveragedVariance(zeta, w, p, P, avg, var_i, unsigned.variance)
