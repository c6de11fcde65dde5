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

__all__ = [
    "STEP_SYMBOLS", "STEP_SYMBOLS_MEANING",
    "derive_fedavg_is_step", "derive_summed_floor", "derive_zero_floor_sum",
    "fedavg_is_step_inequality", "summed_floor_inequality", "summed_floor_t2_inequality",
    "zero_floor_t2_inequality",
]

#: The invariants of the one-step and summed inequalities: :math:`q = (1/p-1)/n`,
#: :math:`v \ge 0` with :math:`\eta L = s/((1+v)(1+c))` (:math:`s` the step limit, so
#: :math:`v = 0` is the largest allowed step), :math:`\|\nabla f\|^2`, the mean
#: :math:`\frac1n\sum_i\|h_i\|^2` of the clients' heterogeneity and the excess
#: :math:`r = \sigma_G^2-\frac1n\sum_i\|h_i\|^2 \ge 0`.
STEP_SYMBOLS = sp.symbols("q v g2 s_h r", nonnegative=True)

#: What :data:`STEP_SYMBOLS` stand for, as a check's detail says it where they first appear.
STEP_SYMBOLS_MEANING = ("where q = (1/p-1)/n, v >= 0 with ηL = s/((1+v)(1+c)) (s the step "
                        "limit), g2 = ||∇f||^2, s_h = (1/n) Σ_i ||h_i||^2 and "
                        "r = σ_G^2 - s_h >= 0")


# A pure memo (one process): the derivation is a function of its arguments only (sympy
# expressions are immutable) and its readers do not modify the dict (issue 18).
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


# A pure memo (one process): the derivation is a function of its arguments only (sympy
# expressions are immutable) and its readers do not modify the dict (issue 18).
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


# A pure memo (one process): the derivation is a function of its arguments only (sympy
# expressions are immutable) and its readers do not modify the dict (issue 18).
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


def _rational(x: Any) -> Any:
    """A Fraction (or int) as a sympy Rational; sympy expressions pass through."""
    return sp.Rational(x.numerator, x.denominator) if hasattr(x, "denominator") and not \
        isinstance(x, sp.Basic) else sp.sympify(x)


def fedavg_is_step_inequality(grad_coef: Any, floor_coef: Any, c_two: Any, step: Any,
                              floor_c: Any = None) -> dict[str, Any]:
    r"""The one-step bound of FedAvg-IS as an inequality: stated bound minus the exact value.

    The stated bound (constants possibly mutated) is
    :math:`-A\eta\|\nabla f\|^2 + B\eta^2L\,C(c)\,\sigma_G^2` with :math:`c = K(1/p-1)/n`
    (``grad_coef`` :math:`A`, ``floor_coef`` :math:`B`, ``c_two`` :math:`K`; ``floor_c`` maps
    the stated :math:`c` to the factor the floor uses, the identity by default), under
    :math:`\eta L(1+c) \le s` (``step``). On the isotropic quadratic (every Hessian
    :math:`LI`) the smoothness model is exact and (derivation, step 1-2)

    .. math:: \mathbb E f(w_{t+1})-f(w_t) = -\eta\|\nabla f\|^2+\frac{\eta^2L}2\Big(
              (1+q)\|\nabla f\|^2+q\,\overline{\|h\|^2}\Big),\quad q = \frac{1/p-1}n,

    and for every :math:`L`-smooth :math:`f` the right side is an upper bound. So
    :math:`L\,(\text{bound}-\text{value})`, written in the invariants :data:`STEP_SYMBOLS`
    (:math:`\eta L = s/((1+v)(1+c))`, :math:`\sigma_G^2 = \overline{\|h\|^2}+r`), is
    non-negative on the whole domain exactly when the stated bound holds for every admissible
    instance: a proof of ``slack >= 0`` proves it, and a point with ``slack < 0`` is a
    counterexample (isotropic quadratic, :math:`n = 2`, :math:`p = 1/(1+2q)`, clients
    :math:`\pm h`).

    Returns ``slack``, ``eta_L``, ``exact`` and ``bound`` (all times :math:`L`) and ``c``.

    >>> d = fedavg_is_step_inequality(sp.Rational(1, 2), sp.Rational(1, 2), 2, 1)
    >>> q, v, g2, sh, r = STEP_SYMBOLS
    >>> sp.simplify(d["slack"].subs({v: 0, g2: 0, r: 0}) - q * sh / (2 * (1 + 2 * q) ** 2))
    0
    """
    q, v, g2, sh, r = STEP_SYMBOLS
    A, B, K, s = (_rational(x) for x in (grad_coef, floor_coef, c_two, step))
    c = K * q
    x = s / ((1 + v) * (1 + c))  # eta L
    exact = -x * g2 + x**2 / 2 * (g2 * (1 + q) + q * sh)
    fc = c if floor_c is None else floor_c(c)
    bound = -A * x * g2 + B * x**2 * fc * (sh + r)
    return {"slack": sp.factor(sp.together(bound - exact)), "eta_L": x, "exact": exact,
            "bound": bound, "c": c}


