"""Replicas with their own problem, process and rule parameters (ProblemStack, ProcessStack,
FedAvgWeighted(omega=(R, n)), ReplayParticipation(masks=(T, R, n))): replica r of a stacked
run is, bit for bit, the run of its own problem, process and weights alone (same seed,
first_replica=r), whatever the chunking."""

from __future__ import annotations

import numpy as np
import pytest

from fedtheory.algorithms import FedAU, FedAvgWeighted, RuleStack, get_rule
from fedtheory.participation import (
    BernoulliParticipation,
    MarkovParticipation,
    OCSParticipation,
    ProcessStack,
    ReplayParticipation,
)
from fedtheory.participation.fedau_sampler import OffsetCyclic
from fedtheory.problems import (
    FederatedData,
    LogisticProblem,
    ProblemStack,
    QuadraticProblem,
    load_dataset,
)
from fedtheory.simulate import MiniBatches, simulate

from ._tolerance import assert_close_sum

R, N, D = 4, 6, 3


def _quadratics(seed=0, cls=QuadraticProblem):
    gen = np.random.default_rng(seed)
    return [cls(gen.uniform(0.5, 2.0, (N, D)), gen.standard_normal((N, D)))
            for _ in range(R)]


def _probabilities(seed=1):
    gen = np.random.default_rng(seed)
    return [gen.uniform(0.2, 0.9, N) for _ in range(R)]


def _alone(problems, processes, omega, r, **kw):
    return simulate(problems[r], FedAvgWeighted(omega[r]), processes[r], replicas=1,
                    first_replica=r, keep_replicas=True, **kw)


@pytest.mark.parametrize("local_steps", [1, 3, np.array([1, 2, 3, 1, 2, 3])])
@pytest.mark.parametrize("chunk", [1, 3, R])
def test_each_replica_is_its_own_run(local_steps, chunk):
    probs, ps = _quadratics(), _probabilities()
    procs = [BernoulliParticipation(p) for p in ps]
    omega = np.stack([1 / p for p in ps])
    kw = dict(rounds=15, lr=0.1, local_steps=local_steps, seed=7, record_every=5)
    res = simulate(ProblemStack(probs), FedAvgWeighted(omega), ProcessStack(procs),
                   replicas=R, keep_replicas=True, chunk=chunk, workers=2 if chunk < R else 1,
                   **kw)
    for r in range(R):
        one = _alone(probs, procs, omega, r, **kw)
        np.testing.assert_array_equal(res.x[r], one.x[0])
        for name in ("f_gap", "grad_norm2", "dist2", "bits"):
            np.testing.assert_array_equal(res.metric(name).replicas[r],
                                          one.metric(name).replicas[0])


def test_metrics_are_each_replicas_own_and_extra_metrics_see_the_replicas():
    probs, ps = _quadratics(2), _probabilities(3)
    seen = []

    def own_loss(x, replicas):
        seen.append(replicas.tolist())
        return np.array([probs[r].loss(x[k]) for k, r in enumerate(replicas)])

    res = simulate(ProblemStack(probs), "fedavg",
                   ProcessStack([BernoulliParticipation(p) for p in ps]), rounds=6,
                   replicas=R, lr=0.2, record_every=3, keep_replicas=True, chunk=3,
                   extra_metrics={"loss": own_loss})
    x = res.x
    # bit-identical: the stack evaluates each problem on its rows, here one (1, d) row each
    gap = np.array([probs[r].loss_gap(x[r:r + 1])[0] for r in range(R)])
    np.testing.assert_array_equal(res.f_gap.replicas[:, -1], gap)
    np.testing.assert_array_equal(  # bit-identical: the same call on the same row
        res.extra["loss"].replicas[:, -1], [probs[r].loss(x[r]) for r in range(R)])
    assert [0, 1, 2] in seen and [3] in seen  # chunk 3: the rows' replicas in the run
    dist = [np.sum((x[r] - probs[r].x_star) ** 2) for r in range(R)]
    assert_close_sum(res.dist2.replicas[:, -1], dist, dist)  # sums of d squares


