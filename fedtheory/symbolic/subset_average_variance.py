"""Variance of the average over a uniform :math:`m`-of-:math:`n` subset (sampling without
replacement), symbolic :math:`n, m`, from the indicator moments."""

from __future__ import annotations

from typing import Any

import sympy as sp

from fedtheory.symbolic.indicators import uniform_without_replacement_moments
from fedtheory.symbolic.local_sgd import is_zero, m_sym, n_sym

__all__ = ["derive_subset_variance"]


def derive_subset_variance(lecture_factor: sp.Expr | None = None) -> dict[str, Any]:
    r"""Variance of the average of a uniform :math:`m`-of-:math:`n` subset, symbolic :math:`n, m`.

    With :math:`p = \mathbb E 1_i` and :math:`q = \mathbb E 1_i1_j` (:math:`i \ne j`) from
    :func:`~fedtheory.symbolic.indicators.uniform_without_replacement_moments`,
    :math:`S_1 = \sum_i\|g_i\|^2` and :math:`S_2 = \|\sum_i g_i\|^2`:

    .. math::

        \mathbb E\Big\|\frac1m\sum_i 1_i g_i\Big\|^2 = \frac{1}{m^2}\big(pS_1 + q(S_2-S_1)\big),
        \qquad \mathbb E\Big[\frac1m\sum_i 1_ig_i\Big] = \frac{np}{m}\,\bar g = \bar g,

    so the variance is :math:`\frac{1}{m^2}(pS_1 + q(S_2 - S_1)) - S_2/n^2`, compared with
    :math:`\frac{n-m}{m(n-1)}\zeta^2`, :math:`\zeta^2 = S_1/n - S_2/n^2`, and with the lecture's
    factor :math:`\zeta^2(1 - m/n)/m` (their ratio is returned). ``lecture_factor`` replaces
    the lecture's :math:`(1 - m/n)/m` (in the symbols ``n_sym``, ``m_sym`` of
    :mod:`fedtheory.symbolic.local_sgd`), e.g. by a claim's stated side under a mutant.
    """
    n, m = n_sym, m_sym
    p, q = uniform_without_replacement_moments(n, m)
    S1, S2 = sp.symbols("S_1 S_2", nonnegative=True)
    second = (p * S1 + q * (S2 - S1)) / m**2
    unbiased = sp.simplify(n * p / m)
    variance = sp.simplify(second - S2 / n**2)
    z2 = S1 / n - S2 / n**2
    formula = (n - m) / (m * (n - 1)) * z2
    lecture = z2 * ((1 - m / n) / m if lecture_factor is None else lecture_factor)
    return {"p": p, "q": q, "mean_factor": unbiased, "variance": sp.factor(variance),
            "zeta2": z2, "formula": formula, "matches": is_zero(variance - formula),
            "lecture": lecture, "ratio_to_lecture": sp.simplify(variance / lecture)}
