"""The error floors of seed 000: FedAvg-IS's one-step bound and its sum over rounds, and
MIFA's summation (denominator and staleness windows)."""

from __future__ import annotations

from functools import cache
from typing import Any

import sympy as sp

from fedtheory.symbolic.mifa_symbols import (
    L,
    T,
    bernoulli_expectation,
    c_sym,
    delta0,
    delta1,
    eta,
    grad2,
    indicators,
    p,
    sigma2,
    vec,
)

__all__ = ["derive_fedavg_is_step", "derive_summed_floor", "derive_zero_floor_sum"]


@cache
def derive_fedavg_is_step(n: int = 3) -> dict[str, Any]:
    r"""One FedAvg-IS step with exact gradients: from indicators to the seed's bound.

    1. :math:`\mathbb E\|G_t\|^2 = \|\nabla f\|^2 + \frac1{n^2}(\frac1p-1)\sum_i\|\nabla f_i\|^2`
       (indicator algebra, per coordinate);
    2. :math:`\sum_i\|\nabla f_i\|^2 = \sum_i\|h_i\|^2 + n\|\nabla f\|^2` with
       :math:`h_i = \nabla f_i-\nabla f`, :math:`\sum_i h_i = 0` (the seed uses the looser
       :math:`\le 2\sum_i\|h_i\|^2 + 2n\|\nabla f\|^2`);
    3. (with :math:`S_h = \sum_i\|h_i\|^2`) the :math:`L`-smooth upper model
       :math:`\mathbb E f(w_{t+1})-f(w_t)\le -\eta\|\nabla f\|^2+\frac{\eta^2L}2\mathbb E\|G_t\|^2`
       with :math:`\|h_i\|^2\le\sigma_G^2`, against the seed's
       :math:`-\frac\eta2\|\nabla f\|^2+\frac{\eta^2Lc}2\sigma_G^2`: the difference is
       :math:`\frac\eta2\|\nabla f\|^2(1-\eta L(1+c/2)) + \frac{\eta^2Lc}4\sigma_G^2`, non-negative
       when :math:`\eta L(1+c)\le 1`.
    """
    I = indicators(n)
    gs = vec("g", n)
    G = sum(I[i] * gs[i] for i in range(n)) / (n * p)
    EG = bernoulli_expectation(G, I, [p] * n)
    EG2 = bernoulli_expectation(G**2, I, [p] * n)
    gbar = sum(gs) / n
    step1 = sp.simplify(EG2 - (gbar**2 + (1 / p - 1) / n**2 * sum(x**2 for x in gs)))
    h = vec("h", n)
    sub = {gs[i]: sp.Symbol("m") + h[i] for i in range(n)}
    sub_sum0 = {h[-1]: -sum(h[:-1])}
    lhs2 = sp.expand(sum(x**2 for x in gs).subs(sub).subs(sub_sum0))
    rhs2 = sp.expand((sum(x**2 for x in h) + n * sp.Symbol("m") ** 2).subs(sub_sum0))
    S = sp.Symbol(r"S_{h}", nonnegative=True)  # sum_i ||h_i||^2
    c = sp.Rational(2, n) * (1 / p - 1)
    upper = -eta * grad2 + eta**2 * L / 2 * (grad2 + (1 / p - 1) / n**2 * (S + n * grad2))
    upper_at_sigma = upper.subs(S, n * sigma2)
    seed_bound = -eta / 2 * grad2 + eta**2 * L * c / 2 * sigma2
    slack = sp.factor(sp.expand(seed_bound - upper_at_sigma))
    slack_expected = (eta / 2 * grad2 * (1 - eta * L * (1 + c / 2))
                      + eta**2 * L * c / 4 * sigma2)
    # eta = theta / (L (1 + c)) with theta in (0, 1]; p = 1 / (1 + q) with q >= 0
    theta = sp.Symbol(r"\theta", positive=True)
    q = sp.Symbol("q", nonnegative=True)
    slack_theta = sp.simplify(slack_expected.subs(eta, theta / (L * (1 + c))).subs(p, 1 / (1 + q)))
    coef_grad = sp.factor(sp.expand(slack_theta).coeff(grad2))
    coef_sigma = sp.factor(sp.expand(slack_theta).coeff(sigma2))
    # coef_grad = (eta/2)(1 - theta (1 + c/2)/(1 + c)) = (eta/2)((1 - theta) + theta (c/2)/(1 + c))
    cq = c.subs(p, 1 / (1 + q))
    grad_margin = sp.simplify((1 - theta * (1 + cq / 2) / (1 + cq)) - (1 - theta))
    return {
        "E_G": sp.simplify(EG), "gbar": gbar, "E_G2": EG2, "step1_residual": step1,
        "step2_residual": sp.simplify(lhs2 - rhs2),
        "c": c, "upper_model": upper, "seed_bound": seed_bound, "slack": slack,
        "slack_residual": sp.simplify(slack - slack_expected),
        "slack_at_eta_theta": slack_theta, "slack_coef_grad": coef_grad,
        "slack_coef_sigma": coef_sigma, "theta": theta, "q": q,
        "grad_margin_over_1_minus_theta": grad_margin,
    }


