"""Logistic-regression problems on federated splits of bundled data sets."""

import numpy as np
import pytest

from fedtheory.problems.datasets import (
    FederatedData,
    dirichlet_label_split,
    federated_split,
    load_dataset,
    unbalance_clients,
)
from fedtheory.problems.logistic import LogisticProblem, make_logistic_problem

from ._tolerance import assert_close_sum


@pytest.fixture(scope="module")
def binary():
    return make_logistic_problem("breast_cancer", n_clients=5, alpha=1.0, seed=1, lam=1e-2)


@pytest.fixture(scope="module")
def multi():
    # small multinomial problem: digits, few clients
    return make_logistic_problem("digits", n_clients=8, alpha=0.5, seed=2, lam=1e-2,
                                 unbalance=(0.3, 40, 200))


PROBLEMS = ["binary", "multi"]


def gradient_terms(prob, y, clients):
    r"""Per entry of the gradients of ``clients`` (shape ``(K,)``) at ``y`` ``(K, d)``: a bound
    on the sum of the absolute values of the terms of its sum (see ``tests/_tolerance.py``).

    Entry :math:`(c, a)` of :math:`\nabla f_i(y)` is :math:`\frac1{s_i}\sum_j R_{cj} X_{ja} +
    \lambda y_{ca}` with :math:`R = \mathrm{softmax} - \text{one-hot}` (binary:
    :math:`-b\,\sigma(-b z)`), so :math:`|R_{cj}| \le 1` and the terms sum in absolute value
    to at most :math:`\mathrm{mean}_j |X_{ja}| + \lambda |y_{ca}|`. Using 1 for :math:`|R|`
    (mostly far smaller: a probability, or one minus it) leaves room for the rounding of the
    logits that :math:`R` is computed from, themselves BLAS sums that differ with the kernel.
    Measured under six OpenBLAS kernels, 1 and 2 threads: differences up to 3 eps times this
    bound (the tolerance is 64 eps times it).
    """
    per_client = np.einsum("is,isp->ip", prob.mask, np.abs(prob.X_padded))  # (n, p)
    classes = prob.d // prob.p
    return np.tile(per_client[clients], classes) + prob.lam * np.abs(y)  # x_{cp + a} = V_ca


