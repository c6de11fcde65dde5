"""``is.variance_without_replacement``: the variance of the average of b clients sampled
uniformly without replacement (seed 000, FedPGD row; seed 003, Theorem 3)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import sympy as sp

from fedtheory.claimkit.stated import Stated, exact_like
from fedtheory.claims import Claim, ClaimKind, Context, Evidence, Figure, all_of, checks
from fedtheory.convex.eso import smallest_eso
from fedtheory.experiments.importance_sampling import variance_curves
from fedtheory.experiments.search import rationalize
from fedtheory.sampling.designs import UniformWithoutReplacement
from fedtheory.sampling.moments import (
    enumerate_moments,
    eso_bound,
    estimator_variance,
    sample_estimator,
)
from fedtheory.symbolic.estimator_variance import derive_variance_without_replacement
from fedtheory.symbolic.identity import prove_zero
from fedtheory.symbolic.inequality import prove_nonnegative
from fedtheory.theory.importance_sampling import (
    equal_spread_updates,
    hill_climb,
    mean_spread,
    sq_dev,
)

from ._common import ALPHA, check_identity, identity_evidence, mismatch

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
    contract=(
        "(seed 000 tables, seed 003 Theorem 3): sampling b of n clients uniformly without "
        "replacement, (1/b) Σ_{i∈S} g_i has variance (n−b)/(b(n−1)) · (1/n)Σ‖g_i − Ḡ‖², hence ≤ "
        "(n/b − 1)/(n − 1) · σ_G² under ‖g_i − Ḡ‖² ≤ σ_G²."
    ),
    expected="confirmed",
    # the leading 1 of each formula; the finite-population factor (n - b)/(n - 1) of the
    # identity (dropped: the with-replacement variance) and the n/b - 1 of the bound
    stated=Stated({"identity_coefficient": 1, "bound_coefficient": 1},
                  factors=("fpc", "n/b - 1")),
    derivation=r"""
$\frac1b\sum_{i\in S} g_i = \sum_{i\in S} w_i g_i/p_i$ with $w_i = 1/n$, $p_i = b/n$. Counting
subsets gives $p = \binom{n-1}{b-1}/\binom nb = b/n$ and
$p_{ij} = \binom{n-2}{b-2}/\binom nb = \frac{b(b-1)}{n(n-1)}$; then
$\mathbb E\|X\|^2 = \frac1{b^2}\big[p\,S_2 + p_{ij}(T - S_2)\big]$ with $S_2 = \sum_i \|g_i\|^2$,
$T = \|\sum_i g_i\|^2$, minus $\|\bar G\|^2 = T/n^2$, is compared with the document's formula for
symbolic $n$ and $b$. Also: exactly by enumeration for all $b$ (rationals); with the ESO SDP
($c = 1$ gives $v = \frac{n-b}{n-1}$, and the bound (5) on the centred updates $g_i - \bar G$
reproduces the formula, attained because the variance is shift-invariant when $|S| = b$); by Monte
Carlo (identity two-sided, bound one-sided); and a figure of the variance against $b$, exact curve
and Monte Carlo points, beside independent sampling with $p = b/n$.

The bound is an *inequality*: it is proved (bound $-$ variance $\ge 0$ whenever
$\frac1n\sum_i\|g_i - \bar G\|^2 \le \sigma_G^2$, sympy sign argument, with an exact search of
integer $n, b$ for a violation) and tested where it is tight: updates whose deviations from
$\bar G$ all have the same norm, so that $\sigma_G^2 = \max_i\|g_i - \bar G\|^2$ equals their
mean and the bound is attained (ratio 1; exactly by enumeration, and by Monte Carlo). On generic
updates it is loose by the ratio of the mean to the largest squared deviation (about 0.34 on the
Monte Carlo instance). An adversarial search (hill climbing over the updates, exact re-check by
enumeration) maximises variance / bound. Every check computes the statement's side from its
parts (constants, factors), so that `--power` can test mis-stated versions.
""",
)


def _stated_identity(ctx: Context, n: Any, b: Any, spread: Any) -> Any:
    r"""The statement's :math:`c\,\frac{n-b}{n-1}\cdot\frac1b\cdot\text{spread}`
    (``spread`` :math:`= \frac1n\sum_i\|g_i - \bar G\|^2`), read from ``ctx``, in the
    arithmetic of ``spread`` (``n``, ``b`` of the same kind: symbols, Fractions or floats)."""
    c = exact_like(ctx.const("identity_coefficient"), spread)
    return c * ctx.factor("fpc", (n - b) / (n - 1)) / b * spread


def _stated_bound(ctx: Context, n: Any, b: Any, sigma2: Any) -> Any:
    r"""The statement's bound :math:`c\,\frac{n/b - 1}{n-1}\,\sigma_G^2`, read from ``ctx``."""
    c = exact_like(ctx.const("bound_coefficient"), sigma2)
    return c * ctx.factor("n/b - 1", n / b - 1) / (n - 1) * sigma2


