"""Theorems 13, 15, 17 and 18 of seed 002 as objects (fedtheory.theory.ocs_theorems) and their
one-step Monte Carlo from a fixed iterate (fedtheory.experiments.ocs_theorems), against the
exact rational counterexamples."""

from fractions import Fraction

import numpy as np
import pytest

from fedtheory import stats
from fedtheory.experiments.ocs_theorems import (
    FixedIterate,
    dsgd_one_step_from_fixed_iterate,
    fedavg_one_step_from_fixed_iterate,
)
from fedtheory.problems import QuadraticProblem, RelativeNoise
from fedtheory.theory.ocs_counterexamples import (
    CE13,
    exact_dsgd_counterexample,
    exact_fedavg_counterexample,
)
from fedtheory.theory.ocs_theorems import (
    DISTANCE_TO_OPTIMUM,
    NEXT_LOSS,
    THEOREM_13,
    THEOREM_13_CORRECTED,
    THEOREM_15,
    THEOREM_17,
    THEOREM_17_CORRECTED,
    THEOREM_18,
    DsgdTheorem,
    FedavgTheorem,
)

from ._tolerance import assert_close_sum

EXACT = RelativeNoise(0.0, 0.0)


def _line(weights, centers) -> QuadraticProblem:
    """f_i = (x - c_i)^2 / 2 in one dimension (L = mu = 1), as the exact counterexamples."""
    return QuadraticProblem(np.ones((len(centers), 1)), np.asarray(centers, float)[:, None],
                            weights=np.asarray(weights, float))


def _ce13_problem() -> tuple[QuadraticProblem, np.ndarray]:
    return _line([float(w) for w in CE13["weights"]], [float(c) for c in CE13["centers"]]), \
        np.array([float(CE13["x"])])


def _ce17_problem() -> QuadraticProblem:
    return _line(np.full(8, 1 / 8), [1.0, -1.0] * 4)


def test_theorem_objects_are_typed_by_method_and_bounded_quantity():
    for thm in (THEOREM_13, THEOREM_13_CORRECTED, THEOREM_15):
        assert isinstance(thm, DsgdTheorem)
    for thm in (THEOREM_17, THEOREM_17_CORRECTED, THEOREM_18):
        assert isinstance(thm, FedavgTheorem)
    assert {t.name for t in (THEOREM_13, THEOREM_13_CORRECTED, THEOREM_15, THEOREM_17,
                             THEOREM_17_CORRECTED, THEOREM_18)} == {"13", "13c", "15", "17",
                                                                     "17c", "18"}
    for thm in (THEOREM_13, THEOREM_13_CORRECTED, THEOREM_17, THEOREM_17_CORRECTED):
        assert thm.bounds is DISTANCE_TO_OPTIMUM
    for thm in (THEOREM_15, THEOREM_18):
        assert thm.bounds is NEXT_LOSS


def test_bounded_quantities_per_replica_and_reference():
    prob, x = _ce13_problem()  # x* = 1/4, f(x) = sum_i w_i (x - c_i)^2 / 2
    x_next = np.array([[0.25], [1.25], [-0.75]])
    # bit-identical: squares of exact binary fractions
    np.testing.assert_array_equal(DISTANCE_TO_OPTIMUM.of_next(prob, x_next), [0.0, 1.0, 1.0])
    assert DISTANCE_TO_OPTIMUM.reference(prob, x) == 0.0
    loss = 0.75 * 0.5**2 / 2 + 0.25 * 0.5**2 / 2
    assert_close_sum(NEXT_LOSS.reference(prob, x), loss, loss)
    assert_close_sum(NEXT_LOSS.of_next(prob, x_next[:1]), [prob.f_star], prob.f_star)


@pytest.mark.parametrize("theorem, corrected", [(THEOREM_13, False),
                                                (THEOREM_13_CORRECTED, True)])
def test_dsgd_theorem_objects_match_exact_arithmetic(theorem, corrected):
    out = exact_dsgd_counterexample(CE13["weights"], CE13["centers"], CE13["x"], CE13["m"],
                                    corrected=corrected)
    prob, x = _ce13_problem()
    gamma = float(out["gamma"])
    eta = theorem.eta_max(prob, EXACT, gamma)
    assert_close_sum(eta, float(out["eta"]), float(out["eta"]))
    rhs = theorem.rhs(prob, EXACT, x, float(out["eta"]), gamma)
    r2 = (CE13["x"] - out["x_star"]) ** 2
    terms = float((1 - out["eta"]) * r2 + out["eta"] ** 2 * (out["beta1"] / out["gamma"]
                                                            + out["beta2"]))
    assert_close_sum(rhs, float(out["rhs"]), terms)


