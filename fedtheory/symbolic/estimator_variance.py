r"""The variance of the importance-sampled aggregate, derived by indicator algebra.

:math:`X = \sum_{i\in S} w_i\zeta_i/p_i` (seed 002, eq. (2)); every function here *derives*
:math:`\mathbb E\|X - \mathbb E X\|^2` (or :math:`\mathbb E\|X\|^2`) from the moments of the
participation indicators (:mod:`fedtheory.symbolic.indicators`), nothing of the seeds' closed
forms typed in:

* :func:`derive_variance_independent`: independent sampling, symbolic :math:`p_i` and vectors;
* :func:`derive_second_moment_equal_p`: independent sampling with equal :math:`p`, generic
  :math:`n` (sums kept as symbols :math:`S_2 = \sum\|g_i\|^2`, :math:`T = \|\sum g_i\|^2`);
* :func:`derive_variance_without_replacement`: :math:`b`-of-:math:`n` sampling for symbolic
  :math:`n, b` (inclusion probabilities by counting subsets);
* :func:`derive_variance_arbitrary`: any sampling (symbolic pair matrix :math:`\mathbf P`),
  with :func:`eso_diagonal_lower_bounds` (the diagonal of the ESO condition (4)) and
  :func:`independent_covariance` (:math:`\mathbf P - pp^\top` of independent sampling);
* :func:`derive_two_client_difference`: :math:`\mathrm{Var}_S - \mathrm{Var}_{\rm ind}` for two
  clients and a symbolic pair probability.

>>> import sympy as sp
>>> r = derive_second_moment_equal_p()
>>> r.e_sq, r.e_pair
(p, p**2)
>>> sp.factor(derive_variance_without_replacement().p)
b/n
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from fedtheory.symbolic.indicators import (
    derive_estimator_moments,
    expectation,
    independent_moments,
    indicator_symbols,
    pairwise_moments,
    symbolic_pair_matrix,
    uniform_without_replacement_moments,
    vector_symbols,
)

__all__ = [
    "ArbitraryVariance",
    "SecondMomentEqualP",
    "TwoClientDifference",
    "WithoutReplacementVariance",
    "derive_second_moment_equal_p",
    "derive_two_client_difference",
    "derive_variance_arbitrary",
    "derive_variance_independent",
    "derive_variance_without_replacement",
    "eso_diagonal_lower_bounds",
    "independent_covariance",
]


def derive_variance_independent(n: int = 3, d: int = 2) -> tuple[sp.Expr, sp.Matrix, list]:
    """E||G - Gbar||^2 for G = (1/n) sum_i 1_i g_i / p_i, independent sampling, symbolic p_i
    and vectors g_i; returns ``(variance, g, p)``."""
    g = vector_symbols("g", n, d)
    p = list(sp.symbols(f"p0:{n}", positive=True))
    _, var = derive_estimator_moments([sp.Rational(1, n)] * n, g, p, independent_moments(p))
    return var, g, p


@dataclass(frozen=True)
class SecondMomentEqualP:
    """E||G||^2 under independent sampling with equal p, generic n."""

    n: sp.Symbol
    p: sp.Symbol
    S2: sp.Symbol
    T: sp.Symbol
    e_sq: sp.Expr
    e_pair: sp.Expr
    second: sp.Expr


def derive_second_moment_equal_p() -> SecondMomentEqualP:
    """E||G||^2 with E over two generic clients i != j giving E[1_i^2] and E[1_i 1_j]; the
    off-diagonal sum of g_i.g_j is T - S2."""
    nn, pp, S2, T = sp.symbols("n p S_2 T", positive=True)
    one = indicator_symbols(2)
    m = independent_moments([pp, pp])
    e_sq = expectation(one[0] ** 2, one, m)  # E[1_i^2] = E[1_i]
    e_pair = expectation(one[0] * one[1], one, m)
    second = (e_sq * S2 + e_pair * (T - S2)) / (nn * pp) ** 2  # E||G||^2
    return SecondMomentEqualP(nn, pp, S2, T, e_sq, e_pair, second)


@dataclass(frozen=True)
class WithoutReplacementVariance:
    """Variance of (1/b) sum_{i in S} g_i, S uniform among b-subsets, symbolic n and b."""

    n: sp.Symbol
    b: sp.Symbol
    S2: sp.Symbol
    T: sp.Symbol
    sigma2: sp.Symbol
    p: sp.Expr
    q: sp.Expr
    variance: sp.Expr


def derive_variance_without_replacement() -> WithoutReplacementVariance:
    """Count subsets for p_i and p_ij, then E||X||^2 = (1/b^2)[p S2 + p_ij (T - S2)] minus
    ||Gbar||^2 = T/n^2 (S2 = sum ||g_i||^2, T = ||sum g_i||^2)."""
    n, b = sp.symbols("n b", positive=True, integer=True)
    S2, T, sigma2 = sp.symbols("S_2 T sigma_G^2", positive=True)
    p, q = uniform_without_replacement_moments(n, b)
    one = indicator_symbols(2)
    mom = pairwise_moments(sp.Matrix([[p, q], [q, p]]))
    e_sq = expectation(one[0] ** 2, one, mom)
    e_pair = expectation(one[0] * one[1], one, mom)
    second = (e_sq * S2 + e_pair * (T - S2)) / b**2  # E||(1/b) sum_{i in S} g_i||^2
    return WithoutReplacementVariance(n, b, S2, T, sigma2, p, q, second - T / n**2)


@dataclass(frozen=True)
class ArbitraryVariance:
    """E X and E||X - EX||^2 for a symbolic pair matrix P (any sampling)."""

    zeta: sp.Matrix
    w: list
    p: sp.Matrix
    P: sp.Matrix
    mean: sp.Matrix
    variance: sp.Expr


def derive_variance_arbitrary(n: int = 3, d: int = 2,
                              positive_weights: bool = False) -> ArbitraryVariance:
    """Derive E X and the variance with E[1_i] = p_i, E[1_i 1_j] = P_ij (symbolic w, zeta);
    the weights w_i are real symbols, or positive ones with ``positive_weights``."""
    zeta = vector_symbols("zeta", n, d)
    assumptions = {"positive": True} if positive_weights else {"real": True}
    w = list(sp.symbols(f"w0:{n}", **assumptions))
    p, P = symbolic_pair_matrix(n)
    mean, var = derive_estimator_moments(w, zeta, list(p), pairwise_moments(P))
    return ArbitraryVariance(zeta, w, p, P, mean, var)


def eso_diagonal_lower_bounds(p: sp.Matrix, P: sp.Matrix) -> list[tuple[sp.Expr, sp.Expr]]:
    """For each i, the diagonal entry p_i v_i - (E[1_i^2] - p_i^2) of Diag(p o v) - (P - pp^T)
    (P_ii = E[1_i^2] = p_i by idempotence) is linear in v_i: returns ``(slope, root)``, the
    entry being >= 0 iff v_i >= root when the slope is positive."""
    n = P.shape[0]
    one = indicator_symbols(n)
    v = sp.symbols(f"v0:{n}", real=True)
    out = []
    for i in range(n):
        e_sq = expectation(one[i] ** 2, one, pairwise_moments(P))
        entry = sp.expand(p[i] * v[i] - (e_sq - p[i] ** 2))
        slope, (root,) = sp.diff(entry, v[i]), sp.solve(entry, v[i])
        out.append((slope, root))
    return out


def independent_covariance(p: sp.Matrix) -> sp.Matrix:
    """The matrix E[1_i 1_j] - p_i p_j derived with the moments of independent sampling."""
    n = len(p)
    one = indicator_symbols(n)
    mom = independent_moments(list(p))
    return sp.Matrix(n, n, lambda i, j: expectation(one[i] * one[j], one, mom) - p[i] * p[j])


@dataclass(frozen=True)
class TwoClientDifference:
    """Var_S - Var_ind for two clients, w = (1/2, 1/2), symbolic p_0, p_1, p_01, zeta."""

    p0: sp.Symbol
    p1: sp.Symbol
    p01: sp.Symbol
    zeta: sp.Matrix
    var_design: sp.Expr
    var_independent: sp.Expr
    difference: sp.Expr
    pairwise_independence: list


def derive_two_client_difference() -> TwoClientDifference:
    """Derive both variances, their factored difference and the p_01 for which the coefficient
    of zeta_0 zeta_1 in the difference vanishes (the only way it is >= 0 for all zeta)."""
    p0, p1 = sp.symbols("p_0 p_1", positive=True)
    p01 = sp.Symbol("p_01", nonnegative=True)
    z = vector_symbols("zeta", 2, 1)
    w = [sp.Rational(1, 2)] * 2
    P = sp.Matrix([[p0, p01], [p01, p1]])
    _, var_s = derive_estimator_moments(w, z, [p0, p1], pairwise_moments(P))
    _, var_i = derive_estimator_moments(w, z, [p0, p1], independent_moments([p0, p1]))
    diff = sp.factor(sp.simplify(var_s - var_i))
    coeff = sp.Poly(sp.expand(diff), z[0, 0], z[1, 0]).coeff_monomial(z[0, 0] * z[1, 0])
    needs = sp.solve(sp.Eq(coeff, 0), p01)
    return TwoClientDifference(p0, p1, p01, z, var_s, var_i, diff, needs)
