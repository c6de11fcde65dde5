"""``is.variance_independent``: the variance of the importance-sampled average under
independent participation (seed 000, error floor; seed 002, eq. (6))."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import sympy as sp

from fedtheory.claimkit.stated import Stated, exact_like
from fedtheory.claims import Claim, ClaimKind, Context, Evidence, all_of
from fedtheory.sampling.designs import IndependentSampling
from fedtheory.sampling.moments import enumerate_moments
from fedtheory.symbolic.estimator_variance import (
    derive_second_moment_equal_p,
    derive_variance_independent,
)
from fedtheory.symbolic.identity import prove_zero
from fedtheory.theory.importance_sampling import rational_p, sq_dev

from ._common import (
    ALPHA,
    check_identity,
    identity_evidence,
    independent_average,
    mismatch,
    seed000_instance,
)

CLAIM = Claim(
    id="is.variance_independent",
    family="is",
    seed_ref="000, first derivation (error floor); 002, eq. (6)",
    title="Variance of the importance-sampled average under independent participation",
    statement=(
        r"\mathbb E\|G - \bar G\|^2 = \frac1{n^2}\sum_{i=1}^n\Big(\frac1{p_i} - 1\Big)\|g_i\|^2;"
        r"\quad p_i \equiv p:\ \mathbb E\|G\|^2 = \|\bar G\|^2 + \frac1{n^2}\Big(\frac1p - 1\Big)"
        r"\sum_{i=1}^n \|g_i\|^2"
    ),
    kind=ClaimKind.IDENTITY,
    contract=(
        "E‖G − Ḡ‖² = (1/n²) Σ_i (1/p_i − 1)‖g_i‖²; for equal p this gives E‖G‖² = ‖Ḡ‖² + "
        "(1/n²)(1/p − 1) Σ‖g_i‖² (seed 000, first derivation)."
    ),
    expected="confirmed",
    # both formulas share their parts: the leading 1 of 1/n^2, the 1 of 1/p_i - 1, and the
    # factors 1/n^2 and (1/p_i - 1) a careless reader might drop
    stated=Stated({"coefficient": 1, "one": 1}, factors=("1/n^2", "1/p_i - 1")),
    derivation=r"""