@cache
def derive_summed_floor() -> dict[str, Any]:
    r"""Sum the one-step bound over :math:`t<T` and compare the floor with the seed's.

    Symbols: :math:`A_T` the average, :math:`\delta_0 = f(w_0)-f^\star`. Telescoping
    :math:`\sum_{t<T}(\mathbb E f(w_{t+1})-\mathbb E f(w_t)) = \mathbb E f(w_T)-f(w_0)
    \ge f^\star - f(w_0)` gives

    .. math::

        \frac1T\sum_{t<T}\mathbb E\|\nabla f(w_t)\|^2\le\frac{2(f(w_0)-f^\star)}{\eta T}
        + \eta L c\,\sigma_G^2,

    whose floor is :math:`2/\eta` times the printed :math:`\frac{\eta^2Lc}2\sigma_G^2`. Two
    exact counterexamples to the printed statement on the isotropic quadratic
    (:math:`\nabla^2 f_i = LI`, :math:`\|h_i\|^2 = \sigma_G^2`, :math:`w_0 = w^\star`): with
    :math:`T = 2` the left side is :math:`L/2` times the printed floor; and the stationary
    :math:`\mathbb E\|\nabla f\|^2` exceeds the printed floor whenever
    :math:`\eta(2-\eta L(1+c/2)) < 1` (e.g. every :math:`\eta<1/2`).
    """
    D0 = delta0
    avg = sp.Symbol(r"A_{T}", nonnegative=True)  # (1/T) sum_{t<T} E||grad f(w_t)||^2
    # sum of one-step bounds: -Delta0 <= E f(w_T) - f(w_0) <= -(eta/2) T avg + T eta^2 L c s/2
    ineq = -D0 - (-(eta / 2) * T * avg + T * eta**2 * L * c_sym / 2 * sigma2)  # <= 0
    avg_max = sp.solve(sp.Eq(ineq, 0), avg)[0]
    floor = sp.simplify(avg_max - 2 * D0 / (eta * T))
    seed_floor = eta**2 * L * c_sym / 2 * sigma2
    n = sp.Symbol("n", positive=True, integer=True)
    cn = 2 / n * (1 / p - 1)
    # T = 2 from the optimum, isotropic quadratic:
    # grad f(w_1) = -eta L G_0 with G_0 = (1/n) sum_i 1_i h_i / p
    lhs_T2 = sp.Rational(1, 2) * eta**2 * L**2 * (1 / p - 1) / n**2 * (n * sigma2)
    ratio_T2 = sp.simplify(lhs_T2 / seed_floor.subs(c_sym, cn))
    # stationary value: m = (1 - eta L)^2 m + eta^2 (1/n^2)(1/p - 1)(n sigma2 + n L^2 m)
    m = sp.Symbol("m", nonnegative=True)
    m_star = sp.solve(sp.Eq(m, (1 - eta * L) ** 2 * m
                            + eta**2 * (1 / p - 1) / n**2 * (n * sigma2 + n * L**2 * m)), m)[0]
    stationary = sp.simplify(L**2 * m_star)
    ratio_stat = sp.simplify(stationary / seed_floor.subs(c_sym, cn))
    return {
        "avg_bound": sp.expand(avg_max), "floor_derived": floor, "floor_seed": seed_floor,
        "floor_ratio_derived_over_seed": sp.simplify(floor / seed_floor),
        "T2_lhs": lhs_T2, "T2_ratio_lhs_over_seed": ratio_T2,
        "stationary": stationary, "stationary_ratio_over_seed": ratio_stat, "n": n,
    }


