"""simulate's typed configuration (Run, LocalWork, Server, Metrics, Execution) and the engine's
local mini-batch SGD (MiniBatches, Capability.MINIBATCH_GRADIENTS)."""

from __future__ import annotations

import numpy as np
import pytest

from fedtheory.participation import BernoulliParticipation, OCSParticipation
from fedtheory.problems import QuadraticProblem
from fedtheory.problems.datasets import FederatedData
from fedtheory.problems.logistic import LogisticProblem
from fedtheory.simulate import (
    KEYWORDS,
    Execution,
    LocalWork,
    Metrics,
    MiniBatches,
    Run,
    Server,
    simulate,
)


@pytest.fixture(scope="module")
def quad() -> QuadraticProblem:
    return QuadraticProblem.heterogeneous(6, 3, L=1.0, mu=0.1, sigma_G2=1.0,
                                          rng=np.random.default_rng(0))


@pytest.fixture(scope="module")
def logistic() -> LogisticProblem:
    """Binary logistic regression, 4 clients of 3, 5, 7 and 8 samples (tiny: f* is quick)."""
    rng = np.random.default_rng(2)
    sizes = np.array([3, 5, 7, 8])
    X = rng.normal(size=(sizes.sum(), 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=sizes.sum()) > 0).astype(np.int64)
    idx = np.split(np.arange(sizes.sum()), np.cumsum(sizes)[:-1])
    data = FederatedData(X_clients=tuple(X[i] for i in idx), y_clients=tuple(y[i] for i in idx),
                         X_val=X[:6], y_val=y[:6], n_classes=2)
    return LogisticProblem(data, lam=0.1)


# ------------------------------------------------------------------ the configuration objects
def test_objects_and_keywords_are_the_same_run(quad):
    proc = BernoulliParticipation(0.5, n=6)
    kw = simulate(quad, "fedavg_is", proc, rounds=12, replicas=3, lr=0.1, local_steps=2,
                  global_lr=0.5, momentum=0.3, x0=np.ones(3), seed=4, record_every=5,
                  keep_replicas=True, workers=1)
    ob = simulate(quad, "fedavg_is", proc, Run(rounds=12, replicas=3, seed=4),
                  LocalWork(lr=0.1, steps=2),
                  server=Server(global_lr=0.5, momentum=0.3, x0=np.ones(3)),
                  metrics=Metrics(every=5, keep_replicas=True), execution=Execution(workers=1))
    np.testing.assert_array_equal(kw.x, ob.x)
    np.testing.assert_array_equal(kw.f_gap.replicas, ob.f_gap.replicas)
    np.testing.assert_array_equal(kw.rounds, [0, 5, 10, 12])
    assert kw.config == ob.config


def test_every_keyword_names_a_field():
    classes = {"run": Run, "local": LocalWork, "server": Server, "metrics": Metrics,
               "execution": Execution}
    for key, (obj, attr) in KEYWORDS.items():
        assert attr in classes[obj].__dataclass_fields__, key


@pytest.mark.parametrize("build, match", [
    (lambda: Run(rounds=-1, replicas=2), "rounds must be an integer >= 0, got -1"),
    (lambda: Run(rounds=3, replicas=0), "replicas must be an integer >= 1, got 0"),
    (lambda: Run(rounds=3, replicas=2, seed=-1), "seed must be a non-negative integer"),
    (lambda: Run(rounds=3, replicas=2, dtype=np.int32), "dtype must be float32 or float64"),
    (lambda: Run(rounds=3, replicas=2, bit_generator="xx"), "bit_generator must be one of"),
    (lambda: LocalWork(lr=0.0), "lr must be"),
    (lambda: LocalWork(lr=0.1, steps=0), "local_steps must be an integer >= 1, got 0"),
    (lambda: LocalWork(lr=0.1, steps=np.zeros((2, 2), int)), "local_steps must be an int"),
    (lambda: LocalWork(lr=0.1, batches=20), "batches must be a MiniBatches or None, got 20"),
    (lambda: LocalWork(lr=0.1, noise="loud"), "noise must be a noise model"),
    (lambda: MiniBatches(0), "MiniBatches.size must be an integer >= 1, got 0"),
    (lambda: Server(global_lr=-1.0), "global_lr must be"),
    (lambda: Server(momentum=1.0), r"momentum must be in \[0, 1\), got 1.0"),
    (lambda: Server(x0=[[[1.0]]]), r"x0 must be finite with shape \(d,\) or \(R, d\)"),
    (lambda: Server(x0=[np.nan]), "x0 must be finite, but it has 1 NaN entry"),
    (lambda: Metrics(every=0), "record_every must be an integer >= 1, got 0"),
    (lambda: Metrics(rounds=(3, 1)), r"record_rounds must be increasing integers >= 0"),
    (lambda: Metrics(extra={"f_gap": len}), r"extra_metrics must not redefine \['f_gap'\]"),
    (lambda: Metrics(observe=3), "observe must be callable"),
    (lambda: Metrics(skip=("loss",)), "skip_metrics must name metrics"),
    (lambda: Execution(workers=0), "workers must be an integer >= 1, got 0"),
])
def test_objects_validate_on_construction(build, match):
    with pytest.raises(ValueError, match=match):
        build()


