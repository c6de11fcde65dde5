"""Seed 004's experiment on the engine (fedtheory.experiments.fdms_paper): each method, one
``simulate`` call over replicas that train on their own data splits, held to hand-written
reference rounds (softmax regression, 5 full-batch local steps, float64) on the masks the
runs drew; the runs' common random numbers; the pieces the engine port is built of."""

from __future__ import annotations

import numpy as np
import pytest

from fedtheory.algorithms.substitution import FLFDMS, ModelSubstitution
from fedtheory.engine import Execution, LocalWork, Metrics, Run
from fedtheory.participation.dropout import DropoutParticipation
from fedtheory.participation.grouped_dropout import GroupedDropout
from fedtheory.problems import ProblemStack
from fedtheory.problems.softmax import SoftmaxRegression
from fedtheory.simulate import simulate

N, C, P, LR, STEPS, T = 8, 3, 4, 0.3, 5, 4


def _splits(R: int) -> list[tuple[list[np.ndarray], list[np.ndarray]]]:
    rng = np.random.default_rng(11)
    out = []
    for _ in range(R):
        sizes = rng.integers(2, 7, N)
        X = [np.c_[rng.normal(size=(s, P - 1)), np.ones(s)] for s in sizes]
        y = [rng.integers(0, C, s) for s in sizes]
        out.append((X, y))
    return out