@pytest.mark.parametrize("theorem, corrected", [(THEOREM_17, False),
                                                (THEOREM_17_CORRECTED, True)])
def test_fedavg_theorem_objects_match_exact_arithmetic(theorem, corrected):
    out = exact_fedavg_counterexample(8, 1, 2, corrected=corrected)
    prob = _ce17_problem()
    gamma = float(out["gamma"])
    assert_close_sum(theorem.eta_g_min(prob, gamma), float(out["eta_g"]), float(out["eta_g"]))
    assert_close_sum(theorem.eta_max(prob, EXACT, gamma, 2), float(out["eta"]),
                     float(out["eta"]))
    rhs = theorem.rhs(prob, EXACT, prob.x_star, float(out["eta"]), gamma, 2)
    assert_close_sum(rhs, float(out["rhs"]), float(out["rhs"]))


def test_theorem18_step_limits():
    prob = _ce17_problem()
    noise = RelativeNoise(0.5, 0.1)
    # 1 / (8 L (2 + M/R)) whatever gamma; eta_g >= sqrt(5 gamma / (4 sum w_i^2))
    for gamma in (0.125, 0.5, 1.0):
        assert_close_sum(THEOREM_18.eta_max(prob, noise, gamma, 2), 1 / (8 * 2.25), 1 / 18)
        assert_close_sum(THEOREM_18.eta_g_min(prob, gamma), np.sqrt(10 * gamma),
                         np.sqrt(10 * gamma))
    assert THEOREM_17_CORRECTED.eta_g_min(prob, 0.01) == 1.0  # the corrected eta_g >= 1
    assert THEOREM_17.eta_g_min(prob, 0.01) < 1.0


def _within_stderr(samples: np.ndarray, exact: float) -> None:
    """The replica mean is within z standard errors of the exact conditional expectation
    (two-sided, at the checks' false-alarm level)."""
    ci = stats.mean_interval(samples, stats.DEFAULT_ALPHA, "two")
    assert ci.lower <= exact <= ci.upper, (float(ci.mean), exact, float(ci.stderr))


def test_dsgd_one_step_from_fixed_iterate_estimates_the_exact_conditional_expectation():
    out = exact_dsgd_counterexample(CE13["weights"], CE13["centers"], CE13["x"], CE13["m"])
    prob, x = _ce13_problem()
    sc = FixedIterate("ce13", prob, EXACT, x, CE13["m"])
    rng = np.random.default_rng(1)
    lhs, bound, row = dsgd_one_step_from_fixed_iterate(sc, 20_000, rng, rng, 1e-6, THEOREM_13)
    assert lhs.shape == (20_000,)
    # exact gradients: the improvement factor is the same in every replica (no interval)
    assert_close_sum(row["gamma_lower"], float(out["gamma"]), float(out["gamma"]))
    assert_close_sum(row["gamma_upper"], float(out["gamma"]), float(out["gamma"]))
    assert_close_sum(row["eta"], float(out["eta"]), float(out["eta"]))
    assert_close_sum(bound, float(out["rhs"]), 2 * float(out["rhs"]))
    _within_stderr(lhs, float(out["lhs"]))
    assert float(out["lhs"]) > float(out["rhs"])  # the counterexample the check detects


def test_fedavg_one_step_from_fixed_iterate_estimates_the_exact_conditional_expectation():
    out = exact_fedavg_counterexample(8, 1, 2)
    prob = _ce17_problem()
    sc = FixedIterate("ce17", prob, EXACT, prob.x_star, 1, 2)
    rng = np.random.default_rng(2)
    lhs, bound, row = fedavg_one_step_from_fixed_iterate(sc, 20_000, rng, rng, 1e-6, THEOREM_17,
                                                         rng_pilot=np.random.default_rng(3))
    assert row["steps_ok"]
    # the steps sit a relative margin of about 1e-9 inside the theorem's limits
    assert abs(row["eta"] - float(out["eta"])) <= 1e-8 * float(out["eta"])
    assert abs(bound - float(out["rhs"])) <= 1e-8 * float(out["rhs"])
    _within_stderr(lhs, float(out["lhs"]))


