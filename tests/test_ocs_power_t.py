"""Power of the OCS theorem claims (seed 002, Theorems 13, 15, 17, 18): exact one-step
evaluation (fedtheory.theory.ocs_exact), the theorem forms read through a check's context,
the proofs of the bounds as inequalities (fedtheory.symbolic.ocs_dsgd_proofs,
fedtheory.symbolic.ocs_fedavg_proofs), the exact-instance checks and the adversarial search
(fedtheory.claims.ocs._theorems on fedtheory.experiments.ocs_theorem_exact)."""

from fractions import Fraction as F

import numpy as np
import pytest

from fedtheory import stats
from fedtheory.claimkit.core import Context
from fedtheory.claimkit.stated import Mutant, Stated
from fedtheory.claims import Claim, ClaimKind
from fedtheory.claims.ocs._theorems import (
    adversarial_search,
    dsgd_check,
    exact_check,
    proof_check,
    register_exact_checks,
)
from fedtheory.experiments.ocs_theorem_exact import (
    CE13_CASE,
    CE17_CASE,
    DSGD_CONVEX_SEARCH,
    DSGD_NONCONVEX_CASES,
    DSGD_UNIFORM_TIGHT_CASES,
    evaluate_case,
)
from fedtheory.experiments.ocs_theorems import FixedIterate
from fedtheory.sampling.ocs import optimal_probabilities
from fedtheory.symbolic.ocs_dsgd_proofs import (
    prove_dsgd_corrected_recursion,
    prove_dsgd_descent,
    prove_linear_slack,
)
from fedtheory.symbolic.ocs_fedavg_proofs import prove_fedavg_corrected_recursion
from fedtheory.theory.ocs_counterexamples import (
    exact_dsgd_counterexample,
    exact_fedavg_counterexample,
)
from fedtheory.theory.ocs_exact import (
    LineInstance,
    dsgd_exact,
    fedavg_exact,
    ocs_probabilities,
    sqrt_above,
    sqrt_below,
)
from fedtheory.theory.ocs_one_step import dsgd_ocs_step, fedavg_ocs_step
from fedtheory.theory.ocs_theorems import (
    THEOREM_13,
    THEOREM_13_CORRECTED,
    THEOREM_15,
    THEOREM_17,
    THEOREM_17_CORRECTED,
    THEOREM_18,
    point_quantities,
    problem_quantities,
)

from ._tolerance import assert_close_sum

U4 = [F(1, 4)] * 4


def _ctx(theorem, mutant=None) -> Context:
    stated = Stated(theorem.constants, factors=theorem.factors, step=theorem.step)
    return Context(claim_id="ocs.test", stated=stated, mutant=mutant)


# -- exact arithmetic helpers ---------------------------------------------------------------
def test_rational_square_roots_bracket_the_root():
    assert sqrt_below(F(49, 16)) == sqrt_above(F(49, 16)) == F(7, 4)
    for v in (F(2), F(1, 3), F(10**6 + 1, 7)):
        lo, hi = sqrt_below(v), sqrt_above(v)
        assert lo * lo <= v <= hi * hi and hi - lo <= F(1, 10**9)
    assert sqrt_below(2.0) == sqrt_above(2.0) == 2.0**0.5
    with pytest.raises(ValueError, match="v must be >= 0"):
        sqrt_below(F(-1))


@pytest.mark.parametrize("norms, m", [([1, 2, 3, 10], 2), ([0, 3, 1, 1], 2), ([1, 1, 1], 1),
                                      ([5, 1], 2)])
def test_exact_ocs_probabilities_agree_with_the_float_solver(norms, m):
    exact = ocs_probabilities([F(v) for v in norms], m)
    floats = optimal_probabilities(np.asarray(norms, float), m)
    assert_close_sum(np.array([float(p) for p in exact]), floats, np.ones(len(norms)))
    assert sum(exact) == min(m, sum(1 for v in norms if v > 0))
    with pytest.raises(ValueError, match="m must be in"):
        ocs_probabilities([F(1)], 2)


