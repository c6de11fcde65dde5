"""Friend discovery of FL-FDMS (fedtheory.sampling.friend_selection) against plain pair loops."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedtheory.sampling.friend_selection import (
    SIMILARITIES,
    choose_friends,
    complexity_threshold,
    count_computations,
    discovery_round,
    init_candidates,
    init_similarity,
    mean_similarity,
    prune_candidates,
    similarity_matrix,
    update_similarity,
)

# ---------------------------------------------------------------- reference pair loops


def loop_cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Eq. (14) for one pair; a zero vector has cosine 0 with anything."""
    na, nb = math.sqrt(float(a @ a)), math.sqrt(float(b @ b))
    if na == 0.0 or nb == 0.0:
        return 0.5
    return 0.5 * (min(1.0, max(-1.0, float(a @ b) / (na * nb))) + 1.0)


def loop_similarity(updates, active, kind="cosine"):
    R, n, _ = updates.shape
    out = np.full((R, n, n), np.nan)
    for r in range(R):
        for i in range(n):
            for j in range(n):
                if active[r, i] and active[r, j]:
                    a, b = updates[r, i], updates[r, j]
                    out[r, i, j] = (loop_cosine(a, b) if kind == "cosine"
                                    else -math.sqrt(float((a - b) @ (a - b))))
    return out


def loop_eq15(history_sims, history_active):
    """The recursion of eq. (15) itself, pair by pair."""
    R, n, _ = history_sims[0].shape
    Rm = np.zeros((R, n, n))
    N = np.zeros((R, n, n), dtype=int)
    for sims, act in zip(history_sims, history_active, strict=True):
        for r in range(R):
            for i in range(n):
                for j in range(n):
                    if act[r, i] and act[r, j]:
                        Rm[r, i, j] = N[r, i, j] / (N[r, i, j] + 1) * Rm[r, i, j] \
                            + sims[r, i, j] / (N[r, i, j] + 1)
                        N[r, i, j] += 1
    return np.where(N > 0, Rm, np.nan), N


def loop_choose(mean_sim, active, candidates=None, fallback="active"):
    R, n, _ = mean_sim.shape
    out = np.full((R, n), -1)
    for r in range(R):
        for k in range(n):
            if active[r, k]:
                continue
            pool = [i for i in range(n) if active[r, i]]
            if candidates is not None:
                sub = [i for i in pool if candidates[r, k, i]]
                pool = sub if (sub or fallback == "none") else pool
            best, arg = None, -1
            for i in pool:  # increasing index: strict > keeps the lowest index on ties
                v = -math.inf if math.isnan(mean_sim[r, k, i]) else mean_sim[r, k, i]
                if best is None or v > best:
                    best, arg = v, i
            out[r, k] = arg
    return out


def loop_prune(mean_sim, candidates, theta):
    R, n, _ = mean_sim.shape
    new = candidates.copy()
    for r in range(R):
        for k in range(n):
            new[r, k, k] = False
            known = [i for i in range(n)
                     if i != k and candidates[r, k, i] and not math.isnan(mean_sim[r, k, i])]
            if not known:
                continue
            best = max(mean_sim[r, k, i] for i in known)
            for i in known:
                if best - mean_sim[r, k, i] >= theta:
                    new[r, k, i] = False
    return new


# ---------------------------------------------------------------- similarity


