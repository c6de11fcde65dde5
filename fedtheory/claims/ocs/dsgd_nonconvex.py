"""``ocs.dsgd_nonconvex``: Theorem 15 of seed 002, DSGD with OCS, non-convex one-step descent
(24)."""

from __future__ import annotations

from fedtheory.certify.dsgd import descent_one_step, theorem15_grid
from fedtheory.claimkit.stated import Stated
from fedtheory.claims import Claim, ClaimKind, Context, Evidence
from fedtheory.claims.ocs._theorems import (
    dsgd_check,
    nonconvex_scenarios,
    proof_check,
    register_exact_checks,
)
from fedtheory.experiments.ocs_theorem_exact import (
    DSGD_NONCONVEX_CASES,
    DSGD_NONCONVEX_SEARCH,
)
from fedtheory.symbolic.ocs_dsgd_descent import derive_dsgd_descent
from fedtheory.symbolic.ocs_dsgd_proofs import prove_dsgd_descent
from fedtheory.theory.ocs_exact import ocs_probabilities
from fedtheory.theory.ocs_theorems import THEOREM_15

from ._common import ONE_STEP_RESTATEMENT, derivation_evidence

CLAIM = Claim(
    id="ocs.dsgd_nonconvex", family="ocs",
    seed_ref="002, Theorem 15, eqs. (23)-(24), Appendix C.2",
    title="DSGD with OCS, non-convex: one-step descent (24)",
    statement=(
        r"f_i\ L\text{-smooth};\ \text{Assumptions 7, 9}:\quad \mathbb E f(x^{k+1})\le "
        r"\mathbb E f(x^k)-\eta^k\Big(1-\frac{(1+M)L}{2\gamma^k}\eta^k\Big)"
        r"\mathbb E\|\nabla f(x^k)\|^2+(\eta^k)^2\beta^k,\ "
        r"\beta^k=\frac{L}{2\gamma^k}\Big((1+M-\gamma^k)W\rho+\sum_i w_i^2\sigma^2\Big)"
    ),
    kind=ClaimKind.UPPER_BOUND,
    contract=(
        "(Theorem 15): the one-step recursion, checked as a conditional expectation from fixed "
        "iterates by many replicas, with noise that meets Assumptions 7/8 (M, σ²) and 9 (ρ)."
    ),
    expected="confirmed",
    stated=Stated(THEOREM_15.constants, factors=THEOREM_15.factors,
                  stronger=THEOREM_15.stronger),
    restatement=ONE_STEP_RESTATEMENT + (
        " Any step is allowed; the checks take gamma/((1+M)L) and multiples of it."
    ),
    derivation=r"""
Any step size is allowed; checked at $\eta = \gamma_{\mathrm{lo}}/((1+M)L)$ (the step that
maximises the descent term $\eta\big(1 - \frac{(1+M)L}{2\gamma}\eta\big)$, which minimises the
right-hand side when $\beta^k = 0$; $\gamma_{\mathrm{lo}}$ the lower confidence limit of
$\gamma^k$) and at twice it. The statement's two $\tfrac12$ (`descent_half`, `beta_half`) and
its factors $1+M$, $W$ and $\sum_i w_i^2$ are read as the claim states them (mutated under
`--power`). Symbolic: (24) is re-derived with sympy from $L$-smoothness,
$\mathbb E\|G\|^2 = \big(\frac{1+M}{\gamma} - 1\big)\sum_i w_i^2\|\nabla f_i\|^2 +
\sigma^2\sum_i w_i^2/\gamma + \|\nabla f\|^2$ (Definition 11 and Assumption 7 with equality)
and $\sum_i w_i^2\|\nabla f_i\|^2 \le W(\rho + \|\nabla f\|^2) \le W\rho + \|\nabla f\|^2$ (an
identity check of the derivation); the same chain as an inequality proves the statement for
every $\eta > 0$ (the slack is $\frac{L\eta^2}{2}C(1 - W)\|\nabla f\|^2$,
$C = \frac{1+M}{\gamma} - 1$). Exact rational instances (one dimension, two-point noise): with
$A_i = LI$, $w_i = 1/n$ and $x^k = x^\star$ every inequality of the proof is an equality, and
with full participation ($m = n$, $\gamma = 1$) and exact gradients the bound is attained at
every $x^k$ and every step (ratio 1 in both). An adversarial search and Monte Carlo on
quadratics with identical Hessians (so $\rho$ is finite and attained at every $x$), positive
definite and indefinite (non-convex $f_i$), uniform and skewed weights, and an exact-gradient
full-participation scenario away from $x^\star$. The tightness ratio is
$(\mathbb E f(x^{k+1}) - f(x^k) + \text{descent})/(\eta^2\beta^k)$.
""",
)