def test_line_instance_validates_and_computes_its_quantities():
    inst = LineInstance([F(3, 4), F(1, 4)], [1, 1], [0, 1], F(1, 2), 1)
    q = inst.quantities()
    assert q["x_star"] == F(1, 4) and q["S2Z"] == F(9, 16) * F(1, 32) + F(1, 16) * F(9, 32)
    assert q["rho"] == F(3, 16) and q["gf2"] == F(1, 16) and q["W"] == F(3, 4)
    qf = {**problem_quantities(inst.problem(), inst.noise()),
          **point_quantities(inst.problem(), np.array([0.5]))}
    for key in ("L", "mu", "S2", "S2Z", "SZ", "rho", "r2", "gap", "gf2", "fx"):
        assert_close_sum(qf[key], float(q[key]), abs(float(q[key])) + 1.0)
    with pytest.raises(ValueError, match="weights must be non-negative and sum to 1"):
        LineInstance([F(1, 2)], [1], [0], 0, 1)
    with pytest.raises(ValueError, match="m must be an integer"):
        LineInstance([1], [1], [0], 0, 2)
    with pytest.raises(ValueError, match="one entry per client"):
        LineInstance([1], [1, 1], [0], 0, 1)
    with pytest.raises(ValueError, match="M and sigma2"):
        LineInstance([1], [1], [0], 0, 1, M=-1)


# -- exact one-step evaluation ---------------------------------------------------------------
def test_exact_evaluation_reproduces_the_known_counterexamples():
    out = dsgd_exact(THEOREM_13, CE13_CASE.instance)
    ref = exact_dsgd_counterexample([F(3, 4), F(1, 4)], [F(0), F(1)], F(1, 2), 1)
    assert (out["lhs"], out["rhs"], out["gamma"]) == (ref["lhs"], ref["rhs"], ref["gamma"])
    for thm, corrected in ((THEOREM_17, False), (THEOREM_17_CORRECTED, True)):
        out = evaluate_case(thm, CE17_CASE)
        ref = exact_fedavg_counterexample(8, 1, 2, corrected=corrected)
        assert out["ok"] and (out["lhs"], out["rhs"], out["eta"]) == (
            ref["lhs"], ref["rhs"], ref["eta"])
        assert out["holds"] is corrected


def test_exact_dsgd_step_is_the_mean_of_the_monte_carlo_step():
    """Two-point noise on a line: the exact conditional expectation lies in the replicas'
    confidence interval (the float step and the exact enumeration agree)."""
    inst = LineInstance([F(1, 2), F(1, 3), F(1, 6)], [1, F(1, 2), 2], [0, 1, -1], F(3, 4), 1,
                        M=F(1, 4))
    out = dsgd_exact(THEOREM_13_CORRECTED, inst, exact=True)
    x = dsgd_ocs_step(inst.problem(), inst.noise(), np.array([0.75]), float(out["eta"]), 1,
                      np.random.default_rng(5), 200_000)
    x_star = float(inst.quantities()["x_star"])
    ci = stats.mean_interval(np.sum((x - x_star) ** 2, axis=-1), stats.DEFAULT_ALPHA, "two")
    assert ci.lower <= float(out["lhs"]) <= ci.upper


def test_exact_fedavg_round_is_the_mean_of_the_monte_carlo_round():
    inst = LineInstance([F(1, 2), F(1, 4), F(1, 4)], [1, 1, 1], [0, 1, -2], F(1, 2), 1,
                        sigma2=F(1, 4))
    out = fedavg_exact(THEOREM_18, inst, 2)
    assert out["ok"]
    x = fedavg_ocs_step(inst.problem(), inst.noise(),
                        np.array([0.5]), float(out["eta_l"]), float(out["eta_g"]), 2, 1,
                        np.random.default_rng(6), 200_000)
    ci = stats.mean_interval(inst.problem().loss(x), stats.DEFAULT_ALPHA, "two")
    assert ci.lower <= float(out["lhs"]) <= ci.upper


def test_exact_and_float_evaluation_agree():
    inst = LineInstance(U4, [1, F(1, 2), F(3, 4), 1], [-1, 0, 1, 2], F(1, 3), 2, M=F(1, 9))
    for thm in (THEOREM_13, THEOREM_13_CORRECTED):
        ex, fl = dsgd_exact(thm, inst), dsgd_exact(thm, inst, exact=False)
        for key in ("lhs", "rhs", "gamma", "eta"):
            assert_close_sum(fl[key], float(ex[key]), abs(float(ex[key])) + 1.0)


