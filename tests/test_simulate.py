"""The simulator: determinism across chunking, work follows participation, momentum, bits,
reductions to gradient descent, the exact fused local steps, validation."""

import numpy as np
import pytest

from fedtheory.algorithms import get_rule
from fedtheory.claims import checks
from fedtheory.participation import (
    BernoulliParticipation,
    CyclicParticipation,
    DropoutParticipation,
    MarkovParticipation,
    ParticipationProcess,
    UniformParticipation,
)
from fedtheory.problems import GaussianNoise, QuadraticProblem, RelativeNoise
from fedtheory.simulate import METRICS, simulate

from ._tolerance import DEFAULT_FACTOR, assert_close_sum, sum_tolerance
from .test_problem_capabilities import minimal_twin

N, D = 6, 4


@pytest.fixture(scope="module")
def prob():
    return QuadraticProblem.heterogeneous(N, D, L=1.0, mu=0.2, sigma_G2=2.0,
                                          rng=np.random.default_rng(0))


class Counting:
    """A problem proxy that offers only the Problem protocol (it declares no capability, and
    the methods of the optional fast routes, ``local_steps``, ``fused_local_steps``,
    ``loss_gap``, are hidden; ``client_gradients`` takes no ``out=``) and counts the
    client-gradient rows it is asked for."""

    capabilities = frozenset()
    OPTIONAL = {"local_steps", "fused_local_steps", "can_fuse_local_steps", "loss_gap"}

    def __init__(self, problem):
        self._p = problem
        self.rows = 0

    def __getattr__(self, name):
        if name in self.OPTIONAL:
            raise AttributeError(name)
        return getattr(self._p, name)

    def client_gradients(self, y, clients):
        self.rows += len(clients)
        return self._p.client_gradients(y, clients)


def masks_of(proc, seed, replicas, rounds):
    """The masks the simulator draws: replica r's participation stream is (seed, (r, 0))."""
    gens = [np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(r, 0)))
            for r in range(replicas)]
    return proc.sample(gens, replicas, rounds)


X0 = np.linspace(-1.0, 2.0, D)


@pytest.mark.parametrize(
    "rule, proc, noise, tau",
    [
        ("fedavg", BernoulliParticipation(0.4, n=N), GaussianNoise(0.5), 1),
        ("mifa", MarkovParticipation(0.5, n=N), RelativeNoise(0.3, 0.2), 2),
        ("scaffold", CyclicParticipation(0.5, period=4, n=N), GaussianNoise(0.5), 3),
        ("umifam", UniformParticipation(N, 3), None, 1),
        ("saga", DropoutParticipation(N, 0.5), GaussianNoise(0.1, distribution="sphere"), 2),
    ],
)
def test_deterministic_whatever_the_chunking(prob, rule, proc, noise, tau):
    kw = dict(rounds=15, replicas=7, lr=0.1, local_steps=tau, noise=noise, x0=X0, seed=3,
              keep_replicas=True)
    ref = simulate(prob, rule, proc, chunk=7, **kw)
    for chunk, workers in ((1, 1), (3, 1), (2, 2), (None, 2)):
        res = simulate(prob, rule, proc, chunk=chunk, workers=workers, **kw)
        np.testing.assert_array_equal(res.x, ref.x)
        for m in METRICS:
            # the iterates are bitwise equal; the problem's vectorised loss/grad may round
            # differently for different batch sizes: every metric is a sum of non-negative
            # terms (or an integer), so its own size bounds the sum of their absolute values
            reps = ref.metric(m).replicas
            assert_close_sum(res.metric(m).replicas, reps, reps)
            # streamed mean and standard error, merged over other chunks: rounding of the
            # size of the largest replica's value, per round
            top = np.abs(reps).max(axis=0)
            assert_close_sum(res.metric(m).mean, ref.metric(m).mean, top)
            np.testing.assert_allclose(res.metric(m).se, ref.metric(m).se, rtol=1e-9,
                                       atol=sum_tolerance(top.max()))
    other = simulate(prob, rule, proc, chunk=7, **{**kw, "seed": 4})
    assert not np.array_equal(other.x, ref.x)


