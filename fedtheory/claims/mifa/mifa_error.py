"""``mifa.mifa_error`` (seed 000, 'Analyzing E||∇f(w_t) - G_t||^2 for MIFA'): MIFA: E||∇f - G_t||^2
<= ((1-p)/n) Σ||∇f_i - G_{t-1}^i||^2 (Jensen); exact value.
"""

from __future__ import annotations

import numpy as np

from fedtheory import stats
from fedtheory.claims import Claim, ClaimKind, Context, Evidence
from fedtheory.experiments.mifa_runs import (
    error_samples,
)
from fedtheory.symbolic.mifa_aggregation_error import (
    derive_error_terms,
)
from fedtheory.symbolic.mifa_symbols import (
    is_zero,
)
from fedtheory.theory.mifa import (
    exact_error2,
)

from ._common import fmt_frac, identity_and_bound

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
        "Exact gradients, equal p, expectation over the current round given the past. "
        "∇f_i - G_t^i = (1 - 1_i)e_i, so ∇f - G_t = (1/n)Σ(1 - 1_i)e_i and, with "
        "E[(1-1_i)(1-1_j)] = (1-p)^2 (i≠j), 1-p (i=j): E||∇f - G_t||^2 = "
        "(1/n^2)[(1-p)^2||Σe_i||^2 + p(1-p)Σ||e_i||^2] (general p_i: "
        "(1/n^2)[||Σ(1-p_i)e_i||^2 + Σp_i(1-p_i)||e_i||^2]). The seed's Jensen step "
        "||(1/n)Σx_i||^2 <= (1/n)Σ||x_i||^2 then E(1-1_i) = 1-p gives the bound; bound - exact "
        "is the sum of squares (1-p)/n^2[(1-p)Σ_{i<j}||e_i-e_j||^2 + p(n-1)Σ||e_i||^2] >= 0, "
        "so the bound holds and is attained only when p = 1 or n = 1 (worst-case ratio "
        "exact/bound = ((1-p)n + p)/n, at equal e_i). Checks: sympy for n = 2..5, exact "
        "enumeration (n = 3, rational p), one engine round (exact value two-sided, bound "
        "one-sided)."),
)


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
    grads, memory, p_val, value = exact_error2("mifa")
    e = grads - memory
    S1, S2 = e.sum(axis=0), (e**2).sum()
    exact = ((1 - p_val) ** 2 * sum(S1**2) + p_val * (1 - p_val) * S2) / 9
    bound = (1 - p_val) / 3 * S2
    ok = value == exact and value <= bound
    return Evidence(passed=ok, measured=str(value), theoretical=str(bound),
                    detail=f"exact E = {value} (formula {exact}) <= bound {bound}: {ok}",
                    counterexample=None if ok else {"grads": fmt_frac(grads),
                                                    "memory": fmt_frac(memory), "p": "1/10"})


@CLAIM.check("monte_carlo", "one_round")
def _mifa_error_mc(ctx: Context) -> Evidence:
    """Engine MIFA, n = 10, p = 0.1: exact value (two-sided) and the bound (one-sided)."""
    p_val = 0.1
    err2, grads, memory, R = error_samples("mifa", ctx, "mifa_error", p_val)
    n = grads.shape[0]
    e = grads - memory
    exact = ((1 - p_val) ** 2 * np.sum(e.sum(axis=0) ** 2)
             + p_val * (1 - p_val) * np.sum(e**2)) / n**2
    bound = (1 - p_val) / n * np.sum(e**2)
    ce = {"seed": ctx.seed, "replicas": R, "p": p_val, "grads": grads, "memory": memory}
    ident = stats.check_identity(err2, exact, counterexample=ce, what="E||∇f - G_t||^2")
    up = stats.check_upper_bound(err2, bound, counterexample=ce, what="E||∇f - G_t||^2")
    return identity_and_bound(ident, up, {"exact": exact, "bound": bound}, "Bound: ")
