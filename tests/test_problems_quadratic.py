"""QuadraticProblem: closed-form constants, gradients, vectorisation, validation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedtheory.problems import Problem, QuadraticProblem, validate_weights


def _make(diagonal=True, identical=False, weights=None, n=5, d=4, L=3.0, mu=0.5, s=2.0, seed=0):
    return QuadraticProblem.heterogeneous(
        n, d, L, mu, s, np.random.default_rng(seed), weights=weights,
        identical_hessians=identical, diagonal=diagonal,
    )


WEIGHTS = np.array([0.1, 0.3, 0.05, 0.25, 0.3])
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
    np.testing.assert_allclose(p.Z, p.client_losses(p.x_star) - p.offsets, rtol=1e-12)
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
    np.testing.assert_allclose(p.loss(x), p.client_losses(x) @ p.weights, rtol=1e-12)
    np.testing.assert_allclose(p.grad(x), np.einsum("i,...id->...d", p.weights, G), atol=1e-12)
    h = 1e-6
    E = np.eye(p.d)
    fd = (p.client_losses(x[..., None, :] + h * E) - p.client_losses(x[..., None, :] - h * E))
    np.testing.assert_allclose(np.swapaxes(fd / (2 * h), -1, -2), G, rtol=1e-6, atol=1e-6)
    # hot path: each row its own point and client
    y = rng.standard_normal((40, p.d))
    cl = rng.integers(0, p.n, size=40)
    np.testing.assert_allclose(
        p.client_gradients(y, cl), p.client_grads(y)[np.arange(40), cl], rtol=1e-12
    )
    het = np.einsum("i,...i->...", p.weights,
                    np.sum((G - p.grad(x)[..., None, :]) ** 2, -1))
    np.testing.assert_allclose(p.heterogeneity(x), het, rtol=1e-12)


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
        (dict(sigma_G2=float("nan")), "sigma_G2 must be finite"),
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
    assert (p.rho is not None) == identical


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
