r"""Leading constants of the rates of FedAvg (:math:`K` local steps, :math:`R` rounds) and
parallel SGD (:math:`KR` steps): stationary variances, transients, the best
:math:`\sigma/\sqrt{nKR}`."""

from __future__ import annotations

from typing import Any

import sympy as sp

from fedtheory.symbolic.local_sgd import K, clients, derive_local_sgd, gamma, is_zero, sigma2

__all__ = ["derive_rate_constants", "derive_rate_in_n"]


def derive_rate_constants(n: int = 2) -> dict[str, Any]:
    r"""Leading constants of FedAvg (:math:`K` local steps, :math:`R` rounds) and parallel SGD
    (:math:`T = KR` steps) with the same step :math:`\gamma`, one coordinate per client.

    FedAvg's round map is :math:`e^+ = M e + \text{noise}` with :math:`M = \frac1n\sum_i
    (1-\gamma a_i)^K` and noise variance :math:`Q = \frac1{n^2}\sum_i v_K(a_i)`; parallel SGD's
    step has :math:`M_1 = 1-\gamma\bar a` and :math:`Q_1 = \gamma^2\sigma^2/n`. The stationary
    variances :math:`Q/(1-M^2)` and the transient sums :math:`\sum_r M^{2r} = 1/(1-M^2)` (per
    round, i.e. per :math:`K` steps, against per step) are expanded in :math:`\gamma`. With
    :math:`\gamma = c/\sqrt T` the time-averaged :math:`\mathbb E|\nabla f|^2` of both is then

    .. math::

        \frac{\bar a}{2\sqrt T}\Big(\frac{e_0^2}{c} + \frac{c\,\sigma^2}{n}\Big) + o(T^{-1/2}),
        \qquad \min_c = \frac{\bar a |e_0|\,\sigma}{\sqrt{nKR}} ,

    the lecture's :math:`\sigma/\sqrt{nKR}` for both methods.
    """
    a, _ = clients(n)
    loc = derive_local_sgd()
    abar = sum(a) / n
    M = sum((1 - gamma * ai) ** K for ai in a) / n
    Q = sum(loc["v_K"].subs(loc["a"], ai) for ai in a) / n**2
    var_fedavg = Q / (1 - M**2)
    var_sgd = (gamma**2 * sigma2 / n) / (1 - (1 - gamma * abar) ** 2)
    lead_f = sp.simplify(sp.series(var_fedavg, gamma, 0, 2).removeO())
    lead_s = sp.simplify(sp.series(var_sgd, gamma, 0, 2).removeO())
    var_gap = sp.factor(sp.simplify(sp.series(var_fedavg - var_sgd, gamma, 0, 3).removeO()))
    # transient: per-round sum over R rounds vs per-step sum over T = K R steps, x K
    tr_f = sp.simplify(sp.series(gamma / (1 - M**2), gamma, 0, 1).removeO())
    tr_s = sp.simplify(sp.series(gamma / (K * (1 - (1 - gamma * abar) ** 2)), gamma, 0, 1)
                       .removeO())
    return {"var_fedavg_leading": lead_f, "var_sgd_leading": lead_s,
            "same_variance_leading": is_zero(lead_f - lead_s), "variance_gap": var_gap,
            "transient_fedavg": tr_f, "transient_sgd": tr_s,
            "same_transient_leading": is_zero(tr_f - tr_s),
            **_best_rate(abar, lead_f, tr_f)}


def _best_rate(abar: sp.Expr, lead: sp.Expr, transient: sp.Expr) -> dict[str, Any]:
    r"""Time-averaged :math:`\bar a^2(e_0^2 K\,\text{transient}/(\gamma T) + \text{variance})`
    with :math:`\gamma = c/\sqrt T`, its best :math:`c` and the rate there (also in
    :math:`R = T/K`)."""
    c0, e0, T = sp.symbols("c e_0 T", positive=True)
    metric = abar**2 * (e0**2 * K * transient / (gamma * T) + lead)
    metric_c = sp.simplify(metric.subs(gamma, c0 / sp.sqrt(T)))
    c_opt = [s for s in sp.solve(sp.diff(metric_c, c0), c0) if s.is_positive is not False]
    rate = sp.simplify(metric_c.subs(c0, c_opt[0])) if c_opt else None
    R = sp.Symbol("R", positive=True)
    return {"metric_with_c": metric_c, "c_opt": c_opt[0] if c_opt else None,
            "rate": rate, "rate_in_R": sp.simplify(rate.subs(T, K * R)) if rate else None}


def derive_rate_in_n() -> dict[str, Any]:
    r"""FedAvg's best rate with :math:`n` clients of equal curvature :math:`a` (:math:`n`
    symbolic): round map :math:`M = (1-\gamma a)^K`, noise :math:`Q = v_K(a)/n`, so that

    .. math:: \min_c \frac1T\sum\mathbb E|\nabla f|^2 \simeq \frac{a|e_0|\,\sigma}{\sqrt{nKR}},

    the dependence of the rate on :math:`n` (:func:`derive_rate_constants` fixes :math:`n`).
    Returns ``n``, ``a`` and the keys of the best rate (``rate_in_R``, ``c_opt``, ...).
    """
    n = sp.Symbol("n", positive=True, integer=True)
    loc = derive_local_sgd()
    a = loc["a"]
    M = (1 - gamma * a) ** K
    lead = sp.simplify(sp.series((loc["v_K"] / n) / (1 - M**2), gamma, 0, 2).removeO())
    transient = sp.simplify(sp.series(gamma / (1 - M**2), gamma, 0, 1).removeO())
    return {"n": n, "a": a, "var_leading": lead, **_best_rate(a, lead, transient)}
