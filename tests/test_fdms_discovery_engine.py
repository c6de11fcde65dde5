"""FL-FDMS's friend discovery on the engine (experiments.fdms_friends.simulate_discovery): the
same choices, scores, eliminations and errors as the former stand-alone round loop, kept here
as a reference and fed the very draws the engine made (the engine's per-replica noise
streams, mapped by the model)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from fedtheory.experiments import fdms_friends as ff
from fedtheory.sampling import friend_selection as fs
from fedtheory.theory import fdms as th


def _engine_draws(model, seed: int, R: int, T: int) -> np.ndarray:
    """``(R, T, n, d)``: every client's update as the engine draws it (replica r's noise
    stream, ``SeedSequence(seed, spawn_key=(r, 1))``, one (n, d) block of normals a round)."""
    n, d = model.n, model.dim
    out = np.empty((R, T, n, d))
    for r in range(R):
        g = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(r, 1))))
        z = g.standard_normal(T * n * d).reshape(T, n, d)
        for t in range(T):
            out[r, t] = model.from_normals(np.arange(n), z[t])
    return out


def _reference(draws: np.ndarray, mask: np.ndarray, friends: np.ndarray, theta, kind: str):
    """The former loop of simulate_discovery, on given draws."""
    R, T, n, _ = draws.shape
    m = np.broadcast_to(mask, (R, T, n)) if mask.ndim == 2 else mask
    state = fs.init_similarity(R, n)
    cand = fs.init_candidates(R, n) if theta is not None else None
    out_nf = np.zeros((R, T, n), dtype=bool)
    e2, comps = np.zeros((R, T)), np.zeros((R, T), dtype=np.int64)
    elim = np.full(R, -1)
    rows = np.arange(R)[:, None]
    for t in range(T):
        act, u = m[:, t], draws[:, t]
        sims = fs.similarity_matrix(u, act, kind)
        if cand is None:
            s_t = act.sum(axis=1)
            comps[:, t] = s_t * (s_t - 1) // 2
            state = fs.update_similarity(state, sims, act)
        else:
            comps[:, t] = fs.count_computations(cand, act)
            state = fs.update_similarity(state, sims, act, cand | np.swapaxes(cand, 1, 2))
        mean = fs.mean_similarity(state)
        phi = fs.choose_friends(mean, act, cand)
        ok = ~act & (phi >= 0)
        safe = np.where(ok, phi, 0)
        out_nf[:, t] = ok & ~friends[np.arange(n)[None, :], safe]
        diff = np.where(ok[..., None], u[rows, safe] - u, 0.0)
        e2[:, t] = np.sum((diff.sum(axis=1) / n) ** 2, axis=1)
        if cand is not None and np.isfinite(theta[t]):
            new, _ = fs.prune_candidates(mean, cand, theta[t])
            lost = (cand & ~new & friends[None]).any(axis=(1, 2))
            elim = np.where((elim < 0) & lost, t, elim)
            cand = new
    return {"nonfriend": out_nf, "e2": e2, "computations": comps, "eliminated": elim,
            "mean_sim": fs.mean_similarity(state)}


def _case(name: str):
    if name == "tight":
        inst = ff.lemma_tight_instance(Fraction(3, 4))
        model, T = inst["model"], 9
        mask = ff.drop_schedule(3, T, inst["k"], np.arange(1, T, 2))
        fr = th.friendship(model.sigma2(), inst["sigma_F2"] * (1 + 1e-12))
        return model, mask, fr, None
    if name == "orthogonal-pruned":
        inst = ff.orthogonal_instance(0.6, 2)
        model, T = inst["model"], 12
        mask = ff.rotation_schedule(model.n, T, inst["groups"], 2)
        fr = th.friendship(model.sigma2(), inst["sigma_F2"] * (1 + 1e-12))
        theta = np.r_[np.inf, 0.05 + 0.4 / np.sqrt(np.arange(1, T))]
        return model, mask, fr, theta
    model, sF2 = ff.twenty_clusters()
    fr = th.friendship(model.sigma2(), sF2 * (1 + 1e-12))
    mask = ff.random_friend_dropout(np.random.default_rng(3), 3, 10, fr, 0.3, warmup=2)
    return model, mask, fr, np.full(10, 0.3)


@pytest.mark.parametrize("name", ["tight", "orthogonal-pruned", "clusters-per-replica-masks"])
def test_the_engine_run_is_the_former_loop_on_the_same_draws(name: str) -> None:
    model, mask, fr, theta = _case(name)
    R = 3 if mask.ndim == 3 else 5
    T = mask.shape[-2]
    sim = ff.simulate_discovery(model, mask, R, np.random.default_rng(7), fr, theta=theta)
    seed = int(np.random.default_rng(7).integers(2**63))  # the engine seed it drew
    ref = _reference(_engine_draws(model, seed, R, T), mask, fr, theta, "cosine")
    for key in ("nonfriend", "computations", "eliminated"):
        assert np.array_equal(sim[key], ref[key]), key
    np.testing.assert_array_equal(np.isnan(sim["mean_sim"]), np.isnan(ref["mean_sim"]))
    np.testing.assert_allclose(sim["mean_sim"], ref["mean_sim"], rtol=0, atol=1e-15)
    np.testing.assert_allclose(sim["e2"], ref["e2"], rtol=1e-12, atol=1e-15)
    assert np.array_equal(sim["dropped"], np.broadcast_to(~mask, (R, T, model.n)))
    if theta is not None and name != "tight":
        assert sim["computations"].sum() < (T * model.n * (model.n - 1) // 2) * R


def test_chunking_and_threads_do_not_change_the_discovery(monkeypatch) -> None:
    """The same numbers whatever the engine's chunks (the replicas' streams are their own)."""
    from fedtheory import simulate as sim_mod

    model, mask, fr, theta = _case("orthogonal-pruned")
    whole = ff.simulate_discovery(model, mask, 6, np.random.default_rng(1), fr, theta=theta)
    real = sim_mod.simulate

    def chunked(*args, **kw):
        kw.update(chunk=2, workers=2)
        return real(*args, **kw)

    monkeypatch.setattr(ff, "simulate", chunked)
    parts = ff.simulate_discovery(model, mask, 6, np.random.default_rng(1), fr, theta=theta)
    for key in ("nonfriend", "e2", "computations", "eliminated", "mean_sim"):
        np.testing.assert_array_equal(parts[key], whole[key])


def test_model_updates_is_a_problem_of_the_model_draws() -> None:
    """ModelUpdates: the draws are the model's values with the model's law."""
    from fedtheory.problems.base import Problem

    inst = ff.lemma_tight_instance(Fraction(3, 4))
    prob = ff.ModelUpdates(inst["model"])
    assert isinstance(prob, Problem) and (prob.n, prob.d) == (3, 1)
    z = np.random.default_rng(0).standard_normal((20000, 1))
    draws = prob.fused_local_steps(np.zeros((20000, 1)), np.full(20000, 2), 1.0, 1, normals=z,
                                   noise_sd=1.0)
    assert set(np.unique(draws)) == {-1.0, 1.0}
    assert abs((draws == 1.0).mean() - 0.75) < 0.015
    with pytest.raises(ValueError, match="one update per round"):
        prob.fused_local_steps(np.zeros((1, 1)), np.array([0]), 1.0, 2, normals=z[:1],
                               noise_sd=1.0)
    with pytest.raises(ValueError, match="from_normals"):
        ff.ModelUpdates(object())
    extreme = inst["model"].from_normals(np.array([2, 2]), np.array([[-40.0], [40.0]]))
    assert extreme.tolist() == [[1.0], [-1.0]]  # Phi(40) = 1.0 exactly: still a value


def test_bad_masks_and_friends_are_refused() -> None:
    model, mask, fr, _ = _case("tight")
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="mask must be bool"):
        ff.simulate_discovery(model, mask[None].repeat(2, 0), 3, rng, fr)
    with pytest.raises(ValueError, match="mask must have n = 3"):
        ff.simulate_discovery(model, mask[:, :2], 3, rng, fr)
    with pytest.raises(ValueError, match="friends must be bool"):
        ff.simulate_discovery(model, mask, 3, rng, fr[:2])


def test_friend_choice_thresholds_are_validated() -> None:
    from fedtheory.participation import BernoulliParticipation, FDMSFriendChoice

    base = BernoulliParticipation(0.5, n=3)
    red = {"horizon": 5, "max_friends": 1, "beta": 0.5, "p": 0.1, "delta_f": 0.1}
    for bad in ([], [0.0], [np.nan], [0.5, -1.0]):
        with pytest.raises(ValueError, match="thresholds must be"):
            FDMSFriendChoice(base, thresholds=bad)
    with pytest.raises(ValueError, match="reduction or thresholds, not both"):
        FDMSFriendChoice(base, red, thresholds=[0.5])
    with pytest.raises(ValueError, match="measure_error must be a bool"):
        FDMSFriendChoice(base, measure_error="yes")  # type: ignore[arg-type]
    proc = FDMSFriendChoice(base, thresholds=[np.inf, 0.5])
    assert proc.eliminates and proc.threshold(1) == np.inf and proc.threshold(2) == 0.5
    with pytest.raises(ValueError, match="thresholds hold rounds 1..2, round 3"):
        proc.threshold(3)
    assert not FDMSFriendChoice(base).eliminates and FDMSFriendChoice(base, red).eliminates
