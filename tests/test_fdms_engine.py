"""Seed 004's engine parts: dropout processes (ratio bound, realised beta, bad input), the
substitution rules against plain loops (degenerate cases, ties), the clustered problems."""

import itertools

import numpy as np
import pytest

from fedtheory.algorithms import get_rule
from fedtheory.algorithms.substitution import oracle_friends, substituted_aggregate
from fedtheory.claims import checks
from fedtheory.participation import DropoutParticipation
from fedtheory.participation.dropout import (
    ClusterDropout,
    CorrelatedDropout,
    pair_counts,
    realised_beta,
    realised_ratio,
    validate_clusters,
)
from fedtheory.problems.clustered import (
    cluster_labels,
    clustered_digits,
    clustered_quadratic,
    general_quadratic,
)

LABELS = np.repeat(np.arange(5), 4)


def gens(seed, replicas):
    return [np.random.default_rng([seed, r]) for r in range(replicas)]


# -- dropout processes -------------------------------------------------------------------------
PROCS = {
    "cluster_fixed": lambda: ClusterDropout(LABELS, 0.5, k=2, schedule="fixed"),
    "cluster_cycle": lambda: ClusterDropout(LABELS, 0.3, k=1, schedule="cycle"),
    "cluster_random": lambda: ClusterDropout(LABELS, 0.5, k=2, schedule="random"),
    "correlated_uniform": lambda: CorrelatedDropout(20, 0.3, stay=0.8),
    "correlated_max": lambda: CorrelatedDropout(20, 0.7, stay=0.5, distribution="max"),
}


@pytest.mark.parametrize("name", sorted(PROCS))
def test_ratio_bound_holds(name):
    proc = PROCS[name]()
    masks = proc.sample(gens(1, 50), 50, 40)
    assert masks.shape == (40, 50, 20) and masks.dtype == bool
    assert (realised_ratio(masks) <= proc.alpha).all()
    assert (masks.sum(axis=2) >= 1).all()


@pytest.mark.parametrize("name", sorted(PROCS))
def test_frequencies_match_stationary(name):
    """Per-replica frequencies over T rounds have mean p_i (alpha = 1e-6, Bonferroni)."""
    proc = PROCS[name]()
    R, T = 400, 30
    masks = proc.sample(gens(7, R), R, T).astype(float)
    p = proc.stationary
    if name == "cluster_fixed":  # deterministic: exactly p_i in every round
        np.testing.assert_array_equal(masks.mean(axis=(0, 1)), p)
        return
    ev = checks.check_identity(masks.mean(axis=0), p)
    assert ev.passed, ev.detail


def test_correlated_dropout_persists():
    """stay close to 1: most consecutive rounds share their dropout set."""
    m = CorrelatedDropout(20, 0.5, stay=0.95, distribution="max").sample(gens(3, 30), 30, 50)
    same = (m[1:] == m[:-1]).all(axis=2).mean()
    assert same > 0.85
    fresh = DropoutParticipation(20, 0.5, "max").sample(gens(3, 30), 30, 50)
    assert (fresh[1:] == fresh[:-1]).all(axis=2).mean() < 0.01


def test_cluster_dropout_drops_whole_clusters():
    m = PROCS["cluster_random"]().sample(gens(2, 20), 20, 10)
    per_cluster = m.reshape(10, 20, 5, 4)
    assert ((per_cluster.all(axis=3)) | (~per_cluster).all(axis=3)).all()
    assert ((~per_cluster).all(axis=3).sum(axis=2) == 2).all()


def test_pair_counts_and_beta_against_loops():
    rng = np.random.default_rng(0)
    masks = rng.random((12, 3, 5)) < 0.7
    N = pair_counts(masks)
    for t, r, i, j in itertools.product(range(12), range(3), range(5), range(5)):
        assert N[t, r, i, j] == sum(masks[s, r, i] and masks[s, r, j] for s in range(t + 1))
    for start in (1, 4):
        beta = realised_beta(masks, start=start)
        for r in range(3):
            want = min(N[t, r, i, j] / (t + 1) for t in range(start - 1, 12)
                       for i in range(5) for j in range(5) if i != j)
            assert beta[r] == want  # bit-identical: the same single division