def test_streamed_statistics_match_kept_replicas(prob):
    res = simulate(prob, "fedavg_is", BernoulliParticipation(0.5, n=N), rounds=10, replicas=9,
                   lr=0.1, x0=X0, noise=GaussianNoise(1.0), chunk=4, keep_replicas=True)
    for m in METRICS:
        tr = res.metric(m)
        assert_close_sum(tr.mean, tr.replicas.mean(axis=0), np.abs(tr.replicas).max(axis=0))
        se = tr.replicas.std(axis=0, ddof=1) / 3
        np.testing.assert_allclose(tr.se, se, rtol=1e-9, atol=1e-12)
    lone = simulate(prob, "fedavg", BernoulliParticipation(0.5, n=N), rounds=2, replicas=1,
                    lr=0.1)
    assert np.isnan(lone.f_gap.se).all()


@pytest.mark.parametrize("tau", [1, 3])
def test_work_follows_participation(prob, tau):
    proc = BernoulliParticipation(np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.1]))
    counting = Counting(prob)
    R, T = 5, 40
    res = simulate(counting, "fedavg_is", proc, rounds=T, replicas=R, lr=0.1,
                   local_steps=tau, x0=X0, seed=1)
    active = int(masks_of(proc, 1, R, T).sum())
    assert res.client_rounds == active
    assert counting.rows == res.grad_evals == active * tau
    assert active < 0.5 * R * T * N
    full = Counting(prob)
    res_full = simulate(full, "full", proc, rounds=T, replicas=R, lr=0.1, local_steps=tau)
    assert full.rows == res_full.grad_evals == R * T * N * tau


def test_fused_steps_count_one_evaluation_per_update(prob):
    res = simulate(prob, "fedavg", BernoulliParticipation(1.0, n=N), rounds=3, replicas=2,
                   lr=0.1, local_steps=5)
    assert res.config["fused_local_steps"] and res.grad_evals == res.client_rounds == 36


def test_bits_accounting(prob):
    proc = BernoulliParticipation(0.3, n=N)
    R, T = 4, 12
    m = masks_of(proc, 2, R, T).sum(axis=-1)  # (T, R)
    want = np.vstack([np.zeros((1, R)), np.cumsum(m, axis=0)]).T * D * 32
    res = simulate(prob, "mifa", proc, rounds=T, replicas=R, lr=0.1, seed=2, keep_replicas=True)
    np.testing.assert_array_equal(res.bits.replicas, want)
    res = simulate(prob, "scaffold", proc, rounds=T, replicas=R, lr=0.1, seed=2,
                   keep_replicas=True, bits_per_float=64)
    np.testing.assert_array_equal(res.bits.replicas, 4 * want)  # two vectors, 64 bits
    res = simulate(prob, "saga", proc, rounds=T, replicas=R, lr=0.1, seed=2, keep_replicas=True)
    np.testing.assert_array_equal(res.bits.replicas, want + N * D * 32)  # initial full round
    res = simulate(prob, "full", proc, rounds=T, replicas=R, lr=0.1, keep_replicas=True)
    np.testing.assert_array_equal(res.bits.replicas[:, -1], T * N * D * 32)


@pytest.mark.parametrize("rule", ["fedavg", "fedavg_is", "fedpgd", "mifa", "umifa", "saga",
                                  "scaffold", "fedvarp", "full"])
