"""``mifa.biased`` (seed 000, setup (ii), note after MIFA): MIFA's memory row is biased: E[G_t^i |
past] = p_i Δ_i + (1 - p_i) G_{t-1}^i ≠ Δ_i.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sp

from fedtheory.claimkit.stated import Stated
from fedtheory.claims import Claim, ClaimKind, Context, Evidence, all_of, checks
from fedtheory.symbolic.identity import prove_zero
from fedtheory.symbolic.mifa_aggregation_error import derive_conditional_means

from ._common import (
    derivation_evidence,
    exact_row_mean,
    fmt_frac,
    identity_evidence,
    table_round,
    z_reject,
)

CLAIM = Claim(
    id="mifa.biased", family="mifa", seed_ref="000, setup (ii), note after MIFA",
    title="MIFA's memory row is biased: E[G_t^i | past] = p_i Δ_i + (1 - p_i) G_{t-1}^i ≠ Δ_i",
    statement=(r"\mathbb E\big[G_t^{(i)}\mid\mathcal F_{t-1}\big] = p_i\Delta_i"
               r" + (1-p_i)G_{t-1}^{(i)} \neq \Delta_i"),
    kind=ClaimKind.IDENTITY,
    contract="E[G_t^i | past] = p_i Δ_i + (1 − p_i) G_{t−1}^i ≠ Δ_i.",
    expected="confirmed",
    stated=Stated(factors=("p_i", "1-p_i")),
    restatement=(
        "'E[G_t^i] != Delta_i' is read as 'not equal in general': equal only when p_i = 1 "
        "or the memory already equals Delta_i; the expectation is over the current round "
        "given the past."
    ),
    derivation=(
        r"MIFA's row is $G_t^{(i)} = 1_i\Delta_i + (1-1_i)G_{t-1}^{(i)}$. Given the past "
        r"($\Delta_i$ and the table fixed), $\mathbb E\,1_i = p_i$ gives the mean; the bias "
        r"$(1-p_i)(G_{t-1}^{(i)}-\Delta_i)$ vanishes only when $p_i = 1$ or the memory already "
        r"equals $\Delta_i$ (sympy solves both). Reading: '$\neq$' means 'not equal in "
        r"general', i.e. whenever $p_i < 1$ and $G_{t-1}^{(i)} \neq \Delta_i$. Checks: "
        r"indicator algebra (sympy), exact enumeration of the $2^3$ patterns with rational "
        r"$p_i$, and one round of the engine's MIFA from a fixed state (two-sided identity; "
        r"and the hypothesis $\mathbb E\,G_t^{(i)} = \Delta_i$ rejected in every component)."),
)


def _stated_mean(ctx: Context, p: Any, delta: Any, memory: Any) -> Any:
    """The stated E[G_t^i] = p_i Δ_i + (1 - p_i) G_{t-1}^i, as the context states it."""
    return ctx.factor("p_i", p) * delta + ctx.factor("1-p_i", 1 - p) * memory


@CLAIM.check("symbolic")
def _biased_symbolic(ctx: Context) -> Evidence:
    """Indicator algebra: E[G_t^i] for MIFA's row, its bias and when the bias vanishes."""
    d = derive_conditional_means(3)
    target = [_stated_mean(ctx, d["p"][i], d["Delta"][i], d["memory"][i]) for i in range(3)]
    diff = sp.Matrix([d["mifa_mean"][i] - target[i] for i in range(3)])
    # a concrete instance: p = (1/3, 1/4, 1/5), Δ = (1, 2, 3), G_prev = (2, 4, 6)
    at = {**{d["p"][i]: sp.Rational(1, i + 3) for i in range(3)},
          **{d["Delta"][i]: i + 1 for i in range(3)},
          **{d["memory"][i]: 2 * (i + 1) for i in range(3)}}
    mean = identity_evidence(
        prove_zero(diff, at), measured=str(d["mifa_mean"][0]), theoretical=str(target[0]),
        detail=f"E[G_t^i] = {d['mifa_mean'][0]} (i = 1) minus the stated mean",
        counterexample={"p": ["1/3", "1/4", "1/5"], "Delta": [1, 2, 3], "G_prev": [2, 4, 6],
                        "derived_mean": [str(sp.sympify(d["mifa_mean"][i]).subs(at))
                                         for i in range(3)],
                        "stated_mean": [str(sp.sympify(target[i]).subs(at))
                                        for i in range(3)]})
    zero = d["mifa_bias_zero_when"]
    only_trivial = zero["p"] == [1] and zero["Delta"] == [d["memory"][0]]
    bias = derivation_evidence(
        only_trivial, {"p": str(zero["p"]), "Delta": str(zero["Delta"])},
        "p_1 = 1 or Δ_1 = G_prev", f"bias = {d['mifa_bias'][0]}, zero only for p_1 = "
        f"{zero['p']} or Δ_1 = {zero['Delta']}")
    return all_of([("E[G_t^i]", mean), ("bias vanishes only trivially", bias)])


@CLAIM.check("exact", "exact_enumeration")
def _biased_exact(ctx: Context) -> Evidence:
    """All 2^3 patterns, rational p = (1/10, 1/3, 3/4): exact E[G_t^i] against the formula."""
    delta, memory, p, mean = exact_row_mean("mifa")
    pcol = np.array(p, dtype=object)[:, None]
    formula = _stated_mean(ctx, pcol, delta, memory)
    same = bool(np.all(mean == formula))
    biased = bool(np.all(np.any(mean != delta, axis=1)))
    return Evidence(
        passed=same and biased, measured=fmt_frac(mean), theoretical=fmt_frac(formula),
        detail=f"exact mean equals p Δ + (1-p) G_prev: {same}; differs from Δ for every "
               f"client: {biased}",
        counterexample=None if same and biased else {"delta": fmt_frac(delta),
                                                     "memory": fmt_frac(memory),
                                                     "p": [str(x) for x in p],
                                                     "exact_mean": fmt_frac(mean),
                                                     "stated_mean": fmt_frac(formula)},
    )


@CLAIM.check("monte_carlo", "one_round")
def _biased_mc(ctx: Context) -> Evidence:
    """Engine MIFA, one round from a fixed table, n = 10, p_i from 0.05 to 0.95."""
    rd = table_round(ctx, "mifa", "biased")
    table, delta, R, ce = rd.table, rd.delta, rd.replicas, rd.counterexample
    theory = _stated_mean(ctx, rd.p[:, None], delta, rd.memory)
    ev = checks.check_identity(table, theory, counterexample=ce, what="E[G_t^i] (n x d)")
    rejected, zmin, zthr = z_reject(table, delta)
    ev.detail += (f"; E[G_t^i] = Δ_i rejected in all {table[0].size} components: {rejected} "
                  f"(smallest |z| = {zmin:.1f} > {zthr:.2f}; power: the expected |z| of "
                  f"component i is sqrt(R(1-p_i)/p_i) ≥ {np.sqrt(R * 0.05 / 0.95):.0f})")
    if ev.passed and not rejected:
        # "≠ Δ_i" not shown: too few replicas to reject E = Δ_i in some component. That is
        # not evidence that the mean equals Δ_i (no counterexample): undecided
        ev.passed = None
        ev.undecided = "not resolved"
        ev.counterexample = None
    return ev