@CLAIM.check("symbolic")
def _wor_generic_derivation(ctx: Context) -> Evidence:
    """Derive the variance for symbolic n and b (counting subsets), and the sigma_G^2 bound."""
    derived = derive_variance_without_replacement()
    n, b, S2, T, sigma2 = derived.n, derived.b, derived.S2, derived.T, derived.sigma2
    p, q, var = derived.p, derived.q, derived.variance
    spread = S2 - T / n  # sum ||g_i - Gbar||^2
    seed = _stated_identity(ctx, n, b, spread / n)
    # a failure of the identity is shown at n = 6, b = 2, g_i = (i, i^2) (i = 0..5)
    gv = [(i, i * i) for i in range(6)]
    point = {n: 6, b: 2, S2: sum(x * x + y * y for x, y in gv),
             T: sum(x for x, _ in gv) ** 2 + sum(y for _, y in gv) ** 2}
    parts = [("identity", identity_evidence(
        prove_zero(var - seed, point), measured=sp.sstr(sp.factor(var)),
        theoretical=sp.sstr(seed),
        detail=f"counting: p_i = {p}, p_ij = {q}; derived variance - stated = 0",
        counterexample={"n": 6, "b": 2, "g": [list(r) for r in gv],
                        **mismatch(var, seed, point)}))]
    # the two forms of the factor agree (an identity of the derivation, not of a mutant)
    factor_diff = sp.simplify((n / b - 1) / (n - 1) - (n - b) / (b * (n - 1)))
    text = f"(n/b - 1)/(n - 1) - (n - b)/(b(n - 1)) = {factor_diff}"
    parts.append(("factor forms", Evidence(True, str(factor_diff), "0", text,
                                           proof="sympy: the difference simplifies to 0")
                  if factor_diff == 0 else Evidence.unproven(str(factor_diff), "0", text)))
    # the bound, as an inequality: bound - derived variance >= 0 whenever the mean squared
    # deviation is (1 - u) sigma^2 <= sigma^2; b = 1 + beta, n = b + k (1 <= b < n)
    beta, u = sp.Symbol("beta", nonnegative=True), sp.Symbol("u", nonnegative=True)
    k = sp.Symbol("k", positive=True)
    at = {S2: n * (1 - u) * sigma2 + T / n}
    slack = sp.factor(sp.simplify((_stated_bound(ctx, n, b, sigma2) - var.subs(at)).subs(
        {n: 1 + beta + k, b: 1 + beta})))
    # integer grid only (beta in 0..4, k in 1..5): a violation must be an admissible n, b
    ineq = prove_nonnegative(slack, {beta: (-1, 4), k: (0, 5), u: (0, 1), sigma2: (0, 5)},
                             random_points=0)
    text = (f"the bound as an inequality, bound - variance = {sp.sstr(slack)} >= 0 for "
            f"b = 1 + beta < n = b + k and mean squared deviation (1 - u) sigma_G^2: "
            f"{ineq.status} ({ineq.method})")
    if not ineq.holds:
        inst = ineq.instance
        bb = 1 + Fraction(inst["beta"])
        parts.append(("bound", Evidence(False, str(ineq.value), ">= 0", text, counterexample={
            "part": "bound", "n": str(bb + Fraction(inst["k"])), "b": str(bb),
            "mean squared deviation / sigma_G^2": str(1 - Fraction(inst["u"])),
            "sigma_G^2": inst["sigma_G^2"], "bound_minus_variance": str(ineq.value)})))
    else:
        parts.append(("bound", Evidence(True, sp.sstr(slack), ">= 0", text, proof=ineq.proof,
                                        search=None if ineq.proof else ineq.method)))
    return all_of(parts)


