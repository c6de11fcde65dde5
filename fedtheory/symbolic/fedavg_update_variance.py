r"""Variance of FedAvg's server update with :math:`K` noisy local steps and :math:`m`-of-:math:`n`
participation, and its leading order in :math:`\gamma` (Theorem 3 of the lecture)."""

from __future__ import annotations

from typing import Any

import sympy as sp

from fedtheory.symbolic.local_sgd import (
    K,
    derive_local_sgd,
    gamma,
    is_zero,
    m_sym,
    n_sym,
    sigma2,
    zeta2,
)

__all__ = ["derive_update_variance"]


def derive_update_variance(lecture: sp.Expr | None = None) -> dict[str, Any]:
    r"""Variance of FedAvg's server update: :math:`K` noisy local steps, :math:`m`-of-:math:`n`.

    One coordinate, identical curvature :math:`a` (so that Assumption 2 holds with equality at
    every :math:`x`, :math:`\zeta^2 = a^2\frac1n\sum_i(c_i-\bar c)^2`): client :math:`i`'s model
    change is :math:`\mu_i + \nu_i` with :math:`\mu_i = (P-1)(x-c_i)`, :math:`P = (1-\gamma
    a)^K`, and independent noise of variance :math:`v_K` (:func:`derive_local_sgd`). The law of
    total variance over the participants (:func:`derive_subset_variance` for the
    :math:`\mu_i`; :math:`\mathbb E[1_i]/m^2 = 1/(mn)` for the noise) gives

    .. math::

        \operatorname{Var} = \frac{n-m}{m(n-1)}\,(1-P)^2\frac{\zeta^2}{a^2} + \frac{v_K}{m},

    whose expansion in :math:`\gamma` is compared with Theorem 3's numerator
    :math:`\frac{\gamma^2K}{m}\big(\sigma^2 + K\zeta^2(1-\frac mn)\big)` (``lecture``
    replaces it, in the symbols of :mod:`fedtheory.symbolic.local_sgd`: a claim's stated side,
    e.g. under a mutant).
    """
    n, m = n_sym, m_sym
    loc = derive_local_sgd()
    a = loc["a"]
    P = (1 - gamma * a) ** K
    het_factor = (n - m) / (m * (n - 1))
    variance = het_factor * (1 - P) ** 2 * zeta2 / a**2 + loc["v_K"] / m
    leading = sp.simplify(sp.series(variance, gamma, 0, 3).removeO())
    if lecture is None:
        lecture = gamma**2 * K / m * (sigma2 + K * zeta2 * (1 - m / n))
    exact_leading = gamma**2 * K / m * (sigma2 + K * zeta2 * (n - m) / (n - 1))
    zeta_coeff = sp.simplify(sp.diff(leading, zeta2) / sp.diff(lecture, zeta2))
    return {"variance": variance, "leading": leading, "lecture": lecture,
            "exact_leading": exact_leading,
            "leading_matches": is_zero(leading - exact_leading),
            "noise_matches_lecture": is_zero(leading.subs(zeta2, 0) - lecture.subs(zeta2, 0)),
            "zeta_coefficient_ratio": zeta_coeff}