def test_full_participation_is_gradient_descent(prob, rule):
    lr, T = 0.3, 20
    res = simulate(prob, rule, BernoulliParticipation(1.0, n=N), rounds=T, replicas=2, lr=lr,
                   x0=X0, keep_replicas=True, record_every=T)
    x = X0.copy()
    for _ in range(T):
        x = x - lr * prob.grad(x)
    np.testing.assert_allclose(res.x, np.tile(x, (2, 1)), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(res.f_gap.mean[-1], prob.loss(x) - prob.f_star, atol=1e-13)
    np.testing.assert_allclose(res.dist2.mean[-1], np.sum((x - prob.x_star) ** 2), atol=1e-13)
    np.testing.assert_allclose(res.grad_norm2.mean[-1], np.sum(prob.grad(x) ** 2), atol=1e-13)
    assert res.rounds.tolist() == [0, T]


def test_momentum_is_heavy_ball(prob):
    lr, beta, T = 0.2, 0.6, 15
    res = simulate(prob, "fedavg", BernoulliParticipation(1.0, n=N), rounds=T, replicas=1,
                   lr=lr, momentum=beta, global_lr=0.5, x0=X0)
    x, v = X0.copy(), np.zeros(D)
    for _ in range(T):
        v = beta * v + prob.grad(x)
        x = x - 0.5 * lr * v
    np.testing.assert_allclose(res.x[0], x, rtol=1e-12, atol=1e-13)
    # the seed's MIFAm is MIFA with the server's heavy ball: identical trajectories
    proc = BernoulliParticipation(0.5, n=N)
    kw = dict(rounds=T, replicas=3, lr=lr, x0=X0, noise=GaussianNoise(0.3), seed=5)
    a = simulate(prob, "mifa", proc, momentum=beta, **kw)
    b = simulate(prob, get_rule("mifam", beta=beta), proc, **kw)
    np.testing.assert_allclose(a.x, b.x, rtol=1e-12, atol=1e-14)


def test_local_steps_match_a_hand_loop(prob):
    """Noise-free tau local steps (generic path) = the closed form (fused path)."""
    kw = dict(rounds=6, replicas=3, lr=0.15, local_steps=4, x0=X0, seed=1)
    proc = BernoulliParticipation(0.6, n=N)
    for rule in ("fedavg", "scaffold"):
        slow = simulate(prob, rule, proc, fuse_local_steps=False, **kw)
        fast = simulate(prob, rule, proc, fuse_local_steps=True, **kw)
        np.testing.assert_allclose(fast.x, slow.x, rtol=1e-12, atol=1e-13)
    # one round of FedAvg by hand
    res = simulate(prob, "fedavg", BernoulliParticipation(1.0, n=N), rounds=1, replicas=1,
                   lr=0.15, local_steps=4, x0=X0, fuse_local_steps=False)
    ys = np.tile(X0, (N, 1))
    path = [ys]
    for _ in range(4):
        ys = ys - 0.15 * prob.client_gradients(ys, np.arange(N))
        path.append(ys)
    # x0 - lr * mean(sum of the 4 local gradients) against the mean of the local iterates:
    # rounding of every step, each of the size of the iterates
    assert_close_sum(res.x[0], ys.mean(axis=0), 5 * np.abs(np.stack(path)).max(axis=(0, 1)))


@pytest.mark.parametrize("fuse", [False, True])
def test_local_step_noise_has_the_right_variance(prob, fuse):
    """One round of FedAvg, p = 1, tau = 3: Var x_1[k] = lr^2/n^2 sum_i sigma^2/d sum_j m^2j."""
    lr, tau, s2, R = 0.4, 3, 0.8, 4000
    res = simulate(prob, "fedavg", BernoulliParticipation(1.0, n=N), rounds=1, replicas=R,
                   lr=lr, local_steps=tau, noise=GaussianNoise(s2), x0=X0, seed=9,
                   fuse_local_steps=fuse, record_every=1)
    assert res.config["fused_local_steps"] == fuse
    m = 1 - lr * prob.hessians
    var = lr**2 / N**2 * np.sum(s2 / D * sum(m ** (2 * j) for j in range(tau)), axis=0)
    mean = simulate(prob, "fedavg", BernoulliParticipation(1.0, n=N), rounds=1, replicas=1,
                    lr=lr, local_steps=tau, x0=X0).x[0]
    ev = checks.check_identity(res.x - mean, np.zeros(D))
    assert ev.passed, ev.detail
    ev = checks.check_identity((res.x - mean) ** 2, var)
    assert ev.passed, ev.detail


def test_scaffold_removes_client_drift(prob):
    """tau > 1 local steps on heterogeneous clients: FedAvg stalls away from x*, SCAFFOLD not."""
    kw = dict(rounds=300, replicas=1, lr=0.2, local_steps=5, x0=X0, record_every=300)
    proc = BernoulliParticipation(1.0, n=N)
    fedavg = simulate(prob, "fedavg", proc, **kw)
    scaffold = simulate(prob, "scaffold", proc, **kw)
    assert fedavg.dist2.mean[-1] > 1e-4
    assert scaffold.dist2.mean[-1] < 1e-20


def test_rounds_without_participants_and_float32(prob):
    proc = BernoulliParticipation(0.02, n=N)
    for rule in ("fedavg", "fedavg_is", "mifa", "fedvarp", "scaffold", "umifa"):
        res = simulate(prob, rule, proc, rounds=20, replicas=4, lr=0.1, x0=X0,
                       noise=GaussianNoise(0.1), dtype=np.float32)
        assert res.x.dtype == np.float32
        assert np.isfinite(res.f_gap.mean).all()
    assert res.f_gap.mean.dtype == np.float64


def test_extra_metrics_and_record_every(prob):
    res = simulate(prob, "fedavg", BernoulliParticipation(0.5, n=N), rounds=10, replicas=3,
                   lr=0.1, x0=X0, record_every=4,
                   extra_metrics={"het": prob.heterogeneity, "x0": lambda x: x[:, 0]})
    assert res.rounds.tolist() == [0, 4, 8, 10]
    assert res.metric("het").mean.shape == (4,)
    assert res.extra["x0"].mean[-1] == pytest.approx(res.x[:, 0].mean())
    with pytest.raises(ValueError, match="metric must be one of"):
        res.metric("nope")


def test_per_replica_x0_and_bit_generators(prob):
    x0 = np.arange(3 * D, dtype=float).reshape(3, D)
    res = simulate(prob, "fedavg", BernoulliParticipation(1.0, n=N), rounds=0, replicas=3,
                   lr=0.1, x0=x0, keep_replicas=True)
    np.testing.assert_array_equal(res.x, x0)
    a = simulate(prob, "fedavg", BernoulliParticipation(0.5, n=N), rounds=5, replicas=2,
                 lr=0.1, x0=X0, bit_generator="sfc64", noise=GaussianNoise(1.0))
    b = simulate(prob, "fedavg", BernoulliParticipation(0.5, n=N), rounds=5, replicas=2,
                 lr=0.1, x0=X0, noise=GaussianNoise(1.0))
    assert not np.array_equal(a.x, b.x)


class ZeroForSomeone(ParticipationProcess):
    name = ""  # not registered: a user's process

    def __init__(self, n):
        self.n = n

    @property
    def stationary(self):
        return np.r_[0.0, np.full(self.n - 1, 0.5)]

    def _step(self, state, rng):
        return np.zeros((state["replicas"], self.n), dtype=bool)


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"lr": 0.0}, "lr must be a positive real number, got 0.0"),
        ({"lr": -1}, "lr must be a positive real number, got -1"),
        ({"global_lr": np.inf}, "global_lr must be a positive real number"),
        ({"momentum": 1.0}, r"momentum must be in \[0, 1\), got 1.0"),
        ({"momentum": -0.1}, r"momentum must be in \[0, 1\), got -0.1"),
        ({"local_steps": 0}, "local_steps must be an integer >= 1, got 0"),
        ({"rounds": -1}, "rounds must be an integer >= 0, got -1"),
        ({"replicas": 0}, "replicas must be an integer >= 1, got 0"),
        ({"rule": "nope"}, "rule must be one of .*'nope'"),
        ({"rule": "mifam", "momentum": 0.5}, "momentum must be 0 with rule 'mifam'"),
        ({"x0": np.zeros(D + 1)}, "x0 must be finite with shape"),
        ({"dtype": np.int64}, "dtype must be float32 or float64"),
        ({"bit_generator": "lcg"}, "bit_generator must be one of"),
        ({"seed": -3}, "seed must be a non-negative integer, got -3"),
        ({"participation": BernoulliParticipation(0.5, n=N + 1)},
         "participation must be a process over problem.n=6 clients"),
        ({"participation": ZeroForSomeone(N), "rule": "umifa"},
         "participation.stationary must be positive .* 'umifa': client 0 has p = 0.0"),
        ({"problem": "nonexistent"}, "problem"),
        ({"noise": RelativeNoise(1.0, 0.0), "fuse_local_steps": True}, "fuse_local_steps=True"),
        ({"noise": object()}, "noise must be a noise model"),
        ({"extra_metrics": {"dist2": np.sum}}, "must not redefine"),
        ({"chunk": 0}, "chunk must be an integer >= 1, got 0"),
    ],
)
def test_validation(prob, kw, match):
    args = {"problem": prob, "rule": "fedavg", "participation": BernoulliParticipation(0.5, n=N)}
    args.update({k: kw.pop(k) for k in list(kw) if k in args})
    params = {"rounds": 2, "replicas": 2, "lr": 0.1, **kw}
    with pytest.raises(ValueError, match=match):
        simulate(args["problem"], args["rule"], args["participation"], **params)


