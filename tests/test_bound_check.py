"""The one bound check (fedtheory.claimkit.checks.check_bound): Monte Carlo samples or exact
values, upper or lower, with the tightness, the tightest instance and the counterexample
filled in; check_upper_bound / check_lower_bound are the same check without the tightness."""

from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from fedtheory.claims import checks


def test_samples_tightness_is_the_largest_mean_over_stated_at_its_instance():
    rng = np.random.default_rng(4)
    x = rng.normal([1.0, 2.0, 0.5], 0.1, size=(5000, 3))
    bound = np.array([2.0, 2.5, 2.0])
    inst = [{"case": "a"}, {"case": "b"}, {"case": "c"}]
    ev = checks.check_bound(x, bound, "upper", inst)
    assert ev.passed is True
    assert ev.ratio == float((x.mean(axis=0) / bound)[1]) and ev.instance == {"case": "b"}
    low = checks.check_bound(x, [0.5, 1.9, 0.1], "lower", inst)   # stated / measured
    assert low.passed is True
    assert low.ratio == pytest.approx(0.95, rel=0.01) and low.instance == {"case": "b"}


def test_plain_wrappers_are_the_bound_check_without_tightness():
    rng = np.random.default_rng(5)
    x = rng.normal(1.0, 1.0, 20_000)
    for side, plain, stated in (("upper", checks.check_upper_bound, 0.9),
                                ("lower", checks.check_lower_bound, 1.1)):
        full = checks.check_bound(x, stated, side, {"n": 1}, counterexample={"seed": 5})
        ev = plain(x, stated, counterexample={"seed": 5})
        assert ev.passed is full.passed is False
        assert (ev.detail, ev.measured, ev.theoretical) == (full.detail, full.measured,
                                                             full.theoretical)
        assert ev.counterexample.keys() == full.counterexample.keys()
        assert ev.ratio is None and ev.instance is None
        assert full.ratio is not None and full.instance == {"n": 1}


def test_exact_values_compare_exactly_and_name_the_worst_violation():
    q = [Fraction(1, 2), Fraction(5, 4), Fraction(3, 2)]
    inst = [{"n": 2}, {"n": 3}, {"n": 4}]
    ev = checks.check_bound(q, [1, 1, 1], "upper", inst, counterexample={"seed": 0})
    assert ev.passed is False and ev.ratio == 1.5 and ev.instance == {"n": 4}
    assert ev.counterexample == {"seed": 0, "n": 4, "measured": sp.Rational(3, 2), "bound": 1}
    assert "2 of 3 violated" in ev.detail
    # an attained exact bound is not a violation (no tolerance needed), with ratio 1
    ok = checks.check_bound(sp.sqrt(2), sp.sqrt(2), "upper")
    assert ok.passed is True and ok.ratio == 1.0 and ok.counterexample is None
    # lower: refuted when below, the ratio is stated / measured
    low = checks.check_bound([Fraction(1, 3)], [Fraction(1, 2)], "lower")
    assert low.passed is False and low.ratio == 1.5
    # floats on the stated side are the binary rationals they are
    assert checks.check_bound(Fraction(1, 10), 0.1, "upper").passed is (Fraction(1, 10)
                                                                         <= Fraction(0.1))


def test_degenerate_stated_sides():
    zero = checks.check_bound(np.zeros(50), 0.0, "upper")
    assert zero.passed is True and zero.ratio == 1.0
    above = checks.check_bound(np.ones(50), 0.0, "upper")
    assert above.passed is False and above.ratio == float("inf")
    assert checks.check_bound(np.ones(50), float("inf")).ratio == 0.0
    assert checks.check_bound(np.ones(50), -float("inf"), "lower").passed is True
    assert checks.check_bound(Fraction(1), sp.oo, "upper").passed is True
    assert checks.check_bound(Fraction(0), Fraction(0), "upper").ratio == 1.0


@pytest.mark.parametrize("call, message", [
    (lambda: checks.check_bound(np.ones(40), 1.0, "both"), "side must be one of"),
    (lambda: checks.check_bound(np.ones(40), float("nan")), "bound must be a number"),
    (lambda: checks.check_bound(np.ones(40), float("inf"), "lower"), "bound must be finite"),
    (lambda: checks.check_bound(Fraction(1), sp.nan), "bound must be a number"),
    (lambda: checks.check_bound(Fraction(1), -sp.oo), "bound must be finite"),
    (lambda: checks.check_bound([Fraction(1), sp.I], 2), "quantity must be real numbers"),
    (lambda: checks.check_bound([Fraction(1), "x"], 2), "quantity must be real numbers"),
    (lambda: checks.check_bound(np.ones((40, 2)), [1.0, 1.0], "upper", [{"a": 1}]),
     "instances must be one dict or one per column"),
])
def test_bad_inputs_are_errors_naming_them(call, message):
    with pytest.raises(ValueError, match=message):
        call()