class _NoStack(QuadraticProblem):
    """A quadratic whose class has no ``stack``: the generic (looped) flat problem."""

    stack = None


def test_generic_flat_problem_gives_the_vectorised_numbers():
    looped = ProblemStack(_quadratics(4, _NoStack))
    vec = ProblemStack(_quadratics(4))
    assert type(looped.flat).__name__ == "_LoopedFlat" and type(vec.flat) is QuadraticProblem
    ps = _probabilities(5)
    kw = dict(rounds=10, replicas=R, lr=0.1, seed=3, keep_replicas=True)
    procs = ProcessStack([MarkovParticipation(p, 0.5) for p in ps])
    a = simulate(looped, "fedavg", procs, **kw)
    b = simulate(vec, "fedavg", procs, **kw)
    np.testing.assert_array_equal(a.x, b.x)


def _digits_instances(count=3, clients=5, seed=0):
    X, y = load_dataset("digits")
    X = np.hstack([(X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1), np.ones((len(y), 1))])
    gen = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        idx = gen.permutation(len(y))[: clients * 12]
        cuts = np.sort(gen.choice(np.arange(1, idx.size), clients - 1, replace=False))
        parts = np.split(idx, cuts)  # unequal client sizes
        fd = FederatedData(X_clients=tuple(X[q] for q in parts),
                           y_clients=tuple(y[q] for q in parts), X_val=X[:50], y_val=y[:50],
                           n_classes=10)
        out.append(LogisticProblem(fd, lam=1e-3, weights="uniform", tol=float("inf")))
    return out


@pytest.mark.parametrize("wrap", [True, False])
@pytest.mark.parametrize("size", [4, 25])  # 25: above some replicas' largest client
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_minibatch_logistic_stack_is_each_instance_alone(dtype, size, wrap):
    probs = _digits_instances()
    ps = [np.full(5, 0.6), np.full(5, 0.3), np.linspace(0.2, 1.0, 5)]
    kw = dict(rounds=6, lr=0.3, local_steps=3, batches=MiniBatches(size, wrap=wrap), seed=11,
              dtype=dtype, skip_metrics=("f_gap", "grad_norm2", "dist2"))
    stack = ProblemStack(probs)
    assert type(stack.flat) is LogisticProblem and stack.sizes.shape == (3, 5)
    tops = stack.sizes.max(axis=1)
    assert tops.min() < 25 < tops.max() or size == 4  # the per-replica batch size is tested
    procs = [OffsetCyclic(p, period=4) for p in ps]
    res = simulate(stack, FedAU(K=3), ProcessStack(procs), replicas=3, chunk=2, **kw)
    for r in range(3):
        one = simulate(probs[r], FedAU(K=3), procs[r], replicas=1, first_replica=r, **kw)
        if size > tops[r]:
            # the same batches, but the stack's products run over its wider batch (zero-
            # weighted columns), which BLAS kernels may sum in another order (float32 does
            # here; float64 may on another CPU): a few roundings per step
            tol = 8 * np.finfo(dtype).eps * 3 * 6 * np.abs(one.x).max()
            np.testing.assert_allclose(res.x[r], one.x[0], rtol=0, atol=tol)
        else:
            np.testing.assert_array_equal(res.x[r], one.x[0])


def test_a_stack_of_one_is_the_plain_run():
    (q, *_), p = _quadratics(6), _probabilities(7)[0]
    kw = dict(rounds=8, replicas=1, lr=0.1, local_steps=2, seed=2, keep_replicas=True)
    a = simulate(ProblemStack([q]), "fedavg", ProcessStack([BernoulliParticipation(p)]), **kw)
    b = simulate(q, "fedavg", BernoulliParticipation(p), **kw)
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_array_equal(a.f_gap.replicas, b.f_gap.replicas)