@CLAIM.check("exact")
def _wor_exact_enumeration(ctx: Context) -> Evidence:
    """Exact variance over all C(n, b) subsets for every b (rationals) vs the document's formula."""
    rng = ctx.rng("exact")
    n, d = ctx.size(quick=6, full=10), 3
    g = rng.integers(-5, 6, (n, d))
    bad = []
    for b in range(1, n + 1):
        _, var = enumerate_moments(UniformWithoutReplacement(n, b), [Fraction(1, n)] * n, g,
                                   exact=True)
        seed = _stated_identity(ctx, Fraction(n), Fraction(b), mean_spread(g.astype(object)))
        if var != seed:
            bad.append({"b": b, "exact": str(var), "seed": str(seed)})
    # the bound where it is tight: every ||g_i - Gbar||^2 equal (sigma_G^2 = their mean)
    gt = equal_spread_updates(ctx.rng("tight"), n, d)
    dev = gt * n - gt.sum(axis=0)  # n (g_i - Gbar), exact integers
    sigma2 = Fraction(int(np.max((dev * dev).sum(axis=1))), n * n)
    ratios = []
    for b in range(1, n + 1):
        _, var = enumerate_moments(UniformWithoutReplacement(n, b), [Fraction(1, n)] * n, gt,
                                   exact=True)
        bound = _stated_bound(ctx, Fraction(n), Fraction(b), sigma2)
        if var > bound:
            bad.append({"b": b, "g": gt.tolist(), "sigma_G^2": str(sigma2),
                        "variance": str(var), "bound": str(bound)})
        if bound > 0:
            ratios.append((var / bound, b))
    ratio, b_at = max(ratios)
    ok = not bad
    return Evidence(
        ok, len(bad), 0,
        detail=(f"n = {n}: exact variance equals the stated formula for b = 1..{n}; on updates "
                f"with equal deviations (sigma_G^2 = {sigma2}) variance <= bound for every b, "
                f"largest variance / bound {ratio} (b = {b_at}); all hold: {ok}"),
        counterexample=None if ok else {"n": n, "g": g.tolist(), "mismatches": bad},
        ratio=float(ratio), instance={"n": n, "b": b_at, "g": gt.tolist(),
                                      "sigma_G^2": str(sigma2)},
    )


