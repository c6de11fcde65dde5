"""The stated side of the OCS sampling claims (seed 002) and the power of their checks: the
closed form and the optimal variance evaluated from their parts, the improvement factor's
statements as slacks, the sqrt-n decision of the experiment, and ``--power`` on the claims."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from fedtheory.claimkit.power import mutant_outcome, power
from fedtheory.claims.registry import get_claim
from fedtheory.experiments.ocs_runs import SqrtNSweep, sqrt_n_budget
from fedtheory.sampling.ocs import closed_form_as_printed, optimal_probabilities
from fedtheory.symbolic.inequality import prove_nonnegative
from fedtheory.symbolic.kkt import kkt_points_exact
from fedtheory.symbolic.ocs_improvement_bound import improvement_slacks
from fedtheory.symbolic.ocs_independent_variance import derive_independent_variance
from fedtheory.symbolic.ocs_optimal_variance import derive_optimal_variance
from fedtheory.theory.ocs import (
    exact_instances,
    smallest_appendix_counterexample,
    stated_closed_form,
    stated_optimal_variance,
)


def _drop(c):
    return c**0


# ---------------------------------------------------------------- the closed form, from its parts
@pytest.mark.parametrize("ordering", ["smallest", "largest"])
def test_stated_printed_form_is_the_literal_transcription(ordering):
    """With every factor kept, the printed form is closed_form_as_printed, exactly."""
    for n in range(1, 5):
        for u in itertools.combinations_with_replacement(range(1, 4), n):
            for m in range(1, n + 1):
                args = [sp.Integer(x) for x in u], sp.Integer(m)
                assert (stated_closed_form(*args, ordering, "printed")
                        == closed_form_as_printed(*args, ordering)), (u, m)


def test_stated_corrected_form_is_the_unique_kkt_point():
    """Zeros, ties, fractional m: the corrected statement evaluated exactly is the KKT point,
    and the library's optimal_probabilities equals it up to rounding."""
    rng = np.random.default_rng(5)
    cases = exact_instances(rng, 40, zeros=True) + [([0, 0, 0], Fraction(1)),
                                                    ([0, 5, 0, 1], Fraction(3))]
    for u, m in cases:
        p, _ = stated_closed_form([sp.Integer(x) for x in u], sp.Rational(m))
        (pt,) = kkt_points_exact(u, m)
        assert list(pt.p) == p, (u, m)
        # optimal_probabilities rounds each p_i once or twice: a few ulps of 1
        np.testing.assert_allclose(optimal_probabilities(u, float(m)),
                                   [float(x) for x in p], rtol=0, atol=8 * np.finfo(float).eps)


def test_dropping_a_stated_factor_changes_p_where_there_is_truncation():
    u, m = [sp.Integer(x) for x in (1, 2, 10)], sp.Integer(2)
    p, ell = stated_closed_form(u, m)
    assert (p, ell) == ([sp.Rational(1, 3), sp.Rational(2, 3), 1], 2)
    p_budget, _ = stated_closed_form(u, m, budget=_drop)  # p_i = u_i / S_l: sum < m
    assert p_budget == [sp.Rational(1, 3), sp.Rational(2, 3), 1]  # m + l - n = 1 here
    u4, m4 = [sp.Integer(x) for x in (1, 2, 3, 20)], sp.Rational(5, 2)
    p4, ell4 = stated_closed_form(u4, m4)
    assert sum(p4) == m4 and ell4 == 3
    assert sum(stated_closed_form(u4, m4, budget=_drop)[0]) < m4
    # the condition's factor dropped: u_(l) <= S_l always holds, so l = n and p_4 = 1 is lost
    p_cond, ell_cond = stated_closed_form(u4, m4, condition=_drop)
    assert ell_cond == 4 and p_cond != p4


def test_stated_closed_form_validates():
    with pytest.raises(ValueError, match="ordering"):
        stated_closed_form([1, 2], 1, "up")
    with pytest.raises(ValueError, match="form"):
        stated_closed_form([1, 2], 1, form="appendix")
    with pytest.raises(ValueError, match="positive"):
        stated_closed_form([0, 2], 1, form="printed")
    with pytest.raises(ValueError, match="non-negative"):
        stated_closed_form([-1, 2], 1)
    with pytest.raises(ValueError, match="0 < m <= n"):
        stated_closed_form([1, 2], 3)
    with pytest.raises(ValueError, match="non-empty"):
        stated_closed_form([], 1)