def test_processes_of_one_law_give_the_rule_their_probabilities():
    """An importance-weighted rule runs on a stack of equal processes (their common p)."""
    probs, p = _quadratics(8), np.linspace(0.3, 0.9, N)
    kw = dict(rounds=5, replicas=R, lr=0.1, seed=4, keep_replicas=True)
    a = simulate(ProblemStack(probs), "fedavg_is",
                 ProcessStack([BernoulliParticipation(p)] * R), **kw)
    b = simulate(ProblemStack(probs), "fedavg_is", BernoulliParticipation(p), **kw)
    np.testing.assert_array_equal(a.x, b.x)


def test_replayed_masks_per_replica_run_in_any_chunks():
    gen = np.random.default_rng(9)
    masks = gen.random((12, R, N)) < 0.5
    q = _quadratics(10)[0]
    kw = dict(rounds=12, replicas=R, lr=0.1, keep_replicas=True)
    whole = simulate(q, "fedavg", ReplayParticipation(masks), chunk=R, **kw)
    cut = simulate(q, "fedavg", ReplayParticipation(masks), chunk=1, **kw)
    np.testing.assert_array_equal(whole.x, cut.x)
    with pytest.raises(ValueError, match="replicas must be participation's 4"):
        simulate(q, "fedavg", ReplayParticipation(masks), rounds=12, replicas=3, lr=0.1)


def test_bad_stacks_are_named_before_any_work():
    probs, ps = _quadratics(), _probabilities()
    stack, procs = ProblemStack(probs), ProcessStack([BernoulliParticipation(p) for p in ps])
    with pytest.raises(ValueError, match="replicas must be problem's 4"):
        simulate(stack, "fedavg", BernoulliParticipation(ps[0]), rounds=2, replicas=3, lr=0.1)
    with pytest.raises(ValueError, match="replicas must be participation's 4"):
        simulate(probs[0], "fedavg", procs, rounds=2, replicas=2, lr=0.1)
    with pytest.raises(ValueError, match="replicas must be rule's 4"):
        simulate(probs[0], FedAvgWeighted(np.ones((R, N))), BernoulliParticipation(ps[0]),
                 rounds=2, replicas=2, lr=0.1)
    with pytest.raises(ValueError, match="importance-weighted rule 'fedavg_is' takes one"):
        simulate(stack, get_rule("fedavg_is"), procs, rounds=2, replicas=R, lr=0.1)
    with pytest.raises(ValueError, match="problems must have equal n and d"):
        ProblemStack([probs[0], QuadraticProblem(np.ones((N, D + 1)), np.zeros((N, D + 1)))])
    with pytest.raises(ValueError, match="equal objective weights"):
        ProblemStack([probs[0], QuadraticProblem(probs[1].hessians, probs[1].centers,
                                                 weights=np.arange(1.0, N + 1) / 21)])
    with pytest.raises(ValueError, match="problems must be a non-empty sequence"):
        ProblemStack([])
    with pytest.raises(ValueError, match=r"problems\[1\] must offer .* lacks \['n', 'd'"):
        ProblemStack([probs[0], object()])
    wrong = QuadraticProblem.stack([probs[1], probs[0], probs[2], probs[3]])
    with pytest.raises(ValueError, match="flat's client gradients must be the problems'"):
        ProblemStack(probs, flat=wrong)
    with pytest.raises(ValueError, match="flat must be a problem of U n = 24 clients"):
        ProblemStack(probs, flat=probs[0])
    with pytest.raises(ValueError, match="processes must have equal n"):
        ProcessStack([BernoulliParticipation(0.5, n=N), BernoulliParticipation(0.5, n=N + 1)])
    with pytest.raises(ValueError, match="sees the round"):
        ProcessStack([OCSParticipation(N, 2)])
    with pytest.raises(ValueError, match="omega must have shape"):
        simulate(probs[0], FedAvgWeighted(np.ones((R, N + 1))), BernoulliParticipation(ps[0]),
                 rounds=2, replicas=R, lr=0.1)
    for part in (procs, RuleStack([get_rule("fedavg")] * R), FedAvgWeighted(np.ones((R, N))),
                 ReplayParticipation(np.ones((2, R, N), dtype=bool))):
        with pytest.raises(ValueError, match="start, stop must satisfy 0 <= start < stop <= 4"):
            part.for_replicas(3, 5)
        assert part.for_replicas(0, R) is part
    with pytest.raises(ValueError, match="replicas must be 4 integers"):
        stack.loss(np.zeros((4, D)), replicas=np.array([0, 1, 2, 4]))


