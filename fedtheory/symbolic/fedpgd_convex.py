"""The convex FedPGD bound of seed 000's rates tables, derived."""

from __future__ import annotations

from functools import cache
from typing import Any

import sympy as sp

from fedtheory.symbolic.inequality import InequalityResult, prove_nonnegative
from fedtheory.symbolic.mifa_symbols import (
    L,
    T,
    eta,
)

__all__ = ["derive_fedpgd_convex", "derive_fedpgd_convex_sharp", "fedpgd_convex_slack"]


# A pure memo (one process): the derivation is a function of its arguments only (sympy
# expressions are immutable) and its readers do not modify the dict (issue 18).
@cache
def derive_fedpgd_convex() -> dict[str, Any]:
    r"""The convex FedPGD bound, derived: one step of :math:`u_t = x_t - x^\star`,

    .. math::

        \mathbb E\|u_{t+1}\|^2 = \|u_t\|^2 - 2\eta\langle\nabla f, u_t\rangle
        + \eta^2(\|\nabla f\|^2 + V)
        \le \|u_t\|^2 - 2\eta(1-\eta L)\,D_t + \eta^2 V
        \le \|u_t\|^2 - \eta D_t + \eta^2 V,

    with :math:`D_t = f(x_t)-f^\star \le\langle\nabla f, u_t\rangle` (convexity),
    :math:`\|\nabla f\|^2\le 2LD_t` (smoothness), :math:`\eta\le 1/(2L)` and the sampling variance
    :math:`V\le\frac{n/b-1}{n-1}\sigma_G^2`; telescoping gives
    :math:`\frac1T\sum_{t<T}\mathbb E D_t \le \frac{\|u_0\|^2}{\eta T} + \eta V`: the floor
    :math:`\eta V` stays outside the :math:`1/T`.
    """
    u2, a, g2, D, V, U0 = sp.symbols(r"\|u_{t}\|^{2} a_{t} g_{t} D_{t} V U_{0}", nonnegative=True)
    exact = u2 - 2 * eta * a + eta**2 * (g2 + V)
    upper = exact.subs({a: D, g2: 2 * L * D})  # a >= D and g2 <= 2 L D, both lower the value
    step = sp.expand(upper)
    coef_D = sp.factor(step.coeff(D))  # -2 eta (1 - eta L)
    theta = sp.Symbol(r"\theta", positive=True)  # eta = theta / (2 L), theta in (0, 1]
    margin = sp.factor(sp.simplify((-coef_D - eta).subs(eta, theta / (2 * L))))
    avgD = sp.Symbol(r"\bar D_{T}", nonnegative=True)
    # sum_t (E||u_{t+1}||^2 - E||u_t||^2) >= -U0: -U0 <= -eta T avgD + T eta^2 V
    bound = sp.solve(sp.Eq(-U0, -eta * T * avgD + T * eta**2 * V), avgD)[0]
    return {"step_upper": step, "coef_D": coef_D, "margin_over_eta_at_theta": margin,
            "avg_bound": sp.expand(bound), "theta": theta, "V": V, "U0": U0}


