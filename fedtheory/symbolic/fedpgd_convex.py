"""The convex FedPGD bound of seed 000's rates tables, derived."""

from __future__ import annotations

from functools import cache
from typing import Any

import sympy as sp

from fedtheory.symbolic.mifa_symbols import (
    L,
    T,
    eta,
)

__all__ = ["derive_fedpgd_convex"]


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
