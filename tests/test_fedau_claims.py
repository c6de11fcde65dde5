"""Family ``fedau`` (seed 001): the stated sides, which check catches which mutant, and the
experiment helpers (small sizes; the full claims run in tests/test_registry.py)."""

import math
from fractions import Fraction

import numpy as np
import pytest

from fedtheory.claimkit.stated import Mutant
from fedtheory.claims import Context
from fedtheory.claims.fedau import (
    cutoff_choice,
    objective_inconsistency,
    participation_patterns,
    weight_error,
    weight_mean,
)
from fedtheory.experiments import fedau_patterns as fp
from fedtheory.experiments.fedau_runs import (
    objective_by_weighting,
    omega_after_intervals,
    quadratic_instance,
    weight_error_curves,
)


def _ctx(module, mutant=None):
    c = module.CLAIM
    return Context(claim_id=c.id, stated=c.stated, mutant=mutant, kind=c.kind)


def test_stated_sides():
    assert weight_mean.CLAIM.stated.constants == {"one": Fraction(1)}
    assert weight_mean.CLAIM.stated.factors == ("1/p",)
    assert cutoff_choice.CLAIM.stated.constants == {"bound": 1, "c exponent": 2}
    assert cutoff_choice.CLAIM.stated.stronger == {"c exponent": "larger"}
    assert weight_error.CLAIM.stated.constants == {"bias_exponent": 2}
    assert weight_error.CLAIM.stated.stronger == {"bias_exponent": "larger"}
    assert weight_error.CLAIM.stated.factors == ("K",)
    # the mutants strengthen: the exponents go up, the bound's constant down
    scales = {m.target: m.scale for m in cutoff_choice.CLAIM.stated.mutants("upper bound")}
    assert scales == {"bound": Fraction(7, 10), "c exponent": Fraction(13, 10)}
    (m,) = [m for m in weight_error.CLAIM.stated.mutants("upper bound") if m.kind == "constant"]
    assert m.scale == Fraction(13, 10)
    assert objective_inconsistency.CLAIM.stated.factors == ("p_n", "omega_n")
    assert participation_patterns.CLAIM.stated.factors == (participation_patterns.ADAPTIVE,)


@pytest.mark.parametrize("mutant", [Mutant("constant", "one", Fraction(7, 10)),
                                    Mutant("factor", "1/p")])
def test_weight_mean_exact_chain_catches_the_mutants(mutant):
    assert weight_mean._exact_chain(_ctx(weight_mean)).passed is True
    ev = weight_mean._exact_chain(_ctx(weight_mean, mutant))
    assert ev.passed is False and ev.counterexample["pattern"] == "bernoulli"


def test_cutoff_choice_tight_family_and_variants():
    ev = cutoff_choice._tight(_ctx(cutoff_choice))
    assert ev.passed is True and ev.ratio == 1.0
    bound = cutoff_choice._tight(_ctx(cutoff_choice, Mutant("constant", "bound",
                                                            Fraction(7, 10))))
    assert bound.passed is False
    # a larger exponent of c claims a smaller K suffices: refuted exactly on p = 1/2
    stronger = cutoff_choice._tight(_ctx(cutoff_choice, Mutant("constant", "c exponent",
                                                               Fraction(13, 10))))
    assert stronger.passed is False and stronger.ratio > 1
    ce = stronger.counterexample
    assert Fraction(ce["ratio"]) > 1 and ce["K"] < math.log(ce["T"], 4)
    # a smaller one is looser and proved
    variant = cutoff_choice._tight(_ctx(cutoff_choice, Mutant("constant", "c exponent",
                                                              Fraction(7, 10))))
    assert variant.passed is True and variant.proof


def test_cutoff_K_with_the_stated_exponent_is_exact():
    ctx = _ctx(cutoff_choice)
    assert cutoff_choice._K(ctx, 4**5, Fraction(1, 2)) == 5
    assert cutoff_choice._K(ctx, 4**5 + 1, Fraction(1, 2)) == 6
    assert cutoff_choice._ratio(ctx, [Fraction(1, 2)] * 2, 4**5) == 1


@pytest.mark.parametrize("factor", ["p_n", "omega_n"])
def test_objective_inconsistency_exact_enumeration_catches_dropped_factors(factor):
    assert objective_inconsistency._enumeration(_ctx(objective_inconsistency)).passed is True
    ev = objective_inconsistency._enumeration(_ctx(objective_inconsistency,
                                                   Mutant("factor", factor)))
    assert ev.passed is False


