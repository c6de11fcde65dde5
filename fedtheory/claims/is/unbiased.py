"""``is.unbiased``: independent Bernoulli(p_i) participation with 1/p_i weights gives an
unbiased aggregate (seed 000 setup (i); seed 002 eq. (2), Lemma 1; seed 003 Algorithm 3)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy as sp

from fedtheory.claims import Claim, ClaimKind, Context, Evidence
from fedtheory.sampling.designs import IndependentSampling
from fedtheory.sampling.moments import enumerate_moments
from fedtheory.symbolic.estimator_mean import derive_mean_independent_and_arbitrary
from fedtheory.theory.importance_sampling import rational_p

from ._common import ALPHA, check_identity, independent_average, seed000_instance

CLAIM = Claim(
    id="is.unbiased",
    family="is",
    seed_ref="000, setup (i); 002, eq. (2) and Lemma 1; 003, Algorithm 3",
    title="Independent Bernoulli(p_i) participation with 1/p_i weights is unbiased",
    statement=(
        r"1_i \sim \mathrm{Bernoulli}(p_i)\text{ independent},\quad "
        r"G = \frac1n\sum_{i=1}^n \frac{1_i\, g_i}{p_i}\ \Longrightarrow\ "
        r"\mathbb E[G] = \bar G = \frac1n \sum_{i=1}^n g_i"
    ),
    kind=ClaimKind.IDENTITY,
    expected="confirmed",
    derivation=r"""
By linearity and $\mathbb E[1_i] = p_i$:
$\mathbb E[G] = \frac1n\sum_i \mathbb E[1_i]\, g_i/p_i = \frac1n\sum_i g_i$. Checked (i)
symbolically: $X = \sum_i 1_i w_i g_i/p_i$ with $w_i = 1/n$ is expanded as a polynomial in the
indicators and $\mathbb E$ is taken by indicator algebra, for symbolic $p_i$ and symbolic vectors
$g_i$ ($n = 4$, $d = 2$), once with the moments of independent sampling and once with those of an
arbitrary sampling (only $\mathbb E[1_i] = p_i$ enters); (ii) exactly, by enumerating all $2^n$
participation patterns with rational $p_i$ and integer $g_i$; (iii) by Monte Carlo (two-sided,
Bonferroni over the $d$ coordinates).
""",
)


@CLAIM.check("symbolic")
def _unbiased_indicator_algebra(ctx: Context) -> Evidence:
    """Derive E[G] by indicator algebra (symbolic p_i and g_i, n = 4, d = 2)."""
    d = 2
    derived = derive_mean_independent_and_arbitrary(4, d)
    mean_ind, mean_any, gbar = derived.mean_independent, derived.mean_arbitrary, derived.gbar
    diff_ind = sp.simplify(mean_ind - gbar)
    diff_any = sp.simplify(mean_any - gbar)
    ok = diff_ind == sp.zeros(1, d) and diff_any == sp.zeros(1, d)
    return Evidence(
        ok, sp.sstr(mean_ind), sp.sstr(gbar),
        detail=(
            f"E[G] derived from E[1_i] = p_i: {sp.sstr(mean_ind[0])} (first coordinate); "
            f"E[G] - Gbar = {sp.sstr(diff_ind)} (independent), {sp.sstr(diff_any)} "
            "(arbitrary sampling with the same marginals)"
        ),
        counterexample=None if ok else {"difference": sp.sstr(diff_ind)},
    )


@CLAIM.check("symbolic")
def _unbiased_exact_enumeration(ctx: Context) -> Evidence:
    """Exact E[G] over all 2^n participation patterns (rational p_i, integer g_i)."""
    rng = ctx.rng("exact")
    n, d = ctx.size(quick=6, full=10), 3
    p = rational_p(rng, n)
    p[0] = Fraction(1)  # a client that always participates
    g = rng.integers(-5, 6, (n, d))
    design = IndependentSampling(p)
    w = [Fraction(1, n)] * n
    mean, _ = enumerate_moments(design, w, g, exact=True)
    gbar = [Fraction(int(x), n) for x in g.sum(axis=0)]
    ok = list(mean) == gbar
    return Evidence(
        ok, [str(x) for x in mean], [str(x) for x in gbar],
        detail=f"exact rational E[G] over {2 ** (n - 1)} patterns equals Gbar: {ok}",
        counterexample=None if ok else {"p": [str(x) for x in p], "g": g.tolist()},
    )


@CLAIM.check("monte_carlo")
def _unbiased_monte_carlo(ctx: Context) -> Evidence:
    """Monte Carlo mean of G against Gbar (two-sided, Bonferroni over coordinates)."""
    replicas = ctx.size(quick=200_000, full=2_000_000)
    p, g = seed000_instance(ctx, 1.0, 2.0)
    p[: max(1, len(p) // 10)] = 0.1  # seed 000's quadratic experiment uses p_i = 0.1
    G = independent_average(p, g, ctx.rng("draws"), replicas)
    gbar = g.mean(axis=0)
    return check_identity(
        G, gbar, alpha=ALPHA, what="E[G]",
        counterexample={"seed": ctx.seed, "p": p, "g": g, "replicas": replicas},
        scale=float(np.min(np.abs(gbar))),
    )
