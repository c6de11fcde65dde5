r"""Remark 14 of seed 002: Theorem 13's recursion with :math:`\gamma = 1`, :math:`M = 0`,
:math:`w_i = 1/n` (the constant (21)) and unrolled over :math:`K` steps (the rate (22))."""

from __future__ import annotations

from typing import Any

import sympy as sp

__all__ = ["derive_remark14"]


def derive_remark14() -> dict[str, Any]:
    r"""The constant :math:`\beta_1/\gamma - \beta_2` of (21) (``c21``; ``ok21``: it is
    :math:`\sigma^2/n`) and the unrolled noise term (``unrolled``; ``ok22``: it equals
    :math:`\eta\sigma^2(1-(1-\mu\eta)^K)/(\mu n)`).

    >>> d = derive_remark14()
    >>> bool(d["ok21"]), bool(d["ok22"])
    (True, True)
    """
    n, L, sig2, eta, mu = sp.symbols("n L sigma2 eta mu", positive=True)
    K, k, i = sp.symbols("K k i", integer=True, positive=True)
    Z = sp.IndexedBase("Z")
    s_z = sp.Sum(Z[i], (i, 1, n))
    beta1 = 2 * L * s_z / n**2 + sp.Sum(sig2 / n**2, (i, 1, n)).doit()  # M = 0, w = 1/n
    beta2 = 2 * L * s_z / n**2
    c21 = sp.simplify(beta1 / 1 - beta2)  # gamma = 1
    ok21 = sp.simplify(c21 - sig2 / n) == 0
    q = 1 - mu * eta
    unrolled = eta**2 * c21 * sp.summation(q**k, (k, 0, K - 1))
    closed = eta * sig2 / (mu * n) * (1 - q**K)
    ok22 = sp.simplify(unrolled - closed) == 0
    return {"c21": c21, "ok21": ok21, "unrolled": unrolled, "ok22": ok22}
