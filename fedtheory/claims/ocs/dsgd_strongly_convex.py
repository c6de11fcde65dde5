"""``ocs.dsgd_strongly_convex`` (refuted): Theorem 13 of seed 002, DSGD with OCS on strongly
convex objectives, one-step recursion (20)."""

from __future__ import annotations

import sympy as sp

from fedtheory.certify.dsgd import THEOREM13_NOTES, recursion_one_step, theorem13_grid
from fedtheory.claimkit.stated import Erratum, Stated
from fedtheory.claims import Claim, ClaimKind, Context, Evidence
from fedtheory.claims.ocs._theorems import (
    dsgd_check,
    dsgd_strongly_convex_scenarios,
    exact_check,
    register_exact_checks,
)
from fedtheory.experiments.ocs_theorem_exact import (
    CE13_CASE,
    CE13_NOISY_CASE,
    DSGD_CONVEX_SEARCH,
    DSGD_UNIFORM_TIGHT_CASES,
)
from fedtheory.symbolic.ocs_dsgd_step_error import derive_dsgd_step_error
from fedtheory.symbolic.ocs_dsgd_uniform_rate import derive_remark14
from fedtheory.theory.ocs_counterexamples import CE13_LATEX
from fedtheory.theory.ocs_exact import ocs_probabilities
from fedtheory.theory.ocs_theorems import THEOREM_13

from ._common import ONE_STEP_RESTATEMENT, derivation_evidence

