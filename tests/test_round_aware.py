"""Participation processes that see the round (OCS, AOCS, power-of-choice, a user's scheme):
the RoundView protocol, the engine's accounting, unbiasedness and degenerate inputs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from fedtheory.participation import (
    AOCSParticipation,
    BernoulliParticipation,
    CustomParticipation,
    OCSParticipation,
    PowerOfChoice,
    RoundView,
    Selection,
    get_process,
)
from fedtheory.problems import QuadraticProblem
from fedtheory.sampling.aocs import aocs_probabilities
from fedtheory.sampling.ocs import optimal_probabilities
from fedtheory.simulate import simulate


def _problem(n: int = 6, d: int = 3, seed: int = 0) -> QuadraticProblem:
    rng = np.random.default_rng(seed)
    return QuadraticProblem(rng.uniform(0.5, 2.0, (n, d)), rng.normal(size=(n, d)) * 3,
                            weights=rng.dirichlet(np.ones(n)))


class _Recording(OCSParticipation):
    """OCS that keeps each round's view norms and probabilities."""

    def __init__(self, n: int, m: float) -> None:
        super().__init__(n, m)
        self.seen: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def _select(self, state, rng, view):  # type: ignore[no-untyped-def]
        sel = super()._select(state, rng, view)
        self.seen.append((view.updates().copy(), self.probabilities(view), sel.mask.copy()))
        return sel


def test_registered() -> None:
    for name in ("ocs", "aocs", "power_of_choice", "custom"):
        assert name in __import__("fedtheory.participation", fromlist=["PROCESSES"]).PROCESSES
    assert get_process("ocs", n=5, m=2).m == 2.0


def test_ocs_probabilities_are_the_closed_form_on_a_fixed_round() -> None:
    prob = _problem()
    x0 = np.array([1.0, -2.0, 0.5])
    proc = _Recording(prob.n, 2.5)
    simulate(prob, "fedavg_is", proc, rounds=1, replicas=3, lr=0.1, x0=x0)
    upd, p, _ = proc.seen[0]
    grads = prob.client_grads(x0)  # tau = 1, no noise: the update is the gradient at x0
    np.testing.assert_array_equal(upd, np.broadcast_to(grads, upd.shape))
    u = prob.weights * np.linalg.norm(grads, axis=1)
    np.testing.assert_allclose(p, np.broadcast_to(optimal_probabilities(u, 2.5), p.shape),
                               rtol=1e-10)
    assert p.sum(axis=1) == pytest.approx(2.5)


def test_aocs_probabilities_are_algorithm_2() -> None:
    prob = _problem()
    x = np.ones((2, prob.d))
    upd = prob.client_grads(x)
    view = RoundView(1, x, prob.weights, lambda only: upd)
    res = aocs_probabilities(prob.weights * np.linalg.norm(upd, axis=-1), 2.0, 1)
    proc = AOCSParticipation(prob.n, 2.0, j_max=1)
    rng = [np.random.default_rng(i) for i in range(2)]
    sel, state = proc.select(proc.init(rng, 2), rng, view)
    w_over_p = np.where(res.p > 0, prob.weights / np.where(res.p > 0, res.p, 1), 0)
    np.testing.assert_allclose(sel.coef, w_over_p, rtol=1e-10)
    np.testing.assert_array_equal(sel.extra_floats, prob.n * (1 + 2 * res.iterations))


def test_ocs_estimator_is_unbiased_by_exact_enumeration() -> None:
    # E[sum_{i in S} (w_i/p_i) Delta_i] over all 2^n subsets, weighted by their probability
    prob = _problem(n=4)
    x = np.array([[0.3, -1.0, 2.0]])
    upd = prob.client_grads(x)
    view = RoundView(1, x, prob.weights, lambda only: upd)
    proc = OCSParticipation(prob.n, 1.5)
    p = proc.probabilities(view)[0]
    coef = np.where(p > 0, prob.weights / np.where(p > 0, p, 1), 0)
    mean = np.zeros(prob.d)
    for bits in itertools.product([0, 1], repeat=prob.n):
        s = np.array(bits, dtype=bool)
        mean += np.prod(np.where(s, p, 1 - p)) * (coef[s, None] * upd[0, s]).sum(axis=0)
    np.testing.assert_allclose(mean, prob.weights @ upd[0], rtol=1e-10)


def test_engine_aggregate_is_unbiased_monte_carlo() -> None:
    # one round from x0: G = (x0 - x1) / lr per replica; H0: E[G] = grad f(x0), per
    # coordinate z-tests at alpha = 1e-3 (Bonferroni over d), every replica independent
    prob = _problem()
    x0 = np.array([1.0, -2.0, 0.5])
    lr, R = 0.1, 4000
    res = simulate(prob, "fedavg_is", OCSParticipation(prob.n, 2.0), rounds=1, replicas=R,
                   lr=lr, x0=x0, seed=3)
    G = (x0 - res.x) / lr
    target = prob.grad(x0)
    z = (G.mean(axis=0) - target) / (G.std(axis=0, ddof=1) / np.sqrt(R))
    alpha = 1e-3
    assert np.all(np.abs(z) < stats.norm.ppf(1 - alpha / (2 * prob.d)))


