"""``is.unbiased``: independent Bernoulli(p_i) participation with 1/p_i weights gives an
unbiased aggregate (seed 000 setup (i); seed 002 eq. (2), Lemma 1; seed 003 Algorithm 3)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import sympy as sp

from fedtheory.claimkit.stated import Stated, exact_like
from fedtheory.claims import Claim, ClaimKind, Context, Evidence
from fedtheory.sampling.designs import IndependentSampling
from fedtheory.sampling.moments import enumerate_moments
from fedtheory.symbolic.estimator_mean import derive_mean_independent_and_arbitrary
from fedtheory.symbolic.identity import prove_zero
from fedtheory.theory.importance_sampling import rational_p

from ._common import (
    ALPHA,
    check_identity,
    identity_evidence,
    independent_average,
    mismatch,
    seed000_instance,
)

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
    contract="with independent 1_i ~ Bernoulli(p_i), G = (1/n) Σ_i 1_i g_i / p_i has E[G] = Ḡ.",
    expected="confirmed",
    # the estimator's normalisation (the 1 of 1/n) and its importance weight 1/p_i, which a
    # careless reader drops (plain FedAvg over the participants)
    stated=Stated({"scale": 1}, factors=("1/p_i",)),
    derivation=r"""
By linearity and $\mathbb E[1_i] = p_i$:
$\mathbb E[G] = \frac1n\sum_i \mathbb E[1_i]\, g_i/p_i = \frac1n\sum_i g_i$. Checked (i)
symbolically: $X = \sum_i 1_i w_i g_i/p_i$ with $w_i = 1/n$ is expanded as a polynomial in the
indicators and $\mathbb E$ is taken by indicator algebra, for symbolic $p_i$ and symbolic vectors
$g_i$ ($n = 4$, $d = 2$), once with the moments of independent sampling and once with those of an
arbitrary sampling (only $\mathbb E[1_i] = p_i$ enters); (ii) exactly, by enumerating all $2^n$
participation patterns with rational $p_i$ and integer $g_i$; (iii) by Monte Carlo (two-sided,
Bonferroni over the $d$ coordinates).
Every check builds the estimator from the statement's parts (its normalisation and the weight
$1/p_i$), so that `--power` can test a mis-stated estimator (weight 1 instead of $1/p_i$: mean
$\frac1n\sum_i p_i g_i$).
""",
)


def _weights(ctx: Context, p: Any, n: int) -> list[Any]:
    """The weights w_i of X = sum_i 1_i w_i g_i / p_i that make the stated estimator
    G = (scale/n) sum_i 1_i h_i g_i, h_i = 1/p_i as stated: w_i = scale/n * h_i * p_i, in the
    arithmetic of p (Fractions or floats)."""
    scale = ctx.const("scale")
    return [exact_like(scale, q) * (exact_like(Fraction(1, n), q) * ctx.factor("1/p_i", 1 / q))
            * q for q in p]


def _stated_estimator(ctx: Context) -> str:
    """The stated estimator as the context states it (its normalisation and weight: what a
    mutant changes), for the ``theoretical`` side of every check."""
    q = sp.Symbol("p_i", positive=True)
    return (f"G = ({ctx.const('scale')}/n) sum_i 1_i g_i * {ctx.factor('1/p_i', 1 / q)}, "
            "E[G] = Gbar")


@CLAIM.check("symbolic")
def _unbiased_indicator_algebra(ctx: Context) -> Evidence:
    """Derive E[G] by indicator algebra (symbolic p_i and g_i, n = 4, d = 2)."""
    n, d = 4, 2
    derived = derive_mean_independent_and_arbitrary(
        n, d, scale=sp.Rational(ctx.const("scale")),
        importance=lambda q: ctx.factor("1/p_i", 1 / q))
    mean_ind, mean_any, gbar = derived.mean_independent, derived.mean_arbitrary, derived.gbar
    # a failure is shown at a concrete instance: p_i = 1/(i + 2), g_ik = i + k + 1 (both
    # derivations' marginal symbols, p<i> and p_<i>, get the same value)
    diff = sp.Matrix.vstack(mean_ind - gbar, mean_any - gbar)
    marginals = [*sp.symbols(f"p0:{n}", positive=True),
                 *(s for s in diff.free_symbols if s.name.startswith("p_"))]
    point = {**{s: sp.Rational(1, int(s.name.lstrip("p_")) + 2) for s in marginals},
             **{sp.Symbol(f"g_{i}{k}", real=True): i + k + 1 for i in range(n)
                for k in range(d)}}
    res = prove_zero(diff, point)
    return identity_evidence(
        res, measured=sp.sstr(mean_ind), theoretical=_stated_estimator(ctx),
        detail=(
            f"E[G] derived from E[1_i] = p_i: {sp.sstr(mean_ind[0])} (first coordinate); "
            f"E[G] - Gbar = {sp.sstr(sp.simplify(mean_ind - gbar))} (independent), "
            f"{sp.sstr(sp.simplify(mean_any - gbar))} (arbitrary sampling with the same "
            "marginals)"),
        counterexample={"design": "independent (and any sampling with marginals p)",
                        **mismatch(mean_ind, gbar, point)},
    )


@CLAIM.check("exact")
def _unbiased_exact_enumeration(ctx: Context) -> Evidence:
    """Exact E[G] over all 2^n participation patterns (rational p_i, integer g_i)."""
    rng = ctx.rng("exact")
    n, d = ctx.size(quick=6, full=10), 3
    p = rational_p(rng, n)
    p[0] = Fraction(1)  # a client that always participates
    g = rng.integers(-5, 6, (n, d))
    design = IndependentSampling(p)
    w = _weights(ctx, p, n)
    mean, _ = enumerate_moments(design, w, g, exact=True)
    gbar = [Fraction(int(x), n) for x in g.sum(axis=0)]
    ok = list(mean) == gbar
    return Evidence(
        ok, [str(x) for x in mean],
        {"Gbar": [str(x) for x in gbar], "estimator": _stated_estimator(ctx)},
        detail=f"exact rational E[G] over {2 ** (n - 1)} patterns equals Gbar: {ok}",
        counterexample=None if ok else {"p": [str(x) for x in p], "g": g.tolist(),
                                        "weights w_i": [str(x) for x in w],
                                        "exact_mean": [str(x) for x in mean]},
    )


@CLAIM.check("monte_carlo")
def _unbiased_monte_carlo(ctx: Context) -> Evidence:
    """Monte Carlo mean of G against Gbar (two-sided, Bonferroni over coordinates)."""
    replicas = ctx.size(quick=200_000, full=2_000_000)
    p, g = seed000_instance(ctx, 1.0, 2.0)
    p[: max(1, len(p) // 10)] = 0.1  # seed 000's quadratic experiment uses p_i = 0.1
    w = np.array(_weights(ctx, p, len(p)))
    G = independent_average(p, g, ctx.rng("draws"), replicas, w=w)
    gbar = g.mean(axis=0)
    ev = check_identity(
        G, gbar, alpha=ALPHA, what="E[G]",
        counterexample={"seed": ctx.seed, "p": p, "g": g, "replicas": replicas},
        scale=float(np.min(np.abs(gbar))),
    )
    ev.theoretical = {"Gbar": gbar, "estimator": _stated_estimator(ctx)}
    return ev