def test_weight_error_bias_exponent_mutants():
    ev = weight_error._bias(_ctx(weight_error))
    assert ev.passed is True and ev.ratio == 1.0
    # the strengthening mutant (exponent x 13/10) fails for every hidden constant: the
    # T -> oo limit over the stated term is 2^{0.6 K} along p = 1/2, unbounded in K
    strong = weight_error._bias(_ctx(weight_error, Mutant("constant", "bias_exponent",
                                                          Fraction(13, 10))))
    assert strong.passed is False
    assert strong.counterexample["ratio_limit_in_K"] == "oo"
    loose = weight_error._bias(_ctx(weight_error, Mutant("constant", "bias_exponent",
                                                         Fraction(7, 10))))
    assert loose.passed is True and loose.proof and loose.ratio < 1


def test_omega_after_intervals_has_the_renewal_mean():
    w = omega_after_intervals([0.5], 3.0, 5, 4000, np.random.default_rng(0))
    se = w.std(ddof=1) / np.sqrt(w.shape[0])
    assert abs(w.mean() - 1.75) < 6 * se  # (1 - 0.5^3) / 0.5


def test_weight_error_curves_and_objectives():
    d = weight_error_curves((0.3, 0.6), (2, math.inf), 50)
    assert d["error"][2].shape == (50,) and d["bias"][math.inf] == 0.0
    inst = quadratic_instance()
    o = objective_by_weighting(inst["A"], inst["c"], inst["p"], K=5)
    assert abs(o["excess"]["known statistics (1/p)"]) < 1e-12
    assert o["excess"]["average all (1)"] > max(v for k, v in o["excess"].items()
                                                if k.startswith("FedAU"))


def test_patterns_claim_reads_its_experiment():
    """The claim's comparisons and exact weighting, on the experiment's methods and patterns
    (the experiment itself: tests/test_fedau_patterns.py)."""
    assert set(participation_patterns.FEDAU) | set(participation_patterns.BIASED) | {
        participation_patterns.KNOWN} == set(fp.METHODS)
    assert set(participation_patterns._EXACT) == set(fp.PATTERNS)
    n = participation_patterns.N_BETTER + participation_patterns.N_KNOWN
    assert n == 36 and participation_patterns.ALPHA_EACH * n == pytest.approx(
        participation_patterns.FAMILY_ALPHA)
    assert participation_patterns.CLAIM.setup is not None
    assert not participation_patterns.CLAIM.setup.missing()


@pytest.mark.parametrize("module, check", [(weight_mean, "exact_chain"),
                                           (weight_error, "variance_rate"),
                                           (cutoff_choice, "exact_grid_and_search"),
                                           (cutoff_choice, "tight_family"),
                                           (objective_inconsistency, "exact_enumeration"),
                                           (participation_patterns, "implicit_weighting")])
def test_exact_checks_are_labelled_exact(module, check):
    """Exact rational (or exact-expectation) computations, no convex program: kind 'exact'."""
    (chk,) = [c for c in module.CLAIM.checks if c.name == check]
    assert chk.kind == "exact"
    assert not [c for c in module.CLAIM.checks if c.kind == "convex"]


def test_participating_weight_matches_the_enumeration_of_all_patterns():
    """The Poisson-binomial form of N E[1_n/|A|] equals the sum over all 2^N patterns."""
    import itertools
    from fractions import Fraction

    from fedtheory.theory.fedau import participating_weight

    p = [Fraction(1, 10), Fraction(3, 7), Fraction(1, 2), Fraction(9, 10), Fraction(1, 3)]
    brute = [Fraction(0)] * len(p)
    for bits in itertools.product((0, 1), repeat=len(p)):
        prob = Fraction(1)
        for b, x in zip(bits, p, strict=True):
            prob *= x if b else 1 - x
        for i, b in enumerate(bits):
            if b:
                brute[i] += prob / sum(bits)
    assert participating_weight(p) == brute
    assert participating_weight([Fraction(1)]) == [Fraction(1)]
    for bad in ([], [Fraction(3, 2)], [-0.1, 0.5]):
        with pytest.raises(ValueError, match="p must be a non-empty sequence"):
            participating_weight(bad)