def test_theorem15_step_maximises_the_descent_term():
    """gamma/((1+M)L) maximises eta (1 - (1+M) L eta / (2 gamma)) ||grad f||^2, the descent
    part of (24): the right-hand side minus its eta^2 beta term is smallest there."""
    rng = np.random.default_rng(4)
    prob = QuadraticProblem(np.ones((6, 2)), rng.standard_normal((6, 2)))  # A_i = L I, rho < oo
    noise = RelativeNoise(0.5, 0.3)
    x = prob.x_star + 0.3
    gamma = 0.4
    eta = THEOREM_15.eta_max(prob, noise, gamma)
    assert_close_sum(eta, gamma / (1.5 * prob.L), eta)
    beta = THEOREM_15.rhs(prob, noise, prob.x_star, 1.0, gamma) - prob.f_star  # grad f(x*) = 0

    def descent(step: float) -> float:
        return THEOREM_15.rhs(prob, noise, x, step, gamma) - step**2 * beta

    for step in (0.9 * eta, 1.1 * eta):
        assert descent(step) > descent(eta)


def test_exact_rationals_are_fractions():
    out = exact_dsgd_counterexample(CE13["weights"], CE13["centers"], CE13["x"], CE13["m"])
    assert out["lhs"] == Fraction(93, 2048) and out["rhs"] == Fraction(327, 8192)


def test_one_step_runs_is_pure_and_named_by_streams():
    """experiments.ocs_theorems computes on named streams, without a claim context."""
    from fedtheory.experiments.ocs_theorems import nonconvex_scenarios, one_step_runs
    from fedtheory.streams import stream_rng

    scen = nonconvex_scenarios(np.random.default_rng(0), quick=True, R=1)[:2]

    def streams(name):
        return stream_rng(3, "demo", name)

    a = one_step_runs(scen, THEOREM_15, 200, streams)
    b = one_step_runs(scen, THEOREM_15, 200, streams)
    assert a.samples.shape == (200, 2) and a.bounds.shape == (2,)
    np.testing.assert_array_equal(a.samples, b.samples)
    assert a.level_gamma == stats.DEFAULT_ALPHA / 4
    assert [r["scenario"] for r in a.rows] == [sc.name for sc in scen]
    with pytest.raises(ValueError, match="scenarios"):
        one_step_runs([], THEOREM_15, 200, streams)
    with pytest.raises(ValueError, match="reps"):
        one_step_runs(scen, THEOREM_15, 1, streams)


def test_scenario_builders_take_a_generator_and_check_their_input():
    from fedtheory.experiments.ocs_theorems import (
        dsgd_strongly_convex_scenarios,
        fedavg_strongly_convex_scenarios,
    )

    quick = dsgd_strongly_convex_scenarios("uniform", np.random.default_rng(1))
    full = dsgd_strongly_convex_scenarios("uniform", np.random.default_rng(1), quick=False)
    assert len(full) == len(quick) + 1
    assert all(sc.R == 1 for sc in quick)
    assert {sc.R for sc in fedavg_strongly_convex_scenarios(np.random.default_rng(1))} == {2, 3}
    with pytest.raises(ValueError, match="weights"):
        dsgd_strongly_convex_scenarios("skewed", np.random.default_rng(1))


def test_hill_climb_is_seeded_and_pure():
    from fedtheory.experiments.ocs_theorem_exact import DSGD_CONVEX_SEARCH, hill_climb

    a = hill_climb(THEOREM_13, DSGD_CONVEX_SEARCH, (2, 5), np.random.default_rng(4))
    b = hill_climb(THEOREM_13, DSGD_CONVEX_SEARCH, (2, 5), np.random.default_rng(4))
    assert a == b and a.evaluations == 2 * 6 and a.restarts == 2