CLAIM = Claim(
    id="ocs.dsgd_strongly_convex", family="ocs",
    seed_ref="002, Theorem 13, eqs. (18)-(22), Appendix C.1",
    title="DSGD with OCS, strongly convex: one-step recursion (20)",
    statement=(
        r"f_i\ L\text{-smooth, convex};\ f\ \mu\text{-strongly convex};\ \text{Assumption 7};\ "
        r"\eta^k\in\Big(0,\frac{\gamma^k}{(1+WM)L}\Big]:\quad "
        r"\mathbb E\|r^{k+1}\|^2\le(1-\mu\eta^k)\,\mathbb E\|r^k\|^2"
        r"+(\eta^k)^2\Big(\frac{\beta_1}{\gamma^k}-\beta_2\Big),\ "
        r"\beta_1=\sum_i w_i^2\big(2L(1+M)Z_i+\sigma^2\big),\ \beta_2=2L\sum_i w_i^2Z_i"
    ),
    kind=ClaimKind.UPPER_BOUND,
    contract=(
        "(Theorem 13): the one-step recursion, checked as a conditional expectation from fixed "
        "iterates by many replicas, with noise that meets Assumptions 7/8 (M, σ²) and 9 (ρ)."
    ),
    expected="refuted",
    stated=Stated(THEOREM_13.constants, step=THEOREM_13.step, stronger=THEOREM_13.stronger),
    erratum=Erratum(
        "proof gap",
        "Appendix C.1, the step sum_i w_i^2 (f_i(x^k) - f_i(x*)) <= W (f(x^k) - f*) (in the "
        "sampling-variance bound, and again in E||sum_i w_i g_i||^2): it needs "
        "f_i(x^k) >= f_i(x*) for every i, false near x* unless w_i = 1/n (where it is an "
        "equality). (20) fails as printed for non-uniform weights (exact: w = (3/4, 1/4), "
        "93/2048 > 327/8192); the recursion re-derived with the Bregman bound "
        "sum_i w_i^2 ||grad f_i(x) - grad f_i(x*)||^2 <= 2LW(f(x) - f*) holds with the step "
        "gamma/((1 + 2W(1+M))L) and the constants 4 (ocs.dsgd_strongly_convex.corrected). "
        "Not an omitted hypothesis: with w_i = 1/n the printed (20) holds, but the theorem is "
        "stated for the paper's data-size weights (W = max_i w_i enters its step size)",
        quote=(r"\leq\alpha^{k}\frac{n-m}{m}\left(2WL(1+M)(f(x^{k})-f^{\star})+\sum_{i=1}^{n}"
               r"w_{i}^{2}(2L(1+M)Z_{i}+\sigma^{2})\right)"),
        location=("002, Appendix C.1 (proof of Theorem 13), the last line of the bound on "
                  "the sampling variance"),
        intended_holds=False),
    finding=(
        'Theorem 13 fails with non-uniform weights (exact: 93/2048 > 327/8192): the proof bounds '
        'a weighted sum of f_i(x) - f_i(x*) by W(f(x) - f*), which needs f_i(x) >= f_i(x*) for '
        'every i. Corrected constants derived (ocs.dsgd_strongly_convex.corrected).'
    ),
    restatement=ONE_STEP_RESTATEMENT,
    derivation=r"""
Checked as stated at fixed iterates ($k = 0$ with $x^0$ given), $\eta^k$ at its largest allowed
value; the constants $2$ of (18) and (19) and the step limit are read as the claim states
them (`beta1_Z`, `beta2_Z`, the step condition; mutated under `--power`). Symbolic: the one-step
identity
$\mathbb E\|r^{k+1}\|^2 = \|r\|^2 - 2\eta\langle\nabla f, r\rangle +
\eta^2\big[\frac1\gamma\sum_i w_i^2\,\mathbb E\|g_i\|^2 - \sum_i w_i^2\|\nabla f_i\|^2 +
\|\nabla f\|^2\big]$ (indicator algebra and Definition 11), and Remark 14's specialisation
(21)–(22) ($\gamma = 1$, $M = 0$, $w_i = 1/n$). Exact: """ + CE13_LATEX + r""" gives
$\mathbb E\|r^{k+1}\|^2 >$ bound in rational arithmetic. Monte Carlo: holds for $w_i = 1/n$
(tight at $x^\star$ with $n = 2$), fails for non-uniform weights. Exact instances: for $w_i = 1/n$
at $x^\star$ the bound is attained (ratio 1); with one heavy client and relative noise
($w = (97/100, 3/100)$, $c = (-5/3, 8/5)$, $x^k = 0$, $M = 1$) the step adds $12.6$ times what
(20) allows beyond the contraction; an adversarial search (seeded hill climbing over
one-dimensional instances, the best re-checked exactly) reports how far the bound can be
exceeded. The faulty step of Appendix C.1
is $\sum_i w_i^2(f_i(x) - f_i(x^\star)) \le W(f(x) - f^\star)$: it needs
$f_i(x) \ge f_i(x^\star)$ for every $i$, false near $x^\star$ (it is an equality for
$w_i = 1/n$). Near $x^\star$ the variance term
$\eta^2\big(\frac{1+M}{\gamma} - 1\big)\sum_i w_i^2\big(\|\nabla f_i(x)\|^2 - 2LZ_i\big)$ then
has a part linear in $r = x - x^\star$ ($\sum_i w_i^2\nabla f_i(x^\star) \ne 0$ unless $w$ is
uniform) which the quadratic contraction cannot absorb. `ocs.dsgd_strongly_convex.corrected`
holds the recursion re-derived with the Bregman bound
$\sum_i w_i^2\|\nabla f_i(x) - \nabla f_i(x^\star)\|^2 \le 2LW(f(x) - f^\star)$.
""",
)


@CLAIM.check("symbolic")
def _dsgd_one_step_identity(ctx: Context) -> Evidence:
    """sympy: E||r^{k+1}||^2 of one DSGD step from indicator expectations (n = 3, d = 2)."""
    d = derive_dsgd_step_error(3, 2)
    diff = d["difference"]
    return derivation_evidence(
        diff == 0, str(diff), "0",
        ("sympy, n=3, d=2: E||r - eta sum_i 1_i (w_i/p_i) g_i||^2 expanded with "
                "E[1_i]=p_i, E[1_i 1_j]=p_i p_j (independent sampling) equals "
                "||r - eta sum_i w_i g_i||^2 + eta^2 sum_i w_i^2 (1-p_i)/p_i ||g_i||^2 "
                "(difference simplifies to 0); with Definition 11 the variance term is "
                "(1/gamma - 1) sum_i w_i^2 E||g_i||^2, the identity the Monte Carlo checks "
                "and the proofs start from"))