def summed_floor_inequality(two: Any, one: Any, c_two: Any, step: Any,
                            floor_c: Any = None) -> dict[str, Any]:
    r"""The corrected average bound as an inequality, by the derivation's route.

    Stated (constants possibly mutated):
    :math:`\frac1T\sum_{t<T}\mathbb E\|\nabla f(w_t)\|^2 \le \frac{D\,\delta_0}{\eta T}
    + E\,\eta L\,C(c)\,\sigma_G^2`, :math:`c = K(1/p-1)/n`, under :math:`\eta L(1+c)\le s`
    (``two`` :math:`D`, ``one`` :math:`E`, ``c_two`` :math:`K`, ``step`` :math:`s`).

    The route: the one-step bound with floor :math:`\frac{\eta^2Lq}2\sigma_G^2`
    (:math:`q = (1/p-1)/n`, half the seed's :math:`c/2` in the seed's notation) holds when
    :math:`\eta L(1+q)\le1` (``one_step`` :math:`\ge 0`, in its own variable
    :math:`\eta L = 1/((1+w)(1+q))`); telescoped it gives
    :math:`\frac{2\delta_0}{\eta T}+\eta Lq\,\sigma_G^2`. The statement follows when the
    stated condition implies the route's (``route`` :math:`= 1-\eta L(1+q) \ge 0`) and the
    stated right side exceeds the telescoped one (``slack`` :math:`\ge 0`, with
    :math:`x = \delta_0/(\eta T)\ge0` and :math:`\sigma_G^2`). A negative ``slack`` or
    ``route`` only means that this route does not prove the statement: not a counterexample.

    >>> d = summed_floor_inequality(2, 1, 2, 1)
    >>> q, v = STEP_SYMBOLS[:2]
    >>> sp.simplify(d["route"] - (q + v + 2 * q * v) / ((1 + v) * (1 + 2 * q)))
    0
    """
    q, v, g2, sh, r = STEP_SYMBOLS
    D, E, K, s = (_rational(x) for x in (two, one, c_two, step))
    c = K * q
    x = s / ((1 + v) * (1 + c))  # eta L under the stated condition
    route = sp.factor(sp.together(1 - x * (1 + q)))
    w = sp.Symbol("w", nonnegative=True)
    x1 = 1 / ((1 + w) * (1 + q))  # eta L under the route's condition
    exact = -x1 * g2 + x1**2 / 2 * (g2 * (1 + q) + q * sh)
    one_step = sp.factor(sp.together(-x1 / 2 * g2 + x1**2 * q / 2 * (sh + r) - exact))
    d0, s2 = sp.symbols(r"x \sigma_G^2", nonnegative=True)  # x = delta_0 / (eta T)
    fc = c if floor_c is None else floor_c(c)
    slack = sp.factor(sp.together((D - 2) * d0 + x * (E * fc - q) * s2))
    return {"route": route, "one_step": one_step, "one_step_symbols": (q, w, g2, sh, r),
            "slack": slack, "slack_symbols": (q, v, d0, s2), "eta_L": x, "c": c}


def summed_floor_t2_inequality(floor_coef: Any, c_two: Any, step: Any,
                               floor_c: Any = None) -> dict[str, Any]:
    r"""The printed average bound at :math:`T = 2` from :math:`w_0 = w^\star`, as an inequality.

    On the isotropic quadratic (Hessians :math:`LI`, :math:`\|h_i\|^2 = \sigma_G^2` for every
    client) from :math:`w^\star`: :math:`\nabla f(w_1) = -\eta L G_0`,
    :math:`G_0 = \frac1{np}\sum_{i\in\mathcal A}h_i`, so the left side is
    :math:`\frac12\eta^2L^2q\,\sigma_G^2` (:math:`q = (1/p-1)/n`) while the printed right side
    is the floor :math:`B\eta^2L\,C(c)\,\sigma_G^2` alone (:math:`f(w_0)-f^\star = 0`). Returns
    ``slack`` = right minus left (with :math:`\sigma_G^2 = 1`, the slack is linear in it) in
    :math:`L`, :math:`q` and :math:`v` (:math:`\eta L = s/((1+v)(1+c))`), and ``lhs``,
    ``rhs``.

    >>> d = summed_floor_t2_inequality(sp.Rational(1, 2), 2, 1)
    >>> q, v = STEP_SYMBOLS[:2]
    >>> sp.factor(d["slack"].subs(v, 0))
    -q*(L - 2)/(2*L*(2*q + 1)**2)
    """
    q, v = STEP_SYMBOLS[:2]
    B, K, s = (_rational(x) for x in (floor_coef, c_two, step))
    c = K * q
    x = s / ((1 + v) * (1 + c))  # eta L
    fc = c if floor_c is None else floor_c(c)
    rhs = B * x**2 / L * fc
    lhs = x**2 * q / 2
    return {"slack": sp.factor(sp.together(rhs - lhs)), "lhs": lhs, "rhs": rhs, "eta_L": x}


def zero_floor_t2_inequality(two: Any, t_minus: Any = None) -> dict[str, Any]:
    r"""MIFA's printed bound at :math:`T = 2` as an inequality (any path, two clients).

    On :math:`f_i = \frac L2(w\mp1)^2` every path has :math:`w_1 = w_0-\eta\nabla f(w_0)` (round
    0 fills the memory), and at :math:`T = 2` the left side is :math:`\|\nabla f(w_1)\|^2 =
    L^2u_1^2` (:math:`u_1 = w_1-w^\star`), the right side
    :math:`D(f(w_1)-f^\star)/(\eta T-1) = D\frac L2u_1^2/(2\eta-1)` (``two`` :math:`D`; with
    ``t_minus`` the denominator :math:`\eta(T-1)` of the fix). With :math:`u_1 = 1` (both sides
    are quadratic in :math:`u_1`) returns ``slack`` = right minus left in :math:`\eta`,
    :math:`L`, and ``lhs``, ``rhs``.

    >>> str(sp.factor(zero_floor_t2_inequality(2)["slack"]))
    '-L*(2*L*\\eta - L - 1)/(2*\\eta - 1)'
    """
    D = _rational(two)
    den = eta * (T - 1) if t_minus else eta * T - 1
    rhs = (D * L / 2 / den).subs(T, 2)
    lhs = L**2
    return {"slack": sp.factor(sp.together(rhs - lhs)), "lhs": lhs, "rhs": rhs}
