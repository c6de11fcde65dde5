"""``ocs.independent_variance``: the aggregation variance of independent sampling is eq. (6)
(seed 002)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import sympy as sp

from fedtheory import stats
from fedtheory.claimkit.stated import Stated
from fedtheory.claims import Claim, ClaimKind, Context, Evidence, checks
from fedtheory.symbolic.ocs_independent_variance import derive_independent_variance

#: The factors of eq. (6)'s per-client term a referee might drop (``--power`` drops each).
_FACTORS = ("w_i^2", "(1 - p_i)", "1/p_i")

CLAIM = Claim(
    id="ocs.independent_variance",
    family="ocs",
    seed_ref="002, eq. (6)",
    title="Independent sampling: the aggregation variance is sum_i w_i^2 (1 - p_i)/p_i ||U_i||^2",
    statement=r"\mathbb E\Big\|\sum_{i\in S}\frac{w_i}{p_i}\mathbf U_i"
              r" - \sum_{i=1}^n w_i\mathbf U_i\Big\|^2"
              r" = \sum_{i=1}^n w_i^2\,\frac{1-p_i}{p_i}\,\|\mathbf U_i\|^2,"
              r"\quad 1_{i\in S}\sim\mathrm{Bernoulli}(p_i)\text{ independent}",
    kind=ClaimKind.IDENTITY,
    contract=(
        "(eq. 6): for independent sampling the aggregation variance is Σ w_i² (1 − p_i)/p_i "
        "‖U_i‖²."
    ),
    expected="confirmed",
    stated=Stated(factors=_FACTORS),
    derivation=r"""
Write the error as $\sum_i (1_i/p_i - 1)\, w_i\mathbf U_i$ and expand its squared norm as a
polynomial in the indicators; independence gives $\mathbb E[1_i] = p_i$,
$\mathbb E[1_i 1_j] = p_i p_j$ ($i \ne j$) and idempotence $1_i^2 = 1_i$. The cross terms vanish
because $\mathbb E[1_i/p_i - 1] = 0$, the diagonal ones give
$\mathbb E[(1_i/p_i - 1)^2] = (1 - p_i)/p_i$. Checked by sympy indicator algebra ($n = 4$,
$d = 2$, everything symbolic), by exact enumeration of all $2^n$ participation patterns with
rationals, and by Monte Carlo. The expectation over the updates in the document's (6) is then linear
and changes nothing; the conditional (fixed $\mathbf U$) form is checked.

