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


def improvement_slacks(bound_coef: Any = 1, alpha_max: Any = 1, gamma_max: Any = 1,
                       gamma_min: Any = 1) -> dict[str, dict[str, Any]]:
    r"""The statements of Definition 11 / Appendix B as slacks that must be :math:`\ge 0`, in
    a parametrisation where a proof is a sign argument (for
    :func:`fedtheory.symbolic.inequality.prove_nonnegative`).

    The stated constants (exact rationals; 1 as printed) enter as :math:`\alpha \le
    c_B (\sum u)^2/(n\sum u^2)`, :math:`\alpha \le c_\alpha`, :math:`\gamma \le c_\gamma` and
    :math:`\gamma \ge c_m\,m/n`. Symbols: :math:`k \ge 0` saturated clients,
    :math:`a = m - k > 0`, :math:`b = n - m \ge 0`, :math:`t = S_l/(m-k) > 0`; for
    :math:`\gamma`, :math:`\alpha = 1/(1+s)` (:math:`s \ge 0`, i.e. :math:`\alpha \in (0, 1]`)
    and :math:`\alpha = 0` apart.

    * ``"alpha <= c_B bound"``: :math:`c_B (n-m)m t^2/n - (m-k)(n-m)t^2/(n-k)`, the bound times
      :math:`V_U` minus the Cauchy-Schwarz upper bound on :math:`V^\star` (see
      :func:`derive_improvement_bound`); for :math:`c_B = 1` it is
      :math:`b^2 k t^2/((a+b)(a+b+k))`;
    * ``"bound <= c_alpha"``: :math:`c_\alpha n\sum u^2 - (\sum u)^2` written with Lagrange's
      identity, :math:`(c_\alpha - 1)\,4\sum u^2 + \sum_{i<j}(u_i - u_j)^2` (:math:`n = 4`;
      the identity itself is checked by :func:`derive_improvement_bound`);
    * ``"gamma <= c_gamma"``, ``"gamma >= c_m m/n"`` for :math:`\alpha \in (0, 1]`, and
      ``"gamma <= c_gamma at alpha = 0"``, ``"gamma >= c_m m/n at alpha = 0"``.

    Each entry: ``{"slack", "ranges", "conditions"}``.

    >>> from fedtheory.symbolic.inequality import prove_nonnegative
    >>> sl = improvement_slacks()
    >>> [prove_nonnegative(v["slack"], v["ranges"], conditions=v["conditions"]).status
    ...  for v in sl.values()]
    ['proved', 'proved', 'proved', 'proved', 'proved', 'proved']
    >>> prove_nonnegative(**{"slack": improvement_slacks(sp.Rational(7, 10))
    ...                      ["alpha <= c_B bound"]["slack"],
    ...                      "ranges": sl["alpha <= c_B bound"]["ranges"]}).status
    'violated'
    """
    c_b, c_a, c_g, c_m = (sp.Rational(x) for x in (bound_coef, alpha_max, gamma_max, gamma_min))
    k = sp.Symbol("k", nonnegative=True)
    a, t, m = sp.symbols("a t m", positive=True)
    b, s = sp.symbols("b s", nonnegative=True)
    mm, nn = k + a, k + a + b
    v_upper = a * t**2 - a**2 * t**2 / (nn - k)  # (m-k) t^2 - S_l^2/l, l = n - k
    b_lower = c_b * b / (nn * mm) * (mm * t) ** 2  # c_B (n-m)/(n m) (sum u)^2, sum u >= m t
    main = sp.factor(sp.cancel(b_lower - v_upper))
    us = sp.symbols("u_1:5", positive=True)
    s2 = sum(x**2 for x in us)
    lagrange = ((c_a - 1) * 4 * s2 + sum((x - y) ** 2 for x, y in itertools.combinations(us, 2))
                ) / (4 * s2)
    alpha = 1 / (1 + s)
    gamma = m / (alpha * b + m)
    g_max = sp.factor(sp.cancel(c_g - gamma))
    g_min = sp.factor(sp.cancel(gamma - c_m * m / (m + b)))
    box = {"k": (0, 4), "a": (0, 4), "b": (0, 4), "t": (0, 2), "m": (0, 8), "s": (0, 8)}
    syms = {"k": k, "a": a, "b": b, "t": t, "m": m, "s": s}

    def ranges(*names: str) -> dict[sp.Symbol, tuple[int, int]]:
        return {syms[x]: box[x] for x in names}

    return {
        "alpha <= c_B bound": {"slack": main, "ranges": ranges("k", "a", "b", "t"),
                               "conditions": []},
        "bound <= c_alpha": {"slack": lagrange, "ranges": {x: (0, 4) for x in us},
                             "conditions": []},
        "gamma <= c_gamma": {"slack": g_max, "ranges": ranges("m", "b", "s"), "conditions": []},
        "gamma >= c_m m/n": {"slack": g_min, "ranges": ranges("m", "b", "s"), "conditions": []},
        "gamma <= c_gamma at alpha = 0": {"slack": c_g - 1 + 0 * m, "ranges": ranges("m"),
                                          "conditions": []},
        "gamma >= c_m m/n at alpha = 0": {"slack": sp.factor(sp.cancel(1 - c_m * m / (m + b))),
                                          "ranges": ranges("m", "b"), "conditions": []},
    }
