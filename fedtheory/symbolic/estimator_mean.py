r"""The mean of the importance-sampled aggregate, derived by indicator algebra.

For :math:`G = \sum_i 1_i w_i g_i / p_i` with :math:`w_i = 1/n` (seed 000's estimator),
:func:`derive_mean_independent_and_arbitrary` expands :math:`G` in the indicators and takes the
expectation with the moments of independent sampling and of an arbitrary sampling (symbolic
pair matrix): only :math:`\mathbb E[1_i] = p_i` enters, so both equal
:math:`\bar G = \frac1n\sum_i g_i`. The estimator's normalisation (``scale``) and importance
weight (``importance``, :math:`1/p_i` by default) can be changed, to derive the mean of a
mis-stated estimator: with weights 1 instead of :math:`1/p_i` the mean is
:math:`\frac1n\sum_i p_i g_i`.

>>> m = derive_mean_independent_and_arbitrary(2, 1)
>>> m.mean_independent - m.gbar, m.mean_arbitrary - m.gbar
(Matrix([[0]]), Matrix([[0]]))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sympy as sp

from fedtheory.symbolic.indicators import (
    derive_estimator_moments,
    independent_moments,
    pairwise_moments,
    symbolic_pair_matrix,
    vector_symbols,
)

__all__ = ["EstimatorMean", "derive_mean_independent_and_arbitrary"]


@dataclass(frozen=True)
class EstimatorMean:
    """E[G] derived under independent and arbitrary sampling, and the target Gbar."""

    mean_independent: sp.Matrix
    mean_arbitrary: sp.Matrix
    gbar: sp.Matrix


def derive_mean_independent_and_arbitrary(
    n: int = 4, d: int = 2, scale: Any = 1,
    importance: Callable[[sp.Expr], Any] | None = None,
) -> EstimatorMean:
    r"""E[G] for symbolic marginals p_i and symbolic vectors g_i (``n`` clients, dimension
    ``d``), under independent sampling and under a sampling with a symbolic pair matrix.

    The estimator is :math:`G = \frac{\text{scale}}n \sum_i 1_i\, h(p_i)\, g_i` with the
    importance weight :math:`h(p_i) =` ``importance(p_i)``, :math:`1/p_i` by default (seed
    000's estimator).

    >>> m = derive_mean_independent_and_arbitrary(2, 1, importance=lambda q: 1)
    >>> m.mean_independent
    Matrix([[g_00*p0/2 + g_10*p1/2]])
    """
    g = vector_symbols("g", n, d)
    p = list(sp.symbols(f"p0:{n}", positive=True))
    gbar = sp.Matrix([[sum(g[i, k] for i in range(n)) / n for k in range(d)]])
    h = importance if importance is not None else (lambda q: 1 / q)

    def weights(marginals: list) -> list:
        # derive_estimator_moments divides by the marginal: w_i = scale/n * h(p_i) * p_i
        return [sp.Rational(1, n) * sp.sympify(scale) * h(q) * q for q in marginals]

    mean_ind, _ = derive_estimator_moments(weights(p), g, p, independent_moments(p))
    _, P = symbolic_pair_matrix(n)
    marg = list(P.diagonal())
    mean_any, _ = derive_estimator_moments(weights(marg), g, marg, pairwise_moments(P))
    return EstimatorMean(mean_ind, mean_any, gbar)