def test_methods_side_by_side_in_one_run_are_each_method_alone():
    """R = M x S replicas: method m on instance s is replica m S + s, with its own rule and
    rates, the instance's problem and process and the instance's streams (Run(streams=...)):
    every replica is, bit for bit, the method's run on the instance alone."""
    probs, ps = _quadratics(12), _probabilities(13)
    S = R
    rules = [get_rule("fedavg"), FedAvgWeighted(np.stack([1 / p for p in ps])),
             FedAU(K=2)]
    rates = [(0.1, 1.0), (0.05, 2.0), (0.2, 0.5)]
    M = len(rules)
    procs = [BernoulliParticipation(p) for p in ps]
    kw = dict(rounds=12, local_steps=np.array([1, 2, 3, 1, 2, 3]), seed=21,
              fuse_local_steps=False, keep_replicas=True)
    res = simulate(ProblemStack(probs * M), RuleStack([r for r in rules for _ in range(S)]),
                   ProcessStack(procs * M), replicas=M * S,
                   lr=np.repeat([g for g, _ in rates], S),
                   global_lr=np.repeat([h for _, h in rates], S),
                   streams=np.tile(np.arange(S), M), chunk=5, workers=2, **kw)
    assert len(ProblemStack(probs * M).distinct) == S
    for m, (rule, (g, h)) in enumerate(zip(rules, rates, strict=True)):
        for s in range(S):
            one = simulate(probs[s], rule.for_replicas(s, s + 1), procs[s], replicas=1,
                           first_replica=s, lr=g, global_lr=h, **kw)
            np.testing.assert_array_equal(res.x[m * S + s], one.x[0])
            # the metric of the same iterates, evaluated with the instance's other rows
            # (another batch shape: sums of d terms, each rounded)
            assert_close_sum(res.f_gap.replicas[m * S + s], one.f_gap.replicas[0],
                             np.abs(one.f_gap.replicas[0]))


