r"""The coefficient of :math:`Z = \sum_i w_i^2 Z_i` in Theorem 17's proof of seed 002: eq. (37)
of Appendix D.1 against the statement's (25), symbolic (the slip that loses a factor
:math:`1/\gamma`)."""

from __future__ import annotations

import sympy as sp

__all__ = ["derive_fedavg_z_coefficient"]


def derive_fedavg_z_coefficient() -> dict[str, str]:
    r"""The :math:`Z`-coefficients of (37) and (25) and their ratio, as strings.

    >>> derive_fedavg_z_coefficient()["ratio_37_over_25"]
    '1/gamma'
    """
    L, M, R, gam = sp.symbols("L M R gamma", positive=True)
    c37 = 4 * L * ((M / R + 1) / gam - 1)
    c25 = 4 * L * (M / R + 1 - gam)
    return {"Z_coefficient_eq37": str(c37), "Z_coefficient_eq25": str(c25),
            "ratio_37_over_25": str(sp.simplify(c37 / c25))}
