"""``is.variance_without_replacement``: the variance of the average of b clients sampled
uniformly without replacement (seed 000, FedPGD row; seed 003, Theorem 3)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy as sp

from fedtheory import stats
from fedtheory.claims import Claim, ClaimKind, Context, Evidence, all_of
from fedtheory.convex.eso import smallest_eso
from fedtheory.experiments.importance_sampling import variance_curves
from fedtheory.sampling.designs import UniformWithoutReplacement
from fedtheory.sampling.moments import (
    enumerate_moments,
    eso_bound,
    estimator_variance,
    sample_estimator,
)
from fedtheory.symbolic.estimator_variance import derive_variance_without_replacement
from fedtheory.theory.importance_sampling import sq_dev, wor_formula

from ._common import ALPHA, check_identity

CLAIM = Claim(
    id="is.variance_without_replacement",
    family="is",
    seed_ref="000, tables (FedPGD row); 003, Theorem 3 (the (1 - m/n) factor)",
    title="Variance of the average of b clients sampled uniformly without replacement",
    statement=(
        r"S\ \text{uniform among } b\text{-subsets}:\ \mathbb E\Big\|\frac1b\sum_{i\in S} g_i - "
        r"\bar G\Big\|^2 = \frac{n-b}{b(n-1)}\cdot\frac1n\sum_{i=1}^n\|g_i - \bar G\|^2 "
        r"\le \frac{n/b - 1}{n-1}\,\sigma_G^2\ \text{ if } \|g_i - \bar G\|^2 \le \sigma_G^2"
    ),
    kind=ClaimKind.IDENTITY,
    expected="confirmed",
    derivation=r"""
$\frac1b\sum_{i\in S} g_i = \sum_{i\in S} w_i g_i/p_i$ with $w_i = 1/n$, $p_i = b/n$. Counting
subsets gives $p = \binom{n-1}{b-1}/\binom nb = b/n$ and
$p_{ij} = \binom{n-2}{b-2}/\binom nb = \frac{b(b-1)}{n(n-1)}$; then
$\mathbb E\|X\|^2 = \frac1{b^2}\big[p\,S_2 + p_{ij}(T - S_2)\big]$ with $S_2 = \sum_i \|g_i\|^2$,
$T = \|\sum_i g_i\|^2$, minus $\|\bar G\|^2 = T/n^2$, is compared with the seed's formula for
symbolic $n$ and $b$. Also: exactly by enumeration for all $b$ (rationals); with the ESO SDP
($c = 1$ gives $v = \frac{n-b}{n-1}$, and the bound (5) on the centred updates $g_i - \bar G$
reproduces the formula, attained because the variance is shift-invariant when $|S| = b$); by Monte
Carlo (identity two-sided, bound one-sided); and a figure of the variance against $b$, exact curve
and Monte Carlo points, beside independent sampling with $p = b/n$.
""",
)


@CLAIM.check("symbolic")
def _wor_generic_derivation(ctx: Context) -> Evidence:
    """Derive the variance for symbolic n and b (counting subsets), and the sigma_G^2 bound."""
    derived = derive_variance_without_replacement()
    n, b, S2, T, sigma2 = derived.n, derived.b, derived.S2, derived.T, derived.sigma2
    p, q, var = derived.p, derived.q, derived.variance
    spread = S2 - T / n  # sum ||g_i - Gbar||^2
    seed = (n - b) / (b * (n - 1)) * spread / n
    diff = sp.simplify(var - seed)
    factor_diff = sp.simplify((n / b - 1) / (n - 1) - (n - b) / (b * (n - 1)))
    # the bound: (1/n) sum ||g_i - Gbar||^2 <= sigma^2 and the factor is >= 0 for 1 <= b <= n
    bound_gap = sp.simplify((n / b - 1) / (n - 1) * sigma2 - seed.subs(S2, n * sigma2 + T / n))
    ok = diff == 0 and factor_diff == 0 and bound_gap == 0
    return Evidence(
        ok, sp.sstr(sp.factor(var)), sp.sstr(seed),
        detail=(
            f"counting: p_i = {p}, p_ij = {q}; derived variance - seed = {sp.sstr(diff)}; "
            f"(n/b - 1)/(n - 1) - (n - b)/(b(n - 1)) = {factor_diff}; the bound is the identity "
            f"with (1/n) sum ||g_i - Gbar||^2 replaced by its upper bound sigma_G^2 (gap at "
            f"equality {bound_gap}), and the factor is >= 0 for b <= n"
        ),
        counterexample=None if ok else {"difference": str(diff)},
    )


@CLAIM.check("symbolic")
def _wor_exact_enumeration(ctx: Context) -> Evidence:
    """Exact variance over all C(n, b) subsets for every b (rationals) vs the seed's formula."""
    rng = ctx.rng("exact")
    n, d = ctx.size(quick=6, full=10), 3
    g = rng.integers(-5, 6, (n, d))
    bad = []
    for b in range(1, n + 1):
        _, var = enumerate_moments(UniformWithoutReplacement(n, b), [Fraction(1, n)] * n, g,
                                   exact=True)
        seed = wor_formula(Fraction(n), Fraction(b), g.astype(object))
        if var != seed:
            bad.append({"b": b, "exact": str(var), "seed": str(seed)})
    ok = not bad
    return Evidence(
        ok, len(bad), 0,
        detail=f"n = {n}: exact variance equals the formula for b = 1..{n}: {ok}",
        counterexample=None if ok else {"n": n, "g": g.tolist(), "mismatches": bad},
    )


