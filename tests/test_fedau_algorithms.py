"""FedAU (seed 001): Algorithm 2 against a plain transcription of its pseudo-code, the rules in
the engine, and the theory helpers (renewal weights, exact chains, exact weight error)."""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from fedtheory.algorithms import FedAU, fedau_weights, get_rule
from fedtheory.algorithms.fedau import fedau_state
from fedtheory.participation import BernoulliParticipation, ReplayParticipation
from fedtheory.problems import QuadraticProblem
from fedtheory.simulate import simulate
from fedtheory.theory.fedau import (
    argmin_h,
    bernoulli_weight_error,
    chain_long_run_weight,
    corollary4_K,
    expected_fixed_point,
    expected_intervals,
    long_run_weight,
    renewal_weight,
)

EPS = np.finfo(float).eps


def algorithm2_loop(mask, K):
    """Seed 001, Algorithm 2, line by line, for one client: ``mask`` a list of 0/1."""
    T = len(mask)
    omega = [0.0] * T
    M, S_open, omega[0] = 0, 0, 1.0
    for t in range(1, T):
        S_open = S_open + 1
        if mask[t - 1] == 1 or S_open == K:
            S = S_open
            if M == 0:
                omega[t] = float(S)
            else:
                omega[t] = (M * omega[t - 1] + S) / (M + 1)
            M = M + 1
            S_open = 0
        else:
            omega[t] = omega[t - 1]
    return omega


@pytest.mark.parametrize("K", [1, 2, 3, 7, math.inf])
def test_weights_match_the_pseudo_code(K):
    rng = np.random.default_rng(int(K) if math.isfinite(K) else 99)
    mask = rng.random((4, 40, 5)) < np.array([0.05, 0.2, 0.5, 0.8, 1.0])
    got = fedau_weights(mask, K)
    want = np.array([[algorithm2_loop(mask[r, :, n].astype(int).tolist(), K)
                      for n in range(5)] for r in range(4)]).transpose(0, 2, 1)
    # bit-identical: the same expression (M * omega + S) / (M + 1) in the same order
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(fedau_weights(mask[1], K), want[1])  # (T, n) form


def test_all_enumerated_patterns_small():
    for bits in itertools.product((0, 1), repeat=8):
        m = np.array(bits, dtype=bool)[:, None]
        for K in (2, 3, math.inf):
            # bit-identical: as above
            np.testing.assert_array_equal(fedau_weights(m, K)[:, 0], algorithm2_loop(bits, K))


def test_degenerate_inputs():
    never = np.zeros((30, 2), dtype=bool)
    assert (fedau_weights(never, math.inf) == 1.0).all()  # no interval ever ends
    w = fedau_weights(never, 4)
    assert w[0, 0] == 1.0 and (w[4:] == 4.0).all()  # every interval is cut at K
    rng = np.random.default_rng(0)
    assert (fedau_weights(rng.random((20, 3)) < 0.3, 1) == 1.0).all()  # K = 1
    assert (fedau_weights(np.ones((10, 2), bool)) == 1.0).all()  # always present
    st = fedau_state(np.ones((5, 1), bool), 3)
    assert st["intervals"][:, 0].tolist() == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("K, match", [
    (0, "K must be"), (2.5, "K must be"), (float("nan"), "K must be"), (-math.inf, "K must be"),
    (True, "K must be"), ("3", "K must be"),
])
def test_bad_cutoff(K, match):
    with pytest.raises(ValueError, match=match):
        fedau_weights(np.zeros((3, 2), bool), K)
    with pytest.raises(ValueError, match=match):
        FedAU(K)


@pytest.mark.parametrize("mask, match", [
    (np.zeros((3, 2)), "mask must be a boolean array"),
    (np.zeros(3, bool), r"mask must have shape \(T, n\) or \(R, T, n\)"),
    (np.zeros((1, 2, 3, 4), bool), "mask must have shape"),
    (np.zeros((0, 2), bool), "mask must have shape"),
])
def test_bad_mask(mask, match):
    with pytest.raises(ValueError, match=match):
        fedau_weights(mask, 3)


def _quadratic(n=5, d=3, seed=0):
    rng = np.random.default_rng(seed)
    return QuadraticProblem(rng.uniform(0.5, 2.0, (n, d)), rng.normal(size=(n, d)))