@CLAIM.check("symbolic")
def _remark14_specialisation(ctx: Context) -> Evidence:
    """sympy: (20) with gamma = 1, M = 0, w = 1/n gives (21); unrolling gives (22)."""
    d = derive_remark14()
    c21, ok21, unrolled, ok22 = (d[k] for k in ("c21", "ok21", "unrolled", "ok22"))
    return derivation_evidence(
        bool(ok21 and ok22), [str(c21), str(sp.simplify(unrolled))],
        ["sigma2/n", "eta*sigma2*(1-(1-mu*eta)^K)/(mu*n) <= eta*sigma2/(mu*n)"],
        ("beta_1/gamma - beta_2 with gamma=1, M=0, w_i=1/n simplifies to sigma^2/n: "
                f"(21) {'derived' if ok21 else 'NOT derived'}; unrolling "
                "a_{k+1} <= q a_k + eta^2 sigma^2/n with q = 1 - mu eta gives "
                "q^K a_0 + eta sigma^2 (1 - q^K)/(mu n) <= q^K a_0 + eta sigma^2/(mu n) since "
                "0 <= q < 1 (eta <= 1/L <= 1/mu): (22) "
                f"{'derived' if ok22 else 'NOT derived'}"))


@CLAIM.check("exact")
def _dsgd_exact_counterexample(ctx: Context) -> Evidence:
    """Exact rational evaluation of (20) on a two-client problem with weights (3/4, 1/4)."""
    return exact_check(ctx, THEOREM_13, [CE13_CASE])


# (20) where it is attained (w = 1/n at x*) and with one heavy client and relative noise
register_exact_checks(CLAIM, THEOREM_13, [*DSGD_UNIFORM_TIGHT_CASES, CE13_NOISY_CASE],
                      DSGD_CONVEX_SEARCH, "dsgd")


@CLAIM.check("monte_carlo")
def _dsgd_sc_uniform_weights(ctx: Context) -> Evidence:
    """Replicas of one DSGD+OCS step, w = 1/n: E||r^{k+1}||^2 vs (20)."""
    return dsgd_check(ctx, dsgd_strongly_convex_scenarios(ctx, "uniform"),
                      THEOREM_13.restated(ctx))


@CLAIM.check("monte_carlo")
def _dsgd_sc_nonuniform_weights(ctx: Context) -> Evidence:
    """Replicas of one DSGD+OCS step, non-uniform w: E||r^{k+1}||^2 vs (20)."""
    return dsgd_check(ctx, dsgd_strongly_convex_scenarios(ctx, "weighted"),
                      THEOREM_13.restated(ctx))

# `verify --certify`: recursion (20) as a PEP (fedtheory.certify.dsgd), its contraction factor
# and additive constant apart, uniform sampling and a grid of OCS norm ratios
CLAIM.one_step = recursion_one_step(
    THEOREM_13.constants["beta1_Z"], THEOREM_13.constants["beta2_Z"],
    lambda W, M, L, gamma: gamma / ((1 + W * M) * L), theorem13_grid, ocs_probabilities,
    notes=(
        *THEOREM13_NOTES,
        "the original (c_1 = c_2 = 2, step gamma/((1+WM)L)) is refuted by the PEP at w = "
           "(3/4, 1/4): an instance of Theorem 13's class (f_1 2/3-strongly convex, f_2 convex: "
           "the lifted subclass's worst-case Gram matrix, rounded, re-checked exactly) adds "
           "0.5627 beyond the contraction (the class's worst case is at most 432/755 = "
           "0.5722) "
           "where the statement allows 1/2 (L sum w_i^2 Z_i = 1, m = 1 of n = 2, M = 0)"),
)
