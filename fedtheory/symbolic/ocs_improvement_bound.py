r"""The upper bound on the improvement factor (seed 002, Definition 11 and Appendix B):
:math:`\alpha \le (\sum_i u_i)^2/(n\sum_i u_i^2) \le 1` with truncation, and the range of
:math:`\gamma = m/(\alpha(n-m)+m)`, symbolic."""

from __future__ import annotations

import itertools
from typing import Any

import sympy as sp

__all__ = ["derive_improvement_bound"]


def derive_improvement_bound() -> dict[str, Any]:
    r"""The steps of the bound, with :math:`k = n - l` clients saturated.

    Returns ``margin`` ((bound :math:`\times V_U`) :math:`- V^\star` after Cauchy-Schwarz,
    factored), ``expected_margin`` (:math:`(n-m)^2kt^2/(n(n-k))`), ``ok_margin`` (they are
    equal), ``equivalence`` (:math:`\alpha\le` bound :math:`\iff V^\star\le(n-m)(\sum
    u)^2/(nm)`), ``lagrange`` (Lagrange's identity for :math:`n = 4`: bound :math:`\le 1`),
    ``dgamma`` (:math:`d\gamma/d\alpha`) and ``ok_gamma`` (:math:`\gamma(0) = 1`,
    :math:`\gamma(1) = m/n`, :math:`\gamma` decreasing).

    >>> d = derive_improvement_bound()
    >>> d["ok_margin"], d["equivalence"], d["lagrange"], d["ok_gamma"]
    (True, True, True, True)
    """
    m, n, k, t, ell = sp.symbols("m n k t l", positive=True)
    q_l, s_a = sp.symbols("Q_l S_A", positive=True)
    s_l = (m - k) * t
    v_star = s_l**2 / (m - k) - q_l  # the optimal value with l interior clients
    # Cauchy-Schwarz Q_l >= S_l^2 / l bounds V* above
    v_upper = sp.simplify(v_star.subs(q_l, s_l**2 / ell))
    # the target bound, times the uniform variance: (n-m)/(n m) (S_l + S_A)^2, S_A >= k t
    b_lower = sp.simplify(((n - m) / (n * m) * (s_l + s_a) ** 2).subs(s_a, k * t))
    margin = sp.factor(sp.simplify((b_lower - v_upper).subs(ell, n - k)))
    # margin = (n-m)^2 k t^2 / (n (n-k)) >= 0 for 0 <= k <= m <= n
    expected_margin = (n - m) ** 2 * k * t**2 / (n * (n - k))
    ok_margin = sp.simplify(margin - expected_margin) == 0
    # alpha <= bound  <=>  V* <= (n-m)/(n m) (sum u)^2, dividing by V_U = (n-m)/m sum u^2
    su, su2, vs = sp.symbols("Sigma_u Sigma_u2 V_star", positive=True)
    equiv = sp.simplify(vs / ((n - m) / m * su2) - su**2 / (n * su2)
                        - (vs - (n - m) / (n * m) * su**2) / ((n - m) / m * su2)) == 0
    # Cauchy-Schwarz: n sum u^2 - (sum u)^2 = sum_{i<j} (u_i - u_j)^2 (n = 4) => bound <= 1
    us = sp.symbols("u_1:5", real=True)
    lagrange = sp.expand(4 * sum(x**2 for x in us) - sum(us) ** 2
                         - sum((a - b) ** 2 for a, b in itertools.combinations(us, 2))) == 0
    # gamma: decreasing in alpha, gamma(0) = 1, gamma(1) = m/n
    a = sp.Symbol("alpha", nonnegative=True)
    gamma = m / (a * (n - m) + m)
    dgamma = sp.factor(sp.diff(gamma, a))
    ok_gamma = (sp.simplify(gamma.subs(a, 0) - 1) == 0 and sp.simplify(gamma.subs(a, 1) - m / n)
                == 0 and sp.simplify(dgamma + m * (n - m) / (a * (n - m) + m) ** 2) == 0)
    return {"margin": margin, "expected_margin": expected_margin, "ok_margin": ok_margin,
            "equivalence": equiv, "lagrange": lagrange, "dgamma": dgamma, "ok_gamma": ok_gamma}
