"""``is.independent_minimises_variance`` (refuted): among samplings with marginals p,
independent sampling minimises the left-hand side of (5) (seed 002, after Algorithm 1)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy as sp

from fedtheory.claimkit.stated import Erratum
from fedtheory.claims import Claim, ClaimKind, Context, Evidence, all_of, checks
from fedtheory.sampling.designs import IndependentSampling, UniformWithoutReplacement
from fedtheory.sampling.moments import enumerate_moments, estimator_variance, sample_estimator
from fedtheory.symbolic.estimator_variance import derive_two_client_difference
from fedtheory.theory.importance_sampling import (
    SMALLEST_COUNTEREXAMPLE,
    design_desc,
    equal_marginal_designs,
    random_explicit,
    sq_dev,
    worst_direction_sdp,
)

from ._common import ALPHA

CLAIM = Claim(
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
    contract=(
        "(seed 002, the paragraph after Algorithm 1): \"among all samplings with marginals p_i, "
        "the independent sampling minimizes the left-hand side of (5)\"."
    ),
    expected="refuted",
    erratum=Erratum(
        "false statement",
        "002, the paragraph after Lemma 1 (and Appendix B, first sentence: 'By Lemma 1, the "
        "independent sampling ... is optimal'): the reasons given there, (a) v_i = 1 - p_i is "
        "the smallest admissible v and (b) (5) is an equality for independent sampling, prove "
        "only that independent sampling minimises the right-hand side of (5) (and, Remark 2, "
        "the variance when only norms are known); for the left-hand side every sampling that "
        "is not pairwise independent beats it on some updates (n = 2, p = (1/2, 1/2), one "
        "client sampled uniformly, equal updates: variance 0 < 1/2). What holds is tested as "
        "is.independent_minimises_variance.corrected",
        quote=(r"among all samplings S satisfying p_{i}=\operatorname{Prob}(i\in S), the "
               r"independent sampling (i.e., p_{ij}=\operatorname{Prob}(i,j\in S)="
               r"\operatorname{Prob}(i\in S)\operatorname{Prob}(j\in S)=p_{i}p_{j}) minimizes "
               r"the left-hand side of (5)"),
        location=("002, Section 2, the paragraph after Lemma 1 and Algorithm 1 ('It turns out "
                  "that given probabilities {p_i}, ...'); repeated in Appendix B, first "
                  "sentence"),
        intended_holds=False,
    ),
    finding=(
        'False for the left side of (5): with n = 2, p = (1/2, 1/2) and equal updates, sampling '
        'exactly one client has variance 0 < 1/2 (independent sampling). True for the bound (5) '
        'and for the worst case over update directions '
        '(is.independent_minimises_variance.corrected).'
    ),
    derivation=r"""
Read as printed: for given marginals $p$ and any vectors $\zeta_i$ (and weights $w$), the variance
(left-hand side of (5)) under independent sampling is at most that under any other sampling with
the same marginals. By eq. (30), $\mathrm{Var}_S - \mathrm{Var}_{\rm ind}
= \sum_{i \ne j} (\mathbf P_{ij} - p_i p_j)\, a_i^\top a_j$: a quadratic form in $a$ with zero
diagonal ($\mathbf P_{ii} = p_i$ for every design), hence of trace zero and indefinite unless
$\mathbf P_{ij} = p_i p_j$ for all $i \ne j$. So the statement fails for *every* sampling that is
not pairwise independent: some $\zeta$ makes its variance strictly smaller. Smallest instance:
$n = 2$, $p = (\tfrac12, \tfrac12)$, $w = (\tfrac12, \tfrac12)$, $\zeta_1 = \zeta_2 = 1$ ($d = 1$):
one client sampled uniformly gives $X = 1$ always (variance 0), independent sampling gives variance
$\tfrac12$. The seed's own reasons ((a) independent sampling admits $v = 1 - p$, the smallest
possible; (b) (5) is an equality for it) prove optimality for the *right*-hand side of (5) only;
Remark 2 of the seed itself concedes that optimality for the left-hand side 'in the full general
case' is not obtained. What is true is `is.independent_minimises_variance.corrected`.
""",
)


@CLAIM.check("symbolic")
def _minimises_two_clients(ctx: Context) -> Evidence:
    """n = 2 by indicator algebra: Var_S - Var_ind = 2 (p_12 - p_1 p_2) a_1 a_2, negative for
    suitable zeta unless p_12 = p_1 p_2; evaluated at the smallest counterexample."""
    derived = derive_two_client_difference()
    p0, p1, p01, z = derived.p0, derived.p1, derived.p01, derived.zeta
    var_s, var_i, diff = derived.var_design, derived.var_independent, derived.difference
    # the statement needs diff >= 0 for all zeta: its coefficient of zeta_0 zeta_1 must vanish
    needs = derived.pairwise_independence
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


@CLAIM.check("exact")
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
            for name, design in equal_marginal_designs(n, b):
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
                    first_ce = {"n": n, "b": b, **design_desc(design), "p": str(q),
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


@CLAIM.check("convex")
def _minimises_sdp_worst_direction(ctx: Context) -> Evidence:
    """SDP over Gram matrices: min <M, G> s.t. G PSD, trace G = 1, with M = P - pp^T minus its
    diagonal; a negative optimum is a zeta for which the design beats independent sampling."""
    rng = ctx.rng("convex")
    n = ctx.size(quick=6, full=10)
    b = n // 2
    designs = equal_marginal_designs(n, b) + [("random explicit", random_explicit(rng, n))]
    parts = []
    for name, design in designs:
        p = design.p
        value, a = worst_direction_sdp(design)  # leading factor of the optimal Gram matrix
        w = np.full(n, 1.0 / n)
        zeta = (a * p / w)[:, None]
        vs = estimator_variance(design, w, zeta)
        vi = estimator_variance(IndependentSampling(p), w, zeta)
        ok = bool(vi <= vs + 1e-12)
        parts.append((name, Evidence(
            ok, {"Var_S": vs, "Var_ind": vi, "sdp_value": value}, "Var_ind <= Var_S",
            detail=(f"SDP optimum {value:.4g}; at its zeta Var_S = {vs:.4g}, "
                    f"Var_ind = {vi:.4g}"),
            counterexample=None if ok else {**design_desc(design), "w": w, "zeta": zeta,
                                            "variance_design": vs, "variance_independent": vi},
        )))
    return all_of(parts)


@CLAIM.check("monte_carlo")
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
    diff = sq_dev(xi, target) - sq_dev(xs, target)
    ev = checks.check_upper_bound(
        diff, 0.0, alpha=ALPHA, what="Var_ind - Var_S",
        counterexample={"n": n, "b": b, "p": b / n, "w": w, "zeta": zeta, "seed": ctx.seed,
                        "exact_variance_independent": estimator_variance(ind, w, zeta),
                        "exact_variance_without_replacement": estimator_variance(wor, w, zeta)},
    )
    ev.detail += (f"; exact: Var_ind = {estimator_variance(ind, w, zeta):.6g}, Var_S (1-of-10) "
                  f"= {estimator_variance(wor, w, zeta):.6g}")
    return ev