@cache
def derive_zero_floor_sum(T_val: int = 6, tau_val: int = 2) -> dict[str, Any]:
    r"""Where the seed's MIFA summation loses terms, and the denominator :math:`\eta T-1`.

    Symbols: :math:`S_T = \sum_{t=1}^{T-1}\|\nabla f(w_t)\|^2`, :math:`\delta_1 = f(w_1)-f^\star`,
    :math:`x_j = \|G_j\|^2`.

    1. Dividing :math:`\frac\eta2\sum_{t=1}^{T-1}\|\nabla f(w_t)\|^2\le f(w_1)-f^\star` by
       :math:`T-1` gives :math:`\frac{2(f(w_1)-f^\star)}{\eta(T-1)}`, not
       :math:`\frac{2(f(w_1)-f^\star)}{\eta T-1}`; the printed right side is negative for
       :math:`T<1/\eta`, and larger than the derived one for :math:`T>1/\eta` (as :math:`\eta<1`).
    2. Counting windows: the coefficient of :math:`\|G_j\|^2` in
       :math:`\sum_{t=1}^{T-1}\sum_{j=t-\tau}^{t}\|G_j\|^2` (the seed's window) is up to
       :math:`\tau+1`, not :math:`\tau`, and :math:`j` reaches :math:`1-\tau\le 0` (rounds before
       the sum starts). With the exact window :math:`j\in[t-\tau, t-1]` (since
       :math:`w_t-w_{t-\tau}=-\eta\sum_{j=t-\tau}^{t-1}G_j`) the coefficient is at most
       :math:`\tau`, but :math:`j = 0` still appears when the sum starts at :math:`t=1`; summing
       from :math:`t = 0` instead removes it and gives
       :math:`\frac1T\sum_{t=0}^{T-1}\|\nabla f(w_t)\|^2\le\frac{2(f(w_0)-f^\star)}{\eta T}`.
    """
    D1 = delta1
    S = sp.Symbol(r"S_{T}", nonnegative=True)  # sum_{t=1}^{T-1} ||grad f(w_t)||^2
    derived = sp.solve(sp.Eq(eta / 2 * S, D1), S)[0] / (T - 1)
    printed = 2 * D1 / (eta * T - 1)
    negative_when = sp.solve(sp.Lt(eta * T - 1, 0), T)
    ratio = sp.simplify(printed / derived)
    x = {j: sp.Symbol(f"x_{{{j}}}") for j in range(-tau_val, T_val)}  # x_j = ||G_j||^2

    def xs(j: int) -> sp.Symbol:
        return x[j]

    seed_window = sum(xs(j) for t in range(1, T_val) for j in range(t - tau_val, t + 1))
    exact_window = sum(xs(j) for t in range(1, T_val) for j in range(max(0, t - tau_val), t))
    from0_window = sum(xs(j) for t in range(0, T_val) for j in range(max(0, t - tau_val), t))
    windows = {"seed": seed_window, "exact_from_1": exact_window, "exact_from_0": from0_window}
    covered = {"seed": range(1, T_val), "exact_from_1": range(1, T_val),
               "exact_from_0": range(0, T_val)}  # the j of the descent term -(1-eta L)||G_j||^2
    coeff: dict[str, Any] = {}
    for key, w in windows.items():
        co = {j: int(w.coeff(xs(j))) for j in range(-tau_val, T_val)}
        coeff[key] = {
            "coefficients": co,
            "max_coefficient": max(co.values()),
            "uncovered": [j for j, v in co.items() if v > 0 and j not in covered[key]],
        }
    return {"derived": sp.simplify(derived), "printed": printed,
            "printed_negative_when": negative_when, "ratio_printed_over_derived": ratio,
            "windows": coeff, "T": T_val, "tau": tau_val}
