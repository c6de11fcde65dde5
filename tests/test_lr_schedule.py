"""Step sizes within a round (fedtheory/engine/schedule.py, ``simulate(lr_schedule=)``): a
decaying schedule against a hand-written numpy loop, a schedule of ones is the old run bit for
bit, the closed form where it still applies, and hostile schedules refused before any work."""

from __future__ import annotations

import numpy as np
import pytest

from fedtheory.engine import LocalWork
from fedtheory.participation import BernoulliParticipation
from fedtheory.problems import QuadraticProblem
from fedtheory.problems.noise import GaussianNoise
from fedtheory.simulate import simulate

N, D = 4, 3


def _quadratic(seed: int = 0) -> QuadraticProblem:
    rng = np.random.default_rng(seed)
    return QuadraticProblem(rng.uniform(0.5, 2.0, (N, D)), rng.normal(size=(N, D)),
                            weights=rng.dirichlet(np.ones(N)))


class Plain:
    """The quadratic through the bare problem protocol (no fast path declared: the plain
    steps), counting its gradient rows."""

    capabilities = frozenset()

    def __init__(self, quad: QuadraticProblem) -> None:
        self.q = quad
        self.n, self.d, self.weights = quad.n, quad.d, quad.weights
        self.x_star, self.f_star = quad.x_star, quad.f_star
        self.rows = 0

    def loss(self, x: np.ndarray) -> np.ndarray:
        return self.q.loss(x)

    def grad(self, x: np.ndarray) -> np.ndarray:
        return self.q.grad(x)

    def client_gradients(self, y: np.ndarray, clients: np.ndarray) -> np.ndarray:
        self.rows += len(clients)
        return self.q.client_gradients(y, clients)


def _reference(quad: QuadraticProblem, x0: np.ndarray, rounds: int, taus: np.ndarray,
               eta: np.ndarray) -> np.ndarray:
    """FedAvg-IS with every client, by hand: y <- y - eta[t, k] a_i (y - c_i); x_{t+1} =
    x_t - lr sum_i w_i Delta_i with Delta_i = (x_t - y_i)/lr, i.e. sum_i w_i y_i."""
    a, c, w = quad.hessians, quad.centers, quad.weights
    x = x0.astype(float).copy()
    for t in range(rounds):
        last = np.empty((N, D))
        for i in range(N):
            y = x.copy()
            for k in range(int(taus[i])):
                y = y - eta[t, k] * (a[i] * (y - c[i]))
            last[i] = y
        x = w @ last
    return x


FULL = BernoulliParticipation(1.0, n=N)
X0 = np.array([1.0, -2.0, 0.5])


@pytest.mark.parametrize("route", ["quadratic", "plain"])
@pytest.mark.parametrize("steps", [4, np.array([1, 4, 2, 3])])
def test_decaying_schedule_is_the_hand_computed_loop(route: str, steps) -> None:
    quad = _quadratic()
    prob = quad if route == "quadratic" else Plain(quad)
    T, E, eta0 = 6, 4, 0.3
    taus = np.broadcast_to(steps, (N,))
    expected = _reference(quad, X0, T, taus, np.tile(eta0 / (1 + np.arange(E)), (T, 1)))
    for schedule in (lambda t, k: 1 / (1 + k), 1 / (1 + np.arange(E))):
        res = simulate(prob, "fedavg", FULL, rounds=T, replicas=2, lr=eta0, local_steps=steps,
                       lr_schedule=schedule, x0=X0)
        assert not res.config["fused_local_steps"]  # a schedule within the round: plain steps
        np.testing.assert_allclose(res.x, np.broadcast_to(expected, res.x.shape), rtol=0,
                                   atol=1e-12)
    # a (T, E) table: rounds and steps both decay
    table = 1 / (1 + np.arange(T)[:, None] + np.arange(E)[None, :])
    res = simulate(prob, "fedavg", FULL, rounds=T, replicas=1, lr=eta0, local_steps=steps,
                   lr_schedule=table, x0=X0)
    np.testing.assert_allclose(res.x[0], _reference(quad, X0, T, taus, eta0 * table), rtol=0,
                               atol=1e-12)