def test_zero_stationary_is_fine_for_plain_rules(prob):
    res = simulate(prob, "fedavg", ZeroForSomeone(N), rounds=3, replicas=2, lr=0.1, x0=X0)
    np.testing.assert_array_equal(res.x, np.tile(X0, (2, 1)))


def test_memory_is_o_rd_unless_the_rule_keeps_a_table(monkeypatch):
    """Peak allocation: with cache-sized chunks FedAvg's memory does not grow like R*n*d
    (only O(R d) results); a table rule holds its chunk's (chunk, n, d) table."""
    import tracemalloc

    from fedtheory import simulate as simulate_module

    n, d = 400, 50
    big = QuadraticProblem.heterogeneous(n, d, L=1.0, mu=0.1, sigma_G2=1.0,
                                         rng=np.random.default_rng(1))
    repr(big), big.f_star  # cached constants, computed outside the measurement
    monkeypatch.setattr(simulate_module, "_CHUNK_BUDGET", 4096)  # chunks of 4 replicas here

    def peak(rule, R, **kw):
        tracemalloc.start()
        simulate(big, rule, BernoulliParticipation(0.05, n=n), rounds=3, replicas=R, lr=0.1,
                 noise=GaussianNoise(1.0), workers=1, record_every=3, **kw)
        out = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return out

    small, large = peak("fedavg", 8), peak("fedavg", 64)
    assert large - small < 56 * d * 8 * 20, (small, large)  # a few (R, d) arrays, not R n d
    assert large < 0.1 * 64 * n * d * 8
    assert peak("mifa", 64, chunk=64) >= 64 * n * d * 8
    assert peak("mifa", 64) < 0.2 * 64 * n * d * 8  # chunks of 4: one chunk's table at a time


