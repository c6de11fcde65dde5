"""SCAFFOLD's fixed points (server and control variates at rest) for every :math:`K`:
unique and free of the heterogeneity, symbolic, on one-dimensional clients."""

from __future__ import annotations

from typing import Any

import sympy as sp

from fedtheory.symbolic.local_sgd import K, clients, gamma, is_zero, local_end, x_sym

__all__ = ["derive_scaffold_fixed_point"]


def derive_scaffold_fixed_point(n: int = 3) -> dict[str, Any]:
    r"""SCAFFOLD's fixed points (full participation, no noise), for every :math:`K`.

    A client runs :math:`y \leftarrow y - \gamma(\nabla f_i(y) - u_i + \bar u)` for :math:`K`
    steps (:func:`derive_local_sgd` with :math:`\delta = \bar u - u_i`); the server and the
    control variates are at rest when

    .. math::

        \sum_i (y_i^K - x) = 0,\qquad u_i^+ - u_i = -\bar u + \frac{x - y_i^K}{K\gamma} = 0
        \ \ (\forall i),\qquad \bar u = \frac1n\sum_i u_i .

    The powers :math:`(1-\gamma a_i)^K` are replaced by symbols :math:`P_i` (different from 1
    for a stable step), and the linear system is solved for :math:`x, \bar u, u_1..u_n`.
    Returns the solutions and whether the only one is :math:`x = x^\star`,
    :math:`u_i = \nabla f_i(x^\star)`: no dependence on the heterogeneity.
    """
    a, c = clients(n)
    u = [sp.Symbol(f"u_{i}", real=True) for i in range(1, n + 1)]
    ubar = sp.Symbol(r"\bar u", real=True)
    P = [sp.Symbol(f"P_{i}", positive=True) for i in range(1, n + 1)]
    yk = [sp.expand(local_end(a[i], c[i], ubar - u[i])).subs((1 - gamma * a[i]) ** K, P[i])
          for i in range(n)]
    eqs = [sp.Eq(-ubar + (x_sym - yk[i]) / (K * gamma), 0) for i in range(n)]
    eqs.append(sp.Eq(sum(yk[i] - x_sym for i in range(n)), 0))
    eqs.append(sp.Eq(ubar, sum(u) / n))
    # each control-variate equation is linear in its own u_i: eliminate them one by one,
    # then solve the two remaining equations for (x, u_bar)
    u_of = {u[i]: sp.solve(eqs[i], u[i])[0] for i in range(n)}
    reduced = [sp.together(e.lhs - e.rhs).subs(u_of) for e in eqs[n:]]
    rest = sp.solve(reduced, [x_sym, ubar], dict=True)
    sols = [{**r, **{u[i]: sp.factor(u_of[u[i]].subs(r)) for i in range(n)}} for r in rest]
    x_star = sum(a[i] * c[i] for i in range(n)) / sum(a)
    ok = len(sols) == 1 and is_zero(sols[0][x_sym] - x_star) and all(
        is_zero(sols[0][u[i]] - a[i] * (x_star - c[i])) for i in range(n))
    return {"a": a, "c": c, "u": u, "ubar": ubar, "local_end": yk, "equations": eqs,
            "solutions": sols, "x_star": x_star, "unique_optimum": ok}