Expand $\|G\|^2 = \frac1{n^2}\sum_{i,j} 1_i 1_j\, g_i^\top g_j/(p_i p_j)$, use $1_i^2 = 1_i$ and
$\mathbb E[1_i 1_j] = p_i p_j$ ($i \ne j$): $\mathbb E\|G\|^2
= \frac1{n^2}\big[\sum_i \|g_i\|^2/p_i + \sum_{i\ne j} g_i^\top g_j\big]$, and subtract
$\|\bar G\|^2$. Checked symbolically for symbolic $p_i$ and vectors ($n = 3$, $d = 2$) and for
equal $p$ with generic $n$ (sums kept as symbols $S_2 = \sum_i \|g_i\|^2$, $T = \|\sum_i g_i\|^2$,
the off-diagonal sum being $T - S_2$); exactly by enumeration; and by Monte Carlo for both
statements. Every check computes the right-hand sides from the statement's parts (its
constants and factors), so that `--power` can test mis-stated formulas.
""",
)


def _stated_variance(ctx: Context, p: Any, sq: Any, n: Any) -> Any:
    r"""The statement's :math:`\frac{c}{n^2}\sum_i (1/p_i - \text{one})\,\|g_i\|^2` (``sq``:
    the :math:`\|g_i\|^2`), with its constants and factors read from ``ctx``, in the
    arithmetic of ``p`` (sympy, Fractions or floats; ``n`` may be a symbol)."""
    like = p[0]
    c, one = exact_like(ctx.const("coefficient"), like), exact_like(ctx.const("one"), like)
    if isinstance(like, sp.Basic):
        inv_n2 = 1 / sp.sympify(n) ** 2
    elif isinstance(like, (Fraction, int)):
        inv_n2 = Fraction(1, int(n) ** 2)
    else:
        inv_n2 = 1.0 / n**2
    lead = c * ctx.factor("1/n^2", inv_n2)
    return lead * sum(ctx.factor("1/p_i - 1", 1 / q - one) * s for q, s in zip(p, sq, strict=True))


@CLAIM.check("symbolic")
def _var_ind_indicator_algebra(ctx: Context) -> Evidence:
    """Derive E||G - Gbar||^2 (symbolic p_i, n = 3, d = 2) and E||G||^2 (equal p, generic n)."""
    n = 3
    var, g, p = derive_variance_independent(n, 2)
    seed = _stated_variance(ctx, p, [sum(x * x for x in g.row(i)) for i in range(n)], n)
    # equal p, generic n: E over two generic clients i != j gives E[1_i^2], E[1_i 1_j]
    eq = derive_second_moment_equal_p()
    nn, pp, S2, T = eq.n, eq.p, eq.S2, eq.T
    e_sq, e_pair, second = eq.e_sq, eq.e_pair, eq.second
    gbar_sq = T / nn**2
    seed_eq = gbar_sq + _stated_variance(ctx, [pp], [S2], nn)
    # a failure is shown at a concrete instance: p_i = 1/(i + 2), g_ik = i + k + 1 (n = 3)
    gv = [[i + k + 1 for k in range(2)] for i in range(n)]
    point = {**{q: sp.Rational(1, i + 2) for i, q in enumerate(p)},
             **{g[i, k]: gv[i][k] for i in range(n) for k in range(2)}}
    point_eq = {nn: n, pp: sp.Rational(1, 3), S2: sum(x * x for r in gv for x in r),
                T: sum(sum(r[k] for r in gv) ** 2 for k in range(2))}
    var_ev = identity_evidence(
        prove_zero(var - seed, point), measured=sp.sstr(sp.factor(var)),
        theoretical=sp.sstr(seed),
        detail="variance (n = 3, d = 2, symbolic p_i): derived - stated = 0",
        counterexample={"design": "independent sampling", **mismatch(var, seed, point)})
    moment_ev = identity_evidence(
        prove_zero(second - seed_eq, point_eq), measured=sp.sstr(sp.factor(second)),
        theoretical=sp.sstr(seed_eq),
        detail=(f"E||G||^2 (equal p, generic n; E[1_i^2] = {e_sq}, E[1_i 1_j] = {e_pair}): "
                "derived - stated = 0"),
        counterexample={"design": "independent sampling, p = 1/3, g as in the variance part",
                        **mismatch(second, seed_eq, point_eq)})
    return all_of([("variance", var_ev), ("second moment, equal p", moment_ev)])


@CLAIM.check("exact")
def _var_ind_exact_enumeration(ctx: Context) -> Evidence:
    """Exact E||G - Gbar||^2 over all 2^n patterns vs the document's formula (rationals)."""
    rng = ctx.rng("exact")
    n, d = ctx.size(quick=6, full=10), 3
    p = rational_p(rng, n)
    g = rng.integers(-5, 6, (n, d))
    _, var = enumerate_moments(IndependentSampling(p), [Fraction(1, n)] * n, g, exact=True)
    seed = _stated_variance(ctx, p, [int(x) for x in (g * g).sum(axis=1)], n)
    q = Fraction(int(rng.integers(1, 10)), 10)
    ind = IndependentSampling([q] * n)
    mean_q, var_q = enumerate_moments(ind, [Fraction(1, n)] * n, g, exact=True)
    second = var_q + sum(x * x for x in mean_q)
    gbar = [Fraction(int(x), n) for x in g.sum(axis=0)]
    seed_q = sum(x * x for x in gbar) + _stated_variance(ctx, [q], [int((g * g).sum())], n)
    ok = var == seed and second == seed_q
    return Evidence(
        ok, [str(var), str(second)], [str(seed), str(seed_q)],
        detail=(f"exact rationals: variance {var} vs {seed}; E||G||^2 (p = {q}) {second} vs "
                f"{seed_q}"),
        counterexample=None if ok else {"p": [str(x) for x in p], "g": g.tolist(), "q": str(q)},
    )


@CLAIM.check("monte_carlo")
def _var_ind_monte_carlo(ctx: Context) -> Evidence:
    """Monte Carlo E||G - Gbar||^2 (unequal p) and E||G||^2 (equal p) vs the document's formulas."""
    replicas = ctx.size(quick=400_000, full=2_000_000)
    p, g = seed000_instance(ctx, 0.5, 1.0)
    n = len(p)
    gbar = g.mean(axis=0)
    G = independent_average(p, g, ctx.rng("draws"), replicas)
    theory1 = float(_stated_variance(ctx, p, np.sum(g * g, axis=1), n))
    ev1 = check_identity(sq_dev(G, gbar), theory1, alpha=ALPHA / 2, what="E||G-Gbar||^2",
                         counterexample={"seed": ctx.seed, "p": p, "g": g})
    q = 0.1  # seed 000: p = 0.1
    Gq = independent_average(np.full(n, q), g, ctx.rng("draws_q"), replicas)
    theory2 = float(gbar @ gbar + _stated_variance(ctx, [q], [np.sum(g * g)], n))
    ev2 = check_identity(np.einsum("rd,rd->r", Gq, Gq), theory2, alpha=ALPHA / 2,
                         what="E||G||^2", counterexample={"seed": ctx.seed, "p": q, "g": g})
    return all_of([("unequal p", ev1), (f"equal p = {q}", ev2)])
