r"""Theorem 18 of seed 002: the last step of Appendix D.2, which gives FedAvg's one-round
descent (29) with OCS (symbolic)."""

from __future__ import annotations

from typing import Any

import sympy as sp

__all__ = ["derive_fedavg_descent"]


def derive_fedavg_descent() -> dict[str, Any]:
    r"""``diff``: the penultimate bound of Appendix D.2 at :math:`\eta_g^2 = 5\gamma/(4\sum_i
    w_i^2)` minus the right-hand side of (29), simplified.

    >>> derive_fedavg_descent()["diff"]
    0
    """
    eta, L, R, gam, S2, sig2, gf2, rho, fx, M = sp.symbols(
        "eta L R gamma S2 sigma2 gf2 rho fx M", positive=True)
    eta_g2 = 5 * gam / (4 * S2)  # the lower limit of eta_g, squared
    drift_term = (sp.Rational(5, 4) * eta**2 * L * (gf2 + rho)
                  + 5 * eta**2 * L * sig2 / (8 * R * eta_g2))
    penultimate = (fx + eta**2 * sig2 * L / (2 * R * gam) * S2 + drift_term
                   - sp.Rational(3, 8) * eta * gf2 + eta / 8 * (1 - 8 * eta * L) * rho)
    seed = (fx - sp.Rational(3, 8) * eta * (1 - sp.Rational(10, 3) * eta * L) * gf2
            + eta * rho / 8 + eta**2 * (rho / 4 + sig2 / (gam * R) * S2) * L)
    diff = sp.simplify(penultimate - seed)
    return {"diff": diff}