def _local(W: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """STEPS full-batch gradient steps of the mean NLL of softmax(W a) from W (C, P)."""
    W = W.copy()
    onehot = np.eye(C)[y]
    for _ in range(STEPS):
        Z = X @ W.T
        E = np.exp(Z - Z.max(axis=1, keepdims=True))
        G = ((E / E.sum(axis=1, keepdims=True) - onehot).T @ X) / len(y)
        W -= LR * G
    return W


def _reference(method: str, masks: np.ndarray, split: tuple) -> np.ndarray:
    """The method's model after the rounds of ``masks`` (T, N), written out round by round."""
    X, y = split
    W = np.zeros((C, P))
    table = np.zeros((N, C, P))  # Stale: last local models; Stale (updates): last changes
    ssum, scount = np.zeros((N, N)), np.zeros((N, N))
    for mask in masks:
        loc = {i: _local(W, X[i], y[i]) for i in range(N) if mask[i] or method == "Full"}
        delta = {i: W - m for i, m in loc.items()}
        act = [i for i in range(N) if mask[i]]
        if method in ("Full", "Dropout"):
            W = np.mean([loc[i] for i in (range(N) if method == "Full" else act)], axis=0)
        elif method == "Stale":
            for i in act:  # (the table starts at x0 = 0: every model before its upload)
                table[i] = loc[i]
            W = table.mean(axis=0)
        elif method == "Stale (updates)":
            for i in act:
                table[i] = delta[i]
            W = W - table.mean(axis=0)
        else:  # FL-FDMS: eq. (14) cosine of the updates, eq. (15) running means, argmax
            for i in act:
                for j in act:
                    if i != j:
                        a, b = delta[i].ravel(), delta[j].ravel()
                        ssum[i, j] += a @ b / np.linalg.norm(a) / np.linalg.norm(b)
                        scount[i, j] += 1
            mean = np.where(scount > 0, ssum / np.maximum(scount, 1), -np.inf)
            subst = [delta[i] if mask[i] else delta[act[int(np.argmax(mean[i, act]))]]
                     for i in range(N)]
            W = W - np.mean(subst, axis=0)
    return W


@pytest.fixture(scope="module")
def runs():
    R = 2
    splits = _splits(R)
    prob = ProblemStack([SoftmaxRegression(X, y, C) for X, y in splits])
    proc = GroupedDropout(N, 0.5)
    out = {}
    for method, rule in (("Full", "full"), ("Dropout", "fedavg"),
                         ("Stale", ModelSubstitution(LR)), ("Stale (updates)", "mifa"),
                         ("FL-FDMS", FLFDMS())):
        masks = np.zeros((T, R, N), dtype=bool)

        def watch(rec, masks=masks):
            masks[rec.t - 1, rec.start:rec.start + rec.mask.shape[0]] = rec.mask

        res = simulate(prob, rule, proc, Run(rounds=T, replicas=R, seed=5, dtype=np.float32),
                       LocalWork(lr=LR, steps=STEPS),
                       metrics=Metrics(skip=("f_gap", "grad_norm2", "dist2"), observe=watch),
                       execution=Execution(workers=1, chunk=1))
        out[method] = (res.x, masks)
    return splits, out


@pytest.mark.parametrize("method", ["Full", "Dropout", "Stale", "Stale (updates)", "FL-FDMS"])
def test_engine_matches_the_hand_written_rounds(runs, method):
    splits, out = runs
    x, masks = out[method]
    for r in range(2):
        ref = _reference(method, masks[:, r] if method != "Full" else
                         np.ones((T, N), dtype=bool), splits[r])
        np.testing.assert_allclose(x[r].reshape(C, P), ref, rtol=2e-4, atol=2e-5)


def test_methods_share_the_masks_and_the_first_round_is_full(runs):
    _, out = runs
    ref = out["Dropout"][1]
    for method in ("Stale", "Stale (updates)", "FL-FDMS"):
        np.testing.assert_array_equal(out[method][1], ref)
    assert ref[0].all() and (ref[1:].sum(axis=2) == 4).all()
    assert (ref[1:].reshape(T - 1, 2, 2, 4).sum(axis=3) >= 1).all()  # one per group


def test_softmax_regression_checks_and_degenerate_input():
    (X, y), = _splits(1)
    prob = SoftmaxRegression(X, y, C)
    x0 = np.zeros((1, prob.d))
    assert prob.d == C * P
    # at W = 0 every class is equally likely: the loss is log C for every client
    np.testing.assert_allclose(prob.client_losses(x0[0]), np.log(C))
    g = prob.client_grads(x0)
    np.testing.assert_allclose(prob.grad(x0), g.mean(axis=1), rtol=1e-6)
    with pytest.raises(ValueError, match="n_classes"):
        SoftmaxRegression(X, y, 1)
    with pytest.raises(ValueError, match="labels"):
        SoftmaxRegression([np.ones((1, 2))], [np.array([5])], 3)
    with pytest.raises(ValueError, match="clients must be 1 integers in"):
        prob.client_gradients(x0, np.array([N]))
    with pytest.raises(ValueError, match="equally long"):
        SoftmaxRegression(X, y[:-1], C)


def test_a_stack_of_splits_runs_each_split_alone():
    """Replica r of the stacked run is its split's run alone (the frozen split coordinate
    this replaced gave the same W numbers through another route)."""
    splits = _splits(3)
    probs = [SoftmaxRegression(X, y, C) for X, y in splits]
    flat = SoftmaxRegression.stack(probs)
    assert flat.n == 3 * N and flat.d == C * P
    kw = dict(rounds=T, lr=LR, local_steps=STEPS, seed=2, dtype=np.float32,
              skip_metrics=("f_gap", "grad_norm2", "dist2"))
    proc = GroupedDropout(N, 0.5)
    res = simulate(ProblemStack(probs), "mifa", proc, replicas=3, chunk=2, **kw)
    widest = max(len(b) for _, y in splits for b in y)
    for r in range(3):
        one = simulate(probs[r], "mifa", proc, replicas=1, first_replica=r, **kw)
        if max(len(b) for b in splits[r][1]) == widest:
            np.testing.assert_array_equal(res.x[r], one.x[0])
        else:  # the stack pads this split's rows wider (zero terms): other sums in float32,
            # a few roundings per local step and round
            tol = 8 * np.finfo(np.float32).eps * STEPS * T * np.abs(one.x).max()
            np.testing.assert_allclose(res.x[r], one.x[0], rtol=0, atol=tol)


def test_model_substitution_and_full_first_dropout():
    with pytest.raises(ValueError, match="lr"):
        ModelSubstitution(0.0)
    rule = ModelSubstitution(1.0)
    st = rule.init(1, 2, 1)
    G, st = rule.step(st, np.array([True, False]), np.array([[2.0], [0.0]]))
    assert G.tolist() == [1.0]  # models -2 and x0 = 0
    G, st = rule.step(st, np.array([False, False]), np.zeros((2, 1)))
    assert G.tolist() == [0.0]  # nobody uploads: the mean of the same models, x stays
    G, st = rule.step(st, np.array([False, True]), np.array([[0.0], [3.0]]))
    assert G.tolist() == [2.0]  # x = -1: models -2 (kept) and -1 - 3 = -4, mean -3
    proc = DropoutParticipation(10, 0.3, "max", full_first=True)
    masks = proc.sample(np.random.default_rng(0), 3, 3)
    assert masks[0].all() and (masks[1:].sum(axis=2) == 7).all()
    plain = DropoutParticipation(10, 0.3, "max").sample(np.random.default_rng(0), 3, 3)
    np.testing.assert_array_equal(masks[1:], plain[1:])  # the same later rounds
    with pytest.raises(ValueError, match="full_first"):
        DropoutParticipation(10, 0.3, full_first=1)


def test_logit_space_steps_are_the_weight_space_steps():
    prob = SoftmaxRegression.stack([SoftmaxRegression(X, y, C) for X, y in _splits(2)])
    rng = np.random.default_rng(1)
    y = rng.normal(size=(5, C * P))
    c = np.array([0, 3, 11, 7, 13])
    fast = prob.local_steps(y, c, LR, STEPS)
    slow = prob.local_steps(y, c, LR, STEPS, add_noise=lambda g: None)  # the weight-space loop
    np.testing.assert_allclose(fast, slow, rtol=1e-4, atol=1e-5)
    one = prob.local_steps(y, c, LR, 1)
    np.testing.assert_allclose(one, prob.client_gradients(y, c), rtol=1e-5, atol=1e-6)