@pytest.mark.parametrize("kind", sorted(SIMILARITIES))
def test_similarity_matches_pair_loop(kind):
    rng = np.random.default_rng(1)
    u = rng.normal(size=(4, 7, 5))
    u[0, 2] = 0.0  # a zero update
    act = rng.random((4, 7)) < 0.7
    got, ref = similarity_matrix(u, act, kind), loop_similarity(u, act, kind)
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    # Gram-matrix products vs per-pair dot products: a few ulps of the scores (<= |u|^2 ~ 30)
    np.testing.assert_allclose(got[~np.isnan(got)], ref[~np.isnan(ref)], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(got, np.swapaxes(got, 1, 2))  # bit-identical: symmetric


def test_cosine_range_and_conventions():
    u = np.array([[[1.0, 0.0], [2.0, 0.0], [-1.0, 0.0], [0.0, 0.0], [5.0, 5.0]]])
    act = np.array([[True, True, True, True, False]])
    s = similarity_matrix(u, act)[0]
    assert s[0, 1] == 1.0 and s[0, 2] == 0.0  # parallel / opposite: exact ends of [0, 1]
    assert s[3, 0] == 0.5 and s[3, 3] == 0.5  # zero update: midpoint, also on the diagonal
    assert s[0, 0] == 1.0 and np.isnan(s[4, 4]) and np.all(np.isnan(s[4]))
    # scale invariance and extreme magnitudes (no under/overflow in the norms)
    tiny = similarity_matrix(u * 1e-200, act)[0]
    huge = similarity_matrix(u * 1e200, act)[0]
    np.testing.assert_array_equal(tiny, s)  # bit-identical: normalised by the max entry first
    np.testing.assert_array_equal(huge, s)  # bit-identical: same


def test_dropped_rows_may_hold_anything():
    u = np.ones((1, 3, 2))
    u[0, 1] = np.nan
    s = similarity_matrix(u, np.array([[True, False, True]]))
    assert abs(s[0, 0, 2] - 1.0) <= 4e-16 and np.all(np.isnan(s[0, 1]))  # 1/sqrt(2) rounding


def test_similarity_bad_input():
    u, act = np.zeros((1, 2, 3)), np.ones((1, 2), bool)
    with pytest.raises(ValueError, match="cosine"):
        similarity_matrix(u, act, kind="pearson")
    with pytest.raises(ValueError, match="updates"):
        similarity_matrix(np.zeros((2, 3)), act)
    with pytest.raises(ValueError, match="active"):
        similarity_matrix(u, np.ones((1, 3), bool))
    with pytest.raises(ValueError, match="active"):
        similarity_matrix(u, np.ones((1, 2)))
    with pytest.raises(ValueError, match="finite"):
        similarity_matrix(np.full((1, 2, 3), np.inf), act)


# ---------------------------------------------------------------- running mean (eq. 15)


def test_running_mean_is_eq15_recursion():
    rng = np.random.default_rng(2)
    R, n, T = 3, 6, 9
    state = init_similarity(R, n)
    sims_h, act_h = [], []
    for _ in range(T):
        act = rng.random((R, n)) < 0.6
        sims = similarity_matrix(rng.normal(size=(R, n, 4)), act)
        state = update_similarity(state, sims, act)
        sims_h.append(sims)
        act_h.append(act)
    ref, N = loop_eq15(sims_h, act_h)
    got = mean_similarity(state)
    np.testing.assert_array_equal(state["count"], N)
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    # sum/count vs the recursion: T rounding steps of values in [0, 1]
    np.testing.assert_allclose(got[N > 0], ref[N > 0], rtol=0, atol=T * 4e-16)


def test_update_is_pure_and_respects_computed():
    state = init_similarity(1, 3)
    act = np.ones((1, 3), bool)
    sims = np.full((1, 3, 3), 0.25)
    comp = np.zeros((1, 3, 3), bool)
    comp[0, 0, 1] = comp[0, 1, 0] = True
    new = update_similarity(state, sims, act, computed=comp)
    assert state["count"].sum() == 0  # input untouched
    assert new["count"].sum() == 2 and mean_similarity(new)[0, 0, 1] == 0.25
    assert np.isnan(mean_similarity(new)[0, 0, 2])
    # NaN scores are fine on pairs that are not updated, not on pairs that are
    sims2 = sims.copy()
    sims2[0, 0, 2] = sims2[0, 2, 0] = np.nan
    update_similarity(state, sims2, act, computed=comp)
    with pytest.raises(ValueError, match="finite"):
        update_similarity(state, sims2, act)


def test_tracker_bad_input():
    with pytest.raises(ValueError, match="R"):
        init_similarity(0, 3)
    with pytest.raises(ValueError, match="n"):
        init_similarity(1, 2.5)
    state = init_similarity(1, 3)
    with pytest.raises(ValueError, match="sims"):
        update_similarity(state, np.zeros((1, 2, 2)), np.ones((1, 3), bool))
    with pytest.raises(ValueError, match="computed"):
        update_similarity(state, np.zeros((1, 3, 3)), np.ones((1, 3), bool),
                          computed=np.ones((1, 3, 3)))


# ---------------------------------------------------------------- friend choice


@pytest.mark.parametrize("fallback", ["active", "none"])
def test_choose_friends_matches_loop(fallback):
    rng = np.random.default_rng(3)
    R, n = 50, 6
    m = np.round(rng.random((R, n, n)), 1)  # rounded: many ties
    m[rng.random((R, n, n)) < 0.2] = np.nan  # pairs without history
    act = rng.random((R, n)) < 0.5
    act[0] = False  # a skipped round
    cand = rng.random((R, n, n)) < 0.5
    for c in (None, cand):
        got = choose_friends(m, act, c, fallback=fallback)
        np.testing.assert_array_equal(got, loop_choose(m, act, c, fallback))
        assert np.all(got[act] == -1) and np.all(got[0] == -1)
        chosen = got[~act & (got >= 0)]
        assert np.all(act[np.nonzero(~act & (got >= 0))[0], chosen])


def test_choose_friends_conventions():
    nan = np.nan
    m = np.array([[[nan, nan, nan, 0.1], [nan] * 4, [nan] * 4, [0.1, nan, nan, nan]]])
    # client 0 dropped; 1 and 2 active without history, 3 dropped: lowest-index active, 1
    assert choose_friends(m, np.array([[False, True, True, False]]))[0, 0] == 1
    # a history beats no history
    m[0, 0, 2] = 0.0
    assert choose_friends(m, np.array([[False, True, True, False]]))[0, 0] == 2
    with pytest.raises(ValueError, match="fallback"):
        choose_friends(m, np.ones((1, 4), bool), fallback="stale")
    with pytest.raises(ValueError, match="candidates"):
        choose_friends(m, np.ones((1, 4), bool), candidates=np.ones((1, 3, 3), bool))


# ---------------------------------------------------------------- complexity reduction


def test_threshold_formula_and_input():
    t = np.arange(1, 6)
    th = complexity_threshold(t, n_clients=20, horizon=100, max_friends=3, beta=0.4, p=0.05,
                              delta_f=0.02, scale=0.5)
    ref = 0.5 * (np.sqrt((2 * np.log(2 * 400 * 100 * 3) - 2 * np.log(0.05)) / (0.4 * t)) + 0.02)
    np.testing.assert_allclose(th, ref, rtol=1e-15)  # relative: same formula, reordered ops
    assert complexity_threshold(0, n_clients=2, horizon=1, max_friends=1, beta=1, p=0.5,
                                delta_f=0) == np.inf
    kw = dict(n_clients=2, horizon=1, max_friends=1, beta=1.0, p=0.5, delta_f=0.0)
    for bad in (dict(beta=0.0), dict(p=1.0), dict(delta_f=-1.0), dict(n_clients=0),
                dict(scale=0.0)):
        with pytest.raises(ValueError, match=next(iter(bad))):
            complexity_threshold(1, **{**kw, **bad})
    with pytest.raises(ValueError, match="t must"):
        complexity_threshold(-1, **kw)


def test_prune_matches_loop_and_counts():
    rng = np.random.default_rng(4)
    R, n = 40, 7
    m = rng.random((R, n, n))
    m[rng.random((R, n, n)) < 0.15] = np.nan
    cand = init_candidates(R, n) & (rng.random((R, n, n)) < 0.8)
    for theta in (0.1, 0.3, 0.9):
        new, k = prune_candidates(m, cand, theta)
        np.testing.assert_array_equal(new, loop_prune(m, cand, theta))
        assert not np.any(new & ~cand)  # only ever removes
        # the count: unordered pairs needing a score, by loop
        ref = [sum(1 for i in range(n) for j in range(i + 1, n) if new[r, i, j] or new[r, j, i])
               for r in range(R)]
        np.testing.assert_array_equal(k, ref)
    act = rng.random((R, n)) < 0.5
    _, k = prune_candidates(m, cand, 0.2, active_next=act)
    np.testing.assert_array_equal(k, count_computations(loop_prune(m, cand, 0.2), act))
    full = count_computations(init_candidates(R, n), act)
    np.testing.assert_array_equal(full, [math.comb(int(s), 2) for s in act.sum(axis=1)])


def test_prune_keeps_best_and_unknown():
    nan = np.nan
    m = np.array([[[nan, 0.2, 0.2, nan], [0.2, nan, 0.9, 0.1], [0.2, 0.9, nan, 0.1],
                   [nan, 0.1, 0.1, nan]]])
    new, _ = prune_candidates(m, init_candidates(1, 4), 1e-9)
    assert new[0, 0].tolist() == [False, True, True, True]  # tie kept, no history kept
    assert new[0, 1].tolist() == [False, False, True, False]
    per_replica = np.array([0.05, 10.0])
    two = np.concatenate([m, m])
    new, _ = prune_candidates(two, init_candidates(2, 4), per_replica)
    assert new[1].sum() == init_candidates(1, 4).sum()  # huge threshold: nothing removed
    with pytest.raises(ValueError, match="theta"):
        prune_candidates(m, init_candidates(1, 4), 0.0)
    with pytest.raises(ValueError, match="theta"):
        prune_candidates(two, init_candidates(2, 4), np.ones(3))


def test_discovery_round_counts_and_infinite_threshold():
    """Without elimination the scores computed are binom(S_t, 2) (the full sets' count); a
    round whose threshold is inf keeps the candidate sets and counts as a pruning with inf."""
    rng = np.random.default_rng(3)
    R, n, d = 4, 6, 3

    def fresh():
        sim = init_similarity(R, n)
        return {"similarity_sum": sim["sum"], "similarity_count": sim["count"],
                "candidates": init_candidates(R, n), "t": 0,
                "computations": np.zeros(R, dtype=np.int64)}

    plain, inf, ref = fresh(), fresh(), fresh()
    for _ in range(5):
        active = rng.random((R, n)) < 0.7
        u = rng.normal(size=(R, n, d))
        want = ref["computations"] + count_computations(ref["candidates"], active)
        phi = discovery_round(plain, active, u, "cosine", None)
        np.testing.assert_array_equal(plain["computations"], want)
        ref["computations"] = want
        np.testing.assert_array_equal(discovery_round(inf, active, u, "cosine",
                                                      lambda t: np.inf), phi)
        np.testing.assert_array_equal(inf["candidates"], init_candidates(R, n))
    with pytest.raises(ValueError, match="theta must be > 0"):
        discovery_round(fresh(), active, u, "cosine", lambda t: 0.0)