def test_keyword_and_object_together_or_missing_are_errors(quad):
    proc = BernoulliParticipation(0.5, n=6)
    with pytest.raises(ValueError, match="rounds must not be given together with run="):
        simulate(quad, "fedavg", proc, Run(rounds=2, replicas=1), rounds=3, lr=0.1)
    with pytest.raises(ValueError, match="simulate needs run=Run"):
        simulate(quad, "fedavg", proc, lr=0.1, rounds=3)
    with pytest.raises(ValueError, match="simulate needs local=LocalWork"):
        simulate(quad, "fedavg", proc, Run(rounds=2, replicas=1))
    with pytest.raises(TypeError, match="unexpected keyword"):
        simulate(quad, "fedavg", proc, Run(rounds=2, replicas=1), LocalWork(0.1), rouds=3)
    with pytest.raises(ValueError, match="record_rounds must be within"):
        simulate(quad, "fedavg", proc, Run(rounds=2, replicas=1), LocalWork(0.1),
                 metrics=Metrics(rounds=(0, 5)))


def test_record_rounds_and_skipped_metrics(quad):
    res = simulate(quad, "fedavg", BernoulliParticipation(0.5, n=6), rounds=6, replicas=2,
                   lr=0.1, record_rounds=(2, 3, 6), skip_metrics=("grad_norm2",))
    full = simulate(quad, "fedavg", BernoulliParticipation(0.5, n=6), rounds=6, replicas=2,
                    lr=0.1)
    np.testing.assert_array_equal(res.rounds, [2, 3, 6])
    np.testing.assert_array_equal(res.f_gap.mean, full.f_gap.mean[[2, 3, 6]])
    assert np.isnan(res.grad_norm2.mean).all()
    np.testing.assert_array_equal(res.x, full.x)


# ------------------------------------------------------------------ mini-batch local work
def _reference_minibatch(prob, x0, lr, steps, B, wrap, seed, replica, rounds):
    """A plain loop for one replica, full participation: the sample orders drawn from the
    engine's stream (spawn_key (r, 3)), batch positions as MiniBatches documents."""
    gen = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(replica, 3)))
    sizes, s_max = prob.sizes, int(prob.sizes.max())
    B = min(B, s_max)
    x = x0.copy()
    for _ in range(rounds):
        keys = gen.random((prob.n, s_max))
        keys[np.arange(s_max)[None, :] >= sizes[:, None]] = 2.0
        order = np.argsort(keys, axis=-1)
        G = np.zeros_like(x)
        for i in range(prob.n):
            s = int(sizes[i])
            y, total = x.copy(), np.zeros_like(x)
            for k in range(int(steps[i])):
                if wrap:
                    pos = [(k * B + j) % s for j in range(min(B, s))]
                else:
                    b = k % -(-s // B)
                    pos = [q for q in range(b * B, (b + 1) * B) if q < s]
                samples = order[i, pos]
                g = prob.minibatch_grads_at(y[None], samples[None], clients=np.array([i]))[0]
                total += g
                y = y - lr * g
            G += prob.weights[i] * total
        x = x - lr * G
    return x


@pytest.mark.parametrize("wrap", [False, True])
def test_minibatch_sgd_matches_a_plain_loop(logistic, wrap):
    mb = MiniBatches(3, wrap=wrap)
    steps = mb.epoch_steps(logistic.sizes) if not wrap else np.array([2, 1, 3, 2])
    np.testing.assert_array_equal(MiniBatches(3).epoch_steps(logistic.sizes), [1, 2, 3, 3])
    x0 = np.full(logistic.d, 0.1)
    res = simulate(logistic, "full", BernoulliParticipation(1.0, n=4),
                   Run(rounds=3, replicas=3, seed=9), LocalWork(lr=0.3, steps=steps, batches=mb),
                   server=Server(x0=x0))
    for r in range(3):
        ref = _reference_minibatch(logistic, x0, 0.3, steps, 3, wrap, 9, r, 3)
        np.testing.assert_allclose(res.x[r], ref, rtol=1e-12, atol=1e-14)
    assert res.grad_evals == 3 * 3 * int(np.sum(steps))


def test_minibatches_are_chunk_independent_and_common_to_processes(logistic):
    """Chunking never changes the orders; with m = n, OCS (every update asked for) runs the
    same mini-batches as full participation."""
    kw = dict(rounds=4, replicas=5, lr=0.2, local_steps=2, batches=MiniBatches(4), seed=3)
    a = simulate(logistic, "full", BernoulliParticipation(1.0, n=4), chunk=5, **kw)
    b = simulate(logistic, "full", BernoulliParticipation(1.0, n=4), chunk=2, workers=2, **kw)
    np.testing.assert_array_equal(a.x, b.x)
    c = simulate(logistic, "fedavg_is", OCSParticipation(4, 4), **kw)
    np.testing.assert_allclose(c.x, a.x, rtol=1e-12, atol=1e-14)


def test_one_batch_of_everything_is_local_gd(logistic):
    """A batch as large as every client: the full-gradient steps (up to summation order)."""
    kw = dict(rounds=3, replicas=2, lr=0.3, local_steps=2, seed=1)
    gd = simulate(logistic, "full", BernoulliParticipation(1.0, n=4), **kw)
    mb = simulate(logistic, "full", BernoulliParticipation(1.0, n=4),
                  batches=MiniBatches(100), **kw)
    np.testing.assert_allclose(mb.x, gd.x, rtol=1e-12, atol=1e-14)


def test_minibatches_need_the_capability(quad):
    with pytest.raises(ValueError, match="MINIBATCH_GRADIENTS"):
        simulate(quad, "fedavg", BernoulliParticipation(0.5, n=6), rounds=2, replicas=1,
                 lr=0.1, batches=MiniBatches(2))


def test_observe_sees_the_selection(logistic):
    seen = []
    simulate(logistic, "fedavg_is", OCSParticipation(4, 2), rounds=2, replicas=3, lr=0.1,
             observe=lambda rec: seen.append((rec.selection, rec.participation_state)))
    sel, state = seen[0]
    assert sel.coef.shape == (3, 4) and np.all(sel.extra_floats == 4)
    assert state["replicas"] == 3
