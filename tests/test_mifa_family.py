"""Unit tests of the ``mifa`` family's library code (fedtheory.experiments.mifa_experiments and
the derivations in fedtheory.symbolic and fedtheory.theory.mifa). The claims' verdicts are pinned in
each claim (``expected=``) and checked by ``test_registry.py``."""

from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from fedtheory.claims import get_claim
from fedtheory.experiments import mifa_experiments as mx
from fedtheory.symbolic.error_floor import derive_summed_floor
from fedtheory.symbolic.memory_error_recursion import derive_memory_error_recursion
from fedtheory.symbolic.mifa_aggregation_error import derive_error_terms
from fedtheory.symbolic.mifa_symbols import L, eta, p
from fedtheory.theory.mifa import exact_fedavg_is_1d

# ---------------------------------------------------------------------------- validation


@pytest.mark.parametrize("bad", [0, -0.1, 1.5, float("nan"), "x", None])
def test_validate_p_rejects_bad_values(bad):
    with pytest.raises(ValueError, match="p must be"):
        mx.validate_p(bad)


def test_validate_p_accepts_one():
    assert mx.validate_p(1) == 1.0


@pytest.mark.parametrize(
    ("func", "kwargs", "match"),
    [
        (mx.all_masks, {"n": 0}, "n must be a positive integer"),
        (mx.all_masks, {"n": 21}, "n must be at most 20"),
        (mx.isotropic_fedavg_is_moments,
         {"T": 0, "eta": 0.1, "L": 1.0, "n": 2, "p": 0.5, "h2_sum": 1.0}, "T must be"),
        (mx.isotropic_fedavg_is_moments,
         {"T": 2, "eta": -0.1, "L": 1.0, "n": 2, "p": 0.5, "h2_sum": 1.0}, "eta must be"),
        (mx.isotropic_fedavg_is_moments,
         {"T": 2, "eta": 0.1, "L": 1.0, "n": 2, "p": 0.5, "h2_sum": -1.0}, "h2_sum must be"),
        (mx.fedpgd_moments, {"T": 2, "eta": 0.1, "L": 1.0, "n": 3, "b": 4, "h2_mean": 1.0},
         "b must be at most n"),
        (mx.isotropic_problem, {"n": 1, "d": 3, "L": 1.0, "sigma_G2_max": 1.0,
                                "rng": np.random.default_rng(0)}, "n must be at least 2"),
        (mx.isotropic_problem, {"n": 3, "d": 1, "L": 1.0, "sigma_G2_max": 1.0,
                                "rng": np.random.default_rng(0)}, "d must be at least 2"),
        (mx.isotropic_problem, {"n": 4, "d": 3, "L": 0.0, "sigma_G2_max": 1.0,
                                "rng": np.random.default_rng(0)}, "L must be"),
    ],
)
def test_bad_arguments_name_the_argument(func, kwargs, match):
    with pytest.raises(ValueError, match=match):
        func(**kwargs)


def test_mask_probabilities_rejects_bad_p():
    with pytest.raises(ValueError, match="p must be"):
        mx.mask_probabilities(mx.all_masks(2), [0.5, 1.5])
    with pytest.raises(ValueError, match="p must be"):
        mx.mask_probabilities(mx.all_masks(2), [Fraction(1, 2)], exact=True)


def test_tail_log10_and_steps_to_eps_validate():
    with pytest.raises(ValueError, match="values must have shape"):
        mx.tail_log10(np.ones(3))
    with pytest.raises(ValueError, match="tail must be"):
        mx.tail_log10(np.ones((2, 3)), tail=0.0)


def test_seed_setting_rejects_unknown_kind():
    with pytest.raises(ValueError, match="kind must be"):
        mx.seed_setting("cubic", quick=True)


# ---------------------------------------------------------------------------- enumeration


@pytest.mark.parametrize("n", [1, 3, 5])
def test_mask_probabilities_sum_to_one(n):
    masks = mx.all_masks(n)
    assert masks.shape == (2**n, n)
    p = [Fraction(k + 1, k + 3) for k in range(n)]
    assert sum(mx.mask_probabilities(masks, p, exact=True)) == 1
    assert np.isclose(mx.mask_probabilities(masks, 0.3).sum(), 1.0)


def test_degenerate_probabilities_zero_and_one():
    masks = mx.all_masks(2)
    probs = mx.mask_probabilities(masks, [0.0, 1.0])
    assert probs.tolist() == [0.0, 1.0, 0.0, 0.0]  # only (0, 1) can happen
    # p = 1: every exact expectation is the value of the full mask
    assert mx.exact_expectation(lambda m: Fraction(int(m.sum())), 3, 1) == 3


def test_staleness_counts_rounds_since_last_participation():
    m = np.zeros((5, 2, 3), dtype=bool)  # (T, replicas, n)
    m[2, 0, 1] = True
    tau = mx.staleness(m)
    assert tau[:, 0, 1].tolist() == [0, 1, 0, 1, 2]
    assert tau[:, 1, 0].tolist() == [0, 1, 2, 3, 4]


# ---------------------------------------------------------------------------- closed forms