@pytest.mark.parametrize(
    "rule, noise, tau, dtype",
    [
        ("umifa", None, 1, np.float64),
        ("saga", GaussianNoise(0.5), 1, np.float32),
        ("scaffold", GaussianNoise(0.5), 3, np.float64),
        ("fedavg", RelativeNoise(0.3, 0.2), 2, np.float64),
        ("fedvarp", None, 2, np.float32),
    ],
)
def test_bitwise_whatever_the_chunking_when_replicas_span_blocks(monkeypatch, rule, noise, tau,
                                                                 dtype):
    """Blocks of 3 rows: every replica's round streams through several blocks, alone or
    sharing a block with others depending on the chunk; the numbers must not change."""
    from fedtheory import engine

    big = QuadraticProblem.heterogeneous(20, D, L=1.0, mu=0.2, sigma_G2=2.0,
                                         rng=np.random.default_rng(3))
    monkeypatch.setattr(engine, "_BLOCK_BYTES", 3 * D * np.dtype(dtype).itemsize)
    monkeypatch.setattr(engine, "_MIN_BLOCK_ROWS", 1)
    kw = dict(rounds=8, replicas=6, lr=0.1, local_steps=tau, noise=noise, seed=5, dtype=dtype,
              x0=X0, keep_replicas=True)
    proc = BernoulliParticipation(np.linspace(0.2, 0.9, 20))
    ref = simulate(big, rule, proc, chunk=6, workers=1, **kw)
    for chunk, workers in ((1, 1), (4, 1), (2, 2), (5, 2)):
        res = simulate(big, rule, proc, chunk=chunk, workers=workers, **kw)
        np.testing.assert_array_equal(res.x, ref.x)  # metrics: batched einsum rounding
        # sums of squares: their own size bounds the sum of their terms
        assert_close_sum(res.dist2.replicas, ref.dist2.replicas, ref.dist2.replicas)


