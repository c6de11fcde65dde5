"""FL-FDMS friend-discovery theory (fedtheory.theory.fdms), its generative models and exact
instances (fedtheory.experiments.fdms_friends) and derivations (fedtheory.symbolic.fdms_bounds)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from scipy import stats as st

from fedtheory import stats
from fedtheory.claims import checks
from fedtheory.experiments import fdms_friends as ff
from fedtheory.sampling.friend_selection import (
    choose_friends,
    init_similarity,
    mean_similarity,
    similarity_matrix,
    update_similarity,
)
from fedtheory.symbolic import fdms_bounds as fb
from fedtheory.theory import fdms as th

# ---------------------------------------------------------------- bounds


def test_bounds_formulas():
    t = np.arange(0, 50, 7)
    a = 0.4 * 0.3**2 / 2
    np.testing.assert_allclose(th.lemma2_bound(t, 5, 0.4, 0.3), 10 * np.exp(-a * t),
                               rtol=1e-14)  # relative: same elementwise formula
    np.testing.assert_allclose(th.hoeffding_union_bound(t, 5, 0.4, 0.3), 4 * np.exp(-a * t),
                               rtol=1e-14)  # relative: same elementwise formula
    e16 = th.eq16_bound(t, 0.5, 1.0, 3.0, 5, 0.4, 0.3)
    np.testing.assert_allclose(e16, 0.25 * (1 + 10 * np.exp(-a * t) * 2),
                               rtol=1e-14)  # relative: same elementwise formula
    # eq. (17) is eq. (16) averaged over t < T (kappa = 1): Psi* = a^2 sF2, Psi_bar = a^2 sP2
    for T in (1, 7, 300):
        direct = 0.25 * 1.0 + 2 * 5 * 0.25 * 3.0 * np.mean(np.exp(-a * np.arange(T)))
        assert th.psi_bound(T, 5, 0.4, 0.3, 0.25, 0.75) == pytest.approx(direct, rel=1e-12)
    assert th.psi_from_errors([1.0, 3.0], kappa=2.0) == 4.0


def test_bounds_bad_input():
    with pytest.raises(ValueError, match="beta"):
        th.lemma2_bound(1, 3, 0.0, 0.5)
    with pytest.raises(ValueError, match="delta_min"):
        th.hoeffding_union_bound(1, 3, 1.0, -0.1)
    with pytest.raises(ValueError, match="K"):
        th.lemma2_bound(1, 0, 1.0, 0.5)
    with pytest.raises(ValueError, match="T"):
        th.psi_bound(0, 3, 1.0, 0.5, 0.1, 1.0)
    with pytest.raises(ValueError, match="e2"):
        th.psi_from_errors([])


def test_elimination_union_bound_gives_p_over_T():
    K, T, B, beta, p, df = 9, 500, 2, 0.4, 0.05, 0.1
    t = np.arange(1, T + 1)
    theta = th.complexity_threshold(t, n_clients=K, horizon=T, max_friends=B, beta=beta, p=p,
                                    delta_f=df)
    per_round = th.elimination_union_bound(theta, t, beta=beta, K=K, max_friends=B, delta_f=df)
    np.testing.assert_allclose(per_round, p / T, rtol=1e-9)  # relative: exp(log) round trip
    assert th.elimination_union_bound(0.05, 3, beta=1, K=2, max_friends=1, delta_f=0.1) == np.inf


# ---------------------------------------------------------------- constants of an instance


def loop_gaps(mu, fr):
    n = mu.shape[0]
    dk, spread = [], []
    for k in range(n):
        f = [i for i in range(n) if fr[k, i]]
        o = [i for i in range(n) if i != k and not fr[k, i]]
        dk.append(min(mu[k, i] for i in f) - max(mu[k, i] for i in o) if f and o else math.inf)
        spread.append(max(mu[k, i] for i in f) - min(mu[k, i] for i in f) if f else 0.0)
    return dk, min(dk), max(spread)


def test_gap_constants_and_interval_match_loops():
    rng = np.random.default_rng(5)
    for _ in range(20):
        n = 6
        mu = rng.random((n, n))
        mu = (mu + mu.T) / 2
        s2 = rng.random((n, n)) * 3
        s2 = (s2 + s2.T) / 2
        fr = th.friendship(s2, 1.0)
        assert not fr.diagonal().any() and np.array_equal(fr, fr.T)
        g = th.gap_constants(mu, fr)
        dk, dmin, df = loop_gaps(mu, fr)
        np.testing.assert_array_equal(g["delta_k"], dk)  # bit-identical: same min/max
        assert g["delta_min"] == dmin and g["delta_f"] == df
        assert g["B_max"] == fr.sum(1).max()
        iv = th.gap_interval(mu - 0.01, mu + 0.01, fr)
        assert iv["delta_min"][0] <= dmin <= iv["delta_min"][1]
        assert iv["delta_f"][0] <= df <= iv["delta_f"][1]


def loop_beta(mask):
    T, n = mask.shape
    best = 1.0
    for t in range(1, T):
        for i in range(n):
            for j in range(n):
                if i != j:
                    best = min(best, mask[: t + 1, i].__and__(mask[: t + 1, j]).sum() / t)
    return best


def test_realised_beta_and_alpha():
    rng = np.random.default_rng(6)
    for _ in range(10):
        m = rng.random((15, 4)) < 0.7
        assert th.realised_beta(m) == loop_beta(m)
        assert th.realised_alpha(m) == max(1 - m[t].mean() for t in range(15))
    assert th.realised_beta(np.ones((1, 3), bool)) == 1.0


def test_clopper_pearson():
    assert stats.clopper_pearson(0, 50, 0.01, "lower") == 0.0
    assert stats.clopper_pearson(50, 50, 0.01, "upper") == 1.0
    lo = stats.clopper_pearson(7, 40, 0.025, "lower")
    up = stats.clopper_pearson(7, 40, 0.025, "upper")
    assert lo < 7 / 40 < up
    assert lo == pytest.approx(st.beta.ppf(0.025, 7, 34), rel=1e-12)
    # exactness: P(Bin(n, p) >= k) = alpha at p = the lower limit
    assert st.binom.sf(6, 40, lo) == pytest.approx(0.025, rel=1e-8)
    with pytest.raises(ValueError, match="side"):
        stats.clopper_pearson(1, 2, 0.1, "both")
    with pytest.raises(ValueError, match="k <= n"):
        stats.clopper_pearson(3, 2, 0.1, "lower")


def test_estimate_similarity_means_covers_exact():
    model = ff.orthogonal_instance(0.8, 1)["model"]
    est = th.estimate_similarity_means(model.sample, 4000, np.random.default_rng(7), 1e-6)
    mu = model.mu()
    off = ~np.eye(model.n, dtype=bool)
    assert np.all(est["lower"][off] <= mu[off]) and np.all(mu[off] <= est["upper"][off])


# ---------------------------------------------------------------- models


def test_discrete_clients_moments_against_samples():
    model = ff.DiscreteClients.build([[[1.0, 0.0], [0.0, 2.0]], [[-1.0, 1.0]], [[3.0, 3.0]]],
                                     [[0.3, 0.7], [1.0], [1.0]])
    u = model.sample(np.random.default_rng(8), 200_000)
    assert u.shape == (200_000, 3, 2)
    freq = (u[:, 0, 0] == 1.0).mean()
    assert abs(freq - 0.3) < 6 * math.sqrt(0.21 / 200_000)
    # sigma^2 exactly: E||a - b||^2 by enumeration of client 0's two values
    s01 = 0.3 * ((1 + 1) ** 2 + 1) + 0.7 * (1 + 1)
    assert model.sigma2()[0, 1] == pytest.approx(s01, rel=1e-12)
    s = similarity_matrix(u[:2000], np.ones((2000, 3), bool))
    se = s.std(0) / math.sqrt(2000)
    assert np.all(np.abs(s.mean(0) - model.mu()) <= 6 * se + 1e-12)
    with pytest.raises(ValueError, match="client 0"):
        ff.DiscreteClients.build([[[1.0]]], [[0.5]])


def test_gaussian_clusters_sigma2():
    g = ff.GaussianClusters(np.array([[0.0, 0.0], [3.0, 4.0]]), np.array([0, 0, 1]), 0.5)
    s2 = g.sigma2()
    assert s2[0, 1] == pytest.approx(2 * 2 * 0.25) and s2[0, 2] == pytest.approx(25 + 1.0)
    u = g.sample(np.random.default_rng(9), 100_000)
    emp = np.mean(np.sum((u[:, 0] - u[:, 2]) ** 2, axis=1))
    assert abs(emp - 26.0) < 6 * math.sqrt(np.var(np.sum((u[:, 0] - u[:, 2]) ** 2, axis=1))
                                           / 100_000)


def enumerate_choice(values_per_round, probs, dropped, n, N, schedule_active):
    """Exact choice law of the algorithm by enumerating every sequence of the random client's
    values over N rounds (others deterministic): returns {chosen index: Fraction}."""
    law: dict[int, Fraction] = {}
    seqs = list(itertools.product(range(len(probs)), repeat=N))
    R = len(seqs)
    state = init_similarity(R, n)
    for r in range(N):
        u = np.stack([values_per_round(seq[r]) for seq in seqs])
        act = np.broadcast_to(schedule_active, (R, n)).copy()
        state = update_similarity(state, similarity_matrix(u, act), act)
    act = np.ones((R, n), bool)
    act[:, dropped] = False
    phi = choose_friends(mean_similarity(state), act)[:, dropped]
    for seq, c in zip(seqs, phi, strict=True):
        w = math.prod((Fraction(probs[v]) for v in seq), start=Fraction(1))
        law[int(c)] = law.get(int(c), Fraction(0)) + w
    return law


@pytest.mark.parametrize("N", [1, 2, 5, 8])
def test_lemma_tight_probability_by_enumeration(N):
    q = Fraction(3, 4)

    def vals(v):  # clients [g, f, k]; k is +1 (v = 0) or -1 (v = 1)
        return np.array([[-1.0], [1.0], [1.0 if v == 0 else -1.0]])

    law = enumerate_choice(vals, [q, 1 - q], 2, 3, N, np.ones(3, bool))
    assert law.get(0, Fraction(0)) == ff.lemma_tight_probability(q, N)


@pytest.mark.parametrize("N", [1, 3, 6])
def test_negative_gap_probability_by_enumeration(N):
    q = Fraction(1, 2)

    def vals(v):  # clients [f, g, k]
        return np.array([[1.0 if v == 0 else -1.0], [3.0], [1.0]])

    law = enumerate_choice(vals, [q, 1 - q], 2, 3, N, np.ones(3, bool))
    assert law.get(1, Fraction(0)) == ff.negative_gap_probability(q, N)


@pytest.mark.parametrize("N", [1, 4, 7])
def test_orthogonal_error_by_enumeration(N):
    q, alpha = Fraction(4, 5), Fraction(1, 6)
    inst = ff.orthogonal_instance(float(q), 1)  # clients [A0, A1, A2, f0, f1, f2]
    e = np.eye(3)

    def vals(v):  # only f0 is random here: f1, f2 fixed at +e (their law does not matter:
        # every non-friend score is exactly 1/2 whatever their sign)
        return np.stack([e[0], e[1], e[2], e[0] if v == 0 else -e[0], e[1], e[2]])

    law = enumerate_choice(vals, [q, 1 - q], 0, 6, N, np.ones(6, bool))
    p_nf = 1 - law.get(3, Fraction(0))
    exact = ff.orthogonal_error(q, N, alpha)
    assert p_nf == exact["p_nonfriend"]
    sF2 = 4 * (1 - q)
    assert exact["e2"] == alpha**2 * (sF2 + p_nf * (2 - sF2))
    assert inst["sigma_P2"] == float(inst["model"].sigma2().max())


def test_instances_constants():
    t = ff.lemma_tight_instance(Fraction(3, 4))
    fr = th.friendship(t["model"].sigma2(), t["sigma_F2"] * (1 + 1e-12))
    assert th.gap_constants(t["model"].mu(), fr)["delta_min"] == pytest.approx(0.5)
    ng = ff.negative_gap_instance()
    fr = th.friendship(ng["model"].sigma2(), ng["sigma_F2"] * (1 + 1e-12))
    assert fr[2, 0] and not fr[2, 1]  # f is k's friend, g is not
    assert th.gap_constants(ng["model"].mu(), fr)["delta_min"] == pytest.approx(-0.5)


def test_masks():
    rng = np.random.default_rng(10)
    fr = np.zeros((6, 6), bool)
    for a, b in [(0, 1), (2, 3), (4, 5)]:
        fr[a, b] = fr[b, a] = True
    m = ff.random_friend_dropout(rng, 50, 30, fr, 0.6, warmup=3)
    assert m[:, :3].all()
    dropped = ~m
    has_active_friend = np.einsum("rtj,kj->rtk", m.astype(int), fr.astype(int)) > 0
    assert np.all(has_active_friend[dropped])
    w = ff.whole_cluster_dropout(6, 20, [0, 1], 5, 2)
    assert (~w[:, [0, 1]]).sum() == 2 * len(range(6, 20, 5))
    r = ff.rotation_schedule(6, 9, [[0], [1], [2]], 3)
    assert r[:3].all() and not r[3, 0] and not r[4, 1] and not r[6, 0]


def test_simulate_without_dropout_is_error_free():
    model = ff.orthogonal_instance(0.8, 1)["model"]
    sim = ff.simulate_discovery(model, np.ones((5, 6), bool), 7, np.random.default_rng(11),
                                np.zeros((6, 6), bool))
    assert not sim["nonfriend"].any() and np.all(sim["e2"] == 0)
    assert np.all(sim["computations"] == 15) and np.all(sim["eliminated"] == -1)


@pytest.mark.parametrize("model", [ff.twenty_clusters()[0],
                                   ff.orthogonal_instance(0.6, 2)["model"]])
def test_skipping_a_run_leaves_the_generator_where_the_run_does(model):
    """skip_discovery: the draws of simulate_discovery without the simulation, so that a run
    after others on one generator is computed alone, bitwise."""
    n, T, R = model.n, 12, 3
    mask = np.random.default_rng(1).random((R, T, n)) < 0.7
    a, b = np.random.default_rng([5, 1]), np.random.default_rng([5, 1])
    ff.simulate_discovery(model, mask, R, a, np.eye(n, dtype=bool), theta=np.full(T, 0.6))
    ff.skip_discovery(model, T, R, b)
    assert a.bit_generator.state == b.bit_generator.state


def test_complexity_runs_one_at_a_time_are_the_sequence():
    model, sF2 = ff.twenty_clusters()
    fr = th.friendship(model.sigma2(), sF2 * (1 + 1e-12))
    mask = ff.random_friend_dropout(np.random.default_rng(2), 3, 40, fr, 0.3, warmup=5)
    kw = {"p": 0.1, "beta": th.realised_beta(mask), "delta_f": 0.1}
    whole_rng = np.random.default_rng(4)
    whole = ff.complexity_runs(model, fr, mask, whole_rng, **kw)
    assert list(whole) == ["none", "1 Theta_t", "0.5 Theta_t"]
    for name in whole:
        rng = np.random.default_rng(4)
        one = ff.complexity_runs(model, fr, mask, rng, only=(name,), **kw)
        assert list(one) == [name]
        for key, value in whole[name].items():
            assert np.array_equal(one[name][key], value)
        assert rng.bit_generator.state == whole_rng.bit_generator.state
    rng = np.random.default_rng(4)
    assert ff.complexity_runs(model, fr, mask, rng, only=(), **kw) == {}
    assert rng.bit_generator.state == whole_rng.bit_generator.state
    with pytest.raises(ValueError, match=r"only must name runs among .*got \['2 Theta_t'\]"):
        ff.complexity_runs(model, fr, mask, rng, only=("2 Theta_t",), **kw)


# ---------------------------------------------------------------- derivations


def test_symbolic_derivations():
    S = fb.SYMBOLS
    assert fb.hoeffding_exponent() == -S["beta"] * S["delta"] ** 2 * S["t"] / 2
    assert fb.union_count() == S["K"] - 1
    assert all(fb.cauchy_schwarz_gap(D) == 0 for D in range(2, 5))
    derived, closed = fb.geometric_sum()
    assert sp.simplify(derived.args[-1][0] - closed) == 0
    theta = sp.sqrt((2 * sp.log(2 * S["K"] ** 2 * S["T"] * S["B"]) - 2 * sp.log(S["p"]))
                    / (S["beta"] * S["t"])) + S["delta_f"]
    assert fb.theta_union_sum(theta) == S["p"]


def test_termwise_comparisons():
    S = fb.SYMBOLS
    half = sp.Rational(1, 2)
    assert fb.lemma_termwise(2, half, S["K"], S["beta"], S["delta"] ** 2)["status"] == "proved"
    assert fb.lemma_termwise(2, half, 1, S["beta"], S["delta"] ** 2)["status"] == "violated"
    r = fb.lemma_termwise(2, half, S["K"], 1, S["delta"] ** 2)
    assert r["status"] == "violated" and r["instance"]["stated"] < r["instance"]["derived"]
    assert fb.eq16_termwise(S["alpha"] ** 2, 1, 2, half, S["K"])["status"] == "proved"
    assert fb.eq16_termwise(1, 1, 2, half, S["K"])["status"] == "proved"
    assert fb.eq16_termwise(S["alpha"] ** 2, sp.Rational(7, 10), 2, half,
                            S["K"])["status"] == "violated"
    assert fb.psi_termwise(1, 2, half, S["K"])["status"] == "proved"
    assert fb.psi_termwise(sp.Rational(7, 10), 2, half, S["K"])["status"] == "violated"


def test_psi_ratio_argument_proves_sharper_rates_and_nothing_false():
    """eq. (17) with a rate above 1/2: sup_T S_T(x)/S_T(x_s) = (1-x_s)/(1-x) <= 2r, checked
    numerically on a grid, and the argument proves exactly the cases it should."""
    from fedtheory.claims.fdms.psi_bound import ratio_argument

    for r in (0.5, 0.65, 1.3):
        for a in (1e-4, 0.1, 0.5, 1.0):
            x, xs = np.exp(-a / 2), np.exp(-r * a)
            ratios = [np.sum(x ** np.arange(T)) / np.sum(xs ** np.arange(T))
                      for T in (1, 5, 50, 5000)]
            assert np.all(np.diff(ratios) >= -1e-12)  # increasing in T
            assert ratios[-1] <= (1 - xs) / (1 - x) + 1e-9 <= 2 * r + 1e-9
    K = fb.SYMBOLS["K"]
    assert ratio_argument(1, 2, sp.Rational(13, 20), K)["status"] == "proved"
    assert ratio_argument(1, sp.Rational(7, 5), sp.Rational(1, 2), K)["status"] == "proved"
    assert ratio_argument(1, 2, sp.Rational(13, 20), 1)["status"] == "not proved"  # K dropped
    assert ratio_argument(sp.Rational(7, 10), 2, sp.Rational(1, 2), K)["status"] == "not proved"
    assert ratio_argument(1, 2, sp.Rational(13, 10), K)["status"] == "not proved"  # 2r > 2


def test_spread_friends_chain_matches_the_simulated_algorithm():
    """The exact chain of spread_elimination_probability against FL-FDMS's pruning simulated
    (simulate_discovery, the rule's conventions): every round and f every 3rd round, with a
    threshold small enough that the probability is moderate; two-sided, alpha = 1e-6."""
    q = Fraction(3, 10)
    inst = ff.spread_friends_instance(q)
    model = inst["model"]
    fr = th.friendship(model.sigma2(), inst["sigma_F2"] * (1 + 1e-12))
    g = th.gap_constants(model.mu(), fr)
    assert (g["delta_f"], g["delta_min"], g["B_max"]) == pytest.approx((0.7, 0.3, 3))
    T, R = 60, 4000
    for m, theta0 in ((1, 0.7), (3, 0.76)):
        t = np.arange(1, T + 1)
        active = (t - 1) % m == 0
        theta = theta0 + 0.5 / np.sqrt(t)
        exact = ff.spread_elimination_probability(q, theta, active)
        mask = np.ones((T, 4), dtype=bool)
        mask[:, 2] = active
        sim = ff.simulate_discovery(model, mask, R, np.random.default_rng(m), fr, theta=theta)
        hits = (sim["eliminated"] >= 0).astype(float)
        assert 0.05 < exact < 0.95
        ev = checks.check_identity(hits, exact, rtol=0.0, what=f"P(eliminated), m = {m}")
        assert ev.passed, ev.detail
    with pytest.raises(ValueError, match="active must be"):
        ff.spread_elimination_probability(q, np.ones(5), np.zeros(5, dtype=bool))


def test_sharper_union_proves_only_what_it_covers():
    from fedtheory.claimkit.stated import Mutant
    from fedtheory.claims import Context
    from fedtheory.claims.fdms.complexity_reduction import STATED, sharper_union

    def status(mutant):
        return sharper_union(Context(stated=STATED, mutant=mutant))["status"]

    assert status(None) == "proved"
    assert status(Mutant("constant", "log_arg", Fraction(7, 10))) == "proved"
    for name in ("log_coef", "log_p", "delta_f"):
        assert status(Mutant("constant", name, Fraction(7, 10))) == "not proved"
    for name in ("K^2", "B_max", "beta"):
        assert status(Mutant("factor", name)) == "not proved"