def test_fedau_rule_in_the_engine_is_algorithm_1():
    """Engine run of rule 'fedau' = x_{t+1} = x_t - lr/N sum_active omega_t Delta, with
    omega_t from fedau_weights of the same masks."""
    prob = _quadratic()
    T, R, lr, K = 25, 3, 0.1, 3
    masks = np.random.default_rng(1).random((T, R, prob.n)) < 0.4
    res = simulate(prob, get_rule("fedau", K=K), ReplayParticipation(masks, p=0.4), rounds=T,
                   replicas=R, lr=lr, x0=np.ones(prob.d), workers=1, chunk=R)
    omega = fedau_weights(np.moveaxis(masks, 0, 1), K)  # (R, T, n)
    x = np.ones((R, prob.d))
    scale = 1.0
    for t in range(T):
        g = prob.hessians[None] * (x[:, None, :] - prob.centers[None])  # (R, n, d)
        x = x - lr / prob.n * np.einsum("rn,rnd->rd", omega[:, t] * masks[t], g)
        scale = max(scale, np.abs(x).max(), np.abs(g).max())
    # relative: same sums in another order; T rounds of n terms, each within a few ulps
    np.testing.assert_allclose(res.x, x, rtol=0, atol=8 * T * prob.n * EPS * scale * K)


def test_common_random_numbers_across_rules():
    """The engine draws participation from (seed, replica) only: 'fedau' with K = 1 (omega = 1)
    and 'fedavg_all' give bit-identical runs with the same seed, different ones otherwise."""
    prob = _quadratic()
    kw = dict(rounds=30, replicas=4, lr=0.1, x0=np.ones(prob.d), workers=1)
    proc = BernoulliParticipation(np.linspace(0.2, 0.9, prob.n))
    a = simulate(prob, get_rule("fedau", K=1), proc, seed=5, **kw)
    b = simulate(prob, get_rule("fedavg_all"), proc, seed=5, **kw)
    c = simulate(prob, get_rule("fedavg_all"), proc, seed=6, **kw)
    np.testing.assert_array_equal(a.x, b.x)  # bit-identical: same coefficients, same draws
    assert not np.array_equal(b.x, c.x)


def test_weighted_rule_with_inverse_p_is_fedavg_is():
    prob = _quadratic()
    p = np.linspace(0.2, 0.9, prob.n)
    kw = dict(rounds=20, replicas=3, lr=0.1, x0=np.ones(prob.d), workers=1, seed=2)
    a = simulate(prob, get_rule("fedavg_weighted", omega=1 / p), BernoulliParticipation(p), **kw)
    b = simulate(prob, get_rule("fedavg_is"), BernoulliParticipation(p), **kw)
    scale = max(1.0, np.abs(b.x).max())
    # relative: 1/p_n * w_n vs w_n / p_n, one rounding each, over 20 rounds
    np.testing.assert_allclose(a.x, b.x, rtol=0, atol=200 * EPS * scale)


def test_weighted_rule_validation():
    with pytest.raises(ValueError, match="omega must be"):
        get_rule("fedavg_weighted", omega=[1.0, -1.0])
    rule = get_rule("fedavg_weighted", omega=[1.0, 2.0])
    with pytest.raises(ValueError, match=r"omega must have shape \(3,\)"):
        rule.step(rule.init(1, 3, 1), np.ones(3, bool), np.ones((3, 1)))


# ---------------------------------------------------------------------------------- theory
@pytest.mark.parametrize("pattern, kw", [
    ("bernoulli", {}), ("markov", {"correlation": Fraction(3, 5)}),
    ("markov", {"correlation": Fraction(-1, 5)}), ("cyclic", {"period": 7}),
    ("cyclic", {"period": 10}),
])
def test_renewal_formulas_equal_the_exact_chains(pattern, kw):
    for p in (Fraction(1, 7), Fraction(2, 5), Fraction(1, 1)):
        for K in (1, 2, 4, 9):
            assert long_run_weight(pattern, p, K, **kw) == chain_long_run_weight(pattern, p, K,
                                                                                **kw)


def test_renewal_weight_limits():
    assert renewal_weight(Fraction(1, 4), math.inf) == 4
    assert renewal_weight(Fraction(1, 4), 1) == 1
    assert long_run_weight("cyclic", Fraction(3, 10), math.inf, period=10) == Fraction(10, 3)
    # phase-averaged cyclic weight with p P not an integer exceeds 1 / p (Jensen)
    assert long_run_weight("cyclic", Fraction(1, 4), math.inf, period=10) > 4
    with pytest.raises(ValueError, match="pattern must be"):
        long_run_weight("weekly", 0.5, 3)


