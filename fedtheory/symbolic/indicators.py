r"""Indicator algebra with sympy: expectations of polynomials in participation indicators.

A participation indicator :math:`1_i = 1_{i \in S}` is idempotent, :math:`1_i^k = 1_i`, so
every polynomial in the indicators reduces to a combination of square-free monomials
:math:`\prod_{i \in T} 1_i`, whose expectation is the inclusion probability of :math:`T`:

.. math::

    \mathbb E\Big[\prod_{i\in T} 1_i\Big] = \Pr(T \subseteq S), \qquad
    \mathbb E[1_i] = p_i, \quad \mathbb E[1_i 1_j] = p_{ij}\ (i \ne j).

:func:`expectation` performs exactly this reduction for any *moment function*
``T -> Pr(T ⊆ S)``: :func:`independent_moments` (:math:`\prod_{i\in T} p_i`),
:func:`pairwise_moments` (only :math:`|T| \le 2` needed, with symbolic :math:`p_{ij}`) and
:func:`design_moments` (an explicit distribution over subsets, exact rationals).
:func:`sign_expectation` does the same for independent Rademacher signs
(:math:`\varepsilon_i^2 = 1`, :math:`\mathbb E\,\varepsilon_i = 0`).

With these, :func:`derive_estimator_moments` *derives* the mean and the variance of
:math:`X = \sum_i 1_i w_i \zeta_i / p_i` by expanding :math:`X` and :math:`\|X\|^2` as
polynomials in the indicators; nothing of the seed's closed forms is typed in.
:func:`uniform_without_replacement_moments` derives :math:`p_i` and :math:`p_{ij}` of
:math:`b`-of-:math:`n` sampling by counting subsets, for symbolic :math:`n` and :math:`b`.

Examples
--------
>>> import sympy as sp
>>> one = indicator_symbols(2)
>>> p = sp.symbols("p_0 p_1", positive=True)
>>> expectation((one[0] + one[1]) ** 2, one, independent_moments(p))
2*p_0*p_1 + p_0 + p_1
>>> uniform_without_replacement_moments(sp.Symbol("n"), sp.Symbol("b"))
(b/n, b*(b - 1)/(n*(n - 1)))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import sympy as sp

__all__ = [
    "derive_estimator_moments",
    "design_moments",
    "expectation",
    "independent_moments",
    "indicator_symbols",
    "pairwise_moments",
    "sign_expectation",
    "sign_symbols",
    "symbolic_pair_matrix",
    "uniform_without_replacement_moments",
    "vector_symbols",
]

Moment = Callable[[tuple[int, ...]], sp.Expr]


def _symbols(n: int, name: str, **assumptions: bool) -> tuple[sp.Symbol, ...]:
    """Symbols ``name_0 .. name_{n-1}`` with the given sympy assumptions (``n`` a positive
    integer, or a ValueError)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return tuple(sp.Symbol(f"{name}_{i}", **assumptions) for i in range(int(n)))


def indicator_symbols(n: int, name: str = "1") -> tuple[sp.Symbol, ...]:
    r"""Symbols :math:`1_0, \dots, 1_{n-1}` for the participation indicators."""
    return _symbols(n, name, nonnegative=True)


def sign_symbols(n: int, name: str = "epsilon") -> tuple[sp.Symbol, ...]:
    r"""Symbols :math:`\varepsilon_0, \dots, \varepsilon_{n-1}` for Rademacher signs."""
    return _symbols(n, name, real=True)


def vector_symbols(name: str, n: int, d: int) -> sp.Matrix:
    r"""An ``n x d`` matrix of real symbols ``name_{i,k}``: row ``i`` is the vector
    :math:`\zeta_i \in \mathbb R^d`."""
    if n < 1 or d < 1:
        raise ValueError(f"n and d must be positive, got n={n!r}, d={d!r}")
    return sp.Matrix(n, d, lambda i, k: sp.Symbol(f"{name}_{i}{k}", real=True))


def symbolic_pair_matrix(n: int, marginal: str = "p",
                         pair: str = "p") -> tuple[sp.Matrix, sp.Matrix]:
    r"""Symbolic marginals :math:`p_i` and pair matrix with :math:`\mathbf P_{ii} = p_i`,
    :math:`\mathbf P_{ij} = \mathbf P_{ji} = p_{ij}` (symbols ``p_ij`` for ``i < j``)."""
    p = sp.Matrix([sp.Symbol(f"{marginal}_{i}", positive=True) for i in range(n)])
    P = sp.zeros(n, n)
    for i in range(n):
        P[i, i] = p[i]
        for j in range(i + 1, n):
            P[i, j] = P[j, i] = sp.Symbol(f"{pair}_{i}{j}", nonnegative=True)
    return p, P


def independent_moments(p: Sequence[Any]) -> Moment:
    r"""Moments of independent sampling: :math:`\Pr(T\subseteq S) = \prod_{i\in T} p_i`."""
    p = list(p)

    def moment(T: tuple[int, ...]) -> sp.Expr:
        return sp.Mul(*[p[i] for i in T])

    return moment


def pairwise_moments(P: sp.Matrix | Sequence[Sequence[Any]]) -> Moment:
    r"""Moments of an arbitrary sampling up to order 2: :math:`\Pr(\{i,j\}\subseteq S) =
    \mathbf P_{ij}`, :math:`\Pr(i \in S) = \mathbf P_{ii}`. Raises for :math:`|T| > 2`."""
    P = sp.Matrix(P)

    def moment(T: tuple[int, ...]) -> sp.Expr:
        if len(T) == 0:
            return sp.Integer(1)
        if len(T) == 1:
            return P[T[0], T[0]]
        if len(T) == 2:
            return P[T[0], T[1]]
        raise ValueError(f"pairwise_moments only knows |T| <= 2, got T = {T!r}")

    return moment