@CLAIM.check("convex")
def _wor_eso_sdp(ctx: Context) -> Evidence:
    """ESO SDP: v = (n - b)/(n - 1) for c = 1; the bound (5) on centred updates equals the paper's
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
        seed = float(_stated_identity(ctx, float(n), float(b), mean_spread(g)))
        detail = (f"SDP v = {res.v[0]:.6g} (all i; (n-b)/(n-1) = {(n - b) / (n - 1):.6g}); "
                  f"bound on centred updates {bound:.6g}, exact variance {var:.6g}, seed "
                  f"{seed:.6g}")
        # the statement: exact variance (the P-formula, no solver) = the stated formula
        ok = abs(var - seed) <= 1e-9 * max(seed, 1e-12)
        if not ok:
            ev = Evidence(False, {"bound_centred": bound, "variance": var}, seed, detail,
                          counterexample={"n": n, "b": b, "g": g, "variance": var,
                                          "stated": seed})
        elif not res.certified or abs(bound - seed) > 1e-6 * max(seed, 1e-12):
            # the SDP reproducing the formula is the solver's accuracy, not the statement
            ev = Evidence(None, {"bound_centred": bound, "variance": var}, seed,
                          detail + "; the SDP's bound differs from the formula beyond 1e-6 "
                          "(or its certificate failed)", undecided="solver inaccurate")
        else:
            ev = Evidence(True, {"bound_centred": bound, "variance": var}, seed, detail)
        parts.append((f"b = {b}", ev))
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
    seed = float(_stated_identity(ctx, float(n), float(b), mean_spread(g)))
    sigma2 = float(np.max(np.sum((g - gbar) ** 2, axis=1)))
    ce = {"n": n, "b": b, "g": g, "seed": ctx.seed}
    ev1 = check_identity(sq, seed, alpha=ALPHA / 2, what="variance", counterexample=ce)
    bound = float(_stated_bound(ctx, float(n), float(b), sigma2))
    ev2 = checks.check_bound(sq, bound, "upper", alpha=ALPHA / 2, what="variance <= bound",
                             counterexample={**ce, "sigma_G^2": sigma2},
                             instances={"n": n, "b": b, "sigma_G^2": sigma2})
    ev2.detail += (f"; variance / bound {ev2.ratio:.3f}: sigma_G^2 = max_i ||g_i - Gbar||^2 is "
                   f"{sigma2 / float(mean_spread(g)):.2f} x their mean here")
    return all_of([("identity", ev1), ("sigma_G^2 bound", ev2)])


@CLAIM.check("monte_carlo")
def _wor_tight_monte_carlo(ctx: Context) -> Evidence:
    """Monte Carlo of the sigma_G^2 bound where it is tight: every ||g_i - Gbar||^2 equal,
    sigma_G^2 = that value (one-sided; the stated bound equals the variance)."""
    n, d = ctx.size(quick=20, full=100), 4
    b = ctx.size(quick=5, full=10)
    replicas = ctx.size(quick=200_000, full=2_000_000)
    g = equal_spread_updates(ctx.rng("tight"), n, d).astype(float)
    X = sample_estimator(UniformWithoutReplacement(n, b), np.full(n, 1.0 / n), g,
                         ctx.rng("tight draws"), replicas)
    gbar = g.mean(axis=0)
    sq = sq_dev(X, gbar)
    sigma2 = float(np.max(np.sum((g - gbar) ** 2, axis=1)))
    bound = float(_stated_bound(ctx, float(n), float(b), sigma2))
    ev = checks.check_bound(sq, bound, "upper", alpha=ALPHA, what="variance <= bound (tight)",
                            counterexample={"n": n, "b": b, "g": g, "sigma_G^2": sigma2,
                                            "seed": ctx.seed},
                            instances={"n": n, "b": b, "g": g, "sigma_G^2": sigma2})
    ev.detail += f"; variance / bound {ev.ratio:.4f} (1 in expectation: the bound is attained)"
    return ev


def _wor_ratio(ctx: Context, X: np.ndarray, n: int, d: int) -> np.ndarray:
    """max over b of variance / stated bound for a population of updates (rows of X)."""
    g = X.reshape(-1, n, d)
    dev = g - g.mean(axis=1, keepdims=True)
    sq = np.einsum("pid,pid->pi", dev, dev)
    spread, sigma2 = sq.mean(axis=1), sq.max(axis=1)
    out = np.full(len(g), -np.inf)
    for b in range(1, n):
        var = (n - b) / (b * (n - 1)) * spread  # the identity, checked exactly elsewhere
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.fmax(out, var / _stated_bound(ctx, float(n), float(b), sigma2))
    return out


@CLAIM.check("exact")
def _wor_adversarial(ctx: Context) -> Evidence:
    """Adversarial search for variance > bound: hill climbing over the updates (n = 6, d = 2),
    every b; the best point re-checked exactly (rationals, enumeration of all b-subsets)."""
    rng = ctx.rng("adversarial")
    n, d = 6, 2
    population, steps = ctx.size(quick=32, full=128), ctx.size(quick=300, full=1000)
    found, x = hill_climb(lambda X: _wor_ratio(ctx, X, n, d),
                          rng.normal(0.0, 1.0, (population, n * d)), rng, steps)
    g = rationalize((x / np.abs(x).max()).reshape(n, d), 10**4)
    gbar = g.sum(axis=0) / n
    sigma2 = max(sum(v * v for v in row - gbar) for row in g)
    rows = []
    for b in range(1, n):
        _, var = enumerate_moments(UniformWithoutReplacement(n, b), [Fraction(1, n)] * n, g,
                                   exact=True)
        bound = _stated_bound(ctx, Fraction(n), Fraction(b), sigma2)
        rows.append((var / bound if bound > 0 else None, b, var, bound))
    worst = max(rows, key=lambda r: float("inf") if r[0] is None else r[0])
    ok = all(r[0] is not None and r[0] <= 1 for r in rows)
    inst = {"n": n, "b": worst[1], "g": [[str(v) for v in row] for row in g],
            "sigma_G^2": str(sigma2)}
    return Evidence(
        ok, None if worst[0] is None else float(worst[0]), "<= 1",
        detail=(f"hill climbing ({population} x {steps} steps) found variance / bound = "
                f"{found:.9f}; exact re-check at its rationalised point: largest "
                f"{'inf' if worst[0] is None else f'{float(worst[0]):.9f}'} (b = {worst[1]}); "
                f"1 is reached when every ||g_i - Gbar||^2 is the same"),
        counterexample=None if ok else {**inst, "variance": str(worst[2]),
                                        "bound": str(worst[3])},
        ratio=None if worst[0] is None else float(worst[0]), instance=inst,
    )


@CLAIM.check("monte_carlo")
def _wor_figure(ctx: Context) -> Evidence:
    """Variance against b: exact curves (b-of-n, independent with p = b/n) and Monte Carlo
    points; the points must fall in their intervals."""
    rng = ctx.rng("figure")
    n, d = ctx.size(quick=10, full=20), 3
    g = rng.normal(0.0, 0.5, (n, d)) + rng.normal(0.0, 1.0, d)
    data = variance_curves(n, g, ctx.rng("figure draws"),
                           replicas=ctx.size(quick=50_000, full=500_000))
    figures = [Figure("is.variance_curves", "variance_vs_b", {"data": data},
                      caption="The variance of the importance-sampled aggregate against the "
                      "expected number b of participants: b of n without replacement (the "
                      "claim's (1 - m/n) factor) lies below independent sampling with "
                      "p_i = b/n at every b < n (the inset: their ratio, below 1); both "
                      "vanish at b = n (not drawn on the log scale).")]
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