Stated factors (dropped by `--power`): $w_i^2$, $1 - p_i$ and $1/p_i$ in the per-client term;
every check computes eq. (6) from them (`_term`), and each drop is caught by all three checks
(the instances have weights below 1 and most $p_i < 1$).
""",
)


def _term(ctx: Context, w: Any, p: Any, norm2: Any) -> Any:
    r"""Eq. (6)'s per-client term :math:`w_i^2 (1 - p_i)/p_i \|U_i\|^2`, from the stated
    factors (sympy, Fraction or numpy arrays)."""
    return (ctx.factor("w_i^2", w**2) * ctx.factor("(1 - p_i)", 1 - p)
            * ctx.factor("1/p_i", 1 / p) * norm2)


@CLAIM.check("symbolic")
def _indicator_algebra(ctx: Context) -> Evidence:
    """sympy: expand ||sum (1_i/p_i - 1) w_i U_i||^2, reduce with E[1_i 1_j] = p_i p_j."""
    n, d = 4, 2
    derived_all = derive_independent_variance(n, d, lambda w, p, u2: _term(ctx, w, p, u2))
    derived, seed = derived_all["derived"], derived_all["seed"]
    diff = derived_all["difference"]
    ce = None
    if diff != 0:  # a concrete instance where the two sides differ
        sym = derived_all["symbols"]
        point = {**{sym["p"][i]: sp.Rational(i + 1, i + 3) for i in range(n)},
                 **{sym["w"][i]: sp.Rational(i + 1, n * (n + 1) // 2) for i in range(n)},
                 **{sym["U"][i, k]: (i + 1) * (k + 1) for i in range(n) for k in range(d)}}
        ce = {"n": n, "d": d, "difference": str(diff),
              "p": [str(point[x]) for x in sym["p"]], "w": [str(point[x]) for x in sym["w"]],
              "U": [[str(point[sym["U"][i, k]]) for k in range(d)] for i in range(n)],
              "derived": str(derived.subs(point)), "stated": str(seed.subs(point))}
    return Evidence(
        passed=diff == 0, measured=str(sp.factor(derived)), theoretical=str(seed),
        detail=f"n={n}, d={d}, all symbolic: derived - seed simplifies to {diff}",
        counterexample=ce,
        proof="sympy: the indicator-algebra expectation minus eq. (6) simplifies to 0 "
              f"(n = {n}, d = {d}, every symbol free)" if diff == 0 else None,
    )


@CLAIM.check("exact")
def _exact_enumeration(ctx: Context) -> Evidence:
    """All 2^n participation patterns, exact rationals: E||G - sum w U||^2 vs eq. (6)."""
    from fedtheory.sampling.designs import IndependentSampling

    rng = ctx.rng("exact")
    n, d = ctx.size(quick=6, full=9), 3
    U = [[Fraction(int(x)) for x in rng.integers(-5, 6, d)] for _ in range(n)]
    wi = [Fraction(int(x)) for x in rng.integers(1, 6, n)]
    w = [x / sum(wi) for x in wi]
    p = [Fraction(int(a), 10) for a in rng.integers(1, 10, n)]
    p[0] = Fraction(1)  # a client that always participates
    masks, probs = IndependentSampling(p).enumerate(exact=True)
    total = Fraction(0)
    for mask, prob in zip(masks, probs, strict=True):
        err = [sum(((Fraction(1) / p[i] if mask[i] else 0) - 1) * w[i] * U[i][k]
                   for i in range(n)) for k in range(d)]
        total += prob * sum(e * e for e in err)
    seed = sum(_term(ctx, w[i], p[i], sum(x * x for x in U[i])) for i in range(n))
    ok = total == seed
    return Evidence(
        passed=ok, measured=str(total), theoretical=str(seed),
        detail=f"n={n}, d={d}: exact expectation over {len(probs)} patterns "
               f"{'equals' if ok else 'differs from'} eq. (6) exactly",
        counterexample=None if ok else {"U": [[str(x) for x in r] for r in U],
                                        "w": [str(x) for x in w], "p": [str(x) for x in p],
                                        "exact_expectation": str(total), "stated": str(seed)},
    )


@CLAIM.check("monte_carlo")
def _bernoulli_masks(ctx: Context) -> Evidence:
    """Monte Carlo: Bernoulli masks (IndependentSampling), replicas vectorised, alpha 1e-6."""
    from fedtheory.sampling.designs import IndependentSampling

    rng = ctx.rng("mc")
    n, d = 12, 5
    replicas = ctx.size(quick=60_000, full=1_000_000)
    U = rng.standard_normal((n, d)) * rng.lognormal(0.0, 1.0, (n, 1))
    w = rng.dirichlet(np.ones(n))
    p = rng.uniform(0.05, 0.95, n)
    masks = IndependentSampling(p).sample(rng, replicas)
    coef = (masks / p - 1.0) * w  # (replicas, n)
    err2 = np.sum((coef @ U) ** 2, axis=1)
    norms2 = np.sum(U**2, axis=1)
    theory = float(np.sum(_term(ctx, w, p, norms2)))
    ev = checks.check_identity(err2, theory, alpha=stats.DEFAULT_ALPHA, what="E||G - sum w U||^2",
                              counterexample={"seed": ctx.seed, "n": n, "d": d, "U": U, "w": w,
                                              "p": p, "replicas": replicas})
    se = ev.data["stderr"]
    wrong = float(np.sum(w**2 / p * norms2))  # the variance without the factor (1 - p_i)
    ev.detail += (f"; power: the interval half-width is {ev.tolerance * se / theory:.2%} of the "
                  f"theory, the alternative sum w^2/p ||U||^2 = {wrong:.4g} lies "
                  f"{abs(wrong - theory) / se:.0f} standard errors away")
    return ev