def test_appendix_search_reads_the_reading_it_is_given():
    default = smallest_appendix_counterexample()
    assert default[0]["norms"] == [1, 2] and default[0]["printed_p"] == ["2/3", "4/3"]

    def largest(u, m):
        return stated_closed_form(u, m, "largest", "printed")

    assert smallest_appendix_counterexample(closed_form=largest) == default

    def smallest(u, m):
        return stated_closed_form(u, m, "smallest", "printed")

    assert smallest_appendix_counterexample(closed_form=smallest) == []  # eq. (7) holds


def test_stated_optimal_variance_is_the_value_at_the_kkt_point():
    rng = np.random.default_rng(7)
    for u, m in exact_instances(rng, 30, zeros=True):
        (pt,) = kkt_points_exact(u, m)
        value = stated_optimal_variance([Fraction(x) for x in u], m)
        assert Fraction(str(pt.value)) == value, (u, m)
    u, m = [Fraction(1), Fraction(1), Fraction(10)], Fraction(2)
    assert stated_optimal_variance(u, m) == 2
    assert stated_optimal_variance(u, m, _drop) == 2 * 2 - 2 == 2  # 1/(m-(n-l)) = 1 here
    u, m = [Fraction(1), Fraction(2), Fraction(3)], Fraction(3, 2)
    assert stated_optimal_variance(u, m, _drop) != stated_optimal_variance(u, m)


# ------------------------------------------------------------------- symbolic derivations' sides
def test_derivations_take_the_stated_side():
    d = derive_independent_variance(2, 1, lambda w, p, u2: w**2 * (1 - p) / p * u2)
    assert d["difference"] == 0 and set(d["symbols"]) == {"p", "w", "U"}
    assert derive_independent_variance(2, 1, lambda w, p, u2: w**2 / p * u2)["difference"] != 0
    ov = derive_optimal_variance()
    assert sp.simplify(ov["value"] - ov["seed"]) == 0
    dropped = derive_optimal_variance(_drop)
    assert sp.simplify(dropped["value"] - dropped["seed"]) != 0


def _statuses(**constants):
    return {k: prove_nonnegative(v["slack"], v["ranges"], conditions=v["conditions"]).status
            for k, v in improvement_slacks(**constants).items()}


def test_improvement_slacks_prove_the_statement_and_refute_its_strengthenings():
    assert set(_statuses().values()) == {"proved"}
    weak = Fraction(7, 10)
    assert _statuses(bound_coef=weak)["alpha <= c_B bound"] == "violated"
    assert _statuses(alpha_max=weak)["bound <= c_alpha"] == "violated"
    g = _statuses(gamma_max=weak)
    assert g["gamma <= c_gamma"] == g["gamma <= c_gamma at alpha = 0"] == "violated"
    # a smaller constant in gamma >= c m/n weakens a true statement: still proved
    assert set(_statuses(gamma_min=weak).values()) == {"proved"}
    # and a larger one is false (gamma = m/n at alpha = 1 is the worst case)
    assert _statuses(gamma_min=Fraction(13, 10))["gamma >= c_m m/n"] == "violated"


# ---------------------------------------------------------------- the experiment's sqrt-n check
def _sweep(lower, upper, grids, eps=0.01):
    ns = tuple(grids)
    m_star = {n: next((m for m, u in zip(grids[n], upper[n], strict=True) if u <= eps), None)
              for n in ns}
    return SqrtNSweep(ns=ns, grids=grids, acc_gap={},
                      upper={n: np.array(upper[n]) for n in ns},
                      lower={n: np.array(lower[n]) for n in ns}, m_star=m_star, epsilon=eps,
                      alpha=1e-6, sizes={})


def test_sqrt_n_budget():
    assert [sqrt_n_budget(n, 6) for n in (8, 16, 32, 64, 128)] == [3, 5, 6, 9, 12]
    assert [sqrt_n_budget(n, 4.2) for n in (8, 16, 32)] == [3, 3, 5]
    assert sqrt_n_budget(2, 6) == 1  # at most n - 1