@CLAIM.check("convex")
def _wor_eso_sdp(ctx: Context) -> Evidence:
    """ESO SDP: v = (n - b)/(n - 1) for c = 1; the bound (5) on centred updates equals the seed's
    formula and the exact variance (tight)."""
    rng = ctx.rng("convex")
    n, d = ctx.size(quick=8, full=10), 3
    g = rng.normal(1.0, 1.0, (n, d))
    w = np.full(n, 1.0 / n)
    parts = []
    for b in (1, n // 2, n - 1):
        design = UniformWithoutReplacement(n, b)
        res = smallest_eso(design)
        centred = g - g.mean(axis=0)
        bound = eso_bound(design.p, res.v, w, centred)
        var = estimator_variance(design, w, g)
        seed = float(wor_formula(n, b, g))
        ok = res.certified and abs(bound - seed) <= 1e-6 * max(seed, 1e-12) \
            and abs(var - seed) <= 1e-9 * max(seed, 1e-12)
        parts.append((f"b = {b}", Evidence(
            ok, {"bound_centred": bound, "variance": var}, seed,
            detail=(f"SDP v = {res.v[0]:.6g} (all i; (n-b)/(n-1) = {(n - b) / (n - 1):.6g}); "
                    f"bound on centred updates {bound:.6g}, exact variance {var:.6g}, seed "
                    f"{seed:.6g}"),
            counterexample=None if ok else {"n": n, "b": b, "g": g},
        )))
    return all_of(parts)


@CLAIM.check("monte_carlo")
def _wor_monte_carlo(ctx: Context) -> Evidence:
    """Monte Carlo: the identity (two-sided) and the sigma_G^2 bound (one-sided)."""
    rng = ctx.rng("mc")
    n, d = ctx.size(quick=20, full=100), 4
    b = ctx.size(quick=5, full=10)
    replicas = ctx.size(quick=300_000, full=2_000_000)
    g = rng.normal(0.0, 1.0, (n, d)) + rng.normal(0.0, 1.0, d)
    gbar = g.mean(axis=0)
    X = sample_estimator(UniformWithoutReplacement(n, b), np.full(n, 1.0 / n), g,
                         ctx.rng("draws"), replicas)
    sq = sq_dev(X, gbar)
    seed = float(wor_formula(n, b, g))
    sigma2 = float(np.max(np.sum((g - gbar) ** 2, axis=1)))
    ce = {"n": n, "b": b, "g": g, "seed": ctx.seed}
    ev1 = check_identity(sq, seed, alpha=ALPHA / 2, what="variance", counterexample=ce)
    bound = (n / b - 1) / (n - 1) * sigma2
    ev2 = stats.check_upper_bound(sq, bound, alpha=ALPHA / 2, what="variance <= bound",
                                  counterexample={**ce, "sigma_G^2": sigma2})
    return all_of([("identity", ev1), ("sigma_G^2 bound", ev2)])


@CLAIM.check("figure")
def _wor_figure(ctx: Context) -> Evidence:
    """Variance against b: exact curves (b-of-n, independent with p = b/n) and Monte Carlo
    points; the points must fall in their intervals."""
    from fedtheory.plotting.importance_sampling import plot_variance_curves  # lazily

    rng = ctx.rng("figure")
    n, d = ctx.size(quick=10, full=20), 3
    g = rng.normal(0.0, 0.5, (n, d)) + rng.normal(0.0, 1.0, d)
    data = variance_curves(n, g, ctx.rng("figure draws"),
                           replicas=ctx.size(quick=50_000, full=500_000))
    path = ctx.figure_path("variance_vs_b")
    figures = plot_variance_curves(data, path)
    ok = data.consistent()
    below = bool(np.all(data.exact_without_replacement[:-1] < data.exact_independent[:-1]))
    return Evidence(
        ok, data.mc_without_replacement, data.exact_without_replacement[data.mc_b - 1],
        detail=(f"{len(data.mc_b)} Monte Carlo points per design within their intervals: {ok}; "
                f"b-of-n below independent at every b < n: {below} (the refutation of "
                "is.independent_minimises_variance, visible)"),
        alpha=ALPHA,
        counterexample=None if ok else {"n": n, "g": g, "seed": ctx.seed},
        figures=figures,
    )
