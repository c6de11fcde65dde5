r"""FedAvg's client drift: its fixed point with :math:`K` local steps against :math:`x^\star`
(full participation, no noise), symbolic, on one-dimensional clients."""

from __future__ import annotations

from typing import Any

import sympy as sp

from fedtheory.symbolic.local_sgd import K, clients, gamma, is_zero, local_end, x_sym

__all__ = ["derive_fedavg_drift"]


def derive_fedavg_drift(n: int = 3) -> dict[str, Any]:
    r"""FedAvg's fixed point with :math:`K` local steps (full participation, no noise).

    With :math:`y_i^K` from :func:`derive_local_sgd`, the server step
    :math:`\frac{\gamma_g}n\sum_i(y_i^K - x)` vanishes at :math:`\hat x`; it is compared with
    :math:`x^\star = \sum_i a_ic_i/\sum_i a_i`. The powers :math:`(1-\gamma a_i)^K` are
    written :math:`P_i` for the algebra (``drift_P``). To measure heterogeneity the centers
    are written :math:`c_i = x^\star + s\,\delta_i` with :math:`\sum_i a_i\delta_i = 0` (so
    :math:`x^\star` does not move) and :math:`\zeta_\star^2 = \frac1n\sum_i\|\nabla
    f_i(x^\star)\|^2 = \frac{s^2}n\sum_i a_i^2\delta_i^2`.

    Returns ``x_hat``, ``x_star``, ``drift`` :math:`=\hat x - x^\star`, ``drift_K1``
    (0 means no drift with one local step), ``drift_equal_hessians`` (all :math:`a_i = a`),
    ``leading`` (the :math:`\mathcal O(\gamma)` term of the drift), ``leading_formula``
    (:math:`\frac{(K-1)\gamma}{2}\sum_i a_i\nabla f_i(x^\star)/\sum_i a_i`), ``drift_s``
    (the drift in terms of :math:`s`), ``ratio_s`` (:math:`\text{drift}^2/\zeta_\star^2`;
    free of :math:`s`) and a rational example with :math:`K = 2`.
    """
    a, c = clients(n)
    x_hat = sp.solve(sp.Eq(sum(local_end(a[i], c[i]) - x_sym for i in range(n)), 0), x_sym)[0]
    x_star = sum(a[i] * c[i] for i in range(n)) / sum(a)
    drift = x_hat - x_star
    P = [sp.Symbol(f"P_{i}", positive=True) for i in range(1, n + 1)]
    drift_p = sp.cancel(drift.subs({(1 - gamma * a[i]) ** K: P[i] for i in range(n)}))
    drift_k1 = sp.cancel(drift_p.subs({P[i]: 1 - gamma * a[i] for i in range(n)}))
    a0, p0 = sp.Symbol("a", positive=True), sp.Symbol("P", positive=True)
    drift_eq = sp.cancel(drift_p.subs({**{ai: a0 for ai in a}, **{pi: p0 for pi in P}}))
    # leading order in gamma: the drift is (numerator O(gamma^2)) / (denominator O(gamma)), so
    # P_i to second order (sympy's series of (1 - gamma a)^K) fixes its O(gamma) term
    a1 = sp.Symbol("a", positive=True)
    p2 = sp.series((1 - gamma * a1) ** K, gamma, 0, 3).removeO()
    trunc = sp.cancel(drift_p.subs({P[i]: p2.subs(a1, a[i]) for i in range(n)}) / gamma)
    leading = sp.factor(gamma * trunc.subs(gamma, 0))
    grads = [a[i] * (x_star - c[i]) for i in range(n)]
    leading_formula = (K - 1) * gamma / 2 * sum(a[i] * grads[i] for i in range(n)) / sum(a)
    # heterogeneity scale s: c_i = X + s delta_i with sum_i a_i delta_i = 0
    s, X = sp.Symbol("s", positive=True), sp.Symbol(r"x^\star", real=True)
    dl = [sp.Symbol(rf"\delta_{i}", real=True) for i in range(1, n + 1)]
    dl[-1] = -sum(a[i] * dl[i] for i in range(n - 1)) / a[-1]
    drift_s = sp.factor(drift_p.subs({c[i]: X + s * dl[i] for i in range(n)}))
    zeta_s = sp.factor(sum((a[i] * s * dl[i]) ** 2 for i in range(n)) / n)
    ratio_s = sp.cancel(drift_s**2 / zeta_s)
    example_sub = {a[i]: sp.Integer(2**i) for i in range(n)}
    example_sub.update({c[i]: sp.Integer((-1) ** i * (i + 1)) for i in range(n)})
    example = sp.nsimplify(drift.subs(example_sub).subs({K: 2, gamma: sp.Rational(1, 10)}))
    return {
        "a": a, "c": c, "x_hat": x_hat, "x_star": x_star, "drift": drift, "drift_P": drift_p,
        "drift_K1": drift_k1, "drift_equal_hessians": drift_eq,
        "leading": leading, "leading_formula": leading_formula,
        "leading_matches": is_zero(leading - leading_formula),
        "s": s, "drift_s": drift_s, "zeta2_s": zeta_s, "ratio_s": ratio_s,
        "ratio_free_of_s": sp.cancel(sp.diff(ratio_s, s)) == 0,
        "drift_linear_in_s": sp.cancel(drift_s - s * drift_s.subs(s, 1)) == 0,
        "example": example, "example_values": {str(k): v for k, v in example_sub.items()},
    }
