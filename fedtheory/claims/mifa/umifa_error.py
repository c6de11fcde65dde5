"""``mifa.umifa_error`` (seed 000, 'Analyzing E||∇f(w_t) - G_t||^2 for U-MIFA'): U-MIFA: E||∇f -
G_t||^2 = (1-p)/(n^2 p) Σ||∇f_i - G_{t-1}^i||^2.
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

from ._common import fmt_frac

CLAIM = Claim(
    id="mifa.umifa_error", family="mifa",
    seed_ref="000, 'Analyzing E||∇f(w_t) - G_t||^2 for U-MIFA'",
    title="U-MIFA: E||∇f - G_t||^2 = (1-p)/(n^2 p) Σ||∇f_i - G_{t-1}^i||^2",
    statement=(r"\mathbb E\|\nabla f(w_t)-G_t\|^2 = \frac{1-p}{n^2p}\sum_{i=1}^n"
               r"\|\nabla f_i(w_t)-G_{t-1}^{(i)}\|^2"),
    kind=ClaimKind.IDENTITY,
    expected="confirmed",
    derivation=(
        "Exact gradients, equal p, expectation over the current round given the past. "
        "∇f_i - G_t^i = (1 - 1_i/p)e_i (zero mean, independent over i), so the cross terms "
        "vanish (the seed's second line, E[(1/n^2)Σ||∇f_i - G_t^i||^2]) and "
        "E(1 - 1_i/p)^2 = (1-p)/p. Note: it is 1/(np) times MIFA's bound, so smaller than "
        "MIFA's bound only when np > 1 (n = 10, p = 0.01 makes it 10 times larger). The same "
        "algebra for one client's stored error gives E(e_i^+)^2 = ((1-p)/p) e_i^2: U-MIFA's "
        "memory error grows when p < 1/2 (see mifa.zero_floor). Checks: sympy n = 2..5, exact "
        "enumeration, one engine round (two-sided)."),
)


@CLAIM.check("symbolic")
def _umifa_error_symbolic(ctx: Context) -> Evidence:
    """Indicator algebra for n = 2..5: the exact value and the seed's diagonal step."""
    ok = True
    for n in range(2, 6):
        d = derive_error_terms(n)
        ok &= is_zero(d["umifa_exact"] - d["umifa_seed"])
        ok &= is_zero(d["umifa_diagonal_seed_step"] - d["umifa_seed"])
    d3 = derive_error_terms(3)
    return Evidence(passed=ok, measured=str(d3["umifa_exact"]), theoretical=str(d3["umifa_seed"]),
                    detail=f"n=2..5: E||∇f - G_t||^2 and E[(1/n^2)Σ||∇f_i - G_t^i||^2] both "
                           f"equal (1-p)/(n^2 p) Σ e_i^2: {ok}")


@CLAIM.check("symbolic", "exact_enumeration")
def _umifa_error_exact(ctx: Context) -> Evidence:
    """All 2^3 patterns with p = 1/10 (rational, d = 2): exact equality."""
    grads, memory, p_val, value = exact_error2("umifa")
    theory = (1 - p_val) / (9 * p_val) * ((grads - memory) ** 2).sum()
    ok = value == theory
    return Evidence(passed=ok, measured=str(value), theoretical=str(theory),
                    detail=f"exact E = {value}, seed {theory}",
                    counterexample=None if ok else {"grads": fmt_frac(grads),
                                                    "memory": fmt_frac(memory), "p": "1/10"})


@CLAIM.check("monte_carlo", "one_round")
def _umifa_error_mc(ctx: Context) -> Evidence:
    """Engine U-MIFA, n = 10, p = 0.1: E||∇f - G_t||^2 two-sided against the seed's value."""
    p_val = 0.1
    err2, grads, memory, R = error_samples("umifa", ctx, "umifa_error", p_val)
    n = grads.shape[0]
    theory = (1 - p_val) / (n**2 * p_val) * np.sum((grads - memory) ** 2)
    ce = {"seed": ctx.seed, "replicas": R, "p": p_val, "grads": grads, "memory": memory}
    return stats.check_identity(err2, theory, counterexample=ce, what="E||∇f - G_t||^2")
