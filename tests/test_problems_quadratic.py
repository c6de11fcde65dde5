"""QuadraticProblem: closed-form constants, gradients, vectorisation, validation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedtheory.problems import Problem, QuadraticProblem, validate_weights

from ._tolerance import assert_close_sum


def _make(diagonal=True, identical=False, weights=None, n=5, d=4, L=3.0, mu=0.5, s=2.0, seed=0):
    return QuadraticProblem.heterogeneous(
        n, d, L, mu, s, np.random.default_rng(seed), weights=weights,
        identical_hessians=identical, diagonal=diagonal,
    )


WEIGHTS = np.array([0.1, 0.3, 0.05, 0.25, 0.3])


def _times_abs_hessians(p, v):
    """``|A_i| v_i`` for ``v`` of shape ``(..., n, d)`` (diagonal or dense Hessians)."""
    A = np.abs(p.hessians)
    return A * v if p.diagonal else np.einsum("nij,...nj->...ni", A, v)


def gradient_terms(p, y, clients):
    r""":math:`|A_{c_k}|\,|y_k - c_{c_k}|`: per entry of the gradient rows
    :math:`A_{c_k}(y_k - c_{c_k})`, the sum of the absolute values of its terms (see
    ``tests/_tolerance.py``; dense Hessians: BLAS or einsum sums of d products)."""
    r = np.abs(np.asarray(y, dtype=float) - p.centers[clients])
    A = np.abs(p.hessians[clients])
    return A * r if p.diagonal else np.einsum("kij,kj->ki", A, r)


def loss_terms(p, x):
    r"""A bound on the sum of absolute terms of :math:`f(x)` evaluated either as
    :math:`\sum_i w_i f_i(x)` or as :math:`f^\star + (f(x) - f^\star)` (``loss``): the
    quadratic forms with :math:`|A_i|, |x - c_i|` and :math:`|\bar A|, |x - x^\star|`, the
    offsets, :math:`|f^\star|` and the first-order term :math:`|\nabla f(x^\star)|\,
    |x - x^\star|` (the rounding residue of :math:`x^\star`, or the exact linear term of a
    problem unbounded along a null direction)."""
    x = np.asarray(x, dtype=float)
    r = np.abs(x[..., None, :] - p.centers)  # (..., n, d)
    clients = 0.5 * np.sum(r * _times_abs_hessians(p, r), axis=-1) + np.abs(p.offsets)
    e = np.abs(x - p.x_star)
    H = np.abs(p.hessian)
    gap = 0.5 * np.sum(e * (H * e if p.diagonal else e @ H.T), axis=-1)
    linear = np.sum(np.abs(p.grad(p.x_star)) * e, axis=-1)
    return clients @ p.weights + abs(p.f_star) + gap + linear


VARIANTS = [
    pytest.param(dict(diagonal=True), id="diag"),
    pytest.param(dict(diagonal=False), id="dense"),
    pytest.param(dict(diagonal=True, identical=True), id="diag-identical"),
    pytest.param(dict(diagonal=False, identical=True, weights=WEIGHTS), id="dense-identical-w"),
    pytest.param(dict(diagonal=True, weights=WEIGHTS), id="diag-w"),
]


@pytest.mark.parametrize("kw", VARIANTS)
def test_constants_are_exact(kw):
    p = _make(**kw)
    assert isinstance(p, Problem)
    assert p.L == pytest.approx(3.0, rel=1e-12)
    assert p.mu == pytest.approx(0.5, rel=1e-12)
    assert p.mu_clients == pytest.approx(0.5, rel=1e-12)
    assert p.heterogeneity_at_optimum == pytest.approx(2.0, rel=1e-12)
    np.testing.assert_allclose(p.grad(p.x_star), 0.0, atol=1e-12)
    np.testing.assert_allclose(p.x_star, 0.0, atol=1e-12)
    # f* is the minimum: f(x* + v) - f* = v^T A_bar v / 2 >= mu |v|^2 / 2
    v = np.random.default_rng(1).standard_normal((50, p.d))
    gap = p.loss(p.x_star + v) - p.f_star
    assert np.all(gap >= 0.5 * p.mu * np.sum(v**2, -1) - 1e-12)
    assert np.all(p.Z >= 0)
    # bit-identical: Z is client_losses(x_star) minus the client minima, which are the offsets
    # for convex clients: the same calls on the same numbers
    np.testing.assert_array_equal(p.Z, p.client_losses(p.x_star) - p.offsets)
    if kw.get("identical"):
        assert p.rho == pytest.approx(2.0, rel=1e-12)
        np.testing.assert_allclose(p.heterogeneity(v), 2.0, rtol=1e-10)
    else:
        assert p.rho is None


@pytest.mark.parametrize("kw", VARIANTS)
def test_gradients_match_finite_differences_and_each_other(kw):
    p = _make(**kw)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 2, p.d))  # two leading axes
    G = p.client_grads(x)
    assert G.shape == (3, 2, p.n, p.d)
    assert p.client_losses(x).shape == (3, 2, p.n)
    assert p.loss(x).shape == (3, 2)
    assert_close_sum(p.loss(x), p.client_losses(x) @ p.weights, loss_terms(p, x))
    np.testing.assert_allclose(p.grad(x), np.einsum("i,...id->...d", p.weights, G), atol=1e-12)
    h = 1e-6
    E = np.eye(p.d)
    fd = (p.client_losses(x[..., None, :] + h * E) - p.client_losses(x[..., None, :] - h * E))
    np.testing.assert_allclose(np.swapaxes(fd / (2 * h), -1, -2), G, rtol=1e-6, atol=1e-6)
    # hot path: each row its own point and client
    y = rng.standard_normal((40, p.d))
    cl = rng.integers(0, p.n, size=40)
    # (dense: a batched BLAS product of the rows grouped by client against einsum)
    assert_close_sum(p.client_gradients(y, cl), p.client_grads(y)[np.arange(40), cl],
                     gradient_terms(p, y, cl))
    dev = G - p.grad(x)[..., None, :]
    het = np.einsum("i,...i->...", p.weights, np.sum(dev**2, -1))
    # sum_i w_i |g_i - g|^2: the rounding of g_i (terms |A_i| (|x| + |c_i|)) and of the
    # gradient g (their weighted sum) enters through 2 |g_i - g| per coordinate
    g_terms = _times_abs_hessians(p, np.abs(x)[..., None, :] + np.abs(p.centers))
    g_bar_terms = np.einsum("i,...id->...d", p.weights, g_terms)
    het_terms = het + 2 * np.einsum(
        "i,...i->...", p.weights, np.sum(np.abs(dev) * (g_terms + g_bar_terms[..., None, :]), -1))
    assert_close_sum(p.heterogeneity(x), het, het_terms)


def test_diagonal_and_dense_representations_agree():
    p = _make(diagonal=True, weights=WEIGHTS)
    q = QuadraticProblem(np.stack([np.diag(a) for a in p.hessians]), p.centers, p.offsets,
                         p.weights)
    x = np.random.default_rng(3).standard_normal((6, p.d))
    for name in ("loss", "client_losses", "grad", "client_grads", "heterogeneity"):
        np.testing.assert_allclose(getattr(p, name)(x), getattr(q, name)(x), rtol=1e-12,
                                   atol=1e-14)
    for name in ("L", "mu", "f_star"):
        assert getattr(p, name) == pytest.approx(getattr(q, name), rel=1e-12)
    np.testing.assert_allclose(p.x_star, q.x_star, atol=1e-12)
    np.testing.assert_allclose(p.Z, q.Z, rtol=1e-10)


def test_float32_is_preserved_in_hot_path():
    p = _make()
    y = np.random.default_rng(4).standard_normal((10, p.d)).astype(np.float32)
    g = p.client_gradients(y, np.arange(10) % p.n)
    assert g.dtype == np.float32
    assert p.client_grads(y).dtype == np.float32
    assert p.grad(y).dtype == np.float32
    np.testing.assert_allclose(g, p.client_gradients(y.astype(float), np.arange(10) % p.n),
                               rtol=1e-5, atol=1e-5)


def test_indefinite_problem_is_nonconvex_and_L_smooth():
    p = QuadraticProblem.heterogeneous(6, 3, 2.0, 0.0, 1.0, np.random.default_rng(5),
                                       identical_hessians=True, indefinite=True)
    assert p.L == pytest.approx(2.0)
    assert p.mu == 0.0
    assert p.mu_clients == pytest.approx(-1.0)
    assert not p.clients_convex
    assert p.rho == pytest.approx(1.0, rel=1e-12)
    assert np.all(np.isneginf(p.client_minima))
    np.testing.assert_allclose(p.grad(p.x_star), 0.0, atol=1e-12)  # stationary (a saddle)


def test_degenerate_cases():
    # no heterogeneity: every client minimised at x*
    p = QuadraticProblem.heterogeneous(4, 3, 1.0, 0.2, 0.0, np.random.default_rng(6))
    np.testing.assert_allclose(p.Z, 0.0)
    assert p.heterogeneity_at_optimum == 0.0
    # mu == L: every Hessian L I
    p = QuadraticProblem.heterogeneous(3, 1, 1.5, 1.5, 1.0, np.random.default_rng(7))
    np.testing.assert_allclose(p.hessians, 1.5)
    # mu = 0: f merely convex, x* the least-norm minimiser, heterogeneity still exact
    p = QuadraticProblem.heterogeneous(3, 3, 1.0, 0.0, 0.7, np.random.default_rng(8),
                                       diagonal=False)
    assert p.mu == 0.0
    assert p.heterogeneity_at_optimum == pytest.approx(0.7, rel=1e-10)
    np.testing.assert_allclose(p.grad(p.x_star), 0.0, atol=1e-10)
    # a client of zero weight does not break rho
    w = np.array([0.5, 0.5, 0.0])
    A = np.array([[1.0, 2.0], [1.0, 2.0], [5.0, 5.0]])
    q = QuadraticProblem(A, np.array([[1.0, 0.0], [-1.0, 0.0], [9.0, 9.0]]), weights=w)
    assert q.rho == pytest.approx(1.0)
    assert q.x_star.tolist() == [0.0, 0.0]
    # given x*
    p = QuadraticProblem.heterogeneous(4, 2, 1.0, 0.5, 1.0, np.random.default_rng(9),
                                       x_star=np.array([3.0, -1.0]))
    np.testing.assert_allclose(p.x_star, [3.0, -1.0], atol=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(mu=2.0, L=1.0), "mu must be <= L"),
        (dict(mu=-0.1), "mu must be non-negative"),
        (dict(L=0.0, mu=0.0), "L must be positive"),
        (dict(sigma_G2=-1.0), "sigma_G2 must be non-negative"),
        (dict(sigma_G2=float("nan")), "sigma_G2 must be a finite real number"),
        (dict(n=0), "n must be a positive integer"),
        (dict(n=1), "sigma_G2 > 0 needs n >= 2"),
        (dict(d=1), "d must be >= 2"),
        (dict(indefinite=True), "indefinite Hessians need mu == 0"),
        (dict(weights=[0.5, 0.6, 0.0, 0.0]), "weights must sum to 1"),
        (dict(weights=[1.5, -0.5, 0.0, 0.0]), "weights must be non-negative"),
        (dict(weights=[0.5, 0.5]), r"weights must have shape \(4,\)"),
        (dict(x_star=np.zeros(5)), r"x_star must have shape \(3,\)"),
    ],
)
def test_heterogeneous_validates(kwargs, match):
    args = dict(n=4, d=3, L=1.0, mu=0.5, sigma_G2=1.0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        QuadraticProblem.heterogeneous(rng=np.random.default_rng(0), **args)


def test_constructor_and_methods_validate():
    c = np.zeros((3, 2))
    with pytest.raises(ValueError, match="hessians must have shape"):
        QuadraticProblem(np.ones((3, 3)), c)
    with pytest.raises(ValueError, match="symmetric"):
        QuadraticProblem(np.array([[[1.0, 1.0], [0.0, 1.0]]] * 3), c)
    with pytest.raises(ValueError, match="offsets must have shape"):
        QuadraticProblem(np.ones((3, 2)), c, offsets=np.zeros(2))
    with pytest.raises(ValueError, match="hessians must be finite"):
        QuadraticProblem(np.full((3, 2), np.nan), c)
    p = QuadraticProblem(np.ones((3, 2)), c)
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., 2\)"):
        p.loss(np.zeros(3))
    with pytest.raises(ValueError, match="clients must be integers in"):
        p.client_gradients(np.zeros((2, 2)), np.array([0, 3]))
    with pytest.raises(ValueError, match="clients must have shape"):
        p.client_gradients(np.zeros((2, 2)), np.array([0]))
    with pytest.raises(ValueError, match="n must be a positive integer"):
        validate_weights(None, 0)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(2, 6), d=st.integers(2, 5), L=st.floats(0.1, 10.0),
    ratio=st.floats(0.0, 1.0), s=st.floats(0.0, 5.0), seed=st.integers(0, 2**16),
    diagonal=st.booleans(), identical=st.booleans(),
)
def test_constructor_hits_its_targets(n, d, L, ratio, s, seed, diagonal, identical):
    rng = np.random.default_rng(seed)
    w = rng.dirichlet(np.ones(n))
    p = QuadraticProblem.heterogeneous(n, d, L, ratio * L, s, rng, weights=w,
                                       diagonal=diagonal, identical_hessians=identical)
    assert p.L == pytest.approx(L, rel=1e-10)
    assert p.mu == pytest.approx(ratio * L, rel=1e-8, abs=1e-10 * L)
    assert p.heterogeneity_at_optimum == pytest.approx(s, rel=1e-8, abs=1e-12)
    if identical:
        assert p.rho is not None
    elif ratio < 1:  # mu == L makes every Hessian L I: rho is then finite (or rounding-split)
        assert p.rho is None


@pytest.mark.parametrize("clients", ["random", "one-heavy", "single", "empty"])
def test_dense_hot_path_matches_gather(clients):
    p = _make(diagonal=False, n=7, d=6)
    rng = np.random.default_rng(11)
    K = {"random": 500, "one-heavy": 500, "single": 1, "empty": 0}[clients]
    cl = rng.integers(0, p.n, size=K)
    if clients == "one-heavy":  # uneven groups (7 clients x 494 rows > 4 K): chunked fallback
        cl[: K - 6] = 2
        cl[K - 6:] = [0, 1, 3, 4, 5, 6]
    y = rng.standard_normal((K, p.d))
    expected = np.einsum("kij,kj->ki", p.hessians[cl], y - p.centers[cl])
    got = p.client_gradients(y, cl)
    assert got.shape == (K, p.d)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------ the simulator's hot path
@pytest.mark.parametrize("kw", [dict(diagonal=True), dict(diagonal=False)], ids=["diag", "dense"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_client_gradients_into_out_broadcast_and_aliased(kw, dtype):
    p = _make(**kw, n=6, d=5)
    rng = np.random.default_rng(20)
    y = rng.standard_normal((9, p.d)).astype(dtype)
    cl = rng.integers(0, p.n, size=9)
    want = np.einsum("kij,kj->ki", p.hessians[cl] if not p.diagonal else
                     np.stack([np.diag(a) for a in p.hessians])[cl], y - p.centers[cl])
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    out = np.empty_like(y)
    got = p.client_gradients(y, cl, out=out)
    assert got.dtype == dtype and np.shares_memory(got, out)
    np.testing.assert_allclose(got, want, **tol)
    np.testing.assert_array_equal(p.client_gradients(y, cl), got)
    # the output may be y itself; y may be a read-only broadcast view (one replica's x)
    alias = y.copy()
    np.testing.assert_array_equal(p.client_gradients(alias, cl, out=alias), got)
    view = np.broadcast_to(y[0], y.shape)
    np.testing.assert_array_equal(p.client_gradients(view, cl),
                                  p.client_gradients(np.tile(y[0], (9, 1)), cl))
    # leading axes, and an empty call
    assert p.client_gradients(y.reshape(3, 3, p.d), cl.reshape(3, 3)).shape == (3, 3, p.d)
    assert p.client_gradients(y[:0], cl[:0]).shape == (0, p.d)


def test_hot_path_validation():
    p = _make(n=4, d=3)
    y = np.zeros((2, 3))
    with pytest.raises(ValueError, match=r"clients must be integers in \[0, 4\), got"):
        p.client_gradients(y, np.array([0, -1]))
    with pytest.raises(ValueError, match="clients must be integers"):
        p.client_gradients(y, np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="clients must be integers"):
        p.client_gradients(y, np.array([True, False]))
    with pytest.raises(ValueError, match=r"out must be an array of shape \(2, 3\) and dtype "
                                         r"float64, got \(2, 3\) float32"):
        p.client_gradients(y, np.array([0, 1]), out=np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="out must be an array"):
        p.client_gradients(y, np.array([0, 1]), out=[[0.0] * 3] * 2)
    with pytest.raises(ValueError, match=r"y must have shape \(K, 3\), got shape \(2, 1, 3\)"):
        p.local_steps(y[:, None], np.array([[0], [1]]), 0.1, 2)
    with pytest.raises(ValueError, match="lr must be a positive real number, got 0"):
        p.local_steps(y, np.array([0, 1]), 0, 2)
    with pytest.raises(ValueError, match="steps must be an integer >= 1, got 0"):
        p.fused_local_steps(y, np.array([0, 1]), 0.1, 0)
    with pytest.raises(ValueError, match="noise_sd must be a non-negative real number"):
        p.fused_local_steps(y, np.array([0, 1]), 0.1, 2, noise_sd=-1.0)
    dense = _make(diagonal=False, n=4, d=3)
    assert dense.can_fuse_local_steps is False and p.can_fuse_local_steps is True
    with pytest.raises(ValueError, match="fused_local_steps needs diagonal Hessians"):
        dense.fused_local_steps(y, np.array([0, 1]), 0.1, 2)


def _hand_steps(p, y, cl, lr, steps, u=None, noise=None):
    """tau gradient steps written out with client_gradients."""
    y = y.copy()
    total = np.zeros_like(y)
    for j in range(steps):
        g = p.client_gradients(y, cl)
        if noise is not None:
            g = g + noise[j]
        if u is not None:
            g = g + u
        total += g
        y = y - lr * g
    return total


@pytest.mark.parametrize("kw", [dict(diagonal=True), dict(diagonal=False)], ids=["diag", "dense"])
@pytest.mark.parametrize("steps", [1, 4])
def test_local_steps_are_the_gradient_steps(kw, steps):
    p = _make(**kw, n=5, d=4)
    rng = np.random.default_rng(21)
    y = rng.standard_normal((7, p.d))
    cl = rng.integers(0, p.n, size=7)
    u = rng.standard_normal((7, p.d))
    xi = rng.standard_normal((steps, 7, p.d))
    calls = iter(range(steps))

    def add_noise(g):
        g += xi[next(calls)]

    got = p.local_steps(y, cl, 0.2, steps, correction=u, add_noise=add_noise)
    np.testing.assert_allclose(got, _hand_steps(p, y, cl, 0.2, steps, u, xi), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(p.local_steps(y, cl, 0.2, steps),
                               _hand_steps(p, y, cl, 0.2, steps), rtol=1e-12, atol=1e-12)
    out = y.copy()
    np.testing.assert_array_equal(p.local_steps(out, cl, 0.2, steps, out=out),
                                  p.local_steps(y, cl, 0.2, steps))


@pytest.mark.parametrize("steps", [1, 2, 5])
def test_fused_local_steps_are_the_closed_form(steps):
    p = _make(n=5, d=4)
    rng = np.random.default_rng(22)
    y = rng.standard_normal((8, p.d))
    cl = rng.integers(0, p.n, size=8)
    u = rng.standard_normal((8, p.d))
    lr = 0.3
    # noise-free: the steps themselves
    np.testing.assert_allclose(p.fused_local_steps(y, cl, lr, steps, correction=u),
                               _hand_steps(p, y, cl, lr, steps, u), rtol=1e-12, atol=1e-12)
    # noisy: S1 (a (y - c) + u) + sd sqrt(S2) z, with one normal per coordinate
    z = rng.standard_normal((8, p.d))
    a, c = p.hessians[cl], p.centers[cl]
    m = 1 - lr * a
    s1 = sum(m**j for j in range(steps))
    s2 = sum(m ** (2 * j) for j in range(steps))
    want = s1 * (a * (y - c) + u) + 0.7 * np.sqrt(s2) * z
    got = p.fused_local_steps(y, cl, lr, steps, correction=u, normals=z.copy(), noise_sd=0.7)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # float32 stays float32
    y32 = y.astype(np.float32)
    assert p.fused_local_steps(y32, cl, lr, steps).dtype == np.float32


@pytest.mark.parametrize("kw", VARIANTS)
def test_loss_and_loss_gap(kw):
    p = _make(**kw)
    rng = np.random.default_rng(23)
    x = rng.standard_normal((4, 3, p.d)) * 3
    direct = p.client_losses(x) @ p.weights
    assert_close_sum(p.loss(x), direct, loss_terms(p, x))
    np.testing.assert_allclose(p.loss_gap(x), direct - p.f_star, rtol=1e-10, atol=1e-12)
    # bit-identical: f_star is defined by this very expression (same calls, same numbers)
    assert p.f_star == float(p.client_losses(p.x_star) @ p.weights)
    # no cancellation near x*: the gap is (1/2) e^T A_bar e to full relative precision
    e = 1e-9 * rng.standard_normal(p.d)
    H = p.hessian if p.hessian.ndim == 2 else np.diag(p.hessian)
    np.testing.assert_allclose(p.loss_gap(p.x_star + e), 0.5 * e @ H @ e, rtol=1e-6)
    assert p.loss(x[0, 0].astype(np.float32)).dtype == np.float32


def test_loss_gap_of_a_problem_unbounded_along_a_null_direction():
    """A_bar singular with sum_i w_i A_i c_i outside its range: f is linear along the null
    space, x* is the least-squares point, and the gap keeps the linear term exactly."""
    A = np.array([[1.0, 1.0], [1.0, -1.0]])  # A_bar = diag(1, 0)
    c = np.array([[1.0, 2.0], [0.0, 1.0]])
    p = QuadraticProblem(A, c)
    assert p.mu == 0.0 and p.x_star.tolist() == [0.5, 0.0]
    x = np.array([[0.5, 3.0], [2.0, -1.0], [0.5, 0.0]])
    direct = p.client_losses(x) @ p.weights - p.f_star
    np.testing.assert_allclose(p.loss_gap(x), direct, rtol=1e-12, atol=1e-15)
    assert_close_sum(p.loss(x), p.client_losses(x) @ p.weights, loss_terms(p, x))
    dense = QuadraticProblem(np.stack([np.diag(a) for a in A]), c)
    np.testing.assert_allclose(dense.loss_gap(x), direct, rtol=1e-12, atol=1e-15)


def test_hot_path_is_thread_safe():
    """Work buffers are per thread: concurrent calls do not share them."""
    from concurrent.futures import ThreadPoolExecutor

    p = _make(n=50, d=300)
    rng = np.random.default_rng(24)
    jobs = [(rng.standard_normal((200, p.d)), rng.integers(0, p.n, 200)) for _ in range(16)]
    want = [p.client_grads(y)[np.arange(200), cl] for y, cl in jobs]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda job: p.client_gradients(*job), jobs))
        steps = list(pool.map(lambda job: p.local_steps(*job, 0.1, 3), jobs))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    for s, (y, cl) in zip(steps, jobs, strict=True):
        np.testing.assert_allclose(s, _hand_steps(p, y, cl, 0.1, 3), rtol=1e-12, atol=1e-12)
