"""``mifa.umifa_unbiased`` (seed 000, setup (iii), note after U-MIFA): U-MIFA's memory row is
unbiased: E[G_t^i | past] = Δ_i.
"""

from __future__ import annotations

import numpy as np

from fedtheory import stats
from fedtheory.claims import Claim, ClaimKind, Context, Evidence
from fedtheory.experiments import mifa_experiments as mx
from fedtheory.experiments.mifa_runs import (
    mc_state,
)
from fedtheory.symbolic.mifa_aggregation_error import (
    derive_conditional_means,
)
from fedtheory.symbolic.mifa_symbols import (
    is_zero,
)
from fedtheory.theory.mifa import (
    exact_rows,
    exact_state,
    one_round,
)

from ._common import fmt_frac

CLAIM = Claim(
    id="mifa.umifa_unbiased", family="mifa", seed_ref="000, setup (iii), note after U-MIFA",
    title="U-MIFA's memory row is unbiased: E[G_t^i | past] = Δ_i",
    statement=r"\mathbb E\big[G_t^{(i)}\mid\mathcal F_{t-1}\big] = \Delta_i",
    kind=ClaimKind.IDENTITY,
    expected="confirmed",
    derivation=(
        "U-MIFA's row is G_t^i = 1_i(Δ_i/p_i - (1/p_i - 1)G_{t-1}^i) + (1 - 1_i)G_{t-1}^i; "
        "E 1_i = p_i gives Δ_i - (1 - p_i)G_{t-1}^i + (1 - p_i)G_{t-1}^i = Δ_i for any memory, "
        "hence also E[G_t | past] = (1/n) Σ Δ_i. Conditional on the past (the seed's "
        "E[G_t^(i)] is over the current round's participation). Checks: indicator algebra, "
        "exact enumeration (2^3 patterns, rational p_i), one round of the engine's U-MIFA from "
        "a fixed table (two-sided)."),
)


@CLAIM.check("symbolic")
def _umifa_unbiased_symbolic(ctx: Context) -> Evidence:
    """Indicator algebra: E[G_t^i] = Δ_i for every client and E[G_t] = mean of Δ_i."""
    d = derive_conditional_means(3)
    rows = all(is_zero(d["umifa_mean"][i] - d["Delta"][i]) for i in range(3))
    agg = is_zero(d["umifa_aggregate_mean"] - sum(d["Delta"]) / 3)
    return Evidence(passed=rows and agg, measured=str(d["umifa_mean"]),
                    theoretical=str(d["Delta"]),
                    detail=f"E[G_t^i] = {d['umifa_mean']}; E[G_t] = {d['umifa_aggregate_mean']}")


@CLAIM.check("symbolic", "exact_enumeration")
def _umifa_unbiased_exact(ctx: Context) -> Evidence:
    """All 2^3 patterns, rational p = (1/10, 1/3, 3/4): exact E[G_t^i] == Δ_i."""
    delta, memory, p = exact_state(3)
    mean = mx.exact_expectation(lambda m: exact_rows("umifa", m, delta, memory, p), 3, p)
    same = bool(np.all(mean == delta))
    return Evidence(passed=same, measured=fmt_frac(mean), theoretical=fmt_frac(delta),
                    detail=f"exact mean equals Δ: {same}",
                    counterexample=None if same else {"memory": fmt_frac(memory),
                                                      "p": [str(x) for x in p]})


@CLAIM.check("monte_carlo", "one_round")
def _umifa_unbiased_mc(ctx: Context) -> Evidence:
    """Engine U-MIFA, one round from a fixed table, n = 10, p_i from 0.05 to 0.95."""
    delta, memory, R = mc_state(ctx, "umifa")
    p_i = np.linspace(0.05, 0.95, delta.shape[0])
    G, table, _ = one_round("umifa", delta, memory, p_i, R, ctx.rng("umifa"))
    ce = {"seed": ctx.seed, "replicas": R, "p": p_i, "delta": delta, "memory": memory}
    samples = np.concatenate([table.reshape(R, -1), G], axis=1)
    theory = np.concatenate([delta.ravel(), delta.mean(axis=0)])
    return stats.check_identity(samples, theory, counterexample=ce,
                                what="E[G_t^i] (n x d) and E[G_t] (d)")
