"""``mifa.umifa_error`` (seed 000, 'Analyzing E||∇f(w_t) - G_t||^2 for U-MIFA'): U-MIFA: E||∇f -
G_t||^2 = (1-p)/(n^2 p) Σ||∇f_i - G_{t-1}^i||^2.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import sympy as sp

from fedtheory.claimkit.stated import Stated
from fedtheory.claims import Claim, ClaimKind, Context, Evidence, all_of, checks
from fedtheory.symbolic.identity import prove_zero
from fedtheory.symbolic.mifa_aggregation_error import derive_error_terms
from fedtheory.symbolic.mifa_symbols import is_zero, p

from ._common import (
    derivation_evidence,
    error_round,
    exact_error_case,
    identity_evidence,
)

CLAIM = Claim(
    id="mifa.umifa_error", family="mifa",
    seed_ref="000, 'Analyzing E||∇f(w_t) - G_t||^2 for U-MIFA'",
    title="U-MIFA: E||∇f - G_t||^2 = (1-p)/(n^2 p) Σ||∇f_i - G_{t-1}^i||^2",
    statement=(r"\mathbb E\|\nabla f(w_t)-G_t\|^2 = \frac{1-p}{n^2p}\sum_{i=1}^n"
               r"\|\nabla f_i(w_t)-G_{t-1}^{(i)}\|^2"),
    kind=ClaimKind.IDENTITY,
    contract="E‖∇f − G_t‖² = (1−p)/(n²p) Σ‖∇f_i − G_{t−1}^i‖².",
    expected="confirmed",
    # the factors of (1-p)/(n^2 p): dropping 1/p gives MIFA's diagonal term, dropping one 1/n
    # the document's last line without its 1/n
    stated=Stated(factors=("1-p", "1/p", "1/n")),
    derivation=(
        r"Exact gradients, equal $p$, expectation over the current round given the past. "
        r"$\nabla f_i - G_t^{(i)} = (1 - 1_i/p)e_i$ (zero mean, independent over $i$), so the "
        r"cross terms vanish (the document's second line, "
        r"$\mathbb E\big[\frac1{n^2}\sum_i\|\nabla f_i - G_t^{(i)}\|^2\big]$) and "
        r"$\mathbb E(1 - 1_i/p)^2 = (1-p)/p$. Note: it is $1/(np)$ times MIFA's bound, so "
        r"smaller than MIFA's bound only when $np > 1$ ($n = 10$, $p = 0.01$ makes it 10 times "
        r"larger). The same algebra for one client's stored error gives "
        r"$\mathbb E(e_i^+)^2 = \frac{1-p}p e_i^2$: U-MIFA's memory error grows when $p < 1/2$ "
        r"(see mifa.zero_floor). Checks: sympy $n = 2..5$, exact enumeration, one engine round "
        r"(two-sided)."),
)


def _stated(ctx: Context, e: np.ndarray, p_: Any) -> Any:
    """The seed's value for memory errors ``e`` (n, d), as the context states it; exact in
    rationals for object arrays with a Fraction ``p_``, symbolic for a sympy ``p_``."""
    n = e.shape[0]
    inv_n = Fraction(1, n) if isinstance(p_, Fraction) else sp.Rational(1, n) if isinstance(
        p_, sp.Basic) else 1 / n
    return (ctx.factor("1-p", 1 - p_) * ctx.factor("1/p", 1 / p_) * ctx.factor("1/n", inv_n)
            * inv_n * np.sum(e**2))


@CLAIM.check("symbolic")
def _umifa_error_symbolic(ctx: Context) -> Evidence:
    """Indicator algebra for n = 2..5: the exact value equals the stated one (a failure shown
    at a concrete instance), and the document's diagonal step (an identity of its derivation: a
    failure leaves the check unproven) holds."""
    parts = []
    for n in range(2, 6):
        d = derive_error_terms(n)
        stated = _stated(ctx, np.array(d["e"], dtype=object)[:, None], p)
        at = {p: sp.Rational(1, 10), **{x: i + 1 for i, x in enumerate(d["e"])}}
        parts.append((f"n = {n}", identity_evidence(
            prove_zero(d["umifa_exact"] - stated, at), measured=str(d["umifa_exact"]),
            theoretical=str(stated), detail="E||∇f - G_t||^2 minus the stated (1-p)/(n^2 p) "
            "Σ e_i^2", counterexample={"n": n, "p": "1/10", "e": list(range(1, n + 1)),
                                       "d": 1, "derived_E": str(d["umifa_exact"].subs(at)),
                                       "stated": str(sp.sympify(stated).subs(at))})))
        parts.append((f"n = {n}: the document's diagonal step", derivation_evidence(
            is_zero(d["umifa_diagonal_seed_step"] - d["umifa_seed"]),
            str(d["umifa_diagonal_seed_step"]), str(d["umifa_seed"]),
            "E[(1/n^2)Σ||∇f_i - G_t^i||^2] = the document's value")))
    ev = all_of(parts)
    d3 = derive_error_terms(3)
    ev.measured, ev.theoretical = str(d3["umifa_exact"]), str(d3["umifa_seed"])
    return ev


@CLAIM.check("exact", "exact_enumeration")
def _umifa_error_exact(ctx: Context) -> Evidence:
    """All 2^3 patterns with p = 1/10 (rational, d = 2): exact equality."""
    e, p_val, value, ce = exact_error_case("umifa")
    theory = _stated(ctx, e, p_val)
    ok = value == theory
    return Evidence(passed=ok, measured=str(value), theoretical=str(theory),
                    detail=f"exact E = {value}, seed {theory}",
                    counterexample=None if ok else {**ce, "exact_E": str(value),
                                                    "stated": str(theory)})


@CLAIM.check("monte_carlo", "one_round")
def _umifa_error_mc(ctx: Context) -> Evidence:
    """Engine U-MIFA, n = 10, p = 0.1: E||∇f - G_t||^2 two-sided against the document's value."""
    p_val = 0.1
    err2, e, ce = error_round(ctx, "umifa", "umifa_error", p_val)
    return checks.check_identity(err2, _stated(ctx, e, p_val), counterexample=ce,
                                what="E||∇f - G_t||^2")
