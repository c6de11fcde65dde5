"""``mifa.umifa_unbiased`` (seed 000, setup (iii), note after U-MIFA): U-MIFA's memory row is
unbiased: E[G_t^i | past] = Δ_i.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from fedtheory.claimkit.stated import Stated
from fedtheory.claims import Claim, ClaimKind, Context, Evidence, checks
from fedtheory.symbolic.identity import prove_zero
from fedtheory.symbolic.mifa_aggregation_error import derive_conditional_means

from ._common import exact_row_mean, fmt_frac, identity_evidence, table_round

CLAIM = Claim(
    id="mifa.umifa_unbiased", family="mifa", seed_ref="000, setup (iii), note after U-MIFA",
    title="U-MIFA's memory row is unbiased: E[G_t^i | past] = Δ_i",
    statement=r"\mathbb E\big[G_t^{(i)}\mid\mathcal F_{t-1}\big] = \Delta_i",
    kind=ClaimKind.IDENTITY,
    contract="E[G_t^i | past] = Δ_i for U-MIFA.",
    expected="confirmed",
    # E[G_t^i] = 1 * Δ_i: a scaled mean (a bias of the kind MIFA has) must be told apart
    stated=Stated({"Delta coefficient": 1}),
    derivation=(
        r"U-MIFA's row is $G_t^{(i)} = 1_i\big(\Delta_i/p_i - (1/p_i-1)G_{t-1}^{(i)}\big)"
        r" + (1-1_i)G_{t-1}^{(i)}$; $\mathbb E\,1_i = p_i$ gives $\Delta_i - (1-p_i)G_{t-1}^{(i)}"
        r" + (1-p_i)G_{t-1}^{(i)} = \Delta_i$ for any memory, hence also "
        r"$\mathbb E[G_t\mid\mathcal F_{t-1}] = \frac1n\sum_i\Delta_i$. Conditional on the past "
        r"(the document's $\mathbb E[G_t^{(i)}]$ is over the current round's participation). "
        r"Checks: indicator algebra, exact enumeration ($2^3$ patterns, rational $p_i$), one "
        r"round of the engine's U-MIFA from a fixed table (two-sided)."),
)


@CLAIM.check("symbolic")
def _umifa_unbiased_symbolic(ctx: Context) -> Evidence:
    """Indicator algebra: E[G_t^i] = Δ_i for every client and E[G_t] = mean of Δ_i."""
    d = derive_conditional_means(3)
    c = sp.Rational(ctx.const("Delta coefficient"))
    diff = sp.Matrix([*(d["umifa_mean"][i] - c * d["Delta"][i] for i in range(3)),
                      d["umifa_aggregate_mean"] - c * sum(d["Delta"]) / 3])
    at = {**{d["p"][i]: sp.Rational(1, i + 3) for i in range(3)},
          **{d["Delta"][i]: i + 1 for i in range(3)},
          **{d["memory"][i]: 2 * (i + 1) for i in range(3)}}
    return identity_evidence(
        prove_zero(diff, at), measured=str(d["umifa_mean"]),
        theoretical=str([c * x for x in d["Delta"]]),
        detail=(f"E[G_t^i] = {d['umifa_mean']}; E[G_t] = {d['umifa_aggregate_mean']}; minus "
                f"the stated {c} Δ_i and its mean"),
        counterexample={"p": ["1/3", "1/4", "1/5"], "Delta": [1, 2, 3], "G_prev": [2, 4, 6],
                        "derived_mean": [str(sp.sympify(d["umifa_mean"][i]).subs(at))
                                         for i in range(3)],
                        "stated_mean": [str(c * (i + 1)) for i in range(3)]})


@CLAIM.check("exact", "exact_enumeration")
def _umifa_unbiased_exact(ctx: Context) -> Evidence:
    """All 2^3 patterns, rational p = (1/10, 1/3, 3/4): exact E[G_t^i] == Δ_i."""
    delta, memory, p, mean = exact_row_mean("umifa")
    stated = ctx.const("Delta coefficient") * delta
    same = bool(np.all(mean == stated))
    return Evidence(passed=same, measured=fmt_frac(mean), theoretical=fmt_frac(stated),
                    detail=f"exact mean equals the stated {fmt_frac(stated)}: {same}",
                    counterexample=None if same else {"delta": fmt_frac(delta),
                                                      "memory": fmt_frac(memory),
                                                      "p": [str(x) for x in p],
                                                      "exact_mean": fmt_frac(mean),
                                                      "stated_mean": fmt_frac(stated)})


@CLAIM.check("monte_carlo", "one_round")
def _umifa_unbiased_mc(ctx: Context) -> Evidence:
    """Engine U-MIFA, one round from a fixed table, n = 10, p_i from 0.05 to 0.95."""
    rd = table_round(ctx, "umifa", "umifa")
    samples = np.concatenate([rd.table.reshape(rd.replicas, -1), rd.G], axis=1)
    theory = float(ctx.const("Delta coefficient")) * np.concatenate(
        [rd.delta.ravel(), rd.delta.mean(axis=0)])
    return checks.check_identity(samples, theory, counterexample=rd.counterexample,
                                what="E[G_t^i] (n x d) and E[G_t] (d)")