# A pure memo (one process): the derivation is a function of its arguments only (sympy
# expressions are immutable) and its readers do not modify the dict (issue 18).
@cache
def derive_fedpgd_convex_sharp() -> dict[str, Any]:
    r"""The convex FedPGD bound by the sharper route (co-coercivity), for :math:`\eta\le 1/L`.

    A convex :math:`L`-smooth :math:`f` satisfies
    :math:`\langle\nabla f(x), x-x^\star\rangle \ge f(x)-f^\star+\frac1{2L}\|\nabla f(x)\|^2`
    (Nesterov, Thm 2.1.5), so with :math:`a = \langle\nabla f, u_t\rangle = D_t + g/(2L) + w`
    (:math:`w\ge0`) and the sampling variance :math:`V = F\sigma_G^2 - v` (:math:`v\ge0`,
    :math:`F = \frac{n/b-1}{n-1}`):

    .. math::

        \mathbb E\|u_{t+1}\|^2 = \|u_t\|^2 - 2\eta a + \eta^2(g + V)
        = \|u_t\|^2 - 2\eta D_t - \eta\Big(\frac1L-\eta\Big)g + \eta^2F\sigma_G^2
          - 2\eta w - \eta^2 v,

    and for :math:`\eta\le 1/L` telescoping gives
    :math:`\frac1T\sum_{t<T}\mathbb E D_t\le\frac{\|u_0\|^2}{2\eta T}+\frac\eta2F\sigma_G^2`:
    half the stated bound in each term, under twice its step limit. Returns the exact step,
    the upper step, their difference (:math:`-2\eta w - \eta^2 v`), the coefficient of
    :math:`g`, the telescoped bound, the symbols, and :math:`1 - F` (:math:`\ge 0`) written
    with :math:`b = 1 + \beta`, :math:`n = 1 + \nu`.
    """
    u2, g2, D, U0, s2, w, v, F = sp.symbols(
        r"\|u_{t}\|^{2} g_{t} D_{t} U_{0} \sigma_G^2 w v F", nonnegative=True)
    a = D + g2 / (2 * L) + w
    V = F * s2 - v
    exact = u2 - 2 * eta * a + eta**2 * (g2 + V)
    upper = u2 - 2 * eta * D - eta * (1 / L - eta) * g2 + eta**2 * F * s2
    avgD = sp.Symbol(r"\bar D_{T}", nonnegative=True)
    # with the g-term dropped (coefficient <= 0 for eta <= 1/L) and summed over t < T:
    # -U0 <= -2 eta T avgD + T eta^2 F sigma^2
    bound = sp.solve(sp.Eq(-U0, -2 * eta * T * avgD + T * eta**2 * F * s2), avgD)[0]
    beta, nu = sp.symbols(r"\beta \nu", positive=True)
    n_, b_ = 1 + nu, 1 + beta
    one_minus_F = sp.factor(1 - (n_ / b_ - 1) / (n_ - 1))
    return {"exact_step": exact, "upper_step": upper, "step_gap": sp.expand(exact - upper),
            "coef_g": sp.factor(upper.coeff(g2)), "avg_bound": sp.expand(bound),
            "U0": U0, "sigma2": s2, "F": F, "w": w, "v": v, "one_minus_F": one_minus_F}


def fedpgd_convex_slack(stated: sp.Expr, step_limit: sp.Expr) -> dict[str, InequalityResult]:
    r"""Prove a stated convex FedPGD bound from :func:`derive_fedpgd_convex_sharp`.

    ``stated`` is the bound on :math:`\frac1T\sum_{t<T}\mathbb E f(x_t)-f^\star` in the
    symbols ``U0``, ``sigma2``, ``F`` of the derivation and
    :data:`~fedtheory.symbolic.mifa_symbols.eta`, ``T``, ``L``; ``step_limit`` the largest
    step it allows (an expression in ``L``). Each link is an inequality proved (or searched)
    with :func:`~fedtheory.symbolic.inequality.prove_nonnegative`:

    * ``step``: upper step minus exact step :math:`= 2\eta w + \eta^2 v \ge 0`;
    * ``coefficient``: :math:`\eta(1/L-\eta)\ge0` for :math:`\eta = \theta\,`
      ``step_limit``, :math:`\theta = 1/(1+s)\in(0,1]`;
    * ``sampling``: :math:`1-F\ge0` (:math:`b\ge1`, :math:`n\ge2`);
    * ``bound``: ``stated`` minus the telescoped bound :math:`\ge 0` for :math:`F = 1/(1+f)`.

    >>> d = derive_fedpgd_convex_sharp()
    >>> stated = d["U0"] / (eta * T) + eta * d["F"] * d["sigma2"]
    >>> {k: r.status for k, r in fedpgd_convex_slack(stated, 1 / (2 * L)).items()}
    {'step': 'proved', 'coefficient': 'proved', 'sampling': 'proved', 'bound': 'proved'}
    """
    d = derive_fedpgd_convex_sharp()
    s, f = sp.symbols("s f", positive=True)
    U0, s2, F, w, v = d["U0"], d["sigma2"], d["F"], d["w"], d["v"]
    box = {eta: (0, 2), L: (0, 4), w: (0, 3), v: (0, 3)}
    step = prove_nonnegative(-d["step_gap"], box)
    coef = prove_nonnegative(sp.factor(-d["coef_g"].subs(eta, step_limit / (1 + s))),
                             {s: (0, 50), L: (0, 4)})
    beta, nu = sorted(d["one_minus_F"].free_symbols, key=str)
    sampling = prove_nonnegative(d["one_minus_F"], {beta: (0, 50), nu: (0, 50)})
    slack = sp.factor(sp.together((stated - d["avg_bound"]).subs(F, 1 / (1 + f))))
    box = {U0: (0, 10), s2: (0, 10), eta: (0, 2), T: (0, 100), f: (0, 50), L: (0, 4)}
    bound = prove_nonnegative(slack, {k: r for k, r in box.items() if k in slack.free_symbols})
    return {"step": step, "coefficient": coef, "sampling": sampling, "bound": bound}
