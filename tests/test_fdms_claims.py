"""The library maths behind the ``fdms`` claims of the engine part (eq. 5, the substitution
errors, the experiment's helpers): exact values two independent ways, tight instances, the
scope of the error bounds, measured constants."""

from fractions import Fraction

import numpy as np
import pytest

from fedtheory.claims.fdms._common import direct_error2, rational_instance, worst_mask
from fedtheory.experiments import fdms_constants as fc
from fedtheory.experiments import fdms_paper as fp
from fedtheory.participation.dropout import realised_beta
from fedtheory.participation.grouped_dropout import GroupedDropout
from fedtheory.problems.clustered import cluster_labels, clustered_quadratic
from fedtheory.problems.noise import GaussianNoise


@pytest.mark.parametrize("K, alpha, dist", [(4, Fraction(1, 2), "max"), (5, Fraction(3, 5),
                                                                          "uniform")])
def test_polarisation_equals_noise_moments(K, alpha, dist):
    means, var = rational_instance(np.random.default_rng(K), K, 3)
    law = fc.dropout_law(K, alpha, dist)
    assert sum(p for _, p in law) == 1
    S2 = fc.pairwise_sigma2(means, var)
    assert fc.exact_error2(S2, law) == direct_error2(means, var, law)
    # bound alpha^2 sigma_P^2, exactly
    assert direct_error2(means, var, law) <= alpha**2 * max(S2.ravel())


def test_tight_instances_attain_the_bounds():
    m = np.array([[Fraction(0)], [Fraction(3)]], dtype=object)
    v = np.array([Fraction(1), Fraction(1)], dtype=object)
    S2 = fc.pairwise_sigma2(m, v)
    assert fc.exact_error2(S2, fc.dropout_law(2, Fraction(1, 2))) == S2[0, 1] / 4
    F = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]], dtype=bool)
    m3 = np.array([[Fraction(0)], [Fraction(1)], [Fraction(5)]], dtype=object)
    v3 = np.array([Fraction(1, 2), Fraction(1, 2), Fraction(0)], dtype=object)
    mask, val = worst_mask(m3, v3, 1, F)
    assert mask.tolist() in ([False, True, True], [True, False, True])
    assert val == fc.pairwise_sigma2(m3, v3)[0, 1] / 9  # alpha^2 sigma_F^2, alpha = 1/3


def test_no_dropout_no_error_and_assumption5():
    means, var = rational_instance(np.random.default_rng(0), 4, 2)
    assert direct_error2(means, var, [(np.ones(4, dtype=bool), Fraction(1))]) == 0
    F = np.array([[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]], dtype=bool)
    assert fc.assumption5_holds(np.array([False, True, True, False]), F)
    assert not fc.assumption5_holds(np.array([False, False, True, True]), F)
    with pytest.raises(ValueError, match="Assumption 5 fails"):
        fc.exact_error2(fc.pairwise_sigma2(means, var),
                        [(np.array([False, False, True, True]), Fraction(1))], F)
    with pytest.raises(ValueError, match="at least one client"):
        fc.substitution_matrix(np.zeros(3, dtype=bool))


def test_sample_dependent_dropout_is_outside_the_bound():
    """The bound needs a dropout set independent of the round's samples: an adversary that
    drops the client whose update is farthest from the others' mean exceeds alpha^2 sigma_P^2
    (K = 3, alpha = 1/3, iid N(0, 1) updates: sigma_P^2 = 2, bound 2/9)."""
    xi = np.random.default_rng(0).standard_normal((200_000, 3))
    others = (xi.sum(axis=1, keepdims=True) - xi) / 2
    err = ((others - xi) ** 2).max(axis=1) / 9
    half_width = 5 * err.std() / np.sqrt(err.size)  # a 5-sigma margin
    assert err.mean() - half_width > 2 / 9