def test_costs_are_counted() -> None:
    prob = _problem()
    T, R = 5, 3
    res = simulate(prob, "fedavg_is", OCSParticipation(prob.n, 2.0), rounds=T, replicas=R,
                   lr=0.1, x0=np.ones(3), keep_replicas=True, bits_per_float=32)
    assert res.grad_evals == res.client_rounds == T * R * prob.n  # every client computed
    bits = res.bits.replicas[:, -1]
    sent = (bits / 32 - T * prob.n) / prob.d  # participants' updates, besides the norms
    assert np.all(sent == np.round(sent)) and np.all(sent >= 0)
    # processes that never look at the round cost what they cost before
    ber = simulate(prob, "fedavg", BernoulliParticipation(0.5, n=prob.n), rounds=T,
                   replicas=R, lr=0.1, x0=np.ones(3))
    assert ber.grad_evals == ber.client_rounds < T * R * prob.n


def test_full_budget_is_full_participation() -> None:
    prob = _problem()
    kw = dict(rounds=20, replicas=2, lr=0.1, x0=np.ones(3))
    ocs = simulate(prob, "fedavg_is", OCSParticipation(prob.n, prob.n), **kw)
    full = simulate(prob, "full", BernoulliParticipation(1.0, n=prob.n), **kw)
    np.testing.assert_allclose(ocs.x, full.x, rtol=1e-12, atol=1e-14)
    assert ocs.bits.mean[-1] == 20 * prob.n * (prob.d + 1) * 32


def test_zero_norms_give_no_participant_and_no_nan() -> None:
    n, d = 4, 2
    prob = QuadraticProblem(np.ones((n, d)), np.zeros((n, d)))
    for proc in (OCSParticipation(n, 2), AOCSParticipation(n, 2)):
        res = simulate(prob, "fedavg_is", proc, rounds=3, replicas=2, lr=0.1, x0=np.zeros(d))
        assert np.all(res.x == 0) and np.all(res.diverged == -1)
        assert res.bits.mean[-1] == 3 * (n if proc.name == "ocs" else n * 3) * 32


def test_chunking_never_changes_round_aware_runs() -> None:
    prob = _problem()
    for proc, rule in ((OCSParticipation(prob.n, 2.0), "fedavg_is"),
                       (PowerOfChoice(prob.n, 4, 2), "fedavg")):
        a = simulate(prob, rule, proc, rounds=10, replicas=4, lr=0.1, x0=np.ones(3), chunk=1)
        b = simulate(prob, rule, proc, rounds=10, replicas=4, lr=0.1, x0=np.ones(3), chunk=4)
        np.testing.assert_array_equal(a.x, b.x)


def test_power_of_choice_takes_the_largest_losses() -> None:
    prob = _problem()
    chosen = []

    class Rec(PowerOfChoice):
        def _select(self, state, rng, view):  # type: ignore[no-untyped-def]
            sel = super()._select(state, rng, view)
            assert not view.losses().flags.writeable
            chosen.append((sel.mask.copy(), view.losses().copy()))
            return sel

    simulate(prob, "fedavg", Rec(prob.n, prob.n, 2), rounds=2, replicas=3, lr=0.1,
             x0=np.ones(3))
    for mask, loss in chosen:  # every client a candidate: the 2 largest losses
        top = np.argsort(-loss, axis=1)[:, :2]
        want = np.zeros_like(mask)
        np.put_along_axis(want, top, True, axis=1)
        np.testing.assert_array_equal(mask, want)


def test_custom_scheme_and_bad_masks() -> None:
    prob = _problem()

    def largest_norm(view: RoundView, rng, state):  # type: ignore[no-untyped-def]
        return view.norms() >= view.norms().max(axis=1, keepdims=True)

    res = simulate(prob, "fedavg", CustomParticipation(prob.n, largest_norm, 1 / prob.n),
                   rounds=3, replicas=2, lr=0.1, x0=np.ones(3))
    assert res.client_rounds == 3 * 2 * prob.n
    bad = CustomParticipation(prob.n, lambda view, rng, state: np.ones((1, 2), dtype=bool))
    with pytest.raises(ValueError, match="mask must be bool"):
        simulate(prob, "fedavg", bad, rounds=1, replicas=2, lr=0.1)
    with pytest.raises(ValueError, match="fn must be callable"):
        CustomParticipation(prob.n, 3)
    sel = CustomParticipation(prob.n, lambda v, r, s: Selection(np.ones((2, prob.n), bool)))
    assert simulate(prob, "fedavg", sel, rounds=1, replicas=2, lr=0.1).client_rounds == 12


