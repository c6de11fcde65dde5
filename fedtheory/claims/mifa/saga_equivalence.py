"""``mifa.saga_equivalence`` (seed 000, rates tables (row 'SAGA/U-MIFA')): SAGA and U-MIFA are one
method (the tables' row 'SAGA/U-MIFA').
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy as sp

from fedtheory.claimkit.stated import Erratum
from fedtheory.claims import Claim, ClaimKind, Context, Evidence
from fedtheory.claims.mifa._runs import same_mask_runs
from fedtheory.symbolic.identity import prove_zero
from fedtheory.symbolic.mifa_symbols import indicators, prob_symbols, vec
from fedtheory.symbolic.saga_umifa import derive_saga_umifa
from fedtheory.theory.mifa import exact_saga_umifa

from ._common import identity_evidence

CLAIM = Claim(
    id="mifa.saga_equivalence", family="mifa", seed_ref="000, rates tables (row 'SAGA/U-MIFA')",
    title="SAGA and U-MIFA are one method (the tables' row 'SAGA/U-MIFA')",
    statement=r"\text{SAGA} \equiv \text{U-MIFA}",
    kind=ClaimKind.QUALITATIVE,
    contract=(
        "the seed puts SAGA and U-MIFA in one row. Establish in what exact sense they coincide "
        "(one step? whole trajectories? under which sampling?) and in what sense not."
    ),
    expected="refuted",
    erratum=Erratum(
        "false statement",
        "the rates tables list 'SAGA/U-MIFA' as one method with one rate (both tables): with "
        "the same memory and active set the two share the one-step direction, but U-MIFA "
        "stores Δ_i/p_i - (1/p_i - 1)G_{t-1}^(i) where SAGA stores Δ_i, so their iterates "
        "split (exactly at w_3 on a two-client quadratic) unless every p_i = 1, and U-MIFA's "
        "memory error is multiplied by -(1/p_i - 1) at each participation: it diverges for "
        "p < 1/2 where SAGA converges. The row's rate is SAGA's, not U-MIFA's; the sense in "
        "which they coincide is mifa.saga_equivalence.corrected",
        quote=(r"SAGA/U-MIFA $\mathcal{O}(\frac{1}{Ln^{2/3}})$ "
               r"$\frac{\mathcal{O}(1)(f(x_0) - f(x^*))}{\eta T}$ "
               r"$\mathcal{O}(\frac{n^{2/3}L}{\epsilon})$"),
        location=("000, the rates tables, row 'SAGA/U-MIFA' (quoted from the non-convex "
                  "table; the convex table has the same row)"),
        intended_holds=False),
    finding=(
        'SAGA and U-MIFA share the one-step direction but not the memory update; their '
        'trajectories differ unless p = 1 (mifa.saga_equivalence.corrected).'
    ),
    restatement=(
        "The tables' row 'SAGA/U-MIFA' is read as the identification of the two methods "
        "(one method, one rate): tested as equal one-step directions, equal stored memory "
        "and equal trajectories under the same participation masks."
    ),
    derivation=(
        r"Reading: the tables list 'SAGA/U-MIFA' as one method with one rate, i.e. the two "
        r"algorithms are identified. Given the same memory $\alpha_i$ and the same active set "
        r"with weights $1/p_i$ ($p_i$ the marginal participation probability), SAGA's direction "
        r"$\bar\alpha + \frac1n\sum_{i\in\mathcal A(t)}(\Delta_i - \alpha_i)/p_i$ equals "
        r"U-MIFA's $\frac1n\sum_i G_t^{(i)}$ identically (sympy) — one step coincides. But SAGA "
        r"stores $\alpha_i \leftarrow \Delta_i$ while U-MIFA stores "
        r"$\Delta_i/p_i - (1/p_i - 1)\alpha_i$; the rows differ by "
        r"$1_i(1/p_i - 1)(\Delta_i - \alpha_i)$, so the trajectories coincide only when every "
        r"$p_i = 1$ (then both are full gradient descent). With memory $\nabla f_i(w_0)$ they "
        r"agree up to $w_2$ and split at $w_3$ at the latest; under $\mathrm{Bernoulli}(0.1)$ "
        r"U-MIFA diverges while SAGA converges. Under different sampling laws (SAGA's one "
        r"uniform client vs $\mathrm{Bernoulli}(1/n)$) even the one-step estimators differ in "
        r"variance. MIFA, for its part, is exactly SAG (same memory, direction = table mean); "
        r"SAGA = MIFA's memory + U-MIFA's direction. The exact sense is "
        r"mifa.saga_equivalence.corrected."),
)


@CLAIM.check("symbolic", "one_step_direction")
def _saga_direction(ctx: Context) -> Evidence:
    """Same memory, same active set, weights 1/p_i: SAGA's and U-MIFA's directions agree."""
    d = derive_saga_umifa(3)
    I, ps = indicators(3), prob_symbols(3)
    g, a = vec("g", 3), vec(r"\alpha", 3)
    # clients 1 and 3 active, p = (1/4, 1/3, 1/2), α = (0, 1, -1), Δ = (1, 2, 3)
    at = {**dict(zip(I, (1, 0, 1), strict=True)),
          **dict(zip(ps, (sp.Rational(1, 4), sp.Rational(1, 3), sp.Rational(1, 2)),
                     strict=True)),
          **dict(zip(a, (0, 1, -1), strict=True)), **dict(zip(g, (1, 2, 3), strict=True))}
    return identity_evidence(
        prove_zero(d["direction_difference"], at), measured=str(d["direction_difference"]),
        theoretical="0", detail="G_SAGA - G_U-MIFA (n = 3, any p_i, same memory and active "
        "set)", counterexample={"active": [1, 3], "p": ["1/4", "1/3", "1/2"],
                                "alpha": [0, 1, -1], "Delta": [1, 2, 3]})


@CLAIM.check("symbolic", "memory_update")
def _saga_memory(ctx: Context) -> Evidence:
    """The stored rows: U-MIFA's minus SAGA's = 1_i(1/p_i - 1)(Δ_i - α_i) ≠ 0."""
    d = derive_saga_umifa(3)
    diff = d["memory_difference"][0]
    ok = diff == 0
    return Evidence(passed=ok, measured=str(diff), theoretical="0",
                    detail=f"row difference {diff}: zero only if p_i = 1 or α_i = Δ_i",
                    counterexample=None if ok else {
                        "row_difference": str(diff),
                        "instance": "p = 1/2, α_1 = 0, Δ_1 = 1, client 1 active: SAGA stores 1,"
                                    " U-MIFA stores 2"})


@CLAIM.check("exact", "trajectories")
def _saga_trajectories(ctx: Context) -> Evidence:
    """Exact 1-D instance (it decides) and engine runs with the same masks (reported): where
    the iterates split."""
    ex = exact_saga_umifa(4, Fraction(1, 2), Fraction(1, 2), [Fraction(1), Fraction(-1)],
                           Fraction(1), [[1, 0]])
    split = next((t for t, (a, b) in enumerate(zip(ex["saga"], ex["umifa"], strict=True))
                  if a != b), None)
    T_val = ctx.size(quick=300, full=2000)
    R = ctx.size(quick=50, full=200)
    runs = same_mask_runs(ctx, 0.1, T_val, R, "p01")
    gs, gu = runs["saga"]["grad_norm2"], runs["umifa"]["grad_norm2"]
    first = int(np.argmax(~np.isclose(gs, gu, rtol=1e-12, atol=0).all(axis=1)))
    full = same_mask_runs(ctx, 1.0, 50, 4, "p1")
    same_full = bool(np.array_equal(full["saga"]["x"], full["umifa"]["x"]))
    umifa_final = gu[-1]
    finite = np.isfinite(umifa_final)
    umifa_mean = float(np.mean(umifa_final[finite])) if finite.any() else float("inf")
    detail = (f"exact (n = 2, p = 1/2, η = 1/2, c = ±1, w_0 = 1, client 1 active every round): "
              f"SAGA w = {[str(x) for x in ex['saga']]}, U-MIFA w = "
              f"{[str(x) for x in ex['umifa']]}: first differ at w_{split}. Engine, n = 10, "
              f"p = 0.1, η = 0.02, same masks: ||∇f||^2 first differs at round {first}; after "
              f"{T_val} rounds (from ||∇f(w_0)||^2 = {np.mean(gs[0]):.3g}) SAGA E||∇f||^2 = "
              f"{np.mean(gs[-1]):.3g}, U-MIFA {umifa_mean:.3g} ({int(np.sum(~finite))} runs "
              f"overflowed). p = 1: identical iterates after 50 rounds: {same_full}")
    return Evidence(passed=False if split is not None else True,
                    measured={"split_round_exact": split, "split_round_engine": first},
                    theoretical="identical trajectories", detail=detail,
                    counterexample=None if split is None else {
                        "n": 2, "f_i": "(w - c_i)^2/2, c = (1, -1)", "p": "1/2", "eta": "1/2",
                        "w0": 1, "memory": "∇f_i(w_0)", "masks": "client 1 only, every round",
                        "saga_w": [str(x) for x in ex["saga"]],
                        "umifa_w": [str(x) for x in ex["umifa"]]})