def test_search_points_decode_to_their_exact_instances():
    """The search decodes a point into integer pairs: their floats are the exact case's floats,
    and each pair is what ``rationalize`` (Fraction.limit_denominator) gives, ties included."""
    from fedtheory.experiments import ocs_theorem_exact as xe
    from fedtheory.experiments.search import rationalize

    for v, d in [(0.5, 100), (1 / 3, 100), (-2 / 3, 3), (0.123456789, 1000), (-29.99, 1000),
                 (1e-12, 500), (0.005, 100), (0.015, 100), (2.0, 1), (2.5, 1), (-2.5, 1)]:
        assert Fraction(*xe._nearest(v, d)) == rationalize(v, d), (v, d)
    rng = np.random.default_rng(7)
    for family in (xe.DSGD_CONVEX_SEARCH, xe.DSGD_NONCONVEX_SEARCH, xe.FEDAVG_NONCONVEX_SEARCH):
        for n in family.ns:
            R = family.Rs[0] if family.Rs else None
            for noise, sign in [("none", 1), ("relative", -1), ("additive", 1)]:
                vec = rng.standard_normal(3 * n + 4) * 2
                point = xe._decode_point(vec, n, noise, sign, family, R is not None)
                case = xe._decode(vec, n, 1, R, noise, sign, family)
                assert point.numbers() == case.instance.numbers(exact=False)
                assert Fraction(*point.theta) == case.theta
                assert Fraction(*point.g_scale) == case.g_scale


def test_float_evaluation_on_arrays_is_the_row_by_row_one_bit_for_bit(monkeypatch):
    """Float evaluations with many sign patterns run on arrays over the patterns
    (``_VECTOR_ROWS``); the result is the row-by-row code's, bit for bit (so the adversarial
    searches follow the same path either way), and it agrees with the exact evaluation."""
    from fedtheory.experiments import ocs_theorem_exact as xe
    from fedtheory.theory import ocs_exact

    rng = np.random.default_rng(3)
    cases = []
    for thm, family in [(THEOREM_13, xe.DSGD_CONVEX_SEARCH), (THEOREM_15, xe.DSGD_NONCONVEX_SEARCH),
                        (THEOREM_17, xe.FEDAVG_CONVEX_SEARCH),
                        (THEOREM_18, xe.FEDAVG_NONCONVEX_SEARCH)]:
        n, R = max(family.ns), (2 if family.Rs else None)
        for noise, sign in [("relative", 1), ("additive", -1), ("none", 1)]:
            vec = rng.standard_normal(3 * n + 4)
            cases.append((thm, xe._decode(vec, n, 2, R, noise, sign, family)))
    monkeypatch.setattr(ocs_exact, "_VECTOR_ROWS", 0)
    on_arrays = [xe.evaluate_case(thm, case, exact=False) for thm, case in cases]
    monkeypatch.setattr(ocs_exact, "_VECTOR_ROWS", 10**9)
    by_rows = [xe.evaluate_case(thm, case, exact=False) for thm, case in cases]
    for (thm, case), a, b in zip(cases, on_arrays, by_rows, strict=True):
        assert a == b and all(type(a[k]) is type(b[k]) for k in a), case.name
        exact = xe.evaluate_case(thm, case)
        for key in ("lhs", "rhs", "gamma"):  # a fixed point iterated in floats: not to the ulp
            assert a[key] == pytest.approx(float(exact[key]), rel=1e-9, abs=1e-12), key


def test_float_step_checks_its_input():
    from fedtheory.theory.ocs_exact import LineInstance, float_step

    v = LineInstance([Fraction(1, 2)] * 2, [1, 1], [0, 1], 0, 1).numbers(exact=False)
    with pytest.raises(ValueError, match="m must be"):
        float_step(THEOREM_13, v, 3)
    with pytest.raises(ValueError, match="DSGD"):
        float_step(THEOREM_17, v, 1)
    with pytest.raises(ValueError, match="FedAvg"):
        float_step(THEOREM_13, v, 1, R=2)
    with pytest.raises(ValueError, match="theta"):
        float_step(THEOREM_13, v, 1, theta=2.0)
    # degenerate: m = n (full participation, gamma = 1) and every update zero (all clients'
    # minimum at x^k: gamma = 1, nothing moves)
    assert float_step(THEOREM_15, v, 2)["gamma"] == 1.0
    at_opt = float_step(THEOREM_17, {**v, "c": [0.5, 0.5], "x": 0.5}, 1, R=2)
    assert at_opt["gamma"] == 1.0 and at_opt["lhs"] == 0.0
