"""Per-client local work: local_steps as an int, an (n,) array or a per-round draw."""

from __future__ import annotations

import numpy as np
import pytest

from fedtheory.participation import BernoulliParticipation
from fedtheory.problems import QuadraticProblem
from fedtheory.problems.noise import NoiseModel
from fedtheory.simulate import LocalStepsDraw, simulate


def _problem(n: int = 5, d: int = 3, dense: bool = False) -> QuadraticProblem:
    rng = np.random.default_rng(1)
    if dense:
        B = rng.normal(size=(n, d, d))
        A = np.einsum("nij,nkj->nik", B, B) / d + 0.5 * np.eye(d)
    else:
        A = rng.uniform(0.5, 2.0, (n, d))
    return QuadraticProblem(A, rng.normal(size=(n, d)))


def _reference(prob: QuadraticProblem, x0: np.ndarray, taus: np.ndarray, lr: float,
               rounds: int) -> np.ndarray:
    """A plain loop: every client runs taus[t][i] gradient steps, full participation,
    G = sum_i w_i Delta_i with Delta_i the sum of its gradients."""
    x = x0.astype(float).copy()
    for t in range(rounds):
        G = np.zeros_like(x)
        for i in range(prob.n):
            y, total = x.copy(), np.zeros_like(x)
            for _ in range(int(taus[t][i])):
                g = prob.client_gradients(y[None], np.array([i]))[0]
                total += g
                y = y - lr * g
            G += prob.weights[i] * total
        x = x - lr * G
    return x


@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize("fuse", [None, False])
def test_per_client_steps_match_a_plain_loop(dense: bool, fuse: bool | None) -> None:
    prob = _problem(dense=dense)
    taus = np.array([1, 3, 2, 5, 1])
    x0 = np.array([1.0, -1.0, 2.0])
    res = simulate(prob, "full", BernoulliParticipation(1.0, n=prob.n), rounds=4, replicas=2,
                   lr=0.05, x0=x0, local_steps=taus, fuse_local_steps=fuse)
    want = _reference(prob, x0, [taus] * 4, 0.05, 4)
    np.testing.assert_allclose(res.x, np.broadcast_to(want, res.x.shape), rtol=1e-9)
    assert res.config["fused_local_steps"] == (fuse is None and not dense)
    assert res.grad_evals == 4 * 2 * (prob.n if res.config["fused_local_steps"] else taus.sum())


def test_drawn_steps_match_a_plain_loop() -> None:
    prob = _problem()
    drawn = []

    def draw(rngs, replicas, n):  # type: ignore[no-untyped-def]
        out = np.stack([g.integers(1, 4, size=n) for g in rngs])
        drawn.append(out)
        return out

    x0 = np.array([1.0, -1.0, 2.0])
    res = simulate(prob, "full", BernoulliParticipation(1.0, n=prob.n), rounds=3, replicas=1,
                   lr=0.05, x0=x0, local_steps=draw, fuse_local_steps=False)
    want = _reference(prob, x0, [d[0] for d in drawn], 0.05, 3)
    np.testing.assert_allclose(res.x[0], want, rtol=1e-9)


def test_constant_array_is_the_int_run_and_draws_are_chunk_free() -> None:
    prob = _problem()
    kw = dict(rounds=6, replicas=4, lr=0.05, x0=np.ones(3), noise=NoiseModel(0.0, 0.5))
    proc = BernoulliParticipation(0.6, n=prob.n)
    a = simulate(prob, "fedavg", proc, local_steps=3, **kw)
    b = simulate(prob, "fedavg", proc, local_steps=np.full(prob.n, 3), **kw)
    np.testing.assert_array_equal(a.x, b.x)
    for fuse in (None, False):
        c1 = simulate(prob, "fedavg", proc, local_steps=LocalStepsDraw(1, 4), chunk=1,
                      fuse_local_steps=fuse, **kw)
        c4 = simulate(prob, "fedavg", proc, local_steps=LocalStepsDraw(1, 4), chunk=4,
                      fuse_local_steps=fuse, **kw)
        np.testing.assert_array_equal(c1.x, c4.x)


def test_fused_and_stepwise_agree_without_noise() -> None:
    prob = _problem()
    kw = dict(rounds=5, replicas=3, lr=0.05, x0=np.ones(3),
              local_steps=LocalStepsDraw(1, 5))
    proc = BernoulliParticipation(0.5, n=prob.n)
    a = simulate(prob, "fedavg", proc, fuse_local_steps=True, **kw)
    b = simulate(prob, "fedavg", proc, fuse_local_steps=False, **kw)
    np.testing.assert_allclose(a.x, b.x, rtol=1e-9)


@pytest.mark.parametrize("bad", [0, -1, 1.5, np.array([1, 0, 1, 1, 1]), np.ones(4, int),
                                 np.full(5, 1.0), [1, 2]])
def test_bad_local_steps_name_the_argument(bad: object) -> None:
    prob = _problem()
    with pytest.raises(ValueError, match="local_steps"):
        simulate(prob, "fedavg", BernoulliParticipation(0.5, n=prob.n), rounds=1, replicas=1,
                 lr=0.1, local_steps=bad)


def test_bad_draws() -> None:
    prob = _problem()
    with pytest.raises(ValueError, match="LocalStepsDraw.low"):
        LocalStepsDraw(0, 2)
    with pytest.raises(ValueError, match="LocalStepsDraw.high"):
        LocalStepsDraw(3, 2)
    with pytest.raises(ValueError, match="local_steps \\(the round's draw\\)"):
        simulate(prob, "fedavg", BernoulliParticipation(0.5, n=prob.n), rounds=1, replicas=2,
                 lr=0.1, local_steps=lambda rngs, R, n: np.zeros((R, n), int))
    with pytest.raises(ValueError, match="local_steps must be one integer with rule 'scaffold'"):
        simulate(prob, "scaffold", BernoulliParticipation(0.5, n=prob.n), rounds=1, replicas=1,
                 lr=0.1, local_steps=np.arange(1, 6))
