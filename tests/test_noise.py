"""Gradient-noise models: zero mean, exact second moment, dtype, validation."""

import numpy as np
import pytest

from fedtheory.claims import checks
from fedtheory.problems import GaussianNoise, RelativeNoise

from ._tolerance import assert_close_sum


@pytest.mark.parametrize("distribution", ["gaussian", "sphere"])
@pytest.mark.parametrize("make", [lambda dist: GaussianNoise(1.7, dist),
                                  lambda dist: RelativeNoise(0.8, 0.3, dist)],
                         ids=["gaussian", "relative"])
def test_zero_mean_and_exact_second_moment(make, distribution):
    model = make(distribution)
    rng = np.random.default_rng(0)
    grads = np.array([[3.0, 0.0, -1.0], [0.0, 0.0, 0.0], [0.5, 2.0, 1.0]])
    reps = 20_000
    xi = model.sample(np.broadcast_to(grads, (reps, 3, 3)), rng)
    assert xi.shape == (reps, 3, 3)
    assert checks.check_identity(xi.reshape(reps, -1), np.zeros(9)).passed
    sq = np.sum(xi**2, axis=-1)
    assert checks.check_identity(sq, model.variance(grads)).passed
    if distribution == "sphere":  # |xi|^2 is the variance: a sum of squares, no cancellation
        var = np.broadcast_to(model.variance(grads), sq.shape)
        assert_close_sum(sq, var, var)


def test_variance_formula_and_shapes():
    g = np.array([[3.0, 4.0], [0.0, 0.0]])
    np.testing.assert_allclose(RelativeNoise(2.0, 1.0).variance(g), [51.0, 1.0])
    np.testing.assert_allclose(GaussianNoise(0.5).variance(g), [0.5, 0.5])
    assert GaussianNoise(0.5).variance(np.zeros((4, 3, 2))).shape == (4, 3)
    assert RelativeNoise(0.0, 0.0).sample(g, np.random.default_rng(0)).tolist() == [[0, 0]] * 2
    z = RelativeNoise(0.0, 0.0, "sphere").sample(g, np.random.default_rng(0))
    assert np.all(z == 0) and np.all(np.isfinite(z))


def test_dtype_and_reproducibility():
    g = np.ones((5, 3))
    a = RelativeNoise(1.0, 1.0).sample(g, np.random.default_rng(3), dtype=np.float32)
    b = RelativeNoise(1.0, 1.0).sample(g, np.random.default_rng(3), dtype=np.float32)
    assert a.dtype == np.float32
    np.testing.assert_array_equal(a, b)
    assert GaussianNoise(1.0).sample(g.astype(np.float32), np.random.default_rng(0)).dtype \
        == np.float32
    assert GaussianNoise(1.0).sample(g, np.random.default_rng(0)).dtype == np.float64


@pytest.mark.parametrize(
    ("factory", "match"),
    [
        (lambda: RelativeNoise(-1.0, 1.0), "M must be a non-negative"),
        (lambda: RelativeNoise(1.0, -0.1), "sigma2 must be a non-negative"),
        (lambda: GaussianNoise(float("nan")), "sigma2 must be a non-negative"),
        (lambda: GaussianNoise("a"), "sigma2 must be a non-negative"),
        (lambda: GaussianNoise(1.0, "laplace"), "distribution must be one of"),
        (lambda: GaussianNoise(1.0).sample(np.ones(0), np.random.default_rng(0)),
         "grads must have shape"),
        (lambda: GaussianNoise(1.0).sample(np.ones((2, 2)), np.random.default_rng(0),
                                           dtype=np.int64), "dtype must be float32 or float64"),
    ],
)
def test_validation(factory, match):
    with pytest.raises(ValueError, match=match):
        factory()
