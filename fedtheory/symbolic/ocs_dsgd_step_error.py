r"""The expected squared distance after one DSGD step with independent (OCS) participation
(seed 002, the identity Theorems 13 and 15 start from), symbolic, by indicator algebra."""

from __future__ import annotations

from typing import Any

import sympy as sp

from fedtheory.symbolic.indicators import expectation, independent_moments

__all__ = ["derive_dsgd_step_error"]


def derive_dsgd_step_error(n: int = 3, d: int = 2) -> dict[str, Any]:
    r""":math:`\mathbb E\|r - \eta\sum_i 1_i \frac{w_i}{p_i} g_i\|^2` for independent
    :math:`1_i \sim \mathrm{Bernoulli}(p_i)`, all symbols free.

    Returns ``derived`` (the expectation, from :math:`E[1_i] = p_i`,
    :math:`E[1_i1_j] = p_ip_j`, :math:`1_i^2 = 1_i`), ``closed`` (:math:`\|r - \eta\sum_i w_i
    g_i\|^2 + \eta^2\sum_i w_i^2\frac{1-p_i}{p_i}\|g_i\|^2`) and ``difference``
    (their simplified difference).

    >>> derive_dsgd_step_error(2, 1)["difference"]
    0
    """
    p = sp.symbols(f"p1:{n + 1}", positive=True)
    w = sp.symbols(f"w1:{n + 1}", positive=True)
    one = sp.symbols(f"I1:{n + 1}")
    eta = sp.Symbol("eta", positive=True)
    r = sp.symbols(f"r1:{d + 1}")
    g = [[sp.Symbol(f"g{i + 1}_{j + 1}") for j in range(d)] for i in range(n)]
    G = [sum(one[i] * w[i] / p[i] * g[i][j] for i in range(n)) for j in range(d)]
    # 1_i^k = 1_i, E[prod 1_i] = prod p_i (independence)
    lhs = expectation(sum((r[j] - eta * G[j]) ** 2 for j in range(d)), one,
                      independent_moments(p))
    mean = [sum(w[i] * g[i][j] for i in range(n)) for j in range(d)]
    var = sum(w[i] ** 2 * (1 - p[i]) / p[i] * sum(g[i][j] ** 2 for j in range(d))
              for i in range(n))
    closed = sum((r[j] - eta * mean[j]) ** 2 for j in range(d)) + eta**2 * var
    return {"derived": lhs, "closed": closed, "difference": sp.simplify(lhs - closed)}