def test_bad_arguments() -> None:
    prob = _problem()
    with pytest.raises(ValueError, match="rule must apply them.*'fedavg'"):
        simulate(prob, "fedavg", OCSParticipation(prob.n, 2), rounds=1, replicas=1, lr=0.1)
    with pytest.raises(ValueError, match="m must be a real number in"):
        OCSParticipation(prob.n, 0)
    with pytest.raises(ValueError, match="m must be a real number in"):
        AOCSParticipation(prob.n, prob.n + 1)
    with pytest.raises(ValueError, match="m must be at most candidates"):
        PowerOfChoice(prob.n, 2, 3)
    proc = OCSParticipation(prob.n, 2)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="sees the round"):
        proc.step(proc.init(rng, 1), rng)
    with pytest.raises(ValueError, match="reads the clients' updates"):
        simulate(prob, "scaffold", CustomParticipation(prob.n, lambda v, r, s: v.norms() > 0),
                 rounds=1, replicas=1, lr=0.1)


@pytest.mark.parametrize("reduction", [None, {"horizon": 30, "max_friends": 2, "beta": 0.5,
                                              "p": 0.5, "delta_f": 1.0, "scale": 0.5}])
def test_fdms_friend_choice_is_the_fl_fdms_rule(reduction: dict | None) -> None:
    from fedtheory.algorithms import FLFDMS
    from fedtheory.participation import DropoutParticipation, FDMSFriendChoice

    prob = _problem(n=6)
    base = DropoutParticipation(6, 0.5)
    kw = dict(rounds=15, replicas=3, lr=0.05, x0=np.ones(3), seed=2)
    proc = FDMSFriendChoice(base, reduction=reduction)
    a = simulate(prob, "fedavg_is", proc, **kw)
    b = simulate(prob, FLFDMS(reduction=reduction), base, **kw)
    np.testing.assert_allclose(a.x, b.x, rtol=1e-9)
    # dropped clients compute nothing: the cost is the base process's
    assert a.grad_evals == a.client_rounds == b.client_rounds
    with pytest.raises(ValueError, match="base must be a participation process"):
        FDMSFriendChoice(proc)


@pytest.mark.slow  # ~10 s: the digits federation and its f* (Newton)
def test_engine_reproduces_ocs_fedavg_full_participation_local_gd() -> None:
    """The engine runs seed 002's set-up: with full participation and local gradient descent
    (no mini-batches, no randomness) it gives run_fedavg's iterates' losses; OCS with the
    full budget is the same run; run_fedavg's mini-batch epochs are a plain loop's."""
    import fedtheory.experiments.ocs_fedavg as ox

    prob = ox.digits_problem(8, seed=0, unbalanced=False)
    rounds, lr, steps = 3, 0.5, 2
    run = ox.run_fedavg(prob, m=prob.n, rounds=rounds, replicas=1, local_lr=lr,
                        batch_size=None, local_steps=steps, schemes=("full",), rng=0)
    res = simulate(prob, "full", BernoulliParticipation(1.0, n=prob.n), rounds=rounds,
                   replicas=1, lr=lr, local_steps=steps, keep_replicas=True)
    np.testing.assert_allclose(res.f_gap.replicas[0] + prob.f_star, run.loss[0, 0],
                               rtol=1e-10)
    ocs = simulate(prob, "fedavg_is", OCSParticipation(prob.n, prob.n), rounds=rounds,
                   replicas=1, lr=lr, local_steps=steps)
    np.testing.assert_allclose(ocs.x, res.x, rtol=1e-10, atol=1e-13)
    # the seed's local work, one epoch of mini-batches of 20 on a fresh permutation per
    # client and round (partial last batch), against a plain loop on the engine's orders
    B, seed = 20, 11
    mb = ox.run_fedavg(prob, m=prob.n, rounds=rounds, replicas=2, local_lr=lr, batch_size=B,
                       schemes=("full",), rng=seed)
    sizes, s_max = prob.sizes, int(prob.sizes.max())
    for r in range(2):
        gen = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(r, 3)))
        x = np.zeros(prob.d)
        for k in range(rounds):
            keys = gen.random((prob.n, s_max))
            keys[np.arange(s_max)[None, :] >= sizes[:, None]] = 2.0
            order = np.argsort(keys, axis=-1)
            U = np.zeros((prob.n, prob.d))
            for i in range(prob.n):
                y = x.copy()
                for b in range(-(-int(sizes[i]) // B)):
                    batch = order[i, b * B: min((b + 1) * B, int(sizes[i]))]
                    y = y - lr * prob.minibatch_grads_at(y[None], batch[None],
                                                         clients=np.array([i]))[0]
                U[i] = x - y
            x = x - prob.weights @ U
            np.testing.assert_allclose(mb.loss[0, r, k + 1], prob.loss(x), rtol=1e-10)