def test_exact_weight_error_matches_enumeration():
    p, T = 0.3, 9
    for K in (1, 2, 4, math.inf):
        want = np.zeros(T)
        for bits in itertools.product((0, 1), repeat=T):
            m = np.array(bits, dtype=bool)[:, None]
            prob = np.prod([p if b else 1 - p for b in bits])
            want += prob * (p * fedau_weights(m, K)[:, 0] - 1) ** 2
        # relative: FFT convolutions, each within ~T eps of the probabilities
        np.testing.assert_allclose(bernoulli_weight_error(p, K, T), want, rtol=0,
                                   atol=100 * T * EPS)


def test_exact_weight_error_tends_to_the_bias_term():
    e = bernoulli_weight_error(0.5, 3, 3000)
    assert abs(e[-1] - 0.5**6) < 0.02 * 0.5**6
    with pytest.raises(ValueError, match="p must be in"):
        bernoulli_weight_error(0.0, 3, 10)


def test_corollary4_K_is_the_least_integer_with_c_K_at_least_T():
    assert corollary4_K(16, Fraction(1, 2)) == 2  # c = 4, T = 4^2
    assert corollary4_K(17, Fraction(1, 2)) == 3
    assert corollary4_K(2, 1) == 1
    for T in (2, 10, 999, 10**5):
        for pm in (Fraction(1, 100), Fraction(1, 3)):
            K = corollary4_K(T, pm)
            c = 1 / (1 - pm) ** 2
            assert c**K >= T and (K == 1 or c ** (K - 1) < T)
    with pytest.raises(ValueError, match="T must be"):
        corollary4_K(1, 0.5)
    with pytest.raises(ValueError, match="p_min must be"):
        corollary4_K(10, 0.0)


def test_fixed_point_helpers():
    A = np.array([[1.0, 2.0], [3.0, 1.0]])
    c = np.array([[0.0, 1.0], [2.0, -1.0]])
    p, w = np.array([0.2, 0.8]), np.array([1.0, 1.0])
    # relative: one step of size gamma: B = gamma a, the gamma cancels up to rounding
    np.testing.assert_allclose(expected_fixed_point(A, c, p, w, 0.1, 1), argmin_h(A, c, p, w),
                               rtol=10 * EPS, atol=0)
    far = expected_fixed_point(A, c, p, w, 0.1, 5)
    near = expected_fixed_point(A, c, p, w, 1e-4, 5)
    target = argmin_h(A, c, p, w)
    # O(gamma): gamma shrinks 1000-fold, the gap about as much (factor 2 for the curvature)
    assert np.abs(near - target).max() < 2e-3 * np.abs(far - target).max()


@pytest.mark.parametrize("pattern, lam", [("bernoulli", 0.0), ("markov", 0.6),
                                          ("markov", -0.3)])
@pytest.mark.parametrize("K", [2, 3, math.inf])
def test_expected_intervals_match_enumeration(pattern, lam, K):
    p, T = 0.35, 8
    stay_on, join = 1 - (1 - p) * (1 - lam), p * (1 - lam)
    want = np.zeros(T)
    for bits in itertools.product((0, 1), repeat=T):
        prob = p if bits[0] else 1 - p
        for a, b in zip(bits[:-1], bits[1:], strict=True):
            on = stay_on if a else join
            prob *= on if b else 1 - on
        want += prob * fedau_state(np.array(bits, bool)[:, None], K)["intervals"][:, 0]
    kw = {"correlation": lam} if pattern == "markov" else {}
    # relative: sums of 2^T products of T probabilities
    np.testing.assert_allclose(expected_intervals(pattern, p, K, T, **kw), want, rtol=0,
                               atol=50 * T * EPS)


def test_expected_intervals_cyclic_integrates_the_phase():
    from fedtheory.participation import CyclicParticipation

    proc = CyclicParticipation([0.35], period=7)
    R, T = 20000, 30
    masks = np.moveaxis(proc.sample(np.random.default_rng(0), R, T), 0, 1)
    M = fedau_state(masks, 3)["intervals"][:, :, 0]
    exact = expected_intervals("cyclic", 0.35, 3, T, period=7)
    se = M.std(axis=0, ddof=1) / np.sqrt(R)
    assert np.all(np.abs(M.mean(axis=0) - exact) <= 5 * se + 1e-12)