def test_sqrt_n_decision_holds_fails_or_is_undecided():
    grids = {8: (1, 2, 3, 4), 32: (1, 2, 3, 4, 6)}
    lower = {8: [0.02, 0.0, 0.0, 0.0], 32: [0.03, 0.012, 0.005, 0.0, 0.0]}
    upper = {8: [0.03, 0.005, 0.004, 0.003], 32: [0.05, 0.02, 0.011, 0.009, 0.004]}
    sw = _sweep(lower, upper, grids)
    dec = sw.decide(6)  # budgets 3 and 6: m* = 2 and 4 match within them
    assert [r["status"] for r in dec["rows"]] == ["holds", "holds"]
    assert dec["failed"] == dec["undecided"] == []
    # m* (32) = 4: the smallest m(32) the sweep supports is 4 (no ceiling)
    assert dec["m32_data"] == pytest.approx(4.0)
    # m = 2 at n = 32 is clearly worse (lower limit 0.012 > 0.01): constants up to m(32) = 2
    assert dec["m32_refutable"] == pytest.approx(2.0) and dec["m_fail"] == {8: 1, 32: 2}
    low = sw.decide(2.4)  # budgets 2 (n = 8: holds) and 3 at n = 32: upper 0.011, undecided
    assert [r["status"] for r in low["rows"]] == ["holds", "undecided"]
    lower_still = sw.decide(1.5)  # budgets 1 and 2: both clearly worse than full
    assert lower_still["failed"] == [8, 32] and lower_still["rows"][1]["tested_m"] == 2
    # a budget off the grid is judged at the smallest grid m above it
    off = _sweep({32: [0.03, 0.02, 0.0]}, {32: [0.05, 0.03, 0.004]}, {32: (1, 4, 6)})
    row = off.decide(3)["rows"][0]  # budget 3: tested at m = 4, which is clearly worse
    assert row["budget"] == 3 and row["tested_m"] == 4 and row["status"] == "fails"


# ------------------------------------------------------------------------------ --power outcomes
FAST = ["ocs.independent_variance", "ocs.closed_form.corrected", "ocs.kkt_derivation",
        "ocs.optimal_variance"]


@pytest.mark.xdist_group("ocs")  # the family's worker holds its shared verifications
@pytest.mark.parametrize("claim_id", FAST)
def test_every_mutant_of_the_sampling_identities_is_caught(claim_id, verified):
    out = verified.power(get_claim(claim_id))
    assert out and all(m["outcome"] == "caught" for m in out), out
    for m in out:  # a concrete counterexample, never the core's placeholder
        assert "without a recorded counterexample" not in str(m["instance"])


@pytest.mark.xdist_group("ocs")
def test_closed_form_erratum_and_its_mutants(verified):
    claim = get_claim("ocs.closed_form")
    assert claim.erratum.kind == "typo" and claim.erratum.intended_holds is True
    res = verified.result(claim)
    assert res.verdict.value == "refuted" and res.counterexample["norms"] == [1, 2]
    # a refuted statement gets no power table ...
    assert verified.power(claim) == []
    # ... yet the main-text reading's checks (which hold) catch each dropped factor by
    # themselves: the reading the erratum keeps is tested with power
    main = ["main_text_reading_exact", "main_text_reading_vs_cvxpy"]
    mutants = claim.stated.mutants(claim.kind.value)
    assert mutants
    for m in mutants:
        out = mutant_outcome(m, claim.verify(only=main, mutant=m))
        assert out["outcome"] == "caught" and set(main) <= set(out["by"]), out


@pytest.mark.slow
def test_improvement_factor_tightness_and_power():
    claim = get_claim("ocs.improvement_factor")
    res = claim.verify()
    assert res.tightness["ratio"] == 1.0  # equal norms: alpha = bound = 1, exactly
    out = {m["target"]: m for m in power(claim)}
    assert [out[k]["outcome"] for k in ("c in alpha <= c (sum u)^2/(n sum u^2)",
                                        "1 in alpha <= 1", "1 in gamma <= 1",
                                        "c in gamma >= c m/n")] == ["caught"] * 4
    # gamma >= c m/n is a lower bound: its mutant raises c (x 13/10), false at equal norms
    assert out["c in gamma >= c m/n"]["scale"] == "13/10"
    assert {"bound_with_truncation", "exact_instances"} <= set(out["c in gamma >= c m/n"]["by"])
    assert not any(m["statement_unchanged"] for m in out.values())