def loss_terms(prob, x):
    r"""Per point ``x`` ``(..., d)``: a bound on the sum of the absolute terms of :math:`f(x) =
    \sum_i w_i \frac1{s_i}\sum_j \ell_j + \frac\lambda2\|x\|^2`, evaluated per client or pooled.

    The losses :math:`\ell_j \ge 0` and the regulariser sum to :math:`f(x)` itself; each
    :math:`\ell_j` is a function of logits :math:`z_{cj} = \sum_a V_{ca} X_{ja}` (BLAS sums)
    with slope at most 2 in their largest error, which is a multiple of eps times
    :math:`\max_c \sum_a |V_{ca} X_{ja}|`: twice that joins the terms.
    """
    x = np.asarray(x, dtype=float)
    V = np.abs(x).reshape(*x.shape[:-1], 1, prob.d // prob.p, prob.p)  # (..., 1, C, p)
    logit_terms = (V @ np.swapaxes(np.abs(prob.X_padded), -1, -2)).max(axis=-2)  # (..., n, s)
    per_client = np.sum(logit_terms * prob.mask, axis=-1)  # (..., n)
    return prob.loss(x) + 2 * per_client @ prob.weights


def _fd_grad(fun, x, coords, h=1e-6):
    """Central finite differences of a scalar function in the given coordinates (vectorised)."""
    E = np.eye(x.size)[coords] * h
    return (fun(x + E) - fun(x - E)) / (2 * h)


@pytest.mark.parametrize("name", PROBLEMS)
def test_grad_matches_finite_differences(name, request):
    prob = request.getfixturevalue(name)
    rng = np.random.default_rng(0)
    x = rng.normal(scale=0.3, size=prob.d)
    coords = np.sort(rng.choice(prob.d, size=min(prob.d, 40), replace=False))
    np.testing.assert_allclose(prob.grad(x)[coords], _fd_grad(prob.loss, x, coords),
                               rtol=1e-6, atol=1e-7)
    # each client's gradient against finite differences of its own loss
    E = np.eye(prob.d)[coords] * 1e-6
    fd = (prob.client_losses(x + E) - prob.client_losses(x - E)).T / 2e-6  # (n, coords)
    np.testing.assert_allclose(prob.client_grads(x)[:, coords], fd, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", PROBLEMS)
def test_gradient_entry_points_agree(name, request):
    prob = request.getfixturevalue(name)
    rng = np.random.default_rng(1)
    x = rng.normal(scale=0.3, size=(3, prob.d))
    G = prob.client_grads(x)  # (3, n, d)
    assert G.shape == (3, prob.n, prob.d)
    # f = sum_i w_i f_i and grad f = sum_i w_i grad f_i
    assert_close_sum(prob.client_losses(x) @ prob.weights, prob.loss(x), loss_terms(prob, x))
    every = np.arange(prob.n)
    terms = np.stack([gradient_terms(prob, np.broadcast_to(xr, (prob.n, prob.d)), every)
                      for xr in x])  # (3, n, d)
    # the pooled gradient sums the same terms as sum_i w_i grad f_i, in another order
    assert_close_sum(np.einsum("i,rid->rd", prob.weights, G), prob.grad(x),
                     np.einsum("i,rid->rd", prob.weights, terms))
    # each client at its own point
    Y = rng.normal(scale=0.3, size=(4, prob.n, prob.d))
    own = prob.client_grads_at(Y)
    own_terms = np.stack([gradient_terms(prob, Yr, every) for Yr in Y])  # (4, n, d)
    for i in range(prob.n):
        assert_close_sum(own[:, i], prob.client_grads(Y[:, i])[:, i], own_terms[:, i])
    # flattened (replica, client) pairs: the simulator's hot path
    clients = rng.integers(0, prob.n, size=11)
    ys = rng.normal(scale=0.3, size=(11, prob.d))
    rows = prob.client_gradients(ys, clients)
    expect = np.stack([prob.client_grads(ys[k])[clients[k]] for k in range(11)])
    assert_close_sum(rows, expect, gradient_terms(prob, ys, clients))
    # full mini-batches give the full local gradient
    B = int(prob.s_max)
    batch = np.broadcast_to(np.arange(B), (4, prob.n, B))
    valid = batch < prob.sizes[:, None]
    assert_close_sum(prob.minibatch_grads_at(Y, np.where(valid, batch, 0), valid), own,
                     own_terms)


def test_client_gradients_blocks(multi, monkeypatch):
    import fedtheory.problems.logistic as lg

    rng = np.random.default_rng(2)
    clients = rng.integers(0, multi.n, size=9)
    ys = rng.normal(scale=0.3, size=(9, multi.d))
    full = multi.client_gradients(ys, clients)
    monkeypatch.setattr(lg, "_BLOCK_ELEMENTS", 1)  # one row per block
    # a block of one row trims the padding to that client's size: BLAS sums the same terms
    # with other kernels (another order), so the bits may differ with the CPU
    blocks = multi.client_gradients(ys, clients)
    assert_close_sum(blocks, full, gradient_terms(multi, ys, clients))
    expect = np.stack([multi.client_grads(ys[k])[clients[k]] for k in range(9)])
    assert_close_sum(blocks, expect, gradient_terms(multi, ys, clients))
    assert multi.client_gradients(np.zeros((0, multi.d)), np.zeros(0, int)).shape == (0, multi.d)


@pytest.mark.parametrize("name", PROBLEMS)
def test_hessian_matches_finite_differences(name, request):
    prob = request.getfixturevalue(name)
    x = np.random.default_rng(3).normal(scale=0.3, size=prob.d)
    h = 1e-6
    E = np.eye(prob.d) * h
    fd = (prob.grad(x + E) - prob.grad(x - E)) / (2 * h)
    np.testing.assert_allclose(prob.hessian(x), fd, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", PROBLEMS)
def test_smoothness_and_strong_convexity_constants(name, request):
    prob = request.getfixturevalue(name)
    rng = np.random.default_rng(4)
    x = rng.normal(scale=2.0, size=(50, prob.d))
    y = x + rng.normal(scale=0.5, size=(50, prob.d))
    dg = np.linalg.norm(prob.client_grads(x) - prob.client_grads(y), axis=-1)  # (50, n)
    dx = np.linalg.norm(x - y, axis=-1)[:, None]
    assert np.all(dg <= prob.L_clients * dx * (1 + 1e-12))
    assert np.all(prob.L_clients <= prob.L)
    assert prob.mu == prob.lam
    # Hessian of f is between mu I and L I at random points
    for z in x[:3]:
        ev = np.linalg.eigvalsh(prob.hessian(z))
        assert ev.min() >= prob.mu * (1 - 1e-9) and ev.max() <= prob.L * (1 + 1e-9)


@pytest.mark.parametrize("name", PROBLEMS)
def test_optimum_certificate(name, request):
    from scipy.optimize import minimize

    prob = request.getfixturevalue(name)
    assert prob.grad_norm_star <= 1e-10
    # bit-identical: f_star is loss(x_star), the same call on the same array in this process
    assert prob.f_star == prob.loss(prob.x_star)
    res = minimize(prob.loss, np.zeros(prob.d), jac=prob.grad, method="L-BFGS-B",
                   options={"gtol": 1e-9, "ftol": 0.0, "maxiter": 5000})
    assert prob.f_star <= res.fun + 1e-12
    assert res.fun - prob.f_star <= 1e-8
    # sigma_G^2 is the heterogeneity at x*: sum_i w_i |grad f_i(x*)|^2 (grad f(x*) = 0)
    G = prob.client_grads(prob.x_star)
    assert prob.sigma_G2 == pytest.approx(prob.weights @ np.sum(G**2, -1), rel=1e-8)
    assert prob.sigma_G2 > 0


def test_satisfies_problem_protocol(multi, binary):
    from fedtheory.problems import Problem, declared_capabilities
    from fedtheory.problems.base import Capability, MinibatchGradients

    assert isinstance(multi, Problem) and isinstance(binary, Problem)
    # the base protocol and mini-batch gradients: client_gradients takes no out=, no own
    # local steps or loss_gap
    assert declared_capabilities(multi) == declared_capabilities(binary) == frozenset(
        {Capability.MINIBATCH_GRADIENTS})
    assert isinstance(multi, MinibatchGradients)
    # the full batch of a client is its gradient
    x = np.linspace(-0.1, 0.1, multi.d)
    cl = np.arange(multi.n)
    samples = np.broadcast_to(np.arange(multi.s_max), (multi.n, multi.s_max))
    valid = samples < multi.sizes[:, None]
    np.testing.assert_allclose(
        multi.minibatch_gradients(np.broadcast_to(x, (multi.n, multi.d)), cl, samples, valid),
        multi.client_grads(x), rtol=1e-10, atol=1e-13)


def test_accuracy(multi, binary):
    assert multi.accuracy(multi.x_star) > 0.85
    assert binary.accuracy(binary.x_star) > 0.9
    accs = multi.accuracy(np.stack([multi.x_star, np.zeros(multi.d)]))
    assert accs.shape == (2,) and 0.0 <= accs[1] <= 1.0


def test_binary_data_as_multinomial_and_uniform_weights():
    data = federated_split("breast_cancer", n_clients=3, alpha=2.0, seed=0)
    prob = LogisticProblem(data, lam=1e-2, multinomial=True, weights="uniform")
    assert prob.d == 2 * data.n_features
    np.testing.assert_allclose(prob.weights, 1 / 3)
    assert prob.grad_norm_star < 1e-10
    binp = LogisticProblem(data, lam=1e-2)
    assert not binp.multinomial and binp.d == data.n_features
    assert binp.L < prob.L  # curvature 1/4 vs 1/2 per unit ||A||^2/s


def test_split_is_deterministic_and_partitions():
    a = federated_split("digits", n_clients=10, alpha=0.3, seed=5)
    b = federated_split("digits", n_clients=10, alpha=0.3, seed=5)
    c = federated_split("digits", n_clients=10, alpha=0.3, seed=6)
    for xa, xb in zip(a.X_clients, b.X_clients, strict=True):
        np.testing.assert_array_equal(xa, xb)
    assert not all(xa.shape == xc.shape and np.array_equal(xa, xc)
                   for xa, xc in zip(a.X_clients, c.X_clients, strict=True))
    assert int(a.sizes.sum()) + a.X_val.shape[0] == 1797
    assert a.sizes.min() >= 2
    X = np.concatenate(a.X_clients)
    np.testing.assert_allclose(X[:, :-1].mean(0), 0.0, atol=1e-12)  # standardised
    np.testing.assert_array_equal(X[:, -1], 1.0)  # bias column


def test_dirichlet_split_labels_and_skew():
    y = np.repeat(np.arange(5), 100)
    parts = dirichlet_label_split(y, 8, alpha=0.1, rng=0)
    assert sorted(np.concatenate(parts).tolist()) == list(range(500))
    # small alpha: most clients are dominated by one label
    dom = [np.bincount(y[p], minlength=5).max() / p.size for p in parts]
    assert np.median(dom) > 0.6
    iid = dirichlet_label_split(y, 4, alpha=1e4, rng=0)
    for p in iid:
        np.testing.assert_allclose(np.bincount(y[p], minlength=5) / p.size, 0.2, atol=0.03)


def test_unbalance_procedure():
    rng = np.random.default_rng(0)
    sizes = rng.integers(1, 100, size=400)
    start = np.concatenate([[0], np.cumsum(sizes)])
    parts = [np.arange(start[i], start[i + 1]) for i in range(400)]
    a, b, s = 10, 50, 0.3
    out = unbalance_clients(parts, s, a, b, rng=1)
    kept_sizes = [o.size for o in out]
    middle = [(a < n < b) for n in sizes]
    # unchanged outside (a, b); inside, either removed or shrunk to exactly a examples
    outside = [p for p, mid in zip(parts, middle, strict=True) if not mid]
    assert all(any(np.array_equal(p, o) for o in out) for p in outside)
    n_mid = sum(middle)
    n_shrunk = sum(1 for o in out if o.size == a) - sum(1 for n in sizes if n == a)
    assert len(out) == len(parts) - (n_mid - n_shrunk)
    # removal frequency matches s (binomial, 6 sigma)
    removed = n_mid - n_shrunk
    assert abs(removed - s * n_mid) <= 6 * np.sqrt(n_mid * s * (1 - s))
    # shrunk clients keep a subset of their own examples
    for o in out:
        if o.size == a:
            owner = np.searchsorted(start, o[0], side="right") - 1
            assert np.all((o >= start[owner]) & (o < start[owner + 1]))
    assert max(kept_sizes) <= 99


def test_single_sample_clients_and_no_validation_split():
    data = federated_split("breast_cancer", n_clients=4, alpha=1.0, seed=0, val_fraction=0.0,
                           min_size=1)
    pooled = np.concatenate(data.X_clients)
    assert data.X_val.shape == pooled.shape == (569, 31)
    np.testing.assert_array_equal(np.unique(data.X_val, axis=0), np.unique(pooled, axis=0))
    one = FederatedData(X_clients=(data.X_clients[0][:1], data.X_clients[1]),
                        y_clients=(data.y_clients[0][:1], data.y_clients[1]),
                        X_val=data.X_val, y_val=data.y_val, n_classes=2)
    prob = LogisticProblem(one, lam=0.1)
    assert prob.sizes[0] == 1 and prob.grad_norm_star < 1e-10


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: load_dataset("mnist"), "name must be one of"),
        (lambda: dirichlet_label_split(np.arange(10), 0, 1.0), "n_clients must be"),
        (lambda: dirichlet_label_split(np.arange(10), 2, -1.0), "alpha must be"),
        (lambda: dirichlet_label_split(np.arange(10), 2, 1.0, min_size=6), "min_size must"),
        (lambda: dirichlet_label_split(np.zeros((2, 2)), 2, 1.0), "labels must be"),
        (lambda: unbalance_clients([np.arange(5)], 1.5, 2, 4), "s must be in"),
        (lambda: unbalance_clients([np.arange(5)], 0.5, 0, 4), "a must be"),
        (lambda: unbalance_clients([np.arange(5)], 0.5, 4, 4), "b must be"),
        (lambda: federated_split("digits", val_fraction=1.0), "val_fraction must be"),
        (lambda: federated_split("digits", unbalance=(0.5, 1)), "unbalance must be"),
        (lambda: dirichlet_label_split(np.arange(4), 2, 1.0, rng="x"), "rng must be"),
    ],
)
def test_split_validation(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_problem_validation(binary):
    data = binary.data
    with pytest.raises(ValueError, match="lam must be"):
        LogisticProblem(data, lam=0.0)
    with pytest.raises(ValueError, match="weights must be"):
        LogisticProblem(data, weights="equal")
    with pytest.raises(ValueError, match="weights must sum to 1"):
        LogisticProblem(data, weights=np.ones(binary.n))
    with pytest.raises(ValueError, match="data must be"):
        LogisticProblem(np.zeros(3))
    digits = federated_split("digits", n_clients=3, alpha=1.0, seed=0)
    with pytest.raises(ValueError, match="multinomial=False needs 2 classes"):
        LogisticProblem(digits, multinomial=False)
    with pytest.raises(ValueError, match="x must have last dimension"):
        binary.loss(np.zeros(binary.d + 1))
    with pytest.raises(ValueError, match="clients must be in"):
        binary.client_gradients(np.zeros((2, binary.d)), np.array([0, binary.n]))
    with pytest.raises(ValueError, match="clients must be an integer array"):
        binary.client_gradients(np.zeros((2, binary.d)), np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="y must have shape"):
        binary.client_grads_at(np.zeros((binary.n + 1, binary.d)))
    with pytest.raises(ValueError, match="batch has row indices"):
        binary.minibatch_grads_at(np.zeros((binary.n, binary.d)),
                                  np.full((binary.n, 1), 10_000))