def test_gap_constants_by_hand():
    mu = np.array([[1.0, 0.9, 0.2], [0.9, 1.0, 0.3], [0.2, 0.3, 1.0]])
    F = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]], dtype=bool)
    g = fc.gap_constants(mu, F)
    assert g["B_max"] == 1 and g["B"].tolist() == [1, 1, 0]
    np.testing.assert_allclose(g["delta_k"][:2], [0.7, 0.6], rtol=0, atol=1e-15)  # 1 ulp
    assert np.isnan(g["delta_k"][2]) and g["delta_f"] == 0.0
    assert g["delta_min"] == pytest.approx(0.6, abs=1e-15)  # one subtraction


def test_measured_constants_find_the_clusters():
    prob = clustered_quadratic(20, 5, d=6, seed=0)
    c = fc.measure_constants(prob, np.ones((2, 6)), lr=0.1, local_steps=2,
                             noise=GaussianNoise(0.25), samples=400, sigma_F2=2.0)
    lab = cluster_labels(20, 5)
    same = (lab[:, None] == lab[None, :]) & ~np.eye(20, dtype=bool)
    np.testing.assert_array_equal(c["friends"], same)
    assert c["delta_min"] > 0 and c["B_max"] == 3
    assert (c["sigma2_se"] >= 0).all() and c["sigma_P2"] == c["sigma2"].max()


def test_pair_probability_is_the_long_run_beta():
    """The exact smallest pair probability of the authors' dropout against the co-activity
    frequency of its masks (every pair, 4 replicas x 4000 rounds), and the realised beta of
    Assumption 6 below it (a minimum over rounds and pairs)."""
    for alpha in (0.3, 0.5, 0.7):
        exact = float(fp.pair_probability(alpha))
        masks = GroupedDropout(20, alpha).sample(np.random.default_rng(1), 4, 4000)[1:]
        both = (masks[:, :, :, None] & masks[:, :, None, :]).mean(axis=(0, 1))
        off = ~np.eye(20, dtype=bool)
        # 15996 rounds per pair: a binomial frequency, 6 standard errors of slack
        assert abs(both[off].min() - exact) < 6 * np.sqrt(exact * (1 - exact) / 15996)
        beta = realised_beta(masks, start=1000)
        assert (beta <= exact + 0.02).all() and (beta > 0.5 * exact).all()
    assert fp.pair_probability(0.5) == Fraction(379, 1616)


def test_metrics():
    acc = np.array([[0.1, 0.2], [0.5, 0.3], [0.7, 0.9], [0.9, 0.9], [0.9, 0.95]])
    np.testing.assert_allclose(fp.final_accuracy(acc, 0.5), [0.9, 0.925], rtol=0, atol=1e-15)
    np.testing.assert_allclose(fp.mean_accuracy(acc), [0.75, 0.7625], rtol=0, atol=1e-15)
    assert fp.rounds_to(acc, [0.7, 0.96]).tolist() == [2, 5]  # never: T + 1 = 5


@pytest.mark.parametrize("K", [3, 5])
def test_random_law_closed_form(K):
    means, var = rational_instance(np.random.default_rng(10 + K), K, 2)
    S2 = fc.pairwise_sigma2(means, var)
    for D in range(K):
        law = fc.dropout_law(K, Fraction(D, K), "max")
        assert fc.exact_error2(S2, law) == fc.random_dropout_error2(S2, D)
    with pytest.raises(ValueError, match="n_drop must be in"):
        fc.random_dropout_error2(S2, K)


@pytest.mark.parametrize("n, clusters", [(6, 3), (8, 2), (8, 4)])
def test_assumption5_probability_by_enumeration(n, clusters):
    labels = np.repeat(np.arange(clusters), n // clusters)
    F = (labels[:, None] == labels[None, :]) & ~np.eye(n, dtype=bool)
    for D in range(n):
        law = fc.dropout_law(n, Fraction(D, n), "max")
        want = sum(p for m, p in law if fc.assumption5_holds(m, F))
        assert fc.assumption5_probability(n, clusters, D) == want
    with pytest.raises(ValueError, match="clusters must divide"):
        fc.assumption5_probability(7, 2, 1)