def test_realised_beta_degenerate():
    full = np.ones((6, 2, 4), dtype=bool)
    np.testing.assert_array_equal(realised_beta(full), [1.0, 1.0])
    assert realised_beta(np.ones((3, 2, 1), dtype=bool)).tolist() == [1.0, 1.0]  # no pairs
    # whole-cluster dropout of a fixed cluster: its members never meet, beta = 0
    m = PROCS["cluster_fixed"]().sample(gens(0, 2), 2, 10)
    np.testing.assert_array_equal(realised_beta(m, start=5), [0.0, 0.0])
    # rounds numbered from 0 (the seed's e_0..e_{T-1}): round 0 does not count as t >= 1
    one_off = np.ones((3, 1, 2), dtype=bool)
    one_off[0, 0, 1] = False
    assert realised_beta(one_off).tolist() == [0.0]
    assert realised_beta(one_off, first_round=0).tolist() == [1.0]
    with pytest.raises(ValueError, match="first_round must be 0 or 1, got 2"):
        realised_beta(one_off, first_round=2)
    with pytest.raises(ValueError, match="start must be an integer"):
        realised_beta(one_off, start=4)


@pytest.mark.parametrize("make, match", [
    (lambda: ClusterDropout(LABELS, 1.0), r"alpha must be in \[0, 1\), got 1.0"),
    (lambda: ClusterDropout(LABELS, -0.1), r"alpha must be in \[0, 1\)"),
    (lambda: ClusterDropout(LABELS, 0.15), r"labels: the 1 largest clusters hold 4 clients"),
    (lambda: ClusterDropout(LABELS, 0.3, k=2), r"labels: the 2 largest clusters hold 8"),
    (lambda: ClusterDropout([0, 0, 2, 2], 0.5), r"labels: cluster 1 is empty"),
    (lambda: ClusterDropout(LABELS, 0.5, k=5), r"k must be an integer in \[1, 4\]"),
    (lambda: ClusterDropout(LABELS, 0.5, schedule="x"), "schedule must be"),
    (lambda: CorrelatedDropout(10, 0.3, stay=1.0), r"stay must be in \[0, 1\), got 1.0"),
    (lambda: CorrelatedDropout(10, 1.2), r"alpha must be in \[0, 1\), got 1.2"),
    (lambda: validate_clusters(np.array([0.5, 1.0])), "labels must be a non-empty 1-D integer"),
    (lambda: realised_beta(np.ones((3, 1, 2), dtype=bool), start=4), "start must be"),
])
def test_bad_input(make, match):
    with pytest.raises(ValueError, match=match):
        make()


# -- substitution rules -------------------------------------------------------------------------
def loop_aggregate(U, active, source, w):
    """Eq. (5) by hand: every client's own update if active, else its substitute (the
    weighted active mean when source is -1)."""
    R, n, d = U.shape
    G = np.zeros((R, d))
    for r in range(R):
        act = [i for i in range(n) if active[r, i]]
        if not act:
            continue
        mean = sum(w[i] * U[r, i] for i in act) / sum(w[i] for i in act)
        for k in range(n):
            if active[r, k]:
                G[r] += w[k] * U[r, k]
            elif source[r, k] >= 0:
                G[r] += w[k] * U[r, source[r, k]]
            else:
                G[r] += w[k] * mean
    return G


def loop_fdms(U_rounds, masks):
    """FL-FDMS by hand: eq. (14) cosine scores, eq. (15) running means, argmax over active
    clients with ties to the lowest index and no-history last."""
    T, n = masks.shape
    total = np.zeros((n, n))
    count = np.zeros((n, n))
    out = []
    for t in range(T):
        u, a = U_rounds[t], masks[t]
        for i in range(n):
            for j in range(n):
                if a[i] and a[j]:
                    ni, nj = np.linalg.norm(u[i]), np.linalg.norm(u[j])
                    cos = u[i] @ u[j] / (ni * nj)
                    total[i, j] += 0.5 * (cos + 1.0)
                    count[i, j] += 1
        src = np.full(n, -1)
        for k in range(n):
            if a[k]:
                continue
            best, best_score = -1, -np.inf
            for i in range(n):
                if not a[i]:
                    continue
                score = total[k, i] / count[k, i] if count[k, i] else -np.inf
                if best < 0 or score > best_score:
                    best, best_score = i, score
            src[k] = best
        out.append(src)
    return out


