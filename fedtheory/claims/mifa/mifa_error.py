"""``mifa.mifa_error`` (seed 000, 'Analyzing E||∇f(w_t) - G_t||^2 for MIFA'): MIFA: E||∇f - G_t||^2
<= ((1-p)/n) Σ||∇f_i - G_{t-1}^i||^2 (Jensen); exact value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedtheory import stats
from fedtheory.claims import Claim, ClaimKind, Context, Evidence
from fedtheory.symbolic.mifa_aggregation_error import derive_error_terms
from fedtheory.symbolic.mifa_symbols import is_zero

from ._common import error_round, exact_error_case, identity_and_bound

CLAIM = Claim(
    id="mifa.mifa_error", family="mifa",
    seed_ref="000, 'Analyzing E||∇f(w_t) - G_t||^2 for MIFA'",
    title="MIFA: E||∇f - G_t||^2 <= ((1-p)/n) Σ||∇f_i - G_{t-1}^i||^2 (Jensen); exact value",
    statement=(r"\mathbb E\|\nabla f(w_t)-G_t\|^2 \le \frac{1-p}{n}\sum_{i=1}^n"
               r"\|\nabla f_i(w_t)-G_{t-1}^{(i)}\|^2,\quad\text{exactly}\quad"
               r"\frac{1}{n^2}\Big[(1-p)^2\Big\|\sum_i e_i\Big\|^2+p(1-p)\sum_i\|e_i\|^2\Big],"
               r"\ e_i=\nabla f_i(w_t)-G_{t-1}^{(i)}"),
    kind=ClaimKind.UPPER_BOUND,
    expected="confirmed",
    derivation=(
        r"Exact gradients, equal $p$, expectation over the current round given the past. "
        r"$\nabla f_i - G_t^{(i)} = (1-1_i)e_i$, so $\nabla f - G_t = \frac1n\sum_i(1-1_i)e_i$ "
        r"and, with $\mathbb E[(1-1_i)(1-1_j)] = (1-p)^2$ ($i\neq j$), $1-p$ ($i=j$): "
        r"$\mathbb E\|\nabla f - G_t\|^2 = \frac1{n^2}\big[(1-p)^2\|\sum_i e_i\|^2"
        r" + p(1-p)\sum_i\|e_i\|^2\big]$ (general $p_i$: "
        r"$\frac1{n^2}\big[\|\sum_i(1-p_i)e_i\|^2 + \sum_i p_i(1-p_i)\|e_i\|^2\big]$). The "
        r"seed's Jensen step $\|\frac1n\sum_i x_i\|^2 \le \frac1n\sum_i\|x_i\|^2$ then "
        r"$\mathbb E(1-1_i) = 1-p$ gives the bound; bound $-$ exact is the sum of squares "
        r"$\frac{1-p}{n^2}\big[(1-p)\sum_{i<j}\|e_i-e_j\|^2 + p(n-1)\sum_i\|e_i\|^2\big] \ge 0$, "
        r"so the bound holds and is attained only when $p = 1$ or $n = 1$ (worst-case ratio "
        r"exact/bound $= ((1-p)n + p)/n$, at equal $e_i$). Checks: sympy for $n = 2..5$, exact "
        r"enumeration ($n = 3$, rational $p$), one engine round (exact value two-sided, bound "
        r"one-sided)."),
)


def _exact_and_bound(e: np.ndarray, p: Any) -> tuple[Any, Any]:
    """The statement's exact value and the seed's bound for memory errors ``e`` (n, d); exact
    in rationals for object arrays."""
    n = e.shape[0]
    exact = ((1 - p) ** 2 * np.sum(e.sum(axis=0) ** 2) + p * (1 - p) * np.sum(e**2)) / n**2
    return exact, (1 - p) / n * np.sum(e**2)


@CLAIM.check("symbolic")
def _mifa_error_symbolic(ctx: Context) -> Evidence:
    """Indicator algebra for n = 2..5: exact value, Jensen step and the sum-of-squares gap."""
    rows = []
    ok = True
    for n in range(2, 6):
        d = derive_error_terms(n)
        r = {
            "n": n,
            "exact": is_zero(d["mifa_exact"] - d["mifa_exact_formula"]),
            "exact_general_p": is_zero(d["mifa_exact_general"]
                                        - d["mifa_exact_general_formula"]),
            "jensen_mean": is_zero(d["mifa_jensen_mean"] - d["mifa_bound_seed"]),
            "sos": is_zero(d["mifa_bound_seed"] - d["mifa_exact"] - d["mifa_sos"]),
        }
        ok &= all(v for k, v in r.items() if k != "n")
        rows.append(r)
    d3 = derive_error_terms(3)
    return Evidence(
        passed=ok, measured=str(d3["mifa_exact"]), theoretical=str(d3["mifa_bound_seed"]),
        detail=("n=2..5: exact value, general-p_i value, Jensen mean (1-p)/n Σe^2 and the "
                f"SOS gap all derived: {ok}; worst ratio exact/bound = "
                f"{d3['mifa_worst_ratio']} (n=3)"),
        data={"per_n": rows},
    )


@CLAIM.check("symbolic", "exact_enumeration")
def _mifa_error_exact(ctx: Context) -> Evidence:
    """All 2^3 patterns with p = 1/10 (rational, d = 2): exact value and bound."""
    e, p_val, value, ce = exact_error_case("mifa")
    exact, bound = _exact_and_bound(e, p_val)
    ok = value == exact and value <= bound
    return Evidence(passed=ok, measured=str(value), theoretical=str(bound),
                    detail=f"exact E = {value} (formula {exact}) <= bound {bound}: {ok}",
                    counterexample=None if ok else ce)


@CLAIM.check("monte_carlo", "one_round")
def _mifa_error_mc(ctx: Context) -> Evidence:
    """Engine MIFA, n = 10, p = 0.1: exact value (two-sided) and the bound (one-sided)."""
    p_val = 0.1
    err2, e, ce = error_round(ctx, "mifa", "mifa_error", p_val)
    exact, bound = _exact_and_bound(e, p_val)
    ident = stats.check_identity(err2, exact, counterexample=ce, what="E||∇f - G_t||^2")
    up = stats.check_upper_bound(err2, bound, counterexample=ce, what="E||∇f - G_t||^2")
    return identity_and_bound(ident, up, {"exact": exact, "bound": bound}, "Bound: ")
