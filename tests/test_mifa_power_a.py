"""The power of the mifa claims biased, umifa_unbiased, mifa_error, umifa_error,
saga_equivalence(.corrected) and rates_table(.corrected): worst-case searches, exact
quantities they maximise, inequality certificates, and the mutants the checks catch or prove."""

from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from fedtheory.claimkit.stated import Mutant
from fedtheory.claims import get_claim
from fedtheory.experiments import mifa_experiments as mx
from fedtheory.experiments.mifa_search import (
    fedpgd_nonconvex_average,
    fedpgd_quadratic_average,
    huber_gd_average,
    mifa_error_expectation,
)
from fedtheory.experiments.search import maximize, rationalize
from fedtheory.symbolic.fedpgd_convex import derive_fedpgd_convex_sharp, fedpgd_convex_slack
from fedtheory.symbolic.mifa_aggregation_error import (
    N,
    mifa_bound_certificate,
    mifa_bound_residual,
)
from fedtheory.symbolic.mifa_symbols import L, T, eta, p
from fedtheory.theory.mifa import exact_error2_at

SEVEN_TENTHS = Fraction(7, 10)


# ------------------------------------------------------------------ exact quantities
def _closed_form(e, p_val):
    n = e.shape[0]
    return ((1 - p_val) ** 2 * np.sum(e.sum(axis=0) ** 2)
            + p_val * (1 - p_val) * np.sum(e * e)) / n**2


def test_mifa_error_expectation_exact_float_and_engine_rows_agree():
    e = mx.fractions([[1, "-1/2"], ["2/3", 3], [-2, 0], ["1/5", 1]])
    p_val = Fraction(1, 7)
    exact = mifa_error_expectation(e, p_val)
    assert exact == _closed_form(e, p_val)  # bit-identical: exact rationals
    grads = mx.fractions([[0, 1], [2, 2], [-1, 3], [1, 1]])
    assert exact_error2_at("mifa", grads, grads - e, p_val) == exact  # exact rationals
    as_float = mifa_error_expectation(e.astype(float), float(p_val))
    # 16 patterns, a handful of float operations each: relative error a few ulp
    assert as_float == pytest.approx(float(exact), rel=1e-13)


def test_mifa_error_expectation_and_exact_error2_at_reject_bad_shapes():
    with pytest.raises(ValueError, match="e must have shape"):
        mifa_error_expectation(np.zeros(3), 0.5)
    with pytest.raises(ValueError, match="memory must have the shape"):
        exact_error2_at("mifa", mx.fractions([[1], [2]]), mx.fractions([[1]]), Fraction(1, 2))


def test_quadratic_and_huber_closed_forms_match_exact_iteration():
    rng = np.random.default_rng(3)
    for _ in range(40):
        T_ = int(rng.integers(1, 40))
        et, lam, d = (Fraction(float(v)).limit_denominator(50) for v in rng.uniform(0.05, 1, 3))
        u0, x0 = (Fraction(float(v)).limit_denominator(50) for v in rng.uniform(-5, 5, 2))
        V = Fraction(float(rng.uniform(0, 1))).limit_denominator(50)
        ex = fedpgd_quadratic_average(T_, eta=et, lam=lam, u0_sq=abs(u0), V=V)
        fl = fedpgd_quadratic_average(T_, eta=float(et), lam=float(lam), u0_sq=float(abs(u0)),
                                      V=float(V))
        # the closed form sums T geometric terms in floats: error well below 1e-12 relative
        assert fl == pytest.approx(float(ex), rel=1e-12)
        ex = huber_gd_average(T_, eta=et, L=Fraction(1), delta=d, x0=x0)
        fl = huber_gd_average(T_, eta=float(et), L=1.0, delta=float(d), x0=float(x0))
        assert fl == pytest.approx(float(ex), rel=1e-12, abs=1e-15)


def test_huber_far_from_the_minimum_approaches_half_the_convex_bound():
    # linear phase: x_t = x_0 - t eta delta; over T = x_0/(eta delta) steps the average gap is
    # about delta x_0 / 2 while ||x_0||^2/(eta T) = delta x_0
    x0, delta, et = Fraction(100), Fraction(1, 10), Fraction(1, 2)
    T_ = int(x0 / (et * delta))
    ratio = huber_gd_average(T_, eta=et, L=Fraction(1), delta=delta, x0=x0) / (x0**2 / (et * T_))
    assert Fraction(49, 100) < ratio < Fraction(1, 2)


def test_fedpgd_nonconvex_average_matches_the_moment_recursion():
    got = fedpgd_nonconvex_average(30, eta=0.5, L=1.0, n=10, b=3, h2=1.0, u0_sq=2.0)
    ref = mx.fedpgd_moments(29, eta=0.5, L=1.0, n=10, b=3, h2_mean=1.0, u0_sq=2.0).mean()
    assert got == pytest.approx(ref, rel=1e-12)  # two float recursions of 30 steps
    with pytest.raises(ValueError, match="1 <= b <= n"):
        fedpgd_nonconvex_average(3, eta=0.5, L=1.0, n=3, b=4, h2=1.0, u0_sq=0.0)
    with pytest.raises(ValueError, match="T must be a positive integer"):
        fedpgd_quadratic_average(0, eta=0.5, lam=1.0, u0_sq=1.0, V=0.0)
    with pytest.raises(ValueError, match="delta must be positive"):
        huber_gd_average(3, eta=0.5, L=1.0, delta=0.0, x0=1.0)