def test_substituted_aggregate_against_loop():
    rng = np.random.default_rng(1)
    R, n, d = 6, 5, 3
    U = rng.standard_normal((R, n, d))
    active = rng.random((R, n)) < 0.6
    active[0] = False  # a skipped round
    source = np.where(active, -1, -1)
    for r in range(R):
        act = np.flatnonzero(active[r])
        for k in np.flatnonzero(~active[r]):
            source[r, k] = rng.choice(act) if act.size and rng.random() < 0.7 else -1
    w = rng.random(n)
    w /= w.sum()
    # 4 rounding steps per term, n terms: relative to the sum of |terms|
    tol = 8 * n * np.finfo(float).eps * np.abs(U).sum(axis=1).max()
    np.testing.assert_allclose(substituted_aggregate(U, active, source, w),
                               loop_aggregate(U, active, source, w), rtol=0, atol=tol)
    bad = source.copy()
    r, k = np.argwhere(~active[1:])[0] + [1, 0]
    bad[r, k] = int(np.flatnonzero(~active[r])[0]) if (~active[r]).sum() > 1 else k
    with pytest.raises(ValueError, match="is not an active client"):
        substituted_aggregate(U, active, bad, w)


def test_oracle_against_loop():
    rng = np.random.default_rng(2)
    R, n, d = 8, 20, 4
    U = rng.standard_normal((R, n, d))
    masks = DropoutParticipation(n, 0.7).sample(gens(5, R), R, 1)[0]
    rule = get_rule("oracle", labels=LABELS)
    G, st = rule.step(rule.init(R, n, d), masks, U)
    F = oracle_friends(LABELS)
    src = np.full((R, n), -1)
    for r, k in itertools.product(range(R), range(n)):
        if not masks[r, k]:
            fr = [j for j in range(n) if F[k, j] and masks[r, j]]
            src[r, k] = fr[0] if fr else -1
    np.testing.assert_array_equal(st["friends"], src)
    tol = 8 * n * np.finfo(float).eps * np.abs(U).sum(axis=1).max()
    np.testing.assert_allclose(G, loop_aggregate(U, masks, src, np.full(n, 1 / n)), rtol=0,
                               atol=tol)


def test_fdms_against_loop():
    rng = np.random.default_rng(3)
    T, n, d = 12, 8, 5
    centres = rng.standard_normal((2, d))
    lab = np.repeat([0, 1], 4)
    U = centres[lab][None] + 0.5 * rng.standard_normal((T, n, d))
    masks = DropoutParticipation(n, 0.5).sample(np.random.default_rng(4), 1, T)[:, 0]
    want = loop_fdms(U, masks)
    rule = get_rule("fl_fdms")
    st = rule.init(1, n, d)
    for t in range(T):
        G, st = rule.step(st, masks[t], U[t])
        np.testing.assert_array_equal(st["friends"][0], want[t])
        tol = 8 * n * np.finfo(float).eps * np.abs(U[t]).sum(axis=0).max()
        np.testing.assert_allclose(G, loop_aggregate(U[t][None], masks[t][None],
                                                     want[t][None], np.full(n, 1 / n))[0],
                                   rtol=0, atol=tol)
    full = sum(a.sum() * (a.sum() - 1) // 2 for a in masks)
    assert st["computations"][0] == full


@pytest.mark.parametrize("name, params", [("fl_fdms", {}), ("oracle", {"labels": LABELS}),
                                          ("fedavg", {})])
def test_degenerate_rounds(name, params):
    rng = np.random.default_rng(5)
    n, d = 20, 3
    U = rng.standard_normal((3, n, d))
    rule = get_rule(name, **params)
    st = rule.init(3, n, d)
    masks = np.ones((3, n), dtype=bool)
    masks[1] = False
    masks[1, 7] = True  # all but one dropped
    masks[2] = False  # nobody active: skipped
    G, st = rule.step(st, masks, U)
    tol = 4 * n * np.finfo(float).eps * np.abs(U[0]).sum(axis=0).max()
    np.testing.assert_allclose(G[0], U[0].mean(axis=0), rtol=0, atol=tol)  # nobody dropped
    np.testing.assert_allclose(G[1], U[1, 7], rtol=0, atol=tol)  # everyone takes client 7
    np.testing.assert_array_equal(G[2], np.zeros(d))


def test_fdms_ties_go_to_lowest_index():
    rule = get_rule("fl_fdms")
    st = rule.init(1, 4, 2)
    u = np.array([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0], [0.0, 1.0]])  # 0, 1, 2 all cos 1
    _, st = rule.step(st, np.ones(4, dtype=bool), u)
    _, st = rule.step(st, np.array([False, True, True, True]), u)
    assert st["friends"].tolist() == [[1, -1, -1, -1]]  # 1 and 2 tie; 1 is lower


