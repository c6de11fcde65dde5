"""Family ``is`` under ``--power``: the worst-case instances, the adversarial-search pieces, the
stated sides read through the context, and mutants that must be caught or proved."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from fedtheory.claimkit.power import mutant_outcome
from fedtheory.claimkit.stated import Mutant
from fedtheory.claims import get_claim
from fedtheory.sampling.designs import ExplicitSampling
from fedtheory.sampling.moments import enumerate_moments, variance_formula
from fedtheory.symbolic.estimator_mean import derive_mean_independent_and_arbitrary
from fedtheory.theory.importance_sampling import (
    equal_spread_updates,
    hill_climb,
    mean_spread,
    sign_patterns,
    sign_variances,
    softmax_pair_matrices,
    softmax_probabilities,
    subset_masks,
)


def test_equal_spread_updates_attain_the_sigma_bound():
    g = equal_spread_updates(np.random.default_rng(3), 8, 3)
    assert g.dtype.kind == "i" and g.shape == (8, 3)
    dev = g * 8 - g.sum(axis=0)  # 8 (g_i - Gbar), exact integers
    norms = (dev * dev).sum(axis=1)
    assert len(set(norms.tolist())) == 1 and norms[0] > 0
    # the mean squared deviation equals the largest one: sigma_G^2 is attained
    assert mean_spread(g.astype(object)) == Fraction(int(norms.max()), 64)
    for bad in (7, 0, True):
        with pytest.raises(ValueError, match="n must be an even integer"):
            equal_spread_updates(np.random.default_rng(0), bad, 2)
    with pytest.raises(ValueError, match="d must be a positive integer"):
        equal_spread_updates(np.random.default_rng(0), 4, 0)


def test_mean_spread_exact_and_float_agree():
    g = np.array([[1, 2], [3, -1], [0, 4]])
    exact = mean_spread(g.astype(object))
    dev = g - g.mean(axis=0)
    direct = float(np.mean((dev * dev).sum(axis=1)))
    assert isinstance(exact, Fraction)
    assert float(exact) == pytest.approx(direct, rel=1e-15)
    assert float(mean_spread(g.astype(float))) == pytest.approx(direct, rel=1e-15)


def test_hill_climb_finds_the_maximum_and_validates():
    rng = np.random.default_rng(1)
    val, x = hill_climb(lambda X: -np.abs(X - 2.0).sum(axis=1), rng.normal(size=(16, 3)), rng,
                        300)
    # step sizes shrink geometrically: the optimum is reached to far better than 1e-3
    assert val > -1e-3 and np.allclose(x, 2.0, atol=1e-3)
    # NaN values count as -inf: never chosen
    val2, _ = hill_climb(lambda X: np.where(X[:, 0] > 0, np.nan, X[:, 0]), -np.ones((4, 1)),
                         rng, 50)
    assert np.isfinite(val2) and val2 <= 0
    with pytest.raises(ValueError, match="x0 must have shape"):
        hill_climb(lambda X: X.sum(axis=1), np.zeros(3), rng, 1)
    with pytest.raises(ValueError, match="steps must be"):
        hill_climb(lambda X: X.sum(axis=1), np.zeros((2, 2)), rng, -1)


def test_subsets_softmax_and_pair_matrices():
    masks = subset_masks(3)
    assert masks.shape == (8, 3) and len({tuple(r) for r in masks.tolist()}) == 8
    with pytest.raises(ValueError, match="n must be an integer in 1..12"):
        subset_masks(0)
    logits = np.random.default_rng(0).normal(size=(5, 8))
    pi = softmax_probabilities(logits, floor=0.2)
    assert np.allclose(pi.sum(axis=1), 1.0, rtol=0, atol=1e-15) and np.all(pi >= 0.2 / 8 - 1e-16)
    with pytest.raises(ValueError, match="floor must lie in"):
        softmax_probabilities(logits, floor=1.5)
    P = softmax_pair_matrices(masks, logits, floor=0.2)
    for row, prob in zip(P, pi, strict=True):  # the same matrix as the explicit design's
        design = ExplicitSampling(masks.astype(bool), prob / prob.sum())
        assert np.allclose(row, design.P, rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match="logits must have shape"):
        softmax_pair_matrices(masks, logits[:, :7])


def test_sign_variances_match_exact_enumeration():
    """Every sign pattern's variance from the vectorised formula equals the exact enumeration
    of the flipped updates (and the pattern and its negative are not both listed)."""
    masks = subset_masks(3)
    probs = [Fraction(k + 1, 36) for k in range(8)]
    design = ExplicitSampling(masks.astype(bool), probs)
    w = [Fraction(1, 3)] * 3
    zeta = np.array([[1, -2], [3, 1], [-1, 2]])
    A = np.array([[float(Fraction(int(z)) * w[i] / design.p_exact[i]) for z in zeta[i]]
                  for i in range(3)])
    got = sign_variances(design.P[None], A[None])[0]
    signs = sign_patterns(3)
    assert signs.shape == (4, 3) and np.all(signs[:, 0] == 1)
    assert {tuple(s) for s in signs.tolist()} | {tuple(-s) for s in signs} == \
        set(itertools.product((1, -1), repeat=3))
    for s, val in zip(signs, got, strict=True):
        _, exact = enumerate_moments(design, w, zeta * s[:, None], exact=True)
        assert val == pytest.approx(float(exact), rel=1e-12)
    # and the average over all 2^n patterns is independent sampling's variance
    C = design.P - np.outer(design.p, design.p)
    assert got.mean() == pytest.approx(float(np.sum(np.diag(C) * (A * A).sum(axis=1))),
                                       rel=1e-12)
    assert sign_patterns(1).tolist() == [[1]]


def test_mean_derivation_of_a_mis_stated_estimator():
    m = derive_mean_independent_and_arbitrary(3, 1, importance=lambda q: 1)
    p = sp.symbols("p0:3", positive=True)
    g = [sp.Symbol(f"g_{i}0", real=True) for i in range(3)]
    assert sp.simplify(m.mean_independent[0] - sum(p[i] * g[i] for i in range(3)) / 3) == 0
    half = derive_mean_independent_and_arbitrary(2, 1, scale=sp.Rational(1, 2))
    assert sp.simplify(half.mean_independent[0] - half.gbar[0] / 2) == 0
    assert sp.simplify(half.mean_arbitrary[0] - half.gbar[0] / 2) == 0


def test_unbiased_mutants_are_caught_with_concrete_counterexamples():
    claim = get_claim("is.unbiased")
    for mutant in claim.stated.mutants(claim.kind.value):
        res = claim.verify(mutant=mutant)
        out = mutant_outcome(mutant, res)
        assert out["outcome"] == "caught", out
        assert set(out["by"]) == {c.name for c in claim.checks}
        sym = next(c for c in res.checks if c.name == "unbiased_indicator_algebra")
        assert sym.counterexample["measured"] != sym.counterexample["stated"]
        assert set(sym.counterexample["inputs"]) >= {"p0", "g_00"}


def test_wor_bound_inequality_refutes_only_at_integer_n_and_b():
    claim = get_claim("is.variance_without_replacement")
    res = claim.verify(only=["wor_generic_derivation"])
    assert res.checks[0].passed and res.checks[0].proof  # identity and bound proved
    mutant = Mutant("constant", "bound_coefficient", Fraction(7, 10))
    ce = claim.verify(only=["wor_generic_derivation"], mutant=mutant).checks[0].counterexample
    n, b = Fraction(ce["n"]), Fraction(ce["b"])
    assert ce["part"] == "bound" and n.denominator == 1 and b.denominator == 1 and 1 <= b < n
    assert Fraction(ce["bound_minus_variance"]) < 0
    # the same mutant is caught by the tight instance, exactly and by Monte Carlo
    out = mutant_outcome(mutant, claim.verify(mutant=mutant, only=[
        "wor_exact_enumeration", "wor_tight_monte_carlo", "wor_adversarial"]))
    assert out["outcome"] == "caught"
    assert set(out["by"]) == {"wor_exact_enumeration", "wor_tight_monte_carlo",
                              "wor_adversarial"}


def test_wor_bound_is_attained_on_equal_deviations():
    res = get_claim("is.variance_without_replacement").verify(
        only=["wor_exact_enumeration", "wor_tight_monte_carlo"])
    exact, mc = res.checks
    assert exact.ratio == 1.0  # exact rationals: variance = bound
    assert exact.instance["b"] >= 1
    # Monte Carlo: within its one-sided interval of 1 (relative half-width ~ a few 1e-3)
    assert mc.passed and 0.98 < mc.ratio < 1.02


def test_arbitrary_sampling_stronger_floor_is_refuted_by_a_feasible_v():
    """v_i >= 1 - p_i is a lower bound on v: its mutant raises the floor (x 13/10), and the
    independent sampling's v = 1 - p, feasible for (4), refutes it; the weaker floor (x 7/10,
    a loosened statement) is proved, which says nothing about the checks."""
    claim = get_claim("is.variance_arbitrary_sampling")
    assert claim.stated.direction("v_floor", claim.kind.value) == "larger"
    (mutant,) = [m for m in claim.stated.mutants(claim.kind.value) if m.target == "v_floor"]
    assert mutant.scale == Fraction(13, 10)
    out = mutant_outcome(mutant, claim.verify(mutant=mutant))
    assert out["outcome"] == "caught"
    assert set(out["by"]) == {"arbitrary_eso_diagonal", "arbitrary_eso_sdp"}
    diag = claim.verify(only=["arbitrary_eso_diagonal"], mutant=mutant).checks[0]
    assert diag.counterexample["design"].startswith("independent sampling")
    weaker = Mutant("constant", "v_floor", Fraction(7, 10))
    proved = claim.verify(only=["arbitrary_eso_diagonal"], mutant=weaker).checks[0]
    assert proved.passed and proved.proof
    # dropping v_i is false where the bound needs v_i > 1 (all-or-nothing, equal updates)
    res = claim.verify(only=["arbitrary_exact_enumeration"], mutant=Mutant("factor", "v_i"))
    assert res.checks[0].passed is False
    assert "all or nothing, equal updates] q = 1/4, v_i = n(1 - q) = 15/4: (4) holds " \
        "exactly (True); variance 30 <= bound (5) 8: False" in res.checks[0].detail


def test_corrected_claim_is_tight_and_its_search_rechecks_exactly():
    claim = get_claim("is.independent_minimises_variance.corrected")
    res = claim.verify(only=["corrected_eso_sdp", "corrected_adversarial_signs"])
    assert res.verdict.value == "confirmed"
    # independent sampling attains (a): stated / best bound = 1 to the solver's accuracy
    assert res.tightness["check"] == "corrected_eso_sdp"
    assert abs(res.tightness["ratio"] - 1) < 1e-6
    search = res.checks[1]
    assert 0.99 < search.ratio <= 1 and search.instance["probs"]
    assert sum(Fraction(q) for q in search.instance["probs"]) == 1
    mutant = Mutant("constant", "coefficient", Fraction(13, 10))
    bad = claim.verify(only=["corrected_adversarial_signs"], mutant=mutant).checks[0]
    assert bad.passed is False and Fraction(bad.counterexample["stated"]) > \
        Fraction(bad.counterexample["max_over_signs"])


@pytest.mark.xdist_group("is")  # the family's worker holds its shared verifications
def test_refuted_claim_has_an_erratum_and_a_concrete_counterexample(verified):
    res = verified.result(get_claim("is.independent_minimises_variance"))
    assert res.verdict.value == "refuted"
    assert res.erratum["kind"] == "false statement" and res.erratum["intended_holds"] is False
    for c in res.checks:
        assert c.passed is False
        assert "note" not in c.counterexample  # never "failed without a counterexample"
    P = np.array([[Fraction(1, 2), Fraction(0)], [Fraction(0), Fraction(1, 2)]], dtype=object)
    A = np.array([[Fraction(1)], [Fraction(1)]], dtype=object)
    assert variance_formula(P, A) == 0 == int(res.counterexample["variance_design"])
