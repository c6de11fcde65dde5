"""Tests of the fedavg family's library: exact FedAvg moments on quadratics, subset variances,
fixed points, exponent fits, the symbolic derivations and the claims' registration."""

import itertools
import re
from fractions import Fraction

import numpy as np
import pytest

from fedtheory.claims.fedavg import heterogeneity, local_steps, partial_participation
from fedtheory.experiments import fedavg_experiments as fx
from fedtheory.problems import QuadraticProblem
from fedtheory.symbolic import local_sgd as S
from fedtheory.symbolic.subset_average_variance import derive_subset_variance
from fedtheory.theory import fedavg as th

from ._tolerance import assert_close_normwise, assert_close_sum


def _problem(n=4, d=3, seed=0, identical=False, zeta2=1.0):
    return th.make_problem(zeta2, n=n, d=d, mu=0.3, identical_hessians=identical,
                           problem_seed=seed)


# ---------------------------------------------------------------------------- validation
@pytest.mark.parametrize("lr", [0.0, -0.1, float("nan"), "a"])
def test_bad_lr_names_the_argument(lr):
    with pytest.raises(ValueError, match="lr must be a positive real number"):
        th.local_contraction(np.ones((2, 2)), lr, 1)


@pytest.mark.parametrize("k", [0, -1, 1.5, True])
def test_bad_local_steps(k):
    with pytest.raises(ValueError, match="local_steps must be an integer >= 1"):
        th.local_noise_gain(np.ones((2, 2)), 0.1, k)


def test_bad_participants_and_shapes():
    prob = _problem()
    with pytest.raises(ValueError, match="participants must be at most n = 4"):
        th.fedavg_moments(prob, lr=0.1, rounds=2, participants=5)
    with pytest.raises(ValueError, match="participants must be an integer >= 1"):
        th.subset_variance(np.ones((3, 2)), 0)
    with pytest.raises(ValueError, match="x0 must have shape"):
        th.fedavg_moments(prob, lr=0.1, rounds=2, x0=np.zeros(5))
    with pytest.raises(ValueError, match="rounds must be an integer >= 0"):
        th.fedavg_moments(prob, lr=0.1, rounds=-1)
    with pytest.raises(ValueError, match="sigma2 must be a non-negative real number"):
        th.fedavg_moments(prob, lr=0.1, rounds=1, sigma2=-1.0)
    with pytest.raises(ValueError, match="updates must have shape"):
        th.subset_variance(np.ones(3), 1)
    with pytest.raises(ValueError, match="alpha and beta must have the same shape"):
        th.subset_mean_product(np.ones(3), np.ones(4), 1)
    with pytest.raises(ValueError, match="updates must be a non-empty"):
        th.enumerate_subset_variance([], 1)
    with pytest.raises(ValueError, match="zeta2 must be a non-negative real number"):
        th.make_problem(-1.0)
    with pytest.raises(ValueError, match="c must be a positive real number"):
        th.step_size_for(10, 0.0)


def test_problem_must_be_diagonal_with_uniform_weights():
    prob = _problem()
    dense = QuadraticProblem(np.stack([np.diag(h) for h in prob.hessians]), prob.centers)
    with pytest.raises(ValueError, match="diagonal Hessians"):
        th.fedavg_fixed_point(dense, 0.1, 2)
    weighted = QuadraticProblem(prob.hessians, prob.centers, weights=[0.1, 0.2, 0.3, 0.4])
    with pytest.raises(ValueError, match="uniform weights"):
        th.fedavg_moments(weighted, lr=0.1, rounds=1)


# ---------------------------------------------------------------------------- fixed points
def test_fixed_point_is_optimum_for_one_step_or_equal_hessians():
    prob = _problem()
    np.testing.assert_allclose(th.fedavg_fixed_point(prob, 0.2, 1), prob.x_star, atol=1e-12)
    same = _problem(identical=True)
    np.testing.assert_allclose(th.fedavg_fixed_point(same, 0.2, 7), same.x_star, atol=1e-12)


def test_fixed_point_drift_is_linear_in_heterogeneity():
    d1 = th.fedavg_fixed_point(_problem(zeta2=1.0), 0.2, 5)
    d4 = th.fedavg_fixed_point(_problem(zeta2=4.0), 0.2, 5)
    assert np.linalg.norm(d1) > 1e-3
    np.testing.assert_allclose(d4, 2.0 * d1, rtol=1e-10)