def design_moments(masks: np.ndarray, probs: Sequence[Any]) -> Moment:
    r"""Exact moments of an explicit distribution over subsets (e.g. ``design.enumerate(True)``):
    :math:`\Pr(T\subseteq S) = \sum_{k:\,T \subseteq S_k} \pi_k`, as sympy Rationals."""
    masks = np.asarray(masks, dtype=bool)
    probs_r = [sp.Rational(str(q)) if not isinstance(q, sp.Basic) else q for q in probs]
    if masks.ndim != 2 or masks.shape[0] != len(probs_r):
        raise ValueError(
            f"masks must have shape (k, n) with k = len(probs) = {len(probs_r)}, "
            f"got shape {masks.shape}"
        )

    def moment(T: tuple[int, ...]) -> sp.Expr:
        rows = np.all(masks[:, list(T)], axis=1) if T else np.ones(masks.shape[0], bool)
        return sp.Add(*[q for q, r in zip(probs_r, rows, strict=True) if r])

    return moment


def expectation(expr: Any, indicators: Sequence[sp.Symbol], moment: Moment) -> sp.Expr:
    r"""Expectation of a polynomial in the indicators, by idempotent reduction.

    Each monomial :math:`c \prod_i 1_i^{k_i}` becomes :math:`c\, \Pr(T \subseteq S)` with
    :math:`T = \{i : k_i > 0\}`; coefficients may contain other symbols.

    >>> one = indicator_symbols(2)
    >>> expectation(one[0] ** 3 * one[1], one, pairwise_moments(sp.Matrix([[1, 2], [2, 3]])))
    2
    """
    indicators = list(indicators)
    poly = sp.Poly(sp.expand(sp.sympify(expr)), *indicators)
    total = sp.Integer(0)
    for monom, coeff in poly.terms():
        T = tuple(i for i, k in enumerate(monom) if k > 0)
        total += coeff * moment(T)
    return sp.expand(total)


def sign_expectation(expr: Any, signs: Sequence[sp.Symbol]) -> sp.Expr:
    r"""Expectation over independent Rademacher signs: :math:`\varepsilon_i^2 = 1`,
    :math:`\mathbb E \prod_{i\in T}\varepsilon_i = [T = \emptyset]`.

    >>> e = sign_symbols(2)
    >>> sign_expectation((e[0] + 2 * e[1]) ** 2, e)
    5
    """
    signs = list(signs)
    poly = sp.Poly(sp.expand(sp.sympify(expr)), *signs)
    total = sp.Integer(0)
    for monom, coeff in poly.terms():
        if all(k % 2 == 0 for k in monom):
            total += coeff
    return sp.expand(total)


def derive_estimator_moments(
    w: Sequence[Any], zeta: sp.Matrix, p: Sequence[Any], moment: Moment,
    indicators: Sequence[sp.Symbol] | None = None,
) -> tuple[sp.Matrix, sp.Expr]:
    r"""Derive :math:`\mathbb E X` and :math:`\mathbb E\|X - \mathbb EX\|^2` for
    :math:`X = \sum_i 1_i\, w_i \zeta_i / p_i` by indicator algebra.

    The variance is expanded as :math:`\mathbb E\|X\|^2 - \|\mathbb E X\|^2`, with
    :math:`\|X\|^2 = \sum_k X_k^2` a quadratic polynomial in the indicators reduced by
    :func:`expectation`.

    Parameters
    ----------
    w, p:
        Weights and marginals (symbols or numbers), length ``n``.
    zeta:
        ``n x d`` sympy matrix, row ``i`` the vector :math:`\zeta_i`.
    moment:
        The design's moment function (:func:`pairwise_moments`, :func:`independent_moments`,
        :func:`design_moments`).
    indicators:
        Indicator symbols (default :func:`indicator_symbols` ``(n)``).

    Returns
    -------
    (mean, variance):
        A ``1 x d`` matrix and a scalar expression (expanded, not simplified).
    """
    zeta = sp.Matrix(zeta)
    n, d = zeta.shape
    if len(w) != n or len(p) != n:
        raise ValueError(f"w and p must have length n = {n}, got {len(w)} and {len(p)}")
    one = list(indicators) if indicators is not None else list(indicator_symbols(n))
    X = sp.zeros(1, d)
    for i in range(n):
        X += one[i] * w[i] / p[i] * zeta[i, :]
    mean = X.applyfunc(lambda e: expectation(e, one, moment))
    second = expectation(sum(X[k] ** 2 for k in range(d)), one, moment)
    variance = sp.expand(second - sum(mean[k] ** 2 for k in range(d)))
    return mean, variance


def uniform_without_replacement_moments(n: Any, b: Any) -> tuple[sp.Expr, sp.Expr]:
    r"""Derive :math:`p_i` and :math:`p_{ij}` (:math:`i\ne j`) of :math:`b`-of-:math:`n` sampling
    by counting: :math:`\binom{n-1}{b-1}/\binom nb` and :math:`\binom{n-2}{b-2}/\binom nb`.

    ``n`` and ``b`` may be symbols (the binomial ratios are simplified with ``combsimp``)."""
    n, b = sp.sympify(n), sp.sympify(b)
    total = sp.binomial(n, b)
    p = sp.combsimp(sp.expand_func(sp.binomial(n - 1, b - 1) / total))
    q = sp.combsimp(sp.expand_func(sp.binomial(n - 2, b - 2) / total))
    return sp.factor(p), sp.factor(q)
