r"""Family ``is``: unbiased importance-sampled aggregation (seeds 000, 002, 003).

The object of every claim here is the importance-sampled aggregate of seed 002 (eq. (2),
Lemma 1),

.. math:: X = \sum_{i \in S} \frac{w_i \zeta_i}{p_i},

with a random participating set :math:`S` (marginals :math:`p`, pair matrix
:math:`\mathbf P`), weights :math:`w_i` and client vectors :math:`\zeta_i`; seed 000's
:math:`G = \frac1n \sum_i 1_i g_i / p_i` is the case :math:`w_i = 1/n`, :math:`\zeta_i = g_i`
under independent sampling, and seed 000/003's :math:`\frac1b \sum_{i\in S} g_i` the case
:math:`w_i = 1/n`, :math:`p_i = b/n` under :math:`b`-of-:math:`n` sampling.

The evidence: symbolic derivations by indicator algebra (:mod:`fedtheory.symbolic.indicators`),
exact rational enumeration of every participation pattern for small :math:`n`
(:func:`fedtheory.sampling.moments.enumerate_moments`), the ESO semidefinite program
(:mod:`fedtheory.convex.eso`), and vectorised Monte Carlo
(:func:`fedtheory.sampling.moments.sample_estimator`) judged by :mod:`fedtheory.stats` at
:math:`\alpha = 10^{-6}` per check (split by Bonferroni over the sub-tests of a check).

Finding: ``is.independent_minimises_variance`` (seed 002, after Algorithm 1) is refuted: the
left-hand side of (5) is *not* minimised by independent sampling; e.g. :math:`n = 2`,
:math:`p = (\tfrac12, \tfrac12)`, :math:`w = (\tfrac12, \tfrac12)`, :math:`\zeta_1 = \zeta_2 = 1`:
sampling one client uniformly gives variance 0, independent sampling 1/2. What is true is
registered as ``is.independent_minimises_variance.corrected``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import sympy as sp

from fedtheory import stats
from fedtheory.claims import Claim, ClaimKind, Context, Evidence, register
from fedtheory.claims.evidence import all_of
from fedtheory.convex.eso import eso_min_eigenvalue, smallest_eso
from fedtheory.sampling.designs import (
    ExplicitSampling,
    IndependentSampling,
    SamplingDesign,
    UniformWithoutReplacement,
)
from fedtheory.sampling.moments import (
    bound_coefficients,
    enumerate_moments,
    eso_bound,
    estimator_variance,
    importance_vectors,
    sample_estimator,
    variance_formula,
)
from fedtheory.symbolic.indicators import (
    derive_estimator_moments,
    expectation,
    independent_moments,
    indicator_symbols,
    pairwise_moments,
    sign_expectation,
    sign_symbols,
    symbolic_pair_matrix,
    uniform_without_replacement_moments,
    vector_symbols,
)

__all__ = [
    "ARBITRARY",
    "MINIMISES",
    "MINIMISES_CORRECTED",
    "UNBIASED",
    "VARIANCE_INDEPENDENT",
    "WITHOUT_REPLACEMENT",
    "VarianceCurves",
    "plot_variance_curves",
    "variance_curves",
]

ALPHA = stats.DEFAULT_ALPHA


# -- helpers -----------------------------------------------------------------------------------

def _power_note(ev: Evidence, theory: float) -> str:
    """The relative half-width of the interval: the smallest relative deviation detectable."""
    se = ev.data.get("stderr")
    if se is None or ev.tolerance is None or theory == 0:
        return ""
    half = float(np.max(np.asarray(se))) * ev.tolerance
    return f"; detects relative deviations above {half / abs(theory):.2%}"


def _rational_p(rng: np.random.Generator, n: int, denominator: int = 10) -> list[Fraction]:
    return [Fraction(int(k), denominator) for k in rng.integers(1, denominator, n)]


def _random_explicit(rng: np.random.Generator, n: int, k: int | None = None) -> ExplicitSampling:
    """A random explicit design on ``n`` clients: ``k`` random subsets plus the full set (so it
    is proper), with rational probabilities."""
    k = k or 2 * n
    rows = rng.random((k, n)) < 0.5
    rows = np.vstack([rows, np.ones((1, n), dtype=bool)])
    weights = rng.integers(1, 10, rows.shape[0])
    total = int(weights.sum())
    return ExplicitSampling(rows, [Fraction(int(x), total) for x in weights])


def _three_designs(rng: np.random.Generator, n: int) -> list[tuple[str, SamplingDesign]]:
    return [
        ("independent", IndependentSampling(_rational_p(rng, n))),
        (f"{max(1, n // 2)}-of-{n} without replacement",
         UniformWithoutReplacement(n, max(1, n // 2))),
        ("explicit", _random_explicit(rng, n)),
    ]


def _rational_w(rng: np.random.Generator, n: int) -> list[Fraction]:
    """Non-negative rational weights summing to 1 (the seed's assumption on w)."""
    raw = rng.integers(1, 6, n)
    return [Fraction(int(x), int(raw.sum())) for x in raw]


def _floats(xs: Any) -> np.ndarray:
    return np.array([float(x) for x in xs], dtype=float)


def _sq_dev(X: np.ndarray, mean: np.ndarray) -> np.ndarray:
    D = X - mean
    return np.einsum("rd,rd->r", D, D)


def _design_desc(design: SamplingDesign) -> dict[str, Any]:
    if isinstance(design, IndependentSampling):
        return {"design": "independent", "p": [str(x) for x in design.p_exact]}
    if isinstance(design, UniformWithoutReplacement):
        return {"design": "uniform without replacement", "n": design.n, "b": design.b}
    masks, probs = design.enumerate(exact=True)
    return {
        "design": "explicit",
        "subsets": [tuple(int(i) for i in np.flatnonzero(r)) for r in masks],
        "probs": [str(q) for q in probs],
        "n": design.n,
    }


# =============================================================================================
# is.unbiased
# =============================================================================================

UNBIASED = register(Claim(
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
    derivation=(
        "Linearity and E[1_i] = p_i: E[G] = (1/n) sum_i E[1_i] g_i / p_i = (1/n) sum_i g_i. "
        "Checked (i) symbolically: X = sum_i 1_i w_i g_i/p_i with w_i = 1/n is expanded as a "
        "polynomial in the indicators and E is taken by indicator algebra, for symbolic p_i and "
        "symbolic vectors g_i (n = 4, d = 2), once with the moments of independent sampling and "
        "once with those of an arbitrary sampling (only E[1_i] = p_i enters); (ii) exactly, by "
        "enumerating all 2^n participation patterns with rational p_i and integer g_i; (iii) by "
        "Monte Carlo (two-sided, Bonferroni over the d coordinates)."
    ),
))


@UNBIASED.check("symbolic")
def _unbiased_indicator_algebra(ctx: Context) -> Evidence:
    """Derive E[G] by indicator algebra (symbolic p_i and g_i, n = 4, d = 2)."""
    n, d = 4, 2
    g = vector_symbols("g", n, d)
    p = list(sp.symbols(f"p0:{n}", positive=True))
    w = [sp.Rational(1, n)] * n
    gbar = sp.Matrix([[sum(g[i, k] for i in range(n)) / n for k in range(d)]])
    mean_ind, _ = derive_estimator_moments(w, g, p, independent_moments(p))
    _, P = symbolic_pair_matrix(n)
    mean_any, _ = derive_estimator_moments(w, g, list(P.diagonal()), pairwise_moments(P))
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


@UNBIASED.check("symbolic")
def _unbiased_exact_enumeration(ctx: Context) -> Evidence:
    """Exact E[G] over all 2^n participation patterns (rational p_i, integer g_i)."""
    rng = ctx.rng("exact")
    n, d = ctx.size(quick=6, full=10), 3
    p = _rational_p(rng, n)
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


@UNBIASED.check("monte_carlo")
def _unbiased_monte_carlo(ctx: Context) -> Evidence:
    """Monte Carlo mean of G against Gbar (two-sided, Bonferroni over coordinates)."""
    rng = ctx.rng("mc")
    n, d = ctx.size(quick=10, full=100), 4
    replicas = ctx.size(quick=200_000, full=2_000_000)
    p = rng.uniform(0.05, 1.0, n)
    p[: max(1, n // 10)] = 0.1  # seed 000's quadratic experiment uses p_i = 0.1
    g = rng.normal(1.0, 2.0, (n, d))
    design = IndependentSampling(p)
    w = np.full(n, 1.0 / n)
    G = sample_estimator(design, w, g, ctx.rng("draws"), replicas)
    gbar = g.mean(axis=0)
    ev = stats.check_identity(
        G, gbar, alpha=ALPHA, what="E[G]",
        counterexample={"seed": ctx.seed, "p": p, "g": g, "replicas": replicas},
    )
    ev.detail += _power_note(ev, float(np.min(np.abs(gbar))))
    return ev


# =============================================================================================
# is.variance_independent
# =============================================================================================

VARIANCE_INDEPENDENT = register(Claim(
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
    expected="confirmed",
    derivation=(
        "Expand ||G||^2 = (1/n^2) sum_{i,j} 1_i 1_j g_i.g_j/(p_i p_j), use 1_i^2 = 1_i and "
        "E[1_i 1_j] = p_i p_j (i != j): E||G||^2 = (1/n^2)[sum_i ||g_i||^2/p_i + sum_{i!=j} "
        "g_i.g_j] and subtract ||Gbar||^2. Checked symbolically for symbolic p_i and vectors "
        "(n = 3, d = 2) and for equal p with generic n (sums kept as symbols S2 = sum ||g_i||^2, "
        "T = ||sum g_i||^2, the off-diagonal sum being T - S2); exactly by enumeration; and by "
        "Monte Carlo for both statements."
    ),
))


def _seed000_variance(p: Any, g: Any) -> Any:
    """The seed's right-hand side (1/n^2) sum (1/p_i - 1)||g_i||^2 (any numeric type)."""
    n = len(p)
    return sum((1 / p[i] - 1) * sum(x * x for x in g[i]) for i in range(n)) / n**2


@VARIANCE_INDEPENDENT.check("symbolic")
def _var_ind_indicator_algebra(ctx: Context) -> Evidence:
    """Derive E||G - Gbar||^2 (symbolic p_i, n = 3, d = 2) and E||G||^2 (equal p, generic n)."""
    n, d = 3, 2
    g = vector_symbols("g", n, d)
    p = list(sp.symbols(f"p0:{n}", positive=True))
    _, var = derive_estimator_moments([sp.Rational(1, n)] * n, g, p, independent_moments(p))
    seed = _seed000_variance(p, [list(g.row(i)) for i in range(n)])
    diff1 = sp.simplify(var - seed)
    # equal p, generic n: E over two generic clients i != j gives E[1_i^2], E[1_i 1_j]
    nn, pp, S2, T = sp.symbols("n p S_2 T", positive=True)
    one = indicator_symbols(2)
    m = independent_moments([pp, pp])
    e_sq = expectation(one[0] ** 2, one, m)  # E[1_i^2] = E[1_i]
    e_pair = expectation(one[0] * one[1], one, m)
    second = (e_sq * S2 + e_pair * (T - S2)) / (nn * pp) ** 2  # E||G||^2
    gbar_sq = T / nn**2
    seed_eq = gbar_sq + (1 / pp - 1) * S2 / nn**2
    diff2 = sp.simplify(second - seed_eq)
    ok = diff1 == 0 and diff2 == 0
    return Evidence(
        ok, {"variance": sp.sstr(sp.factor(var)), "second_moment": sp.sstr(sp.factor(second))},
        {"variance": sp.sstr(seed), "second_moment": sp.sstr(seed_eq)},
        detail=(
            f"derived - seed: {sp.sstr(diff1)} (variance, n=3, d=2, symbolic p_i); "
            f"{sp.sstr(diff2)} (E||G||^2, equal p, generic n; E[1_i^2] = {e_sq}, "
            f"E[1_i 1_j] = {e_pair})"
        ),
        counterexample=None if ok else {"variance_diff": str(diff1), "moment_diff": str(diff2)},
    )


@VARIANCE_INDEPENDENT.check("symbolic")
def _var_ind_exact_enumeration(ctx: Context) -> Evidence:
    """Exact E||G - Gbar||^2 over all 2^n patterns vs the seed's formula (rationals)."""
    rng = ctx.rng("exact")
    n, d = ctx.size(quick=6, full=10), 3
    p = _rational_p(rng, n)
    g = rng.integers(-5, 6, (n, d))
    _, var = enumerate_moments(IndependentSampling(p), [Fraction(1, n)] * n, g, exact=True)
    seed = _seed000_variance(p, g.tolist())
    q = Fraction(int(rng.integers(1, 10)), 10)
    ind = IndependentSampling([q] * n)
    mean_q, var_q = enumerate_moments(ind, [Fraction(1, n)] * n, g, exact=True)
    second = var_q + sum(x * x for x in mean_q)
    gbar = [Fraction(int(x), n) for x in g.sum(axis=0)]
    seed_q = sum(x * x for x in gbar) + (1 / q - 1) * int((g * g).sum()) / n**2
    ok = var == seed and second == seed_q
    return Evidence(
        ok, [str(var), str(second)], [str(seed), str(seed_q)],
        detail=(f"exact rationals: variance {var} vs {seed}; E||G||^2 (p = {q}) {second} vs "
                f"{seed_q}"),
        counterexample=None if ok else {"p": [str(x) for x in p], "g": g.tolist(), "q": str(q)},
    )


@VARIANCE_INDEPENDENT.check("monte_carlo")
def _var_ind_monte_carlo(ctx: Context) -> Evidence:
    """Monte Carlo E||G - Gbar||^2 (unequal p) and E||G||^2 (equal p) vs the seed's formulas."""
    rng = ctx.rng("mc")
    n, d = ctx.size(quick=10, full=100), 4
    replicas = ctx.size(quick=400_000, full=2_000_000)
    p = rng.uniform(0.05, 1.0, n)
    g = rng.normal(0.5, 1.0, (n, d))
    w = np.full(n, 1.0 / n)
    gbar = g.mean(axis=0)
    G = sample_estimator(IndependentSampling(p), w, g, ctx.rng("draws"), replicas)
    theory1 = float(_seed000_variance(p, g))
    ev1 = stats.check_identity(_sq_dev(G, gbar), theory1, alpha=ALPHA / 2, what="E||G-Gbar||^2",
                               counterexample={"seed": ctx.seed, "p": p, "g": g})
    ev1.detail += _power_note(ev1, theory1)
    q = 0.1  # seed 000: p = 0.1
    Gq = sample_estimator(IndependentSampling(np.full(n, q)), w, g, ctx.rng("draws_q"), replicas)
    theory2 = float(gbar @ gbar + (1 / q - 1) * np.sum(g * g) / n**2)
    ev2 = stats.check_identity(np.einsum("rd,rd->r", Gq, Gq), theory2, alpha=ALPHA / 2,
                               what="E||G||^2", counterexample={"seed": ctx.seed, "p": q, "g": g})
    ev2.detail += _power_note(ev2, theory2)
    return all_of([("unequal p", ev1), (f"equal p = {q}", ev2)])


# =============================================================================================
# is.variance_arbitrary_sampling
# =============================================================================================

ARBITRARY = register(Claim(
    id="is.variance_arbitrary_sampling",
    family="is",
    seed_ref="002, Lemma 1 (eqs. (4), (5)) and its proof in Appendix A (eq. (30))",
    title="Exact variance and ESO bound of the importance-sampled aggregate, any sampling",
    statement=(
        r"X = \sum_{i\in S}\frac{w_i\zeta_i}{p_i}:\ \mathbb E X = \sum_i w_i\zeta_i,\ "
        r"\mathbb E\|X - \mathbb EX\|^2 = e^\top\big((\mathbf P - pp^\top)\circ A^\top A\big)e,"
        r"\ A = [w_i\zeta_i/p_i]_i;\ \ \mathbf P - pp^\top \preceq \mathrm{Diag}(p\circ v)"
        r"\Rightarrow \mathbb E\|X-\mathbb EX\|^2 \le \sum_i w_i^2\frac{v_i}{p_i}\|\zeta_i\|^2"
        r"\text{ and } v_i \ge 1 - p_i;\ \text{independent: equality with } v_i = 1 - p_i"
    ),
    kind=ClaimKind.IDENTITY,
    expected="confirmed",
    derivation=(
        "Appendix A: E X by E[1_i] = p_i; E||X||^2 = sum_{ij} P_ij a_i.a_j by E[1_i 1_j] = P_ij "
        "(with P_ii = p_i from 1_i^2 = 1_i), minus ||E X||^2 = sum_{ij} p_i p_j a_i.a_j; the "
        "bound because (Diag(p v) - (P - pp^T)) o A^T A is PSD (Schur product theorem); "
        "v_i >= 1 - p_i from the diagonal of (4); for independent sampling P - pp^T = "
        "Diag(p(1-p)). Checked on independent, b-of-n without replacement and an explicit "
        "distribution over subsets: symbolically (symbolic P, n = 3, d = 2), exactly by "
        "enumeration (rationals), with the ESO SDP (cvxpy/Clarabel; smallest v for c = 1 and "
        "for c = the bound's coefficients, certificates), and by Monte Carlo (mean two-sided, "
        "variance two-sided, bound one-sided). The convex comparisons allow the solver's "
        "accuracy only (duality gap and v = 1 - p to 1e-6; the returned v is shifted to be "
        "exactly feasible, so bound >= variance is compared to rounding, 1e-9 relative)."
    ),
))


@ARBITRARY.check("symbolic")
def _arbitrary_indicator_algebra(ctx: Context) -> Evidence:
    """Derive E X and E||X - EX||^2 for a symbolic P (n = 3, d = 2); diagonal of (4);
    independent sampling gives P - pp^T = Diag(p(1-p))."""
    n, d = 3, 2
    zeta = vector_symbols("zeta", n, d)
    w = list(sp.symbols(f"w0:{n}", real=True))
    p, P = symbolic_pair_matrix(n)
    mean, var = derive_estimator_moments(w, zeta, list(p), pairwise_moments(P))
    target_mean = sum((w[i] * zeta.row(i) for i in range(n)), sp.zeros(1, d))
    # the seed's Hadamard form: A has columns a_i = w_i zeta_i / p_i
    A = sp.Matrix.hstack(*[(w[i] / p[i]) * zeta.row(i).T for i in range(n)])
    e = sp.ones(n, 1)
    hadamard = ((P - p * p.T).multiply_elementwise(A.T * A))
    seed_var = (e.T * hadamard * e)[0, 0]
    d_mean = sp.simplify(mean - target_mean)
    d_var = sp.simplify(var - seed_var)
    # diagonal of Diag(p o v) - (P - pp^T): P_ii = E[1_i^2] = E[1_i] = p_i by idempotence
    one = indicator_symbols(n)
    v = sp.symbols(f"v0:{n}", real=True)
    diag_ok = True
    lower = []
    for i in range(n):
        e_sq = expectation(one[i] ** 2, one, pairwise_moments(P))
        entry = sp.expand(p[i] * v[i] - (e_sq - p[i] ** 2))
        # linear in v_i with slope p_i > 0: entry >= 0 iff v_i >= its root
        slope, (root,) = sp.diff(entry, v[i]), sp.solve(entry, v[i])
        lower.append(f"v_{i} >= {sp.sstr(sp.simplify(root))}")
        diag_ok &= bool(slope.is_positive) and sp.simplify(root - (1 - p[i])) == 0
    # independent sampling: E[1_i 1_j] = p_i p_j
    mom = independent_moments(list(p))
    C = sp.Matrix(n, n, lambda i, j: expectation(one[i] * one[j], one, mom) - p[i] * p[j])
    indep_ok = sp.simplify(C - sp.diag(*[p[i] * (1 - p[i]) for i in range(n)])) == sp.zeros(n, n)
    ok = d_mean == sp.zeros(1, d) and d_var == 0 and diag_ok and indep_ok
    return Evidence(
        ok, {"mean_diff": sp.sstr(d_mean), "var_diff": sp.sstr(d_var)}, 0,
        detail=(
            f"derived E X - sum w_i zeta_i = {sp.sstr(d_mean)}; derived variance - "
            f"e^T((P - pp^T) o A^T A) e = {sp.sstr(d_var)}; diagonal of (4) gives "
            f"{', '.join(lower)}; independent: P - pp^T = Diag(p(1-p)): {indep_ok}"
        ),
        counterexample=None if ok else {"mean_diff": str(d_mean), "var_diff": str(d_var)},
    )


@ARBITRARY.check("symbolic")
def _arbitrary_exact_enumeration(ctx: Context) -> Evidence:
    """Exact mean and variance by enumeration vs the P-formula, on the three designs; equality
    with v = 1 - p for independent sampling (rationals)."""
    rng = ctx.rng("exact")
    n, d = ctx.size(quick=5, full=8), 3
    parts = []
    for name, design in _three_designs(rng, n):
        w = _rational_w(rng, n)
        zeta = rng.integers(-5, 6, (n, d))
        mean, var = enumerate_moments(design, w, zeta, exact=True)
        target = [sum(w[i] * int(zeta[i, k]) for i in range(n)) for k in range(d)]
        A = (np.array(w, dtype=object) / design.p_exact)[:, None] * zeta.astype(object)
        formula = variance_formula(design.P_exact, A)
        ok = list(mean) == target and var == formula
        meas, theo = [str(var)], [str(formula)]
        det = (f"E X exact: {list(mean) == target}; variance {var} = formula {formula}: "
               f"{var == formula}")
        if isinstance(design, IndependentSampling):
            p = design.p_exact
            bound = sum(w[i] ** 2 * (1 - p[i]) / p[i] * int(zeta[i] @ zeta[i]) for i in range(n))
            ok = ok and bound == var
            det += f"; bound with v = 1 - p: {bound} (equality: {bound == var})"
        ce = None if ok else {**_design_desc(design), "w": [str(x) for x in w],
                              "zeta": zeta.tolist()}
        parts.append((name, Evidence(ok, meas, theo, det, counterexample=ce)))
    return all_of(parts)


@ARBITRARY.check("convex")
def _arbitrary_eso_sdp(ctx: Context) -> Evidence:
    """ESO SDP (cvxpy/Clarabel) on the three designs: certificate, v >= 1 - p, bound >= exact
    variance, equality for independent sampling with v = 1 - p."""
    rng = ctx.rng("convex")
    n, d = ctx.size(quick=6, full=10), 3
    parts = []
    for name, design in _three_designs(rng, n):
        w = _floats(_rational_w(rng, n))
        zeta = rng.normal(size=(n, d))
        p = design.p
        var = estimator_variance(design, w, zeta)
        problems = []
        feasible_vs = {}
        for cname, c in (("c = 1", None), ("c = bound coefficients",
                                           bound_coefficients(p, w, zeta))):
            res = smallest_eso(design, c)
            feasible_vs[cname] = res.v
            if not res.certified:
                problems.append(f"{cname}: certificate failed (lambda_min {res.min_eigenvalue})")
            if res.duality_gap > 1e-6 * max(1.0, abs(res.objective)):
                problems.append(f"{cname}: duality gap {res.duality_gap:.3g}")
        # a feasible vector of a different kind: v_i = lambda_max(P - pp^T) / p_i
        lam = float(np.linalg.eigvalsh(design.P - np.outer(p, p))[-1])
        feasible_vs["lambda_max / p"] = lam / p
        bounds = {}
        for vname, v in feasible_vs.items():
            lam_min = eso_min_eigenvalue(design, v)
            if lam_min < -1e-12:
                problems.append(f"{vname}: not feasible (lambda_min {lam_min:.3g})")
            if np.any(v < 1 - p - 1e-7):
                i = int(np.argmin(v - (1 - p)))
                problems.append(f"{vname}: v_{i} = {v[i]:.6g} < 1 - p_{i} = {1 - p[i]:.6g}")
            b = eso_bound(p, v, w, zeta)
            bounds[vname] = b
            if b < var - 1e-9 * max(1.0, var):
                problems.append(f"{vname}: bound {b:.6g} < variance {var:.6g}")
        det = (f"variance {var:.6g}; bounds " + ", ".join(f"{k}: {b:.6g}" for k, b in
                                                           bounds.items()))
        if isinstance(design, IndependentSampling):
            # v itself is compared for c = 1 (every v_i carries weight 1); with the bound's
            # coefficients a v_i of small weight c_i is only determined to ~ gap / c_i, so
            # there the optimal value is compared (the bound equals the variance)
            v_one = feasible_vs["c = 1"]
            if not np.allclose(v_one, 1 - p, rtol=0, atol=1e-6):
                problems.append(f"independent: SDP v (c = 1) = {v_one} != 1 - p = {1 - p}")
            if abs(bounds["c = bound coefficients"] - var) > 1e-6 * max(1.0, var):
                problems.append("independent: optimal bound != variance")
            det += ("; SDP v (c = 1) = 1 - p (max deviation "
                    f"{np.max(np.abs(v_one - (1 - p))):.1g}) and optimal bound = variance")
        if isinstance(design, UniformWithoutReplacement):
            target = (design.n - design.b) / (design.n - 1)
            if not np.allclose(feasible_vs["c = 1"], target, atol=1e-6):
                problems.append(f"b-of-n: SDP v (c = 1) != (n - b)/(n - 1) = {target}")
            det += f"; SDP v (c = 1) = (n - b)/(n - 1) = {target:.6g}"
        ok = not problems
        parts.append((name, Evidence(
            ok, bounds, var, det + ("; " + "; ".join(problems) if problems else ""),
            counterexample=None if ok else {**_design_desc(design), "w": w, "zeta": zeta,
                                            "problems": problems},
        )))
    return all_of(parts)


@ARBITRARY.check("monte_carlo")
def _arbitrary_monte_carlo(ctx: Context) -> Evidence:
    """Monte Carlo on the three designs: mean (two-sided), variance (two-sided), ESO bound with
    the SDP's v (one-sided); alpha split over the nine tests."""
    rng = ctx.rng("mc")
    n, d = ctx.size(quick=6, full=10), 3
    replicas = ctx.size(quick=300_000, full=2_000_000)
    a = ALPHA / 9
    parts = []
    for name, design in _three_designs(rng, n):
        w = _floats(_rational_w(rng, n))
        zeta = rng.normal(0.5, 1.0, (n, d))
        X = sample_estimator(design, w, zeta, ctx.rng(f"draws {name}"), replicas)
        target = w @ zeta
        var = estimator_variance(design, w, zeta)
        ce = {**_design_desc(design), "w": w, "zeta": zeta, "seed": ctx.seed}
        ev_m = stats.check_identity(X, target, alpha=a, what="E X", counterexample=ce)
        sq = _sq_dev(X, target)
        ev_v = stats.check_identity(sq, var, alpha=a, what="variance", counterexample=ce)
        ev_v.detail += _power_note(ev_v, var)
        v = smallest_eso(design, bound_coefficients(design.p, w, zeta)).v
        bound = eso_bound(design.p, v, w, zeta)
        ev_b = stats.check_upper_bound(sq, bound, alpha=a, what="variance <= bound (5)",
                                       counterexample={**ce, "v": v})
        parts += [(f"{name}: mean", ev_m), (f"{name}: variance", ev_v), (f"{name}: bound", ev_b)]
    return all_of(parts)


# =============================================================================================
# is.independent_minimises_variance  (refuted)
# =============================================================================================

MINIMISES = register(Claim(
    id="is.independent_minimises_variance",
    family="is",
    seed_ref="002, the paragraph after Algorithm 1 (and Appendix B, first sentence)",
    title="Among all samplings with marginals p_i, independent sampling minimises the LHS of (5)",
    statement=(
        r"\forall S \text{ with } \Pr(i\in S) = p_i:\quad "
        r"\mathbb E\Big\|\sum_{i\in S_{\rm ind}}\frac{w_i\zeta_i}{p_i} - \tilde\zeta\Big\|^2 \le "
        r"\mathbb E\Big\|\sum_{i\in S}\frac{w_i\zeta_i}{p_i} - \tilde\zeta\Big\|^2"
        r"\quad\text{for all } w, \zeta"
    ),
    kind=ClaimKind.QUALITATIVE,
    expected="refuted",
    finding=(
        'False for the left side of (5): with n = 2, p = (1/2, 1/2) and equal updates, sampling '
        'exactly one client has variance 0 < 1/2 (independent sampling). True for the bound (5) '
        'and for the worst case over update directions '
        '(is.independent_minimises_variance.corrected).'
    ),
    derivation=(
        "Read as printed: for given marginals p and any vectors zeta_i (and weights w), the "
        "variance (LHS of (5)) under independent sampling is at most that under any other "
        "sampling with the same marginals. By eq. (30), Var_S - Var_ind = sum_{i != j} (P_ij - "
        "p_i p_j) a_i.a_j: a quadratic form in a with zero diagonal (P_ii = p_i for every "
        "design), hence of trace zero and indefinite unless P_ij = p_i p_j for all i != j. So "
        "the statement fails for EVERY sampling that is not pairwise independent: some zeta "
        "makes its variance strictly smaller. Smallest instance: n = 2, p = (1/2, 1/2), "
        "w = (1/2, 1/2), zeta_1 = zeta_2 = 1 (d = 1): one client sampled uniformly gives X = 1 "
        "always (variance 0), independent sampling gives variance 1/2. The seed's own reasons "
        "((a) independent sampling admits v = 1 - p, the smallest possible; (b) (5) is an "
        "equality for it) prove optimality for the RIGHT-hand side of (5) only; Remark 2 of the "
        "seed itself concedes that optimality for the left-hand side 'in the full general case' "
        "is not obtained. What is true is `is.independent_minimises_variance.corrected`."
    ),
))

#: The smallest counterexample (n = 2, d = 1), in exact rationals.
SMALLEST_COUNTEREXAMPLE: dict[str, Any] = {
    "n": 2,
    "p": ["1/2", "1/2"],
    "w": ["1/2", "1/2"],
    "zeta": [[1], [1]],
    "design": "uniform without replacement, b = 1 (P_12 = 0)",
    "variance_design": "0",
    "variance_independent": "1/2",
}


@MINIMISES.check("symbolic")
def _minimises_two_clients(ctx: Context) -> Evidence:
    """n = 2 by indicator algebra: Var_S - Var_ind = 2 (p_12 - p_1 p_2) a_1 a_2, negative for
    suitable zeta unless p_12 = p_1 p_2; evaluated at the smallest counterexample."""
    p0, p1 = sp.symbols("p_0 p_1", positive=True)
    p01 = sp.Symbol("p_01", nonnegative=True)
    z = vector_symbols("zeta", 2, 1)
    w = [sp.Rational(1, 2)] * 2
    P = sp.Matrix([[p0, p01], [p01, p1]])
    _, var_s = derive_estimator_moments(w, z, [p0, p1], pairwise_moments(P))
    _, var_i = derive_estimator_moments(w, z, [p0, p1], independent_moments([p0, p1]))
    diff = sp.factor(sp.simplify(var_s - var_i))
    # the statement needs diff >= 0 for all zeta: its coefficient of zeta_0 zeta_1 must vanish
    coeff = sp.Poly(sp.expand(diff), z[0, 0], z[1, 0]).coeff_monomial(z[0, 0] * z[1, 0])
    needs = sp.solve(sp.Eq(coeff, 0), p01)
    at = {p0: sp.Rational(1, 2), p1: sp.Rational(1, 2), p01: 0, z[0, 0]: 1, z[1, 0]: 1}
    vs, vi = var_s.subs(at), var_i.subs(at)
    ok = bool(vi <= vs)
    return Evidence(
        ok, {"Var_S": str(vs), "Var_ind": str(vi)}, "Var_ind <= Var_S",
        detail=(
            f"Var_S - Var_ind = {sp.sstr(diff)}; non-negative for all zeta only if p_01 = "
            f"{[sp.sstr(s) for s in needs]} (pairwise independence); at p = (1/2, 1/2), "
            f"p_01 = 0 (one of two sampled uniformly), w = (1/2, 1/2), zeta = (1, 1): "
            f"Var_S = {vs} < Var_ind = {vi}"
        ),
        counterexample=None if ok else dict(SMALLEST_COUNTEREXAMPLE),
    )


def _equal_marginal_designs(n: int, b: int) -> list[tuple[str, SamplingDesign]]:
    """Designs whose marginals all equal b/n: b-of-n, a random cyclic block, all-or-nothing."""
    blocks = [tuple((s + k) % n for k in range(b)) for s in range(n)]
    return [
        (f"{b}-of-{n} without replacement", UniformWithoutReplacement(n, b)),
        (f"cyclic block of {b}", ExplicitSampling(blocks, [Fraction(1, n)] * n, n=n)),
        ("all or nothing", ExplicitSampling([tuple(range(n)), ()],
                                            [Fraction(b, n), 1 - Fraction(b, n)], n=n)),
    ]


@MINIMISES.check("symbolic")
def _minimises_exact_search(ctx: Context) -> Evidence:
    """Exact (rational) search over designs with equal marginals: every non-pairwise-independent
    design beats independent sampling for some zeta (worst direction from the zero-diagonal
    form); smallest case reported."""
    rows = []
    first_ce = None
    for n in range(2, ctx.size(quick=5, full=7)):
        for b in range(1, n):
            q = Fraction(b, n)
            ind = IndependentSampling([q] * n)
            for name, design in _equal_marginal_designs(n, b):
                # the off-diagonal form sum_{i != j}(P_ij - p_i p_j) a_i a_j; its most negative
                # direction (float eigenvector), then everything re-evaluated exactly
                M = design.P - np.outer(design.p, design.p)
                np.fill_diagonal(M, 0.0)
                lam, vec = np.linalg.eigh(M)
                if lam[0] >= -1e-12:
                    rows.append((n, b, name, None))
                    continue
                a = np.rint(vec[:, 0] / np.max(np.abs(vec[:, 0])) * 4).astype(int)
                w = [Fraction(1, n)] * n
                zeta = [[Fraction(int(a[i])) * q * n] for i in range(n)]  # a_i = w_i zeta_i / p
                _, vs = enumerate_moments(design, w, zeta, exact=True)
                _, vi = enumerate_moments(ind, w, zeta, exact=True)
                rows.append((n, b, name, (vs, vi)))
                if vs < vi and first_ce is None:
                    first_ce = {"n": n, "b": b, **_design_desc(design), "p": str(q),
                                "w": f"1/{n} each", "zeta": [[str(z[0])] for z in zeta],
                                "variance_design": str(vs), "variance_independent": str(vi)}
    beaten = [r for r in rows if r[3] is not None and r[3][0] < r[3][1]]
    ok = not beaten
    summary = ", ".join(f"n={n} b={b} {name}: {vs} < {vi}" for n, b, name, (vs, vi) in beaten[:4])
    return Evidence(
        ok, len(beaten), 0,
        detail=(
            f"{len(beaten)} of {len(rows)} designs with equal marginals p = b/n have an exact "
            f"zeta with smaller variance than independent sampling (e.g. {summary})"
        ),
        counterexample=None if ok else first_ce,
    )


@MINIMISES.check("convex")
def _minimises_sdp_worst_direction(ctx: Context) -> Evidence:
    """SDP over Gram matrices: min <M, G> s.t. G PSD, trace G = 1, with M = P - pp^T minus its
    diagonal; a negative optimum is a zeta for which the design beats independent sampling."""
    import cvxpy as cp

    rng = ctx.rng("convex")
    n = ctx.size(quick=6, full=10)
    b = n // 2
    designs = _equal_marginal_designs(n, b) + [("random explicit", _random_explicit(rng, n))]
    parts = []
    for name, design in designs:
        p = design.p
        M = design.P - np.outer(p, p)
        np.fill_diagonal(M, 0.0)
        G = cp.Variable((n, n), PSD=True)
        prob = cp.Problem(cp.Minimize(cp.trace(M @ G)), [cp.trace(G) == 1])
        prob.solve(solver=cp.CLARABEL)
        if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            raise RuntimeError(f"worst-direction SDP for {name}: status {prob.status}")
        lam, vec = np.linalg.eigh((G.value + G.value.T) / 2)
        a = vec[:, -1] * np.sqrt(max(lam[-1], 0.0))  # leading factor of the optimal Gram
        w = np.full(n, 1.0 / n)
        zeta = (a * p / w)[:, None]
        vs = estimator_variance(design, w, zeta)
        vi = estimator_variance(IndependentSampling(p), w, zeta)
        ok = bool(vi <= vs + 1e-12)
        parts.append((name, Evidence(
            ok, {"Var_S": vs, "Var_ind": vi, "sdp_value": prob.value}, "Var_ind <= Var_S",
            detail=(f"SDP optimum {prob.value:.4g}; at its zeta Var_S = {vs:.4g}, "
                    f"Var_ind = {vi:.4g}"),
            counterexample=None if ok else {**_design_desc(design), "w": w, "zeta": zeta,
                                            "variance_design": vs, "variance_independent": vi},
        )))
    return all_of(parts)


@MINIMISES.check("monte_carlo")
def _minimises_monte_carlo(ctx: Context) -> Evidence:
    """Seed-sized instance (n = 10 clients, p = 0.1, updates sharing a common direction):
    E||X_ind - EX||^2 - E||X_S - EX||^2 <= 0 is tested one-sided for b-of-n sampling."""
    rng = ctx.rng("mc")
    n, b, d = 10, 1, 5  # seed 000: 10 clients, p_i = 0.1
    replicas = ctx.size(quick=200_000, full=2_000_000)
    zeta = rng.normal(0.0, 0.3, (n, d)) + rng.normal(0.0, 1.0, d)  # common direction + spread
    w = np.full(n, 1.0 / n)
    ind, wor = IndependentSampling(np.full(n, b / n)), UniformWithoutReplacement(n, b)
    target = w @ zeta
    xi = sample_estimator(ind, w, zeta, ctx.rng("ind"), replicas)
    xs = sample_estimator(wor, w, zeta, ctx.rng("wor"), replicas)
    diff = _sq_dev(xi, target) - _sq_dev(xs, target)
    ev = stats.check_upper_bound(
        diff, 0.0, alpha=ALPHA, what="Var_ind - Var_S",
        counterexample={"n": n, "b": b, "p": b / n, "w": w, "zeta": zeta, "seed": ctx.seed,
                        "exact_variance_independent": estimator_variance(ind, w, zeta),
                        "exact_variance_without_replacement": estimator_variance(wor, w, zeta)},
    )
    ev.detail += (f"; exact: Var_ind = {estimator_variance(ind, w, zeta):.6g}, Var_S (1-of-10) "
                  f"= {estimator_variance(wor, w, zeta):.6g}")
    return ev


# =============================================================================================
# is.independent_minimises_variance.corrected
# =============================================================================================

MINIMISES_CORRECTED = register(Claim(
    id="is.independent_minimises_variance.corrected",
    family="is",
    seed_ref="002, Lemma 1, the paragraph after Algorithm 1, Remark 2 (corrected statement)",
    title="Independent sampling minimises the bound (5) and the worst-case variance over "
          "update directions, among samplings with marginals p",
    statement=(
        r"\forall S\text{ with marginals } p,\ \forall w,\zeta:\ "
        r"\text{(a) } \min_{v:\,(4)} \sum_i w_i^2\frac{v_i}{p_i}\|\zeta_i\|^2 \ \ge\ "
        r"\sum_i w_i^2\frac{1-p_i}{p_i}\|\zeta_i\|^2 = \mathrm{Var}_{\rm ind}(\zeta);\ "
        r"\text{(b) } \mathbb E_{\varepsilon}\,\mathrm{Var}_S(\varepsilon\circ\zeta) = "
        r"\mathrm{Var}_{\rm ind}(\zeta),\ \text{so}\ \max_{\varepsilon\in\{\pm1\}^n}"
        r"\mathrm{Var}_S(\varepsilon\circ\zeta) \ge \mathrm{Var}_{\rm ind}(\zeta);\ "
        r"\text{(c) } \mathrm{Var}_S \ge \mathrm{Var}_{\rm ind}\ \forall\zeta \iff "
        r"p_{ij} = p_ip_j\ \forall i\ne j"
    ),
    kind=ClaimKind.LOWER_BOUND,
    expected="confirmed",
    derivation=(
        "(a) Any v satisfying (4) has v_i >= 1 - p_i (diagonal), and the bound's coefficients "
        "w_i^2 ||zeta_i||^2 / p_i are >= 0, so the bound is >= its value at v = 1 - p, which is "
        "the exact variance of independent sampling; i.e. independent sampling minimises the "
        "RIGHT-hand side of (5) (best ESO bound), which is what the seed's reasons (a), (b) "
        "prove. (b) With independent Rademacher signs eps_i, E[eps_i eps_j] = delta_ij kills "
        "the off-diagonal part of eq. (30): the sign-averaged variance of ANY design is "
        "sum_i p_i(1-p_i)||a_i||^2 = Var_ind; so for updates known only through their norms "
        "(Remark 2: 'one float per client') independent sampling minimises the worst case. "
        "(c) The difference is the zero-diagonal form sum_{i!=j}(p_ij - p_i p_j) a_i.a_j; "
        "taking a supported on {i, j} gives 2(p_ij - p_i p_j) a_i.a_j, of either sign. "
        "Checked symbolically (n = 3, d = 2, symbolic P and signs), exactly (all 2^n sign "
        "patterns, rationals), with the ESO SDP, and by Monte Carlo over random signs."
    ),
))


@MINIMISES_CORRECTED.check("symbolic")
def _corrected_symbolic(ctx: Context) -> Evidence:
    """Derive (b) by indicator and sign algebra for symbolic P (n = 3, d = 2); (a) from the
    diagonal of (4); (c) on a pair {i, j}."""
    n, d = 3, 2
    zeta = vector_symbols("zeta", n, d)
    w = list(sp.symbols(f"w0:{n}", positive=True))
    p, P = symbolic_pair_matrix(n)
    eps = sign_symbols(n)
    signed = sp.Matrix(n, d, lambda i, k: eps[i] * zeta[i, k])
    _, var_s = derive_estimator_moments(w, signed, list(p), pairwise_moments(P))
    avg = sign_expectation(var_s, eps)
    _, var_i = derive_estimator_moments(w, zeta, list(p), independent_moments(list(p)))
    d_b = sp.simplify(avg - var_i)
    # (a): bound(v) - Var_ind = sum_i c_i (v_i - (1 - p_i)) with c_i >= 0 and v_i >= 1 - p_i
    v = sp.symbols(f"v0:{n}", real=True)
    c = [w[i] ** 2 * sum(zeta[i, k] ** 2 for k in range(d)) / p[i] for i in range(n)]
    gap = sp.expand(sum(c[i] * v[i] for i in range(n)) - var_i)
    gap_at = sp.simplify(gap.subs({v[i]: 1 - p[i] for i in range(n)}))
    coeffs_ok = all(sp.simplify(sp.diff(gap, v[i]) - c[i]) == 0 for i in range(n))
    # (c): zeta supported on {0, 1}
    _, var_s01 = derive_estimator_moments(w, zeta, list(p), pairwise_moments(P))
    sub = {zeta[2, k]: 0 for k in range(d)}
    d_c = sp.factor(sp.simplify((var_s01 - var_i).subs(sub)))
    expect_c = 2 * (P[0, 1] - p[0] * p[1]) * w[0] * w[1] / (p[0] * p[1]) * sum(
        zeta[0, k] * zeta[1, k] for k in range(d))
    ok = d_b == 0 and gap_at == 0 and coeffs_ok and sp.simplify(d_c - expect_c) == 0
    return Evidence(
        ok, {"sign_average_minus_independent": sp.sstr(d_b), "pair_difference": sp.sstr(d_c)},
        0,
        detail=(
            f"(b) E_eps Var_S(eps o zeta) - Var_ind = {sp.sstr(d_b)} for symbolic P; "
            f"(a) bound(v) - Var_ind is linear in v with coefficients w_i^2||zeta_i||^2/p_i >= 0 "
            f"({coeffs_ok}) and vanishes at v = 1 - p ({sp.sstr(gap_at)}); (c) on zeta supported "
            f"on {{0, 1}}: Var_S - Var_ind = {sp.sstr(d_c)}"
        ),
        counterexample=None if ok else {"b": str(d_b), "a": str(gap_at), "c": str(d_c)},
    )


@MINIMISES_CORRECTED.check("symbolic")
def _corrected_exact_signs(ctx: Context) -> Evidence:
    """Exact over all 2^n sign patterns (rationals): the average of Var_S equals Var_ind and the
    maximum is >= Var_ind, for b-of-n, cyclic, all-or-nothing and random explicit designs."""
    rng = ctx.rng("exact")
    n, d = ctx.size(quick=4, full=6), 2
    designs = _equal_marginal_designs(n, 2) + [("random explicit", _random_explicit(rng, n))]
    parts = []
    for name, design in designs:
        w = _rational_w(rng, n)
        zeta = rng.integers(-4, 5, (n, d))
        ind = IndependentSampling(list(design.p_exact))
        _, vi = enumerate_moments(ind, w, zeta, exact=True)
        pes = design.p_exact
        A = (np.array(w, dtype=object) / pes)[:, None] * zeta.astype(object)
        Pm = design.P_exact
        variances = []
        for signs in itertools.product((1, -1), repeat=n):
            variances.append(variance_formula(Pm, A * np.array(signs, dtype=object)[:, None]))
        avg = sum(variances, Fraction(0)) / len(variances)
        worst = max(variances)
        # check one sign pattern by enumeration too (independent of the P-formula)
        _, v_enum = enumerate_moments(design, w, zeta, exact=True)
        ok = avg == vi and worst >= vi and v_enum == variances[0]
        parts.append((name, Evidence(
            ok, {"average": str(avg), "max": str(worst)}, str(vi),
            detail=f"average over signs {avg} = Var_ind {vi}; max {worst} >= Var_ind",
            counterexample=None if ok else {**_design_desc(design), "w": [str(x) for x in w],
                                            "zeta": zeta.tolist()},
        )))
    return all_of(parts)


@MINIMISES_CORRECTED.check("convex")
def _corrected_eso_sdp(ctx: Context) -> Evidence:
    """(a) with the ESO SDP: the best bound (5) of each design (c = bound coefficients) is at
    least Var_ind; equal for independent sampling."""
    rng = ctx.rng("convex")
    n, d = ctx.size(quick=6, full=10), 3
    designs = _equal_marginal_designs(n, n // 2) + [
        ("random explicit", _random_explicit(rng, n)),
        ("independent", IndependentSampling(np.full(n, (n // 2) / n))),
    ]
    parts = []
    for name, design in designs:
        w = _floats(_rational_w(rng, n))
        zeta = rng.normal(0.3, 1.0, (n, d))
        p = design.p
        res = smallest_eso(design, bound_coefficients(p, w, zeta))
        vi = estimator_variance(IndependentSampling(p), w, zeta)
        best = res.objective
        ok = res.certified and best >= vi - 1e-9 * max(1.0, vi)
        if isinstance(design, IndependentSampling):
            ok = ok and abs(best - vi) <= 1e-6 * max(1.0, vi)
        parts.append((name, Evidence(
            ok, best, vi,
            detail=(f"best bound (5) {best:.6g} >= Var_ind {vi:.6g} (exact Var_S "
                    f"{estimator_variance(design, w, zeta):.6g}); certificate lambda_min "
                    f"{res.min_eigenvalue:.2g}"),
            counterexample=None if ok else {**_design_desc(design), "w": w, "zeta": zeta},
        )))
    return all_of(parts)


@MINIMISES_CORRECTED.check("monte_carlo")
def _corrected_monte_carlo(ctx: Context) -> Evidence:
    """(b) by Monte Carlo: random signs and subsets per replica; E||sum (1_i - p_i) eps_i a_i||^2
    equals Var_ind (two-sided), for b-of-n and a random explicit design."""
    rng = ctx.rng("mc")
    n, d = ctx.size(quick=8, full=10), 3
    replicas = ctx.size(quick=300_000, full=2_000_000)
    designs = [("b-of-n", UniformWithoutReplacement(n, n // 2)),
               ("random explicit", _random_explicit(rng, n))]
    parts = []
    for name, design in designs:
        w = np.full(n, 1.0 / n)
        zeta = rng.normal(1.0, 0.5, (n, d))
        A = importance_vectors(design, w, zeta)
        masks = design.sample(ctx.rng(f"masks {name}"), replicas)
        eps = ctx.rng(f"signs {name}").choice(np.array([-1.0, 1.0]), size=(replicas, n))
        Y = ((masks - design.p) * eps) @ A  # X(eps o zeta) - E X(eps o zeta)
        vi = estimator_variance(IndependentSampling(design.p), w, zeta)
        ev = stats.check_identity(
            np.einsum("rd,rd->r", Y, Y), vi, alpha=ALPHA / 2, what="E_eps Var_S",
            counterexample={**_design_desc(design), "w": w, "zeta": zeta, "seed": ctx.seed})
        ev.detail += (f"{_power_note(ev, vi)}; fixed signs +1: Var_S = "
                      f"{estimator_variance(design, w, zeta):.4g}")
        parts.append((name, ev))
    return all_of(parts)


# =============================================================================================
# is.variance_without_replacement
# =============================================================================================

WITHOUT_REPLACEMENT = register(Claim(
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
    derivation=(
        "(1/b) sum_{i in S} g_i = sum_{i in S} w_i g_i / p_i with w_i = 1/n, p_i = b/n. Counting "
        "subsets gives p = C(n-1, b-1)/C(n, b) = b/n and p_ij = C(n-2, b-2)/C(n, b) = "
        "b(b-1)/(n(n-1)); then E||X||^2 = (1/b^2)[p S2 + p_ij (T - S2)] with S2 = sum||g_i||^2, "
        "T = ||sum g_i||^2, minus ||Gbar||^2 = T/n^2, is compared with the seed's formula for "
        "symbolic n and b. Also: exactly by enumeration for all b (rationals); with the ESO "
        "SDP (c = 1 gives v = (n-b)/(n-1), and the bound (5) on the centred updates g_i - Gbar "
        "reproduces the formula, attained because the variance is shift-invariant when |S| = b); "
        "by Monte Carlo (identity two-sided, bound one-sided); and a figure of the variance "
        "against b, exact curve and Monte Carlo points, beside independent sampling with "
        "p = b/n."
    ),
))


def _wor_formula(n: Any, b: Any, g: np.ndarray) -> Any:
    """The seed's (n - b)/(b(n - 1)) * (1/n) sum ||g_i - Gbar||^2 (floats, or rationals for
    integer g with n, b given as Fractions)."""
    if n == 1:
        return 0 * b
    centred = g * n - g.sum(axis=0)  # n (g_i - Gbar), exact for integers
    spread = (centred * centred).sum()
    return (n - b) / (b * (n - 1)) * spread / n**3


@WITHOUT_REPLACEMENT.check("symbolic")
def _wor_generic_derivation(ctx: Context) -> Evidence:
    """Derive the variance for symbolic n and b (counting subsets), and the sigma_G^2 bound."""
    n, b = sp.symbols("n b", positive=True, integer=True)
    S2, T, sigma2 = sp.symbols("S_2 T sigma_G^2", positive=True)
    p, q = uniform_without_replacement_moments(n, b)
    one = indicator_symbols(2)
    mom = pairwise_moments(sp.Matrix([[p, q], [q, p]]))
    e_sq = expectation(one[0] ** 2, one, mom)
    e_pair = expectation(one[0] * one[1], one, mom)
    second = (e_sq * S2 + e_pair * (T - S2)) / b**2  # E||(1/b) sum_{i in S} g_i||^2
    var = second - T / n**2
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


@WITHOUT_REPLACEMENT.check("symbolic")
def _wor_exact_enumeration(ctx: Context) -> Evidence:
    """Exact variance over all C(n, b) subsets for every b (rationals) vs the seed's formula."""
    rng = ctx.rng("exact")
    n, d = ctx.size(quick=6, full=10), 3
    g = rng.integers(-5, 6, (n, d))
    bad = []
    for b in range(1, n + 1):
        _, var = enumerate_moments(UniformWithoutReplacement(n, b), [Fraction(1, n)] * n, g,
                                   exact=True)
        seed = _wor_formula(Fraction(n), Fraction(b), g.astype(object))
        if var != seed:
            bad.append({"b": b, "exact": str(var), "seed": str(seed)})
    ok = not bad
    return Evidence(
        ok, len(bad), 0,
        detail=f"n = {n}: exact variance equals the formula for b = 1..{n}: {ok}",
        counterexample=None if ok else {"n": n, "g": g.tolist(), "mismatches": bad},
    )


@WITHOUT_REPLACEMENT.check("convex")
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
        seed = float(_wor_formula(n, b, g))
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


@WITHOUT_REPLACEMENT.check("monte_carlo")
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
    sq = _sq_dev(X, gbar)
    seed = float(_wor_formula(n, b, g))
    sigma2 = float(np.max(np.sum((g - gbar) ** 2, axis=1)))
    ce = {"n": n, "b": b, "g": g, "seed": ctx.seed}
    ev1 = stats.check_identity(sq, seed, alpha=ALPHA / 2, what="variance", counterexample=ce)
    ev1.detail += _power_note(ev1, seed)
    bound = (n / b - 1) / (n - 1) * sigma2
    ev2 = stats.check_upper_bound(sq, bound, alpha=ALPHA / 2, what="variance <= bound",
                                  counterexample={**ce, "sigma_G^2": sigma2})
    return all_of([("identity", ev1), ("sigma_G^2 bound", ev2)])


# -- figure: variance against b ----------------------------------------------------------------

@dataclass
class VarianceCurves:
    """Exact variance against b for b-of-n and independent (p = b/n) sampling, with Monte Carlo
    points and their two-sided intervals (alpha per point)."""

    n: int
    b: np.ndarray
    exact_without_replacement: np.ndarray
    exact_independent: np.ndarray
    mc_b: np.ndarray
    mc_without_replacement: np.ndarray
    mc_independent: np.ndarray
    half_width_without_replacement: np.ndarray
    half_width_independent: np.ndarray
    alpha: float
    replicas: int

    def consistent(self) -> bool:
        """Every Monte Carlo point lies within its interval of the exact curve."""
        ew = np.interp(self.mc_b, self.b, self.exact_without_replacement)
        ei = np.interp(self.mc_b, self.b, self.exact_independent)
        tol = 1e-12 + 1e-9 * np.abs(ew)
        return bool(np.all(np.abs(self.mc_without_replacement - ew)
                           <= self.half_width_without_replacement + tol)
                    and np.all(np.abs(self.mc_independent - ei)
                               <= self.half_width_independent + 1e-12 + 1e-9 * np.abs(ei)))


def variance_curves(n: int, g: np.ndarray, rng: np.random.Generator, replicas: int,
                    mc_points: int = 6, alpha: float = ALPHA) -> VarianceCurves:
    r"""Data of the variance-against-:math:`b` figure.

    Exact curves for every :math:`b = 1..n`:
    :math:`\frac{n-b}{b(n-1)}\frac1n\sum_i\|g_i - \bar G\|^2` (without replacement, from
    :func:`~fedtheory.sampling.moments.estimator_variance`) and
    :math:`\frac1{n^2}(\frac nb - 1)\sum_i\|g_i\|^2` (independent, :math:`p = b/n`); Monte Carlo
    means of :math:`\|X - \bar G\|^2` at ``mc_points`` values of :math:`b < n` (at
    :math:`b = n` both variances are 0), with two-sided intervals at level
    ``alpha / (2 mc_points)`` each.
    """
    g = np.asarray(g, dtype=float)
    w = np.full(n, 1.0 / n)
    bs = np.arange(1, n + 1)
    ex_w = np.array([estimator_variance(UniformWithoutReplacement(n, int(b)), w, g) for b in bs])
    ex_i = np.array([estimator_variance(IndependentSampling(np.full(n, b / n)), w, g)
                     for b in bs])
    mc_b = np.unique(np.linspace(1, max(n - 1, 1), mc_points).round().astype(int))
    a = alpha / (2 * len(mc_b))
    gbar = g.mean(axis=0)
    out = {"w": [], "i": [], "hw": [], "hi": []}
    for b in mc_b:
        for key, design in (("w", UniformWithoutReplacement(n, int(b))),
                            ("i", IndependentSampling(np.full(n, b / n)))):
            sq = _sq_dev(sample_estimator(design, w, g, rng, replicas), gbar)
            ci = stats.mean_interval(sq, a, "two")
            out[key].append(float(ci.mean))
            out["h" + key].append(float(ci.z * ci.stderr))
    return VarianceCurves(n, bs, ex_w, ex_i, mc_b, np.array(out["w"]), np.array(out["i"]),
                          np.array(out["hw"]), np.array(out["hi"]), alpha, replicas)


def plot_variance_curves(data: VarianceCurves, path: Path | str | None) -> list[str]:
    """Plot :func:`variance_curves` data (log scale); save PNG and PDF at ``path`` if given."""
    from fedtheory.plotting import plt, save_figure

    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    keep = data.b < data.n  # both variances vanish at b = n (full participation)
    ax.plot(data.b[keep], data.exact_independent[keep], "-", color="C0",
            label=r"independent, $p_i = b/n$ (exact)")
    ax.plot(data.b[keep], data.exact_without_replacement[keep], "-", color="C1",
            label=r"$b$ of $n$ without replacement (exact)")
    ax.errorbar(data.mc_b, data.mc_independent, yerr=data.half_width_independent, fmt="o",
                color="C0", ms=4, capsize=3, label="Monte Carlo, independent")
    ax.errorbar(data.mc_b, data.mc_without_replacement,
                yerr=data.half_width_without_replacement, fmt="s", color="C1", ms=4, capsize=3,
                label="Monte Carlo, without replacement")
    ax.set_yscale("log")
    ax.set_xlabel("b (expected number of participants)")
    ax.set_ylabel(r"$\mathbb{E}\|X - \bar G\|^2$")
    ax.set_title(f"n = {data.n} (both 0 at b = n); {data.replicas} replicas per point, "
                 f"intervals at alpha = {data.alpha:g}", fontsize=9)
    ax.legend(fontsize=8)
    return save_figure(fig, path)


@WITHOUT_REPLACEMENT.check("figure")
def _wor_figure(ctx: Context) -> Evidence:
    """Variance against b: exact curves (b-of-n, independent with p = b/n) and Monte Carlo
    points; the points must fall in their intervals."""
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