@CLAIM.check("symbolic")
def _dsgd_nonconvex_derivation(ctx: Context) -> Evidence:
    """sympy identity of the derivation: (24) from smoothness, the second moment of G and
    Assumption 9 (the document's constants, as derived)."""
    d = derive_dsgd_descent()
    ok_moment = d["ok_moment"]
    diff = d["diff"]
    return derivation_evidence(
        bool(ok_moment and diff == 0), str(diff), "0",
        ("identity of the derivation (not a test of a mutated statement): "
                "E||G||^2 = ((1+M)/gamma - 1) sum w_i^2||grad f_i||^2 + sigma^2 sum w_i^2/gamma"
                f" + ||grad f||^2: {'derived' if ok_moment else 'NOT derived'}; "
                "f(x) - eta||grad f||^2 + (L/2) eta^2 E||G||^2 with sum w_i^2||grad f_i||^2 <= "
                "W rho + ||grad f||^2 (coefficient (1+M)/gamma - 1 >= 0) minus the document's "
                f"right-hand side of (24) simplifies to {diff}"))


@CLAIM.check("symbolic")
def _dsgd_nonconvex_proof(ctx: Context) -> Evidence:
    """sympy: (24), as stated, proved from the lemmas for every step (or not proved)."""
    return proof_check(
        ctx, THEOREM_15, prove_dsgd_descent,
        "bound - chain with E f(x^{k+1}) - f(x^k) <= -eta||grad f||^2 + (L eta^2/2)[C W (rho + "
        "||grad f||^2) + sigma^2 S2/gamma + ||grad f||^2], C = (1+M)/gamma - 1")


# (24) where it is attained, and around; the search allows any step up to 3x
register_exact_checks(CLAIM, THEOREM_15, DSGD_NONCONVEX_CASES, DSGD_NONCONVEX_SEARCH, "dsgd")


@CLAIM.check("monte_carlo")
def _dsgd_nonconvex_replicas(ctx: Context) -> Evidence:
    """Replicas of one DSGD+OCS step: E f(x^{k+1}) vs (24)."""
    return dsgd_check(ctx, nonconvex_scenarios(ctx, R=1), THEOREM_15.restated(ctx))

# `verify --certify`: not (yet) a PEP (fedtheory.certify)
CLAIM.one_step = descent_one_step(
    THEOREM_15.constants["descent_half"], THEOREM_15.constants["beta_half"], theorem15_grid,
    ocs_probabilities,
    notes=(
        "noise-free instances only (M = sigma = 0): with noise the worst case is over noise "
        "laws (a two-point law would give only a lower bound), not modelled",
        "uniform sampling is the document's independent uniform sampling (p_i = m/n, gamma = "
        "m/n); OCS: one PEP per fixed ratio of ||w_i grad f_i(x)|| (a grid, nothing claimed "
        "between its points; the ratio rows certify an upper bound only: the rounded "
        "instance breaks the ratio equalities)",
        "the bound is attained at equal weights (stated/worst = 1 at n = 2, m = 1 and n = 3, "
        "m = 2) and 3/2 loose at w = (3/4, 1/4) (the step sum w_i^2 ||.||^2 <= W sum w_i "
        "||.||^2 of Appendix C.2)"),
)