def test_fixed_point_is_a_fixed_point_of_the_moments():
    prob = _problem()
    xh = th.fedavg_fixed_point(prob, 0.15, 3)
    mom = th.fedavg_moments(prob, lr=0.15, rounds=3, local_steps=3, x0=xh)
    np.testing.assert_allclose(mom.mean + prob.x_star, np.broadcast_to(xh, mom.mean.shape),
                               atol=1e-12)


def test_degenerate_coordinate_keeps_the_optimum():
    # (1 - lr a)^K = 1 in the first coordinate for every client: every point is fixed there
    prob = QuadraticProblem(np.array([[0.0, 1.0], [0.0, 2.0]]), np.array([[1.0, 1.0],
                                                                          [3.0, -1.0]]))
    xh = th.fedavg_fixed_point(prob, 0.1, 2)
    assert xh[0] == prob.x_star[0]
    assert np.isfinite(xh).all()


# ---------------------------------------------------------------------------- subsets
def _enumerated_product(alpha, beta, m):
    n = alpha.shape[0]
    vals = [alpha[list(s)].mean(axis=0) * beta[list(s)].mean(axis=0)
            for s in itertools.combinations(range(n), m)]
    return np.mean(vals, axis=0)


@pytest.mark.parametrize("n,m", [(1, 1), (3, 1), (3, 2), (3, 3), (5, 2), (6, 4)])
def test_subset_mean_product_matches_enumeration(n, m):
    rng = np.random.default_rng(n * 10 + m)
    a, b = rng.normal(size=(n, 2)), rng.normal(size=(n, 2))
    np.testing.assert_allclose(th.subset_mean_product(a, b, m), _enumerated_product(a, b, m),
                               rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("n,m", [(1, 1), (4, 1), (4, 3), (4, 4), (6, 2)])
def test_subset_variance_exact_and_enumerated(n, m):
    rng = np.random.default_rng(n + m)
    g = rng.integers(-5, 6, size=(n, 3))
    exact = th.enumerate_subset_variance(g.tolist(), m)
    assert isinstance(exact, Fraction)
    assert th.subset_variance(g.astype(float), m) == pytest.approx(float(exact), abs=1e-12)
    if m == n:
        assert exact == 0


def test_subset_variance_ties_and_zeros():
    assert th.subset_variance(np.zeros((5, 2)), 2) == 0.0
    assert th.subset_variance(np.ones((5, 2)), 1) == 0.0


# ---------------------------------------------------------------------------- moments
def test_update_moments_noise_free_is_the_subset_variance():
    prob = _problem()
    x = np.ones(prob.d)
    mom = th.update_moments(prob, x, lr=0.1, local_steps=3, participants=2)
    mu = (th.local_contraction(prob.hessians, 0.1, 3) - 1.0) * (x - prob.centers)
    assert mom["noise"] == 0.0
    assert mom["variance"] == pytest.approx(th.subset_variance(mu, 2), rel=1e-12)
    assert_close_sum(mom["mean"], x + mu.mean(axis=0), np.abs(x) + np.abs(mu).mean(axis=0))


def test_moments_match_path_enumeration():
    """Two rounds, 3 clients, m = 2, no noise: every participation path by enumeration."""
    prob = _problem(n=3, d=2, seed=4)
    lr, K, x0 = 0.3, 2, np.array([1.0, -2.0])
    P = th.local_contraction(prob.hessians, lr, K)

    def round_(x, s):
        return x + np.mean([(P[i] - 1.0) * (x - prob.centers[i]) for i in s], axis=0)

    subsets = list(itertools.combinations(range(3), 2))
    finals = [round_(round_(x0, s1), s2) - prob.x_star for s1 in subsets for s2 in subsets]
    mom = th.fedavg_moments(prob, lr=lr, rounds=2, local_steps=K, participants=2, x0=x0)
    # two rounds of a recursion against an enumeration: errors scale with the moments' size
    want_mean, want_second = np.mean(finals, axis=0), np.mean(np.square(finals), axis=0)
    assert_close_normwise(mom.mean[-1], want_mean, 1e-12)
    assert_close_normwise(mom.second[-1], want_second, 1e-12)


def test_moments_noise_matches_closed_form_one_client():
    # one client, one coordinate: E e_R^2 = q (1 - r^{2R}) / (1 - r^2), r = 1 - lr a
    prob = QuadraticProblem(np.array([[2.0]]), np.array([[0.0]]))
    lr, R, s2 = 0.1, 7, 3.0
    mom = th.fedavg_moments(prob, lr=lr, rounds=R, sigma2=s2)
    r = 1 - lr * 2.0
    want = lr**2 * s2 * (1 - r ** (2 * R)) / (1 - r**2)
    assert mom.dist2[-1] == pytest.approx(want, rel=1e-12)
    assert mom.grad_norm2[-1] == pytest.approx(4.0 * want, rel=1e-12)
    assert mom.bias2[-1] == 0.0


def test_equal_hessians_fedavg_round_is_k_sgd_steps_exactly():
    prob = _problem(identical=True)
    x0 = np.ones(prob.d)
    fed = th.fedavg_moments(prob, lr=0.05, rounds=6, local_steps=4, sigma2=2.0, x0=x0)
    sgd = th.fedavg_moments(prob, lr=0.05, rounds=24, local_steps=1, sigma2=2.0, x0=x0)
    assert_close_normwise(fed.second, sgd.second[::4], 1e-12, axis=-1)  # per round


def test_rounds_zero_and_moments_properties():
    prob = _problem()
    mom = th.fedavg_moments(prob, lr=0.1, rounds=0, x0=np.ones(prob.d))
    assert mom.mean.shape == (1, prob.d)
    assert mom.dist2[0] == pytest.approx(prob.d)


# ---------------------------------------------------------------------------- fits and engine
def test_fit_exponent_exact_and_errors():
    x = np.array([1.0, 4.0, 16.0])
    rows = np.repeat((x**-0.5)[:, None], 5, axis=1)
    slope, se = fx.fit_exponent(x, rows)
    assert slope == pytest.approx(-0.5) and se == 0.0
    with pytest.raises(ValueError, match="samples must have shape"):
        fx.fit_exponent(x, rows[:2])
    with pytest.raises(ValueError, match="x must be positive"):
        fx.fit_exponent(np.array([0.0, 1.0, 2.0]), rows)
    mixed = rows.copy()
    mixed[0, 0] += 0.1
    with pytest.raises(ValueError, match="all vary or all be constant"):
        fx.fit_exponent(x, mixed)


def test_make_problem_family():
    p1, p4 = _problem(zeta2=1.0), _problem(zeta2=4.0)
    np.testing.assert_allclose(p1.hessians, p4.hessians)
    np.testing.assert_allclose(p4.centers, 2.0 * p1.centers)
    assert p4.heterogeneity_at_optimum == pytest.approx(4.0)
    np.testing.assert_allclose(p1.x_star, 0.0, atol=1e-12)
    assert _problem(identical=True, zeta2=2.0).rho == pytest.approx(2.0)


def test_engine_agrees_with_exact_moments_one_round():
    prob = _problem(n=5, d=2, seed=1)
    x0 = np.array([1.0, 1.0])
    run = fx.run_final(prob, "fedavg", participants=2, lr=0.1, local_steps=3, rounds=1,
                       replicas=4000, sigma2=0.5, seed=7, x0=x0, metrics=("dist2",))
    mom = th.update_moments(prob, x0, lr=0.1, local_steps=3, participants=2, sigma2=0.5)
    sq = np.sum((run["x"] - mom["mean"]) ** 2, axis=1)
    # two-sided 1e-6 interval
    assert abs(sq.mean() - mom["variance"]) <= 5.3 * sq.std(ddof=1) / np.sqrt(sq.size)


def test_common_random_numbers_make_saga_independent_of_heterogeneity():
    out = fx.floors_vs_heterogeneity((0.0, 3.0), ("saga",), participants=2, lr=0.2,
                                     local_steps=1, rounds=20, replicas=20, sigma2=0.1, seed=3,
                                     problem_kw={"n": 5, "d": 3})
    X = out["dist2"]["saga"]
    np.testing.assert_allclose(X[1], X[0], rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------------------- symbolic
def test_local_sgd_closed_form_matches_iteration():
    import sympy as sp

    loc = S.derive_local_sgd()
    vals = {loc["a"]: sp.Rational(3, 2), loc["c"]: sp.Rational(1, 3),
            loc["delta"]: sp.Rational(1, 5), S.gamma: sp.Rational(1, 10), S.x_sym: 2}
    y = sp.Integer(2)
    for _ in range(4):
        y = y - vals[S.gamma] * (vals[loc["a"]] * (y - vals[loc["c"]]) + vals[loc["delta"]])
    assert sp.simplify(loc["y_K"].subs(vals).subs(S.K, 4) - y) == 0


def test_subset_variance_derivation():
    d = derive_subset_variance()
    assert d["matches"] and d["mean_factor"] == 1


def test_claims_registered_with_all_kinds():
    for claim in (heterogeneity.CLAIM, partial_participation.CLAIM, local_steps.CLAIM):
        kinds = {c.kind for c in claim.checks}
        assert {"symbolic", "monte_carlo", "figure"} <= kinds, claim.id
        assert claim.derivation.strip()


def test_final_moments_closed_form_matches_recursion():
    prob = _problem()
    x0 = np.linspace(-1, 1, prob.d)
    for K in (1, 4):
        a = th.fedavg_final_moments(prob, lr=0.2, rounds=37, local_steps=K, sigma2=0.7, x0=x0)
        b = th.fedavg_moments(prob, lr=0.2, rounds=37, local_steps=K, sigma2=0.7, x0=x0)
        np.testing.assert_allclose(a.mean[-1], b.mean[-1], rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(a.second[-1], b.second[-1], rtol=1e-10, atol=1e-14)
    # a flat coordinate (alpha = 1): the geometric sums read R
    flat = QuadraticProblem(np.array([[0.0, 1.0], [0.0, 2.0]]), np.array([[1.0, 1.0],
                                                                          [3.0, -1.0]]))
    a = th.fedavg_final_moments(flat, lr=0.1, rounds=9, sigma2=1.0)
    b = th.fedavg_moments(flat, lr=0.1, rounds=9, sigma2=1.0)
    np.testing.assert_allclose(a.second[-1], b.second[-1], rtol=1e-10)


def test_fedavg_and_sgd_final_pairs_the_two_runs():
    prob = _problem()
    x0 = np.linspace(-1, 1, prob.d)
    fed, sgd = th.fedavg_and_sgd_final(prob, rounds=6, local_steps=3, c=0.5, sigma2=0.7, x0=x0)
    lr = th.step_size_for(18, 0.5)
    # bit-identical: the helper makes exactly these two calls
    assert fed == th.fedavg_final_moments(prob, lr=lr, rounds=6, local_steps=3, sigma2=0.7,
                                          x0=x0).grad_norm2[-1]
    assert sgd == th.fedavg_final_moments(prob, lr=lr, rounds=18, local_steps=1, sigma2=0.7,
                                          x0=x0).grad_norm2[-1]
    assert fed != sgd  # different Hessians: client drift separates them
    # equal Hessians: one FedAvg round is K SGD steps, the same error (up to rounding)
    same = _problem(identical=True)
    fed, sgd = th.fedavg_and_sgd_final(same, rounds=6, local_steps=3, c=0.5, sigma2=0.7, x0=x0)
    assert fed == pytest.approx(sgd, rel=1e-12)
    with pytest.raises(ValueError, match="rounds must be an integer >= 1"):
        th.fedavg_and_sgd_final(prob, rounds=0, local_steps=3, c=0.5, sigma2=0.7, x0=x0)


def test_fit_exponent_of_exact_values_uses_sample_weights():
    rng = np.random.default_rng(1)
    x = np.array([1.0, 4.0, 16.0])
    s = rng.exponential(1.0, (3, 500)) * (x**-0.5)[:, None]
    slope, _ = fx.fit_exponent(x, s, values=x**-0.5)
    assert slope == pytest.approx(-0.5, abs=1e-12)
    with pytest.raises(ValueError, match="values must be positive"):
        fx.fit_exponent(x, s, values=np.array([1.0, -1.0, 1.0]))


# ---------------------------------------------------------------------------- ragged replicas
def test_fit_exponent_and_intervals_take_ragged_rows():
    rng = np.random.default_rng(2)
    x = np.array([1.0, 4.0, 16.0])
    s = rng.exponential(1.0, (3, 400)) * (x**-0.5)[:, None]
    # rows of one length, as a list: bitwise the 2-D numbers
    assert fx.fit_exponent(x, list(s)) == fx.fit_exponent(x, s)
    m2, h2 = fx.mean_interval(s, 1e-3)
    m1, h1 = fx.mean_interval(list(s), 1e-3)
    assert np.array_equal(m1, m2) and np.array_equal(h1, h2)
    # ragged: each row's own count; the first row's extra replicas narrow its interval
    rows = [np.concatenate([s[0], rng.exponential(1.0, 3600)]), s[1], s[2][:100]]
    mean, hw = fx.mean_interval(rows, 1e-3)
    for j, r in enumerate(rows):
        assert mean[j] == r.mean()
        assert hw[j] == pytest.approx(h2[j] / s[j].std(ddof=1) * r.std(ddof=1)
                                      * np.sqrt(400 / r.size), rel=1e-12)
    assert fx.consistent(rows, x**-0.5, 1e-6)
    assert not fx.consistent(rows, 2 * x**-0.5, 1e-6)
    # the weighted fit by hand, with N_j per row
    slope, se = fx.fit_exponent(x, rows)
    n = np.array([r.size for r in rows])
    mu = np.array([r.mean() for r in rows])
    w = n * mu**2 / np.array([r.var(ddof=1) for r in rows])
    lx = np.log(x)
    xb = np.sum(w * lx) / w.sum()
    sxx = np.sum(w * (lx - xb) ** 2)
    assert slope == pytest.approx(np.sum(w * (lx - xb) * np.log(mu)) / sxx, rel=1e-12)
    assert se == pytest.approx(sxx**-0.5, rel=1e-12)
    assert fx.fit_exponent(x, rows, values=x**-0.5)[0] == pytest.approx(-0.5, abs=1e-12)
    with pytest.raises(ValueError, match="samples must have shape"):
        fx.fit_exponent(x, [rows[0], rows[1], rows[2][:1]])
    with pytest.raises(ValueError, match="samples must have shape"):
        fx.fit_exponent(x, rows[:2])
    with pytest.raises(ValueError, match="samples must have shape"):
        fx.fit_exponent(x, [rows[0], rows[1], np.ones((2, 2))])


@pytest.mark.parametrize("replicas", [(5, 3), (5, 3, 2, 2), (5, 3, 1), (5, 3, 2.0), (5, True, 3),
                                      "abc", None])
def test_local_steps_runs_bad_replicas_names_them(replicas):
    prob = _problem()
    with pytest.raises(ValueError, match=r"replicas must be an int or one integer >= 2 per R"
                                         r".*got " + re.escape(repr(replicas))):
        fx.local_steps_runs(prob, (2, 4, 8), local_steps=2, c=0.5, sigma2=1.0,
                            replicas=replicas, seed=0, x0=np.zeros(prob.d))


def test_local_steps_runs_per_round_replicas_extend_the_int_run():
    prob = _problem()
    kw = {"local_steps": 2, "c": 0.5, "sigma2": 1.0, "seed": 4, "x0": np.zeros(prob.d)}
    same = fx.local_steps_runs(prob, (2, 4), replicas=3, **kw)
    per_r = fx.local_steps_runs(prob, (2, 4), replicas=(6, 3), **kw)
    assert same["fedavg"].shape == (2, 3)
    for key in ("fedavg", "sgd"):
        assert isinstance(per_r[key], list)
        assert [r.shape for r in per_r[key]] == [(6,), (3,)]
        # the engine's first replicas: more replicas only add to them
        for a, b in zip(same[key], per_r[key], strict=True):  # ||grad f||^2: sums of squares
            assert_close_sum(b[:3], a, terms_abs_sum=a)
        np.testing.assert_array_equal(per_r[f"exact_{key}"], same[f"exact_{key}"])
    slope, se = fx.fit_exponent(per_r["rounds"], per_r["fedavg"])
    assert np.isfinite(slope) and se > 0
