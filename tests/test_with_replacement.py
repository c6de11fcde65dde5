"""Sampling with replacement (fedtheory/participation/with_replacement.py): the moments of the
draw counts and the law of the set drawn against an enumeration of every sequence of draws in
rational arithmetic, the unbiased aggregate (exactly, and in the engine by Monte Carlo), the
engine's accounting, validation. (The common batteries pick the scheme up through its
``examples()``: tests/test_participation.py and tests/test_sampling_designs.py.)"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from fedtheory.participation import PROCESSES, get_process, process_of_design
from fedtheory.participation.with_replacement import (
    WithReplacementParticipation,
    WithReplacementSampling,
)
from fedtheory.problems import QuadraticProblem
from fedtheory.simulate import simulate

P = [Fraction(1, 6), Fraction(1, 3), Fraction(1, 2)]


def _sequences(p: list[Fraction], K: int):
    """Every ordered sequence of K draws, with its exact probability and its counts."""
    n = len(p)
    for seq in itertools.product(range(n), repeat=K):
        prob = Fraction(1)
        for i in seq:
            prob *= p[i]
        counts = [seq.count(i) for i in range(n)]
        yield prob, counts


@pytest.mark.parametrize("K", [1, 2, 3, 4])
def test_count_moments_and_set_law_are_the_enumeration_exactly(K: int) -> None:
    d = WithReplacementSampling(P, K)
    n = len(P)
    mean = [Fraction(0)] * n
    second = [[Fraction(0)] * n for _ in range(n)]
    law: dict[tuple[int, ...], Fraction] = {}
    for prob, c in _sequences(P, K):
        for i in range(n):
            mean[i] += prob * c[i]
            for j in range(n):
                second[i][j] += prob * c[i] * c[j]
        key = tuple(i for i in range(n) if c[i] > 0)
        law[key] = law.get(key, Fraction(0)) + prob
    assert list(d.count_mean(exact=True)) == mean == [K * q for q in P]
    cov = [[second[i][j] - mean[i] * mean[j] for j in range(n)] for i in range(n)]
    assert d.count_covariance(exact=True).tolist() == cov
    for i, j in itertools.product(range(n), repeat=2):  # the textbook multinomial moments
        assert cov[i][j] == (K * P[i] * (1 - P[i]) if i == j else -K * P[i] * P[j])
    # the multisets and their multinomial probabilities
    rows, probs = d.enumerate_counts(exact=True)
    merged: dict[tuple[int, ...], Fraction] = {}
    for prob, c in _sequences(P, K):
        merged[tuple(c)] = merged.get(tuple(c), Fraction(0)) + prob
    assert {tuple(r): q for r, q in zip(rows.tolist(), probs, strict=True)} == merged
    # the set drawn: its law, marginals and pair matrix
    masks, set_probs = d.enumerate(exact=True)
    assert {tuple(np.flatnonzero(m).tolist()): q
            for m, q in zip(masks, set_probs, strict=True)} == law
    for i, j in itertools.product(range(n), repeat=2):
        both = sum((q for S, q in law.items() if i in S and j in S), Fraction(0))
        assert d.P_exact[i, j] == both
    # relative: each float entry is a sum of at most K + 1 positive terms, each a product of a
    # few floats (no cancellation), so its relative error is below (2K + 8) eps
    eps = np.finfo(float).eps
    np.testing.assert_allclose(d.P, d.P_exact.astype(float), rtol=(2 * K + 8) * eps, atol=0)


def test_the_weighted_aggregate_is_unbiased_exactly() -> None:
    # E[sum_i w_i N_i / (K p_i) Delta_i] = sum_i w_i Delta_i over every sequence of draws
    w = [Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)]
    delta = [Fraction(3), Fraction(-7, 2), Fraction(5)]
    K = 3
    mean = sum((prob * sum(w[i] * c[i] / (K * P[i]) * delta[i] for i in range(3))
                for prob, c in _sequences(P, K)), Fraction(0))
    assert mean == sum(wi * di for wi, di in zip(w, delta, strict=True))


def _problem(n: int = 5, d: int = 3, seed: int = 0) -> QuadraticProblem:
    rng = np.random.default_rng(seed)
    return QuadraticProblem(rng.uniform(0.5, 2.0, (n, d)), rng.normal(size=(n, d)) * 3,
                            weights=rng.dirichlet(np.ones(n)))


def test_engine_aggregate_is_unbiased_monte_carlo() -> None:
    """One round from x0 with fedavg_is: G = (x0 - x1)/lr has mean grad f(x0) (tau = 1, no
    noise); per-coordinate z-tests at alpha = 1e-6 (Bonferroni over d), and its covariance is
    the multinomial one, sum_ij Cov(N_i, N_j) w_i w_j g_i g_j / (K^2 p_i p_j), by a
    chi-square test of the per-coordinate variances."""
    prob = _problem()
    p = np.array([0.1, 0.15, 0.2, 0.25, 0.3])
    K, lr, R = 3, 0.1, 20_000
    proc = WithReplacementParticipation(p, K)
    x0 = np.array([1.0, -2.0, 0.5])
    res = simulate(prob, "fedavg_is", proc, rounds=1, replicas=R, lr=lr, x0=x0, seed=3)
    G = (x0 - res.x) / lr
    grads = prob.client_grads(x0)
    assert res.grad_evals == res.client_rounds < R * prob.n  # only the drawn clients work
    alpha = 1e-6 / (2 * prob.d)
    z = (G.mean(axis=0) - prob.grad(x0)) / (G.std(axis=0, ddof=1) / np.sqrt(R))
    assert np.all(np.abs(z) < stats.norm.ppf(1 - alpha / 2)), z
    scaled = grads * (prob.weights / (K * p))[:, None]  # (n, d)
    var = np.einsum("id,ij,jd->d", scaled, proc.design().count_covariance(), scaled)
    chi = (R - 1) * G.var(axis=0, ddof=1) / var
    assert np.all((chi > stats.chi2.ppf(alpha / 2, R - 1))
                  & (chi < stats.chi2.ppf(1 - alpha / 2, R - 1))), chi / (R - 1)


def test_engine_masks_are_the_process_masks_and_chunking_changes_nothing() -> None:
    prob = _problem()
    proc = WithReplacementParticipation([0.1, 0.15, 0.2, 0.25, 0.3], 2)
    seen: list[np.ndarray] = []
    kw = dict(rounds=6, replicas=8, lr=0.05, x0=np.ones(3), seed=11, local_steps=2)
    whole = simulate(prob, "fedavg_is", proc, observe=lambda rec: seen.append(rec.mask.copy()),
                     chunk=8, **kw)
    parts = simulate(prob, "fedavg_is", proc, chunk=3, **kw)
    np.testing.assert_array_equal(whole.x, parts.x)
    # the masks the engine used are those of step() on the same participation streams
    from fedtheory.engine.streams import Stream, replica_streams

    rngs = replica_streams(11, np.arange(8), np.random.PCG64, Stream.PARTICIPATION)
    np.testing.assert_array_equal(np.stack(seen), proc.sample(rngs, 8, 6))


def test_one_client_drawn_every_time_is_full_participation_weighted_by_w() -> None:
    # n = 1: G = w_1 Delta_1 = the full gradient, whatever K
    prob = QuadraticProblem(np.array([[2.0, 1.0]]), np.array([[1.0, -1.0]]))
    kw = dict(rounds=5, replicas=2, lr=0.1, x0=np.array([3.0, 4.0]))
    a = simulate(prob, "fedavg_is", WithReplacementParticipation([1.0], 4), **kw)
    b = simulate(prob, "full", get_process("bernoulli", p=1.0, n=1), **kw)
    # relative: one client with coefficient w N / (K p) = 4/4 = 1: the same gradient steps,
    # up to the rounding of that coefficient's product (a few eps per round, five rounds)
    np.testing.assert_allclose(a.x, b.x, rtol=40 * np.finfo(float).eps, atol=0)


def test_registered_and_found_from_its_design() -> None:
    assert PROCESSES["with_replacement"] is WithReplacementParticipation
    d = WithReplacementSampling([0.25, 0.75], 2)
    proc = process_of_design(d)
    assert isinstance(proc, WithReplacementParticipation) and proc.K == 2
    assert proc.design().P_exact.tolist() == d.P_exact.tolist()
    assert d.describe() == {"design": "with replacement", "p": ["1/4", "3/4"], "K": 2}
    assert get_process("with_replacement", p=[0.5, 0.5], K=2).stationary.tolist() == [0.75, 0.75]


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: WithReplacementSampling([0.5, 0.6], 2), r"p must sum to 1 .*got sum 1.1"),
        (lambda: WithReplacementSampling([1.5, -0.5], 2), r"p must be in \[0, 1\], got 1.5"),
        (lambda: WithReplacementSampling([np.nan, 1.0], 2), r"p must be in \[0, 1\], got nan"),
        (lambda: WithReplacementSampling([[0.5, 0.5]], 2), r"p must be a non-empty 1-D array"),
        (lambda: WithReplacementSampling([], 2), r"p must be a non-empty 1-D array"),
        (lambda: WithReplacementSampling("ab", 2), r"p must be an array of real numbers"),
        (lambda: WithReplacementSampling([1.0], 0), r"K must be an integer >= 1, got 0"),
        (lambda: WithReplacementSampling([1.0], 2.5), r"K must be an integer >= 1, got 2.5"),
        (lambda: WithReplacementSampling([1.0], True), r"K must be an integer >= 1, got True"),
        (lambda: WithReplacementParticipation([0.2, 0.2], 3), r"p must sum to 1"),
        (lambda: get_process("with_replacement", p=[1.0]), "bad parameters"),
    ],
)
def test_validation(make, match) -> None:
    with pytest.raises(ValueError, match=match):
        make()


def test_enumeration_refuses_too_many_multisets(monkeypatch) -> None:
    from fedtheory.sampling import base

    monkeypatch.setattr(base, "MAX_ENUMERATE", 9)
    with pytest.raises(ValueError, match="has 10 multisets of K=3 draws"):
        WithReplacementSampling(P, 3).enumerate_counts()


def test_zero_probability_client_is_refused_by_an_importance_weighted_rule() -> None:
    prob = _problem(n=2)
    with pytest.raises(ValueError, match="must be positive for the importance-weighted rule"):
        simulate(prob, "fedavg_is", WithReplacementParticipation([0.0, 1.0], 2), rounds=1,
                 replicas=1, lr=0.1)


@pytest.mark.parametrize("K", [1, 5, 64, 65, 200])
def test_float_moments_of_the_set_are_the_exact_ones(K: int) -> None:
    # the positive series up to 64 draws, expm1 and inclusion-exclusion beyond
    d = WithReplacementSampling([Fraction(1, 100), Fraction(3, 100), Fraction(96, 100)], K)
    exact_P = d.P_exact.astype(float)
    # 1 - (1 - p)^K by a positive series (K <= 64) or expm1/log1p (K > 64), no cancellation:
    # relative: its relative error is a few hundred eps at most
    np.testing.assert_allclose(d.p, d.p_exact.astype(float), rtol=1e-13, atol=0)
    np.testing.assert_allclose(d.P, exact_P, rtol=1e-12 if K <= 64 else 0, atol=0
                               if K <= 64 else 1e-15)


def test_sample_counts() -> None:
    d = WithReplacementSampling([0.0, 0.25, 0.75], 7)
    counts = d.sample_counts(np.random.default_rng(0), 1000)
    assert counts.shape == (1000, 3) and (counts.sum(axis=1) == 7).all()
    assert not counts[:, 0].any()  # p_0 = 0: never drawn
    np.testing.assert_array_equal(d.sample(np.random.default_rng(0), 1000), counts > 0)
    with pytest.raises(ValueError, match="rng must be a numpy.random.Generator"):
        d.sample_counts(0, 3)
    with pytest.raises(ValueError, match="replicas must be a non-negative integer"):
        d.sample_counts(np.random.default_rng(0), -1)