def test_per_replica_rates_and_streams_are_checked():
    q = _quadratics(14)[0]
    for rates in ([0.1, 0.2], [0.1, 0.1]):  # two rates for three replicas, equal or not
        with pytest.raises(ValueError, match="lr must be one rate or one per replica"):
            simulate(q, "fedavg", BernoulliParticipation(0.5, n=N), rounds=2, replicas=3,
                     lr=rates)
    with pytest.raises(ValueError, match="global_lr must be one rate or one per replica"):
        simulate(q, "fedavg", BernoulliParticipation(0.5, n=N), rounds=2, replicas=3, lr=0.1,
                 global_lr=[1.0, 2.0])
    with pytest.raises(ValueError, match="lr must be a positive real number or a 1-D array"):
        simulate(q, "fedavg", BernoulliParticipation(0.5, n=N), rounds=2, replicas=2,
                 lr=[0.1, -0.2])
    with pytest.raises(ValueError, match="streams must be 2 non-negative integers"):
        simulate(q, "fedavg", BernoulliParticipation(0.5, n=N), rounds=2, replicas=2,
                 lr=0.1, streams=[0, -1])
    with pytest.raises(ValueError, match="streams and first_replica"):
        simulate(q, "fedavg", BernoulliParticipation(0.5, n=N), rounds=2, replicas=2,
                 lr=0.1, streams=[0, 0], first_replica=3)
    with pytest.raises(ValueError, match="fuse_local_steps=True needs .* one lr"):
        simulate(q, "fedavg", BernoulliParticipation(0.5, n=N), rounds=2, replicas=2,
                 lr=[0.1, 0.2], local_steps=2, fuse_local_steps=True)
    # the same stream index: the same draws (participation), whatever the replica
    res = simulate(q, "fedavg", BernoulliParticipation(0.5, n=N), rounds=5, replicas=3,
                   lr=0.1, streams=[4, 4, 7], keep_replicas=True)
    assert np.array_equal(res.x[0], res.x[1]) and not np.array_equal(res.x[0], res.x[2])
    # equal rates are the one-rate run (fused closed form and all)
    a = simulate(q, "fedavg", BernoulliParticipation(0.5, n=N), rounds=5, replicas=2,
                 lr=[0.1, 0.1], local_steps=3)
    b = simulate(q, "fedavg", BernoulliParticipation(0.5, n=N), rounds=5, replicas=2,
                 lr=0.1, local_steps=3)
    np.testing.assert_array_equal(a.x, b.x)


def test_rule_stacks_are_checked():
    from fedtheory.algorithms import SCAFFOLD

    avg = get_rule("fedavg")
    with pytest.raises(ValueError, match="must agree on table"):
        RuleStack([avg, get_rule("mifa")])
    with pytest.raises(ValueError, match="corrects the local work"):
        RuleStack([SCAFFOLD(), SCAFFOLD()])
    with pytest.raises(ValueError, match="holds parameters for 3 replicas but covers 2"):
        RuleStack([FedAvgWeighted(np.ones((3, N)))] * 2)
    with pytest.raises(ValueError, match="rules must be a non-empty sequence"):
        RuleStack([])
    stack = RuleStack([avg, avg, FedAU(K=4)])
    assert stack.replicas == 3
    assert stack.for_replicas(1, 3).runs == ((avg, 1), (stack.runs[1][0], 1))


def test_side_by_side_minibatch_runs_share_their_instances_draws():
    """Mini-batch SGD, two methods x three instances in one run (the keys of replicas that
    share a stream and a problem are drawn once and copied): each replica is its method's
    run alone."""
    probs = _digits_instances(seed=3)
    ps = [np.full(5, 0.6), np.full(5, 0.3), np.linspace(0.2, 1.0, 5)]
    procs = [BernoulliParticipation(p) for p in ps]
    rules, rates = [FedAU(K=3), get_rule("fedavg")], [0.3, 0.1]
    kw = dict(rounds=5, local_steps=3, batches=MiniBatches(4, wrap=True), seed=8,
              skip_metrics=("f_gap", "grad_norm2", "dist2"))
    res = simulate(ProblemStack(probs * 2), RuleStack([r for r in rules for _ in range(3)]),
                   ProcessStack(procs * 2), replicas=6, lr=np.repeat(rates, 3),
                   streams=[0, 1, 2, 0, 1, 2], chunk=4, **kw)
    for m in range(2):
        for s in range(3):
            one = simulate(probs[s], rules[m], procs[s], replicas=1, first_replica=s,
                           lr=rates[m], **kw)
            np.testing.assert_array_equal(res.x[3 * m + s], one.x[0])


def test_divergence_names_the_diverged_replicas_rates():
    from fedtheory.simulate import DivergenceWarning

    q = _quadratics(15)[0]
    with pytest.warns(DivergenceWarning, match=r"lr=\[1000\] with global_lr=\[2\]"):
        simulate(q, "fedavg", BernoulliParticipation(1.0, n=N), rounds=400, replicas=2,
                 lr=[0.1, 1000.0], global_lr=[1.0, 2.0])
