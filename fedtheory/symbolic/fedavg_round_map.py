r"""One FedAvg round (:math:`K` local steps) against :math:`K` steps of parallel SGD, symbolic:
identical for equal Hessians, different at order :math:`\gamma^2` otherwise."""

from __future__ import annotations

from typing import Any

import sympy as sp

from fedtheory.symbolic.local_sgd import K, clients, gamma, is_zero, local_end, x_sym

__all__ = ["derive_round_map"]


def derive_round_map(n: int = 2) -> dict[str, Any]:
    r"""One FedAvg round (:math:`K` local steps) against :math:`K` steps of parallel SGD.

    Noise-free closed forms from :func:`derive_local_sgd`: FedAvg's round is
    :math:`\frac1n\sum_i y_i^K(x)`; parallel SGD's :math:`K` steps on
    :math:`f = \frac1n\sum_i f_i` (curvature :math:`\bar a`, minimiser :math:`x^\star`) are the
    same closed form with :math:`a = \bar a`, :math:`c = x^\star`. With the noise, an explicit
    :math:`K = 3` is iterated with symbols :math:`\xi_{i,k}` for every client and step.

    Returns ``difference`` (general :math:`a_i`; its leading term in :math:`\gamma`,
    ``leading``, against ``leading_formula`` :math:`=\gamma^2\frac{K(K-1)}2\frac1n\sum_i
    (a_i-\bar a)\nabla f_i(x)`), ``equal_hessians`` (the difference with all :math:`a_i = a`)
    and ``noisy_equal`` (whether the noisy round equals 3 noisy SGD steps, same noise).
    """
    a, c = clients(n)
    abar = sum(a) / n
    x_star = sum(a[i] * c[i] for i in range(n)) / sum(a)
    fedavg = sum(local_end(a[i], c[i]) for i in range(n)) / n
    sgd = local_end(abar, x_star)
    diff = fedavg - sgd
    leading = sp.simplify(sp.series(diff, gamma, 0, 3).removeO())
    grads = [a[i] * (x_sym - c[i]) for i in range(n)]
    formula = gamma**2 * K * (K - 1) / 2 * sum((a[i] - abar) * grads[i] for i in range(n)) / n
    a0 = sp.Symbol("a", positive=True)
    equal = sp.simplify(diff.subs({ai: a0 for ai in a}))
    # explicit K = 3 with noise, identical curvature a0
    steps = 3
    xi = [[sp.Symbol(rf"\xi_{{{i + 1},{k}}}", real=True) for k in range(steps)] for i in range(n)]
    ys = []
    for i in range(n):
        y = x_sym
        for k in range(steps):
            y = y - gamma * (a0 * (y - c[i]) + xi[i][k])
        ys.append(y)
    fed_noisy = sum(ys) / n
    xs = x_sym
    cbar = sum(c) / n
    for k in range(steps):
        xs = xs - gamma * (a0 * (xs - cbar) + sum(xi[i][k] for i in range(n)) / n)
    return {"a": a, "c": c, "fedavg": fedavg, "sgd": sgd, "difference": diff,
            "leading": leading, "leading_formula": formula,
            "leading_matches": is_zero(leading - formula),
            "equal_hessians": equal, "fedavg_noisy_K3": fed_noisy, "sgd_noisy_K3": xs,
            "noisy_equal": is_zero(fed_noisy - xs)}