def test_theorem15_is_attained_at_its_equality_cases():
    """A_i = L I, w = 1/n at x*, and full participation with exact gradients anywhere: every
    inequality of the proof is an equality (exact ratio 1)."""
    for case in DSGD_NONCONVEX_CASES[:4]:
        assert evaluate_case(THEOREM_15, case)["ratio"] == 1, case.name
    for case in DSGD_UNIFORM_TIGHT_CASES:  # and (20) at x* with w = 1/n
        assert evaluate_case(THEOREM_13, case)["ratio"] == 1, case.name


def test_fedavg_exact_rejects_bad_steps():
    inst = CE17_CASE.instance
    with pytest.raises(ValueError, match="theta"):
        fedavg_exact(THEOREM_17, inst, 2, theta=F(3, 2))
    with pytest.raises(ValueError, match="R must be a positive integer"):
        fedavg_exact(THEOREM_17, inst, 0)
    with pytest.raises(ValueError, match="theta must be in"):
        dsgd_exact(THEOREM_13, CE13_CASE.instance, theta=2)


# -- the theorem forms read through the context ---------------------------------------------
def test_restated_theorems_read_constants_factors_and_step_from_the_context():
    inst = CE13_CASE.instance
    base = dsgd_exact(THEOREM_13, inst)
    ctx = _ctx(THEOREM_13, Mutant("step", THEOREM_13.step, F(2)))
    # the step limit doubles: eta = 2 gamma, and the read is recorded
    relaxed = dsgd_exact(THEOREM_13.restated(ctx), inst, theta=F(1, 2))
    assert relaxed["eta"] == base["eta"] and THEOREM_13.step in ctx.reads
    ctx = _ctx(THEOREM_13, Mutant("constant", "beta2_Z", F(7, 10)))
    mutated = dsgd_exact(THEOREM_13.restated(ctx), inst)
    s2z = inst.quantities()["S2Z"]
    assert mutated["rhs"] - base["rhs"] == base["eta"] ** 2 * F(6, 10) * s2z
    ctx = _ctx(THEOREM_15, Mutant("factor", "W"))
    q = DSGD_NONCONVEX_CASES[0].instance.quantities()
    rhs, inc = THEOREM_15.restated(ctx).bound(q, F(1, 2), F(1, 2))
    rhs0, inc0 = THEOREM_15.bound(q, F(1, 2), F(1, 2))
    assert inc - inc0 == F(1, 4) * F(1, 2) / F(1, 2) * (1 + q["M"] - F(1, 2)) * (1 - q["W"]) \
        * q["rho"] and "W" in ctx.reads
    with pytest.raises(ValueError, match="declares no constant"):
        THEOREM_13.restated(_ctx(THEOREM_15))


# -- proofs as inequalities ------------------------------------------------------------------
def test_prove_linear_slack_requires_linearity():
    import sympy as sp
    x, a = sp.symbols("x a", nonnegative=True)
    with pytest.raises(ValueError, match="linear"):
        prove_linear_slack(x**2, [x], {a: (0, 1)})
    assert not prove_linear_slack((a - 1) * x, [x], {a: (0, 2)}).proved


def test_theorem15_proof_covers_the_looser_mutants_only():
    half = {"descent_half": F(1, 2), "beta_half": F(1, 2)}
    assert prove_dsgd_descent(half).proved
    for name in ("W", "sum_w2"):  # dropping a factor <= 1 loosens the bound: still proved
        res = prove_dsgd_descent(half, lambda n, v, name=name: v**0 if n == name else v)
        assert res.proved and res.proof
    assert not prove_dsgd_descent(half, lambda n, v: v**0 if n == "1+M" else v).proved
    assert not prove_dsgd_descent({**half, "beta_half": F(7, 20)}).proved


def test_corrected_theorem13_proof_and_its_step_condition():
    four = {"beta1_Z": F(4), "beta2_Z": F(4)}
    assert prove_dsgd_corrected_recursion(four).proved
    assert prove_dsgd_corrected_recursion({**four, "beta2_Z": F(14, 5)}).proved
    assert not prove_dsgd_corrected_recursion({**four, "beta1_Z": F(14, 5)}).proved
    assert not prove_dsgd_corrected_recursion(four, step_scale=2).proved