# ------------------------------------------------------------------ search helpers
def test_maximize_finds_an_interior_maximum_and_validates():
    r = maximize(lambda x: -((x[0] - 0.2) ** 2) - (x[1] + 0.5) ** 2, [(0, 1), (-1, 1)],
                 np.random.default_rng(0), starts=3)
    assert np.allclose(r["x"], [0.2, -0.5], atol=1e-4) and r["evaluations"] > 3
    boundary = maximize(lambda x: x[0], [(0, 2)], np.random.default_rng(1), starts=2)
    assert boundary["x"][0] == pytest.approx(2.0)  # L-BFGS-B stops on the box
    with pytest.raises(ValueError, match="bounds must be"):
        maximize(lambda x: 0.0, [(1, 0)], np.random.default_rng(0))
    with pytest.raises(ValueError, match="starts must be"):
        maximize(lambda x: 0.0, [(0, 1)], np.random.default_rng(0), starts=0)


def test_rationalize():
    assert rationalize(0.1) == Fraction(1, 10)
    assert rationalize(np.array([0.5, 2 / 3]), 10).tolist() == [Fraction(1, 2), Fraction(2, 3)]
    with pytest.raises(ValueError, match="max_denominator"):
        rationalize(0.5, 0)


# ------------------------------------------------------------------ certificates
def test_mifa_bound_certificate_and_residual():
    seed_k = (1 - p) / N
    for n in (2, 3, 4):
        slack, cert = mifa_bound_certificate(n, seed_k)
        assert sp.expand(slack - cert) == 0
    assert sp.simplify(mifa_bound_residual(seed_k) - p * (1 - p) * (N - 1) / N**2) == 0
    weak = mifa_bound_residual(sp.Rational(7, 10) * seed_k)
    # at equal e_i the residual is the slack per Σe^2: negative for the x 0.7 bound at p = 1/10
    assert weak.subs({p: sp.Rational(1, 10), N: 3}) < 0
    with pytest.raises(ValueError, match="n must be a positive integer"):
        mifa_bound_certificate(0, seed_k)


def test_fedpgd_convex_sharp_route():
    d = derive_fedpgd_convex_sharp()
    assert sp.expand(d["step_gap"] + 2 * eta * d["w"] + eta**2 * d["v"]) == 0
    stated = d["U0"] / (eta * T) + eta * d["F"] * d["sigma2"]
    assert all(r.status == "proved" for r in fedpgd_convex_slack(stated, 1 / L).values())
    # below the sharper bound's constants the route fails (no proof, a violating point)
    weak = fedpgd_convex_slack(sp.Rational(2, 5) * stated, 1 / (2 * L))
    assert weak["bound"].status == "violated"
    # beyond eta = 1/L the step coefficient changes sign
    assert fedpgd_convex_slack(stated, 2 / L)["coefficient"].status == "violated"


# ------------------------------------------------------------------ the claims' power
def test_mifa_error_worst_case_and_mutants():
    claim = get_claim("mifa.mifa_error")
    res = claim.verify(only=["exact_enumeration", "adversarial_search", "bound_inequality"])
    ratios = {c.name: c.ratio for c in res.checks}
    assert ratios["exact_enumeration"] == pytest.approx(0.992)  # 1 - p + p/n, n = 5, p = 1/100
    assert 0.99 < ratios["adversarial_search"] <= 0.9925 + 1e-12
    weak = {c.name: c for c in claim.verify(only=["bound_inequality", "exact_enumeration"],
                                            mutant=Mutant("constant", "bound",
                                                          SEVEN_TENTHS)).checks}
    assert [c.passed for c in weak.values()] == [False, False]
    ce = weak["bound_inequality"].counterexample
    assert Fraction(ce["exact_E"]) > Fraction(ce["bound"])
    looser = claim.verify(only=["bound_inequality"], mutant=Mutant("factor", "1-p"))
    assert looser.checks[0].passed and looser.checks[0].proof


def test_identity_claims_catch_their_mutants():
    for cid, mutant in [("mifa.umifa_error", Mutant("factor", "1/p")),
                        ("mifa.biased", Mutant("factor", "1-p_i")),
                        ("mifa.umifa_unbiased",
                         Mutant("constant", "Delta coefficient", SEVEN_TENTHS)),
                        ("mifa.saga_equivalence.corrected", Mutant("factor", "1_i"))]:
        res = get_claim(cid).verify(mutant=mutant)
        assert all(c.passed is False and c.counterexample for c in res.checks), cid


def test_rates_table_corrected_is_loose_by_two_and_its_mutants_are_proved():
    claim = get_claim("mifa.rates_table.corrected")
    res = {c.name: c for c in claim.verify(only=["adversarial_search", "bound_inequality"]).checks}
    search, proof = res["adversarial_search"], res["bound_inequality"]
    assert 0.45 < search.ratio <= 0.5 and search.instance["case"] == "Huber"
    assert proof.passed and proof.proof
    relaxed = {c.name: c for c in claim.verify(
        only=["bound_inequality", "adversarial_search"],
        mutant=Mutant("step", "η <= 1/(2L)", Fraction(2))).checks}
    assert all(c.passed for c in relaxed.values()) and relaxed["bound_inequality"].proof
    # the search tested beyond the stated limit 1/(2L)
    assert Fraction(relaxed["adversarial_search"].instance["eta"]) > Fraction(1, 2)


def test_refuted_claims_carry_errata():
    for cid in ("mifa.saga_equivalence", "mifa.rates_table"):
        e = get_claim(cid).erratum
        assert e is not None and e.kind == "false statement" and e.where