def test_isotropic_problem_has_equal_heterogeneity_at_every_point():
    rng = np.random.default_rng(3)
    for n in (2, 3, 7):
        prob = mx.isotropic_problem(n, 4, L=2.0, sigma_G2_max=0.5, rng=rng)
        x = rng.standard_normal((6, 4))
        g = prob.client_grads(x)
        h = g - g.mean(axis=-2, keepdims=True)
        assert np.allclose(np.sum(h**2, axis=-1), 0.5)
        assert np.allclose(prob.x_star, 0.0, atol=1e-12)


def test_isotropic_moments_match_exact_enumeration():
    """T = 3 on the smallest instance: the recursion equals the 2^(2n) path enumeration."""
    eta, L, centers = Fraction(1, 8), Fraction(4), [Fraction(1), Fraction(-1)]
    avg, _ = exact_fedavg_is_1d(3, eta, L, centers, Fraction(1, 2), Fraction(0))
    rec = mx.isotropic_fedavg_is_moments(2, eta=0.125, L=4.0, n=2, p=0.5, h2_sum=32.0)
    assert np.isclose(float(avg), rec.mean())


def test_floor_is_limit_of_moments():
    m = mx.isotropic_fedavg_is_moments(5000, eta=0.05, L=1.0, n=10, p=0.1, h2_sum=10.0)
    F = mx.isotropic_fedavg_is_floor(eta=0.05, L=1.0, n=10, p=0.1, h2_sum=10.0)
    assert np.isclose(m[-1], F)
    assert mx.isotropic_fedavg_is_floor(eta=3.0, L=1.0, n=10, p=0.1, h2_sum=10.0) == np.inf


def test_fedpgd_moments_degenerate_full_sampling_has_no_floor():
    m = mx.fedpgd_moments(50, eta=0.5, L=1.0, n=5, b=5, h2_mean=1.0, u0_sq=1.0)
    assert m[-1] < 1e-20  # b = n: gradient descent, no sampling noise


def test_pathwise_run_matches_exact_fedavg_is_moments():
    rng = np.random.default_rng(0)
    prob = mx.isotropic_problem(10, 5, L=1.0, sigma_G2_max=1.0, rng=rng)
    out = mx.pathwise_run(prob, "fedavg_is", p=0.1, rounds=60, replicas=4000, eta=0.05,
                          rng=rng, x0=prob.x_star)
    exact = mx.isotropic_fedavg_is_moments(60, eta=0.05, L=1.0, n=10, p=0.1, h2_sum=10.0)
    se = out["grad_norm2"][-1].std() / np.sqrt(4000)
    assert abs(out["grad_norm2"][-1].mean() - exact[-1]) < 6 * se


def test_pathwise_run_mifa_memory_starts_full():
    """Round 0 of MIFA with a full memory is a gradient step, whatever the mask."""
    rng = np.random.default_rng(1)
    prob = mx.quadratic_problem(seed=1, n=4, d=3)
    x0 = np.ones(3)
    out = mx.pathwise_run(prob, "mifa", p=0.01, rounds=1, replicas=3, eta=0.1, rng=rng, x0=x0)
    assert np.allclose(out["x"], x0 - 0.1 * prob.grad(x0))


def test_tail_log10_handles_divergence_and_zero():
    v = np.array([[1.0, 0.0], [np.nan, np.inf], [1e3, 1e3]])
    assert mx.tail_log10(v, tail=0.5).tolist() == [-300.0, mx.DIVERGED_LOG10, 3.0]


def test_band_sorts_overflowed_runs_last():
    med, lo, hi = mx.band(np.array([[1.0], [np.nan], [2.0]]), q=(0.0, 1.0))
    assert lo[0] == 1.0 and med[0] == 2.0 and hi[0] == 1e300


# ---------------------------------------------------------------------------- derivations


def test_memory_error_recursion():
    r = derive_memory_error_recursion()
    assert sp.simplify(r["umifa_active_multiplier"] - (p - 1) / p) == 0
    assert r["umifa_grows_when"] == (p < sp.Rational(1, 2))


def test_error_terms_general_p():
    d = derive_error_terms(2)
    assert sp.simplify(d["mifa_exact_general"] - d["mifa_exact_general_formula"]) == 0


def test_summed_floor_ratio():
    d = derive_summed_floor()
    assert sp.simplify(d["floor_ratio_derived_over_seed"] - 2 / eta) == 0
    assert sp.simplify(d["T2_ratio_lhs_over_seed"] - L / 2) == 0


def test_umifa_diverges_pathwise_with_constant_updates():
    """Fixed updates (η = 0): each activation multiplies the U-MIFA error by -(1/p - 1)."""
    from fedtheory.algorithms import get_rule

    rule = get_rule("umifa")
    st = rule.init(1, 1, 1, p=0.1)
    rows = []
    for _ in range(3):
        _, st = rule.step(st, np.array([True]), np.array([[1.0]]))
        rows.append(float(st["table"][0, 0, 0]))
    errors = [1.0 - r for r in rows]
    assert np.allclose(errors, [-9.0, 81.0, -729.0])


def test_claims_registered_with_counterexamples_for_refuted_ones():
    for cid in ("mifa.error_floor_average", "mifa.zero_floor", "mifa.saga_equivalence"):
        assert get_claim(cid).checks
        assert get_claim(cid + ".corrected").checks


def test_error_floor_average_tiny_counterexample_is_exact():
    res = get_claim("mifa.error_floor_average").verify(only=["exact_enumeration"])
    assert res.verdict.value == "refuted"
    assert res.counterexample["lhs"] == "1" and res.counterexample["rhs"] == "1/2"