def test_corrected_theorem17_proof_certificate():
    c = dict(THEOREM_17_CORRECTED.constants)
    res = prove_fedavg_corrected_recursion(c)
    assert res.proved and all(v == "proved" for v in res.lemmas.values())
    assert all(lhs <= rhs for lhs, rhs in res.values.values())
    assert prove_fedavg_corrected_recursion(c, step_scale=2).proved
    # below 2 (the Z coefficient the chain needs as its Young parameters vanish) nothing is
    # proved, and neither is the recursion at four times the step
    assert not prove_fedavg_corrected_recursion({**c, "beta1_Z": F(2)}).proved
    assert not prove_fedavg_corrected_recursion(c, step_scale=4).proved


# -- checks ----------------------------------------------------------------------------------
def test_exact_check_reports_counterexample_ratio_and_instance():
    ev = exact_check(_ctx(THEOREM_13), THEOREM_13, [CE13_CASE, *DSGD_UNIFORM_TIGHT_CASES])
    assert ev.passed is False and ev.counterexample["lhs"] == "93/2048"
    assert ev.counterexample["rhs"] == "327/8192" and ev.ratio == pytest.approx(4 / 3, rel=1e-12)
    assert ev.instance["case"].startswith("CE13")
    ev = exact_check(_ctx(THEOREM_13_CORRECTED), THEOREM_13_CORRECTED, [CE13_CASE])
    assert ev.passed is True and ev.counterexample is None and ev.ratio < 1


def test_adversarial_search_is_seeded_and_rechecks_exactly():
    ctx = _ctx(THEOREM_13)
    a = adversarial_search(ctx, THEOREM_13, DSGD_CONVEX_SEARCH, (3, 10))
    b = adversarial_search(_ctx(THEOREM_13), THEOREM_13, DSGD_CONVEX_SEARCH, (3, 10))
    assert a.ratio == b.ratio and a.instance == b.instance  # bit-identical: same seed, same path
    if a.passed is False:  # a violation is an exact, re-runnable instance
        assert F(a.counterexample["lhs"]) > F(a.counterexample["rhs"])
    ok = adversarial_search(_ctx(THEOREM_13_CORRECTED), THEOREM_13_CORRECTED,
                            DSGD_CONVEX_SEARCH, (3, 10))
    assert ok.passed is True and ok.ratio <= 1


def test_proof_check_proves_or_leaves_undecided_never_refutes():
    thm = THEOREM_13_CORRECTED
    ev = proof_check(_ctx(thm), thm, prove_dsgd_corrected_recursion, "chain")
    assert ev.passed is True and ev.proof
    ctx = _ctx(thm, Mutant("step", thm.step, F(2)))
    ev = proof_check(ctx, thm, prove_dsgd_corrected_recursion, "chain")
    assert ev.passed is None and ev.proof is None and thm.step in ctx.reads


def test_register_exact_checks_adds_the_two_named_checks():
    claim = Claim(id="demo.t15", family="demo", seed_ref="t", title="t", statement="s",
                  kind=ClaimKind.UPPER_BOUND, stated=Stated(THEOREM_15.constants,
                                                            factors=THEOREM_15.factors))
    register_exact_checks(claim, THEOREM_15, DSGD_NONCONVEX_CASES[:1], DSGD_CONVEX_SEARCH, "dsgd")
    assert [c.name for c in claim.checks] == ["exact_instances", "adversarial_search"]
    res = claim.verify(only=["exact_instances"])
    assert res.tightness["ratio"] == 1.0 and res.checks[0].reads == sorted(
        ["beta_half", "descent_half", "1+M", "W", "sum_w2"])


def test_monte_carlo_check_reports_its_tightness():
    inst = DSGD_NONCONVEX_CASES[0].instance  # attained at x*: the ratio is 1 up to noise
    sc = FixedIterate("tight", inst.problem(), inst.noise(), np.zeros(1), inst.m)
    ev = dsgd_check(_ctx(THEOREM_15), [sc], THEOREM_15)
    assert ev.passed is True and ev.instance["scenario"] == "tight"
    # gamma = 1 exactly here (two non-zero updates, m = 2), so only the replicas' mean is
    # random: the ratio is 1 within the Monte Carlo error, measured in increments
    row = ev.data["scenarios"][0]
    assert row["gamma_lower"] == row["gamma_upper"] == 1.0
    assert abs(ev.ratio - 1) <= 6 * row["stderr"] / row["increment"]