def test_complexity_reduction_counts_and_equivalence():
    rng = np.random.default_rng(6)
    T, n, d = 60, 12, 6
    lab = np.repeat([0, 1, 2], 4)
    centres = 3 * rng.standard_normal((3, d))
    U = centres[lab][None] + 0.3 * rng.standard_normal((T, n, d))
    masks = DropoutParticipation(n, 0.5).sample(np.random.default_rng(7), 1, T)[:, 0]
    # Theorem 2's Theta_t exceeds 1 (no elimination: scores lie in [0, 1]) unless beta t is
    # large: beta = 1, p = 1/2 here
    red = {"horizon": T, "max_friends": 3, "beta": 1.0, "p": 0.5, "delta_f": 0.05}
    rules = {"plain": get_rule("fl_fdms"), "theorem2": get_rule("fl_fdms", reduction=red),
             "half": get_rule("fl_fdms", reduction={**red, "scale": 0.5})}
    states = {k: r.init(1, n, d) for k, r in rules.items()}
    for t in range(T):
        for k, r in rules.items():
            _, states[k] = r.step(states[k], masks[t], U[t])
    comp = {k: int(s["computations"][0]) for k, s in states.items()}
    assert comp["half"] <= comp["theorem2"] <= comp["plain"]
    assert comp["half"] < comp["plain"]
    # a huge threshold never eliminates: the same choices and counts as plain FL-FDMS
    huge = get_rule("fl_fdms", reduction={**red, "delta_f": 1e9})
    s1, s2 = huge.init(1, n, d), rules["plain"].init(1, n, d)
    for t in range(T):
        _, s1 = huge.step(s1, masks[t], U[t])
        _, s2 = rules["plain"].step(s2, masks[t], U[t])
        np.testing.assert_array_equal(s1["friends"], s2["friends"])
    assert s1["computations"][0] == s2["computations"][0]


@pytest.mark.parametrize("params, match", [
    ({"reduction": {"horizon": 10}}, "reduction must have the keys"),
    ({"reduction": {"horizon": 10, "max_friends": 1, "beta": 2.0, "p": 0.1, "delta_f": 0.0}},
     r"beta must be in \(0, 1\]"),
    ({"similarity": "dot"}, "similarity must be one of"),
])
def test_fdms_bad_input(params, match):
    with pytest.raises(ValueError, match=match):
        get_rule("fl_fdms", **params)


def test_oracle_bad_labels():
    with pytest.raises(ValueError, match="labels must have shape"):
        get_rule("oracle", labels=[0, 0, 1]).init(1, 4, 2)
    with pytest.raises(ValueError, match="cluster 1 is empty"):
        get_rule("oracle", labels=[0, 2])


# -- problems -----------------------------------------------------------------------------------
def test_clustered_quadratic():
    prob = clustered_quadratic(20, 5, d=6, seed=1)
    lab = cluster_labels(20, 5)
    for c in range(5):
        np.testing.assert_array_equal(prob.centers[lab == c], prob.centers[lab == c][:1]
                                      .repeat(4, axis=0))
        np.testing.assert_array_equal(prob.hessians[lab == c],
                                      prob.hessians[lab == c][:1].repeat(4, axis=0))
    assert len({tuple(r) for r in prob.centers}) == 5
    near = clustered_quadratic(20, 5, d=6, seed=1, within=0.1)
    assert len({tuple(r) for r in near.centers}) == 20
    assert general_quadratic(20, d=4, seed=0).n == 20
    with pytest.raises(ValueError, match="clusters must divide n=20"):
        clustered_quadratic(20, 3)
    with pytest.raises(ValueError, match="within must be"):
        clustered_quadratic(20, 5, within=-1.0)


@pytest.mark.slow
def test_clustered_digits():
    prob = clustered_digits(20, 5, seed=0)
    lab = cluster_labels(20, 5)
    for i, y in enumerate(prob.data.y_clients):
        assert set(np.unique(y)) <= {lab[i], lab[i] + 5}
    sizes = prob.sizes.reshape(5, 4)
    assert (sizes.max(axis=1) - sizes.min(axis=1) <= 1).all()  # equal shares in a cluster
    np.testing.assert_allclose(prob.weights, 1 / 20, rtol=1e-15)  # relative: 1/20 rounded


@pytest.mark.parametrize("name", sorted(PROCS))
def test_processes_report_realised_beta_and_ratio(name):
    proc = PROCS[name]()
    rep = proc.realised(gens(4, 6), 6, 30, start=5)
    masks = proc.sample(gens(4, 6), 6, 30)
    np.testing.assert_array_equal(rep["beta"], realised_beta(masks, start=5))
    assert (rep["ratio"] <= proc.alpha).all()
    if name == "cluster_fixed":
        assert (rep["beta"] == 0).all()  # Assumption 6 fails: the dropped clusters never meet