def test_per_replica_rates_times_the_schedule() -> None:
    quad = _quadratic(1)
    lr = np.array([0.1, 0.25])
    s = np.array([1.0, 0.5, 0.25])
    res = simulate(quad, "fedavg", FULL, rounds=3, replicas=2, lr=lr, local_steps=3,
                   lr_schedule=s, x0=X0)
    for r in range(2):
        ref = _reference(quad, X0, 3, np.full(N, 3), np.tile(lr[r] * s, (3, 1)))
        np.testing.assert_allclose(res.x[r], ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("steps", [1, 3, np.array([1, 3, 2, 3])])
@pytest.mark.parametrize("route", ["quadratic", "plain", "unfused"])
def test_a_schedule_of_ones_is_the_constant_step_run_bit_for_bit(route: str, steps) -> None:
    quad = _quadratic(2)
    prob = Plain(quad) if route == "plain" else quad
    kw = dict(rounds=5, replicas=3, lr=0.2, local_steps=steps, x0=X0, seed=4,
              noise=GaussianNoise(0.5), fuse_local_steps=None if route != "unfused"
              else False)
    part = BernoulliParticipation(0.6, n=N)
    old = simulate(prob, "fedavg_is", part, **kw)
    E = int(np.max(steps))
    for ones in (np.ones(E), np.ones((5, E)), lambda t, k: 1.0):
        new = simulate(prob, "fedavg_is", part, lr_schedule=ones, **kw)
        np.testing.assert_array_equal(new.x, old.x)
        assert new.config["fused_local_steps"] == old.config["fused_local_steps"]


@pytest.mark.parametrize("steps", [1, 3, np.array([1, 3, 2, 3])])
def test_the_scheduled_loop_with_factors_one_is_the_old_loop_bit_for_bit(steps) -> None:
    # round 0's factors are ones, round 1's not: the schedule is kept (not dropped as all
    # ones), and x_1 is the unscheduled run's bit for bit, noise and all
    quad = _quadratic(3)
    E = int(np.max(steps))
    table = np.vstack([np.ones(E), np.full(E, 0.5)])
    kw = dict(replicas=3, lr=0.2, local_steps=steps, x0=X0, seed=5,
              noise=GaussianNoise(0.3))
    part = BernoulliParticipation(0.7, n=N)
    one = simulate(Plain(quad), "fedavg_is", part, rounds=1, **kw)
    # x_1, read where round 2 starts (an observe callback sees x_t before the server's step)
    seen: list[np.ndarray] = []
    two = simulate(Plain(quad), "fedavg_is", part, rounds=2, lr_schedule=table,
                   observe=lambda rec: seen.append(rec.x.copy()) if rec.t == 2 else None, **kw)
    assert two.config["lr_schedule"] == table.tolist()
    np.testing.assert_array_equal(seen[0], one.x)


def test_the_closed_form_fuses_one_factor_per_round() -> None:
    quad = _quadratic(4)
    T, E = 6, 5
    per_round = np.repeat((0.9 ** np.arange(T))[:, None], E, axis=1)
    kw = dict(rounds=T, replicas=2, lr=0.3, local_steps=np.array([5, 2, 3, 5]), x0=X0,
              lr_schedule=per_round)
    fused = simulate(quad, "fedavg", FULL, **kw)
    plain = simulate(quad, "fedavg", FULL, fuse_local_steps=False, **kw)
    assert fused.config["fused_local_steps"] and not plain.config["fused_local_steps"]
    np.testing.assert_allclose(fused.x, plain.x, rtol=0, atol=1e-12)
    ref = _reference(quad, X0, T, np.array([5, 2, 3, 5]), 0.3 * per_round)
    np.testing.assert_allclose(fused.x[0], ref, rtol=0, atol=1e-12)
    # within a round the factors vary: fuse=True refused, fuse=None the plain steps
    with pytest.raises(ValueError, match="fuse_local_steps=True needs one step size within"):
        simulate(quad, "fedavg", FULL, rounds=2, replicas=1, lr=0.1, local_steps=3,
                 lr_schedule=[1.0, 0.5, 0.25], fuse_local_steps=True)
    auto = simulate(quad, "fedavg", FULL, rounds=2, replicas=1, lr=0.1, local_steps=3,
                    lr_schedule=[1.0, 0.5, 0.25])
    assert not auto.config["fused_local_steps"]
    assert auto.config["lr_schedule"] == [1.0, 0.5, 0.25]


def _raises(exc: type[Exception]):
    def fn(t: int, k: int) -> float:
        if t == 2 and k == 1:
            raise exc("my schedule broke")
        return 1.0
    return fn


@pytest.mark.parametrize(
    "schedule, kw, match",
    [
        ([1.0, -0.5, 0.2], {}, r"lr_schedule must be finite step-size factors > 0, got -0.5 "
                               r"at index 1"),
        ([1.0, np.nan, 0.2], {}, r"factors > 0, got nan at index 1"),
        ([1.0, 0.0, 0.2], {}, r"factors > 0, got 0.0 at index 1"),
        ([[1.0, 1.0, np.inf]] * 4, {}, r"got inf at index \(0, 2\)"),
        ([1.0, 0.5], {}, r"lr_schedule must have E=3 factors \(one per local step\), got 2"),
        (np.ones((3, 3)), {}, r"must have shape \(T, E\) = \(4, 3\).*got \(3, 3\)"),
        (np.ones((4, 3, 1)), {}, r"an \(E,\) or \(T, E\) array .* got shape \(4, 3, 1\)"),
        ([], {}, r"got shape \(0,\)"),
        ("fast", {}, r"lr_schedule must be an \(E,\) or \(T, E\) array"),
        ([1.0, 2j, 1.0], {}, r"lr_schedule must be an array of real numbers, got complex"),
        (_raises(ZeroDivisionError), {}, r"lr_schedule\(t=2, k=1\) raised ZeroDivisionError: "
                                         r"'my schedule broke'"),
        (lambda t, k: float("nan") if k == 2 else 1.0, {},
         r"lr_schedule\(t=0, k=2\) must return a finite real number > 0 .*got nan"),
        (lambda t, k: -1.0, {}, r"lr_schedule\(t=0, k=0\) must return .*got -1.0"),
        (lambda t, k: np.inf, {}, r"got inf"),
        (lambda t, k: "1", {}, r"got '1'"),
        (lambda t, k: 1j, {}, r"got 1j"),
        (lambda t, k: None, {}, r"got None"),
        ([1.0, 1.0, 1.0], {"local_steps": lambda rngs, r, n: np.ones((r, n), int)},
         r"lr_schedule needs the most local steps known before the run"),
        ([1.0, 1.0, 0.5], {"rule": "scaffold"}, r"not supported with rule 'scaffold'"),
    ],
)
def test_hostile_schedules_are_refused_before_any_work(schedule, kw, match) -> None:
    prob = Plain(_quadratic())
    args = dict(rounds=4, replicas=2, lr=0.1, local_steps=3, lr_schedule=schedule) | kw
    rule = args.pop("rule", "fedavg")
    with pytest.raises(ValueError, match=match):
        simulate(prob, rule, FULL, **args)
    assert prob.rows == 0


@pytest.mark.parametrize("steps", [3, np.array([3, 1, 2, 3])])
def test_minibatch_steps_apply_the_schedule(steps) -> None:
    # batches of every sample: each step's mini-batch gradient is the client's gradient, so
    # the mini-batch route with a schedule is the plain route with it (to rounding)
    from fedtheory.engine import MiniBatches
    from fedtheory.problems.logistic import make_logistic_problem

    prob = make_logistic_problem("digits", n_clients=4, seed=0)
    kw = dict(rounds=3, replicas=2, lr=0.5, local_steps=steps, lr_schedule=[1.0, 0.5, 0.25],
              seed=1)
    part = BernoulliParticipation(1.0, n=4)
    batch = simulate(prob, "fedavg", part, batches=MiniBatches(int(prob.sizes.max())), **kw)
    plain = simulate(prob, "fedavg", part, **kw)
    np.testing.assert_allclose(batch.x, plain.x, rtol=1e-10, atol=1e-13)
    const = simulate(prob, "fedavg", part, **(kw | {"lr_schedule": None}))
    assert np.abs(plain.x - const.x).max() > 1e-3  # (the schedule changes the run)


def test_local_work_object_takes_the_schedule() -> None:
    quad = _quadratic()
    local = LocalWork(lr=0.3, steps=4, schedule=lambda t, k: 1 / (1 + k))
    res = simulate(quad, "fedavg", FULL, rounds=2, replicas=1, local=local, x0=X0)
    ref = _reference(quad, X0, 2, np.full(N, 4), np.tile(0.3 / (1 + np.arange(4)), (2, 1)))
    np.testing.assert_allclose(res.x[0], ref, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="lr_schedule must not be given together with local="):
        simulate(quad, "fedavg", FULL, rounds=2, replicas=1, local=local, lr_schedule=[1.0])


def test_one_step_per_round_is_a_decaying_server_step() -> None:
    # tau = 1: x_{t+1} = x_t - eta/(1+t) grad f(x_t); a (T, 1) table is listed by its shape
    # in the result's config once it is large
    quad = _quadratic(5)
    T = 4200
    res = simulate(quad, "fedavg", FULL, rounds=T, replicas=1, lr=0.5,
                   lr_schedule=lambda t, k: 1 / (1 + t), x0=X0, record_every=T)
    x = X0.copy()
    for t in range(T):
        x = x - 0.5 / (1 + t) * quad.grad(x[None])[0]
    np.testing.assert_allclose(res.x[0], x, rtol=0, atol=1e-12)
    assert res.config["lr_schedule"] == f"{(T, 1)} step-size factors"
