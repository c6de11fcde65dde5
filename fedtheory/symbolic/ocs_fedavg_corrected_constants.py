r"""The constants of Theorem 17's recursion (27) of seed 002 re-derived from the repaired chain
of Appendix D.1 (symbolic)."""

from __future__ import annotations

from typing import Any

import sympy as sp

__all__ = ["derive_fedavg_corrected_constants"]


def derive_fedavg_corrected_constants() -> dict[str, Any]:
    r"""``step_gap`` and ``z_coef`` (both 0 when the repaired chain is consistent),
    ``gap_coef`` (-3/8), ``sig_coef`` (17/8), ``beta2`` (72) and ``ok`` (all of these).

    >>> derive_fedavg_corrected_constants()["ok"]
    True
    """
    L, M, R, gam, W, eta = sp.symbols("L M R gamma W eta", positive=True)
    c = (M / R + 1) / gam - 1
    step_gap = sp.simplify((1 + 2 * W * (1 + M / R)) / gam - (1 + 2 * c * W)
                           - ((1 - gam) / gam + 2 * W))
    z_coef = sp.simplify(8 * L * c - 8 * L / gam * (M / R + 1 - gam))
    gap_coef = sp.Rational(-2) + sp.Rational(1, 2) + sp.Rational(9, 4) * 4 * sp.Rational(1, 8)
    sig_coef = 1 + sp.Rational(9, 4) * 8 * sp.Rational(1, 16)
    beta2 = sp.Rational(9, 4) * 32
    ok = (step_gap == 0 and z_coef == 0 and gap_coef == sp.Rational(-3, 8)
          and sig_coef == sp.Rational(17, 8) and beta2 == 72)
    return {"step_gap": step_gap, "z_coef": z_coef, "gap_coef": gap_coef, "sig_coef": sig_coef,
            "beta2": beta2, "ok": ok}