@pytest.mark.parametrize(
    "rule, noise, tau, fuse",
    [
        ("umifa", None, 1, None),
        ("scaffold", GaussianNoise(0.4), 1, None),
        ("fedavg", RelativeNoise(0.3, 0.2), 3, None),  # the problem's local_steps
        ("mifa", GaussianNoise(0.4), 3, False),  # local_steps with additive noise
        ("saga", None, 4, None),  # closed form (noise-free: the same path as step by step)
        ("saga", None, 4, False),  # the same steps through local_steps
    ],
)
@pytest.mark.parametrize("bare", ["proxy", "third-party"])
def test_the_problems_fast_routes_match_the_protocol(prob, rule, noise, tau, fuse, bare):
    """The fast paths QuadraticProblem declares (client_gradients(out=), local_steps,
    fused_local_steps, loss_gap) give the trajectories of the bare Problem protocol
    (repeated client_gradients, loss - f_star): of a proxy that hides them, and of a
    third-party problem written against the protocol only. Bitwise for one step through the
    proxy, to rounding otherwise.

    Tolerances: each of the ``rounds * tau`` gradient steps (a contraction, ``lr * L < 1``)
    rounds the iterate by a few eps of its norm, so the iterates differ by at most
    ``64 eps rounds tau ||x||``; ``f_gap`` differs by the rounding of ``loss(x) - f_star``
    (a sum of non-negative terms of total ``f_gap + 2 f_star``) plus what that iterate
    difference moves it, ``||grad f|| ||dx|| + L ||dx||^2 / 2``."""
    kw = dict(rounds=12, replicas=4, lr=0.15, local_steps=tau, noise=noise, x0=X0, seed=6,
              fuse_local_steps=fuse, keep_replicas=True)
    proc = BernoulliParticipation(0.6, n=N)
    fast = simulate(prob, rule, proc, **kw)
    plain = simulate(Counting(prob) if bare == "proxy" else minimal_twin(prob), rule, proc,
                     **kw)
    if tau == 1 and bare == "proxy":
        # bit-identical: the proxy calls the same client_gradients, without out=
        np.testing.assert_array_equal(fast.x, plain.x)
    per_norm = DEFAULT_FACTOR * np.finfo(float).eps * kw["rounds"] * tau
    dx = np.linalg.norm(fast.x - plain.x, axis=1)
    assert np.all(dx <= per_norm * np.linalg.norm(plain.x, axis=1)), dx
    gap = plain.f_gap.replicas
    dx_t = per_norm * (np.sqrt(plain.dist2.replicas) + np.linalg.norm(prob.x_star))
    moved = np.sqrt(plain.grad_norm2.replicas) * dx_t + 0.5 * prob.L * dx_t**2
    tol = sum_tolerance(gap + 2 * abs(prob.f_star)) + moved
    assert np.all(np.abs(fast.f_gap.replicas - gap) <= tol)


def test_f_gap_has_no_cancellation(prob):
    """Gradient descent to 1e-25 and beyond: f_gap is (1/2) e^T A e of the iterate (the
    problem's loss_gap), not the rounding noise of loss(x) - f_star."""
    res = simulate(prob, "full", BernoulliParticipation(1.0, n=N), rounds=400, replicas=1,
                   lr=0.9, x0=X0, record_every=400)
    e = res.x[0] - prob.x_star
    assert 0 < res.f_gap.mean[-1] < 1e-25
    want = 0.5 * e @ (prob.hessian * e)  # a sum of non-negative terms: relative to itself
    assert_close_sum(res.f_gap.mean[-1], want, want)


@pytest.mark.parametrize("budget", [1, 64, 1 << 20])
def test_normal_streams_hand_out_exactly_the_on_demand_draws(monkeypatch, budget):
    """Drawn ahead (refilled often with a tiny budget, grown by a large request), each
    replica's normals are bitwise those of drawing every request on demand."""
    from fedtheory.algorithms.participants import Participants
    from fedtheory.engine import NormalStreams

    monkeypatch.setattr(NormalStreams, "BUDGET", budget)
    rng = np.random.default_rng(0)
    for dtype in (np.float64, np.float32):
        streams = NormalStreams([np.random.default_rng(s) for s in range(5)], dtype)
        ref = [np.random.default_rng(s) for s in range(5)]
        for t in range(40):
            mask = rng.random((5, 4)) < (1.0 if t == 20 else 0.6)  # full rounds, uneven ones
            part = Participants.from_mask(mask)
            d = 30 if t == 20 else 3  # one large request
            z = np.empty((part.size, d), dtype=dtype)
            streams.fill(part, z)
            want = np.empty_like(z)
            for r in part.present:
                ref[r].standard_normal(out=want[part.starts[r]:part.starts[r + 1]], dtype=dtype)
            assert np.array_equal(z, want)
        # memory: at most one large request per replica beyond the budget
        assert streams.cap <= max(4 * 30, budget // 5, 8 * 4 * 3)
