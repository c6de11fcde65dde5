r"""Theorem 15 of seed 002: the one-step descent (24) of DSGD with OCS, from smoothness, the
second moment of the aggregate and Assumption 9 (symbolic)."""

from __future__ import annotations

from typing import Any

import sympy as sp

__all__ = ["derive_dsgd_descent"]


def derive_dsgd_descent() -> dict[str, Any]:
    r"""``ok_moment``: :math:`E\|G\|^2 = ((1+M)/\gamma - 1)\sum_i w_i^2\|\nabla f_i\|^2 +
    \sigma^2\sum_i w_i^2/\gamma + \|\nabla f\|^2`; ``diff``: the derived right-hand side minus
    the seed's (24), simplified.

    >>> d = derive_dsgd_descent()
    >>> bool(d["ok_moment"]), d["diff"]
    (True, 0)
    """
    eta, L, M, gam, W, rho, S2, sig2, gf2, s2g, fx, a = sp.symbols(
        "eta L M gamma W rho S2 sigma2 gf2 s2g fx a", positive=True)
    # E||G||^2 = E[OCS variance] + E||sum_i w_i g_i||^2, OCS variance = a E sum w_i^2 ||g_i||^2
    # with a = alpha (n - m)/m = 1/gamma - 1, E||xi_i||^2 = M ||grad f_i||^2 + sigma^2
    noise = M * s2g + S2 * sig2
    EG2 = a * (s2g + noise) + noise + gf2
    EG2 = EG2.subs(a, 1 / gam - 1)
    ok_moment = sp.simplify(EG2 - (((1 + M) / gam - 1) * s2g + sig2 * S2 / gam + gf2)) == 0
    derived = fx - eta * gf2 + eta**2 * L / 2 * EG2.subs(s2g, W * rho + gf2)
    seed = (fx - eta * (1 - (1 + M) * L / (2 * gam) * eta) * gf2
            + eta**2 * L / (2 * gam) * ((1 + M - gam) * W * rho + S2 * sig2))
    diff = sp.simplify(derived - seed)
    return {"ok_moment": ok_moment, "diff": diff}
