"""The problems' declared fast paths (:class:`fedtheory.problems.base.Capability`): a bare
third-party problem runs on the slow route, the engine calls only what a problem declares,
and a declaration without its method fails when the engine is built."""

import numpy as np
import pytest

from fedtheory.participation import BernoulliParticipation
from fedtheory.problems import (
    Capability,
    ExactLossGap,
    FusedLocalSteps,
    GradientsIntoBuffer,
    OwnLocalSteps,
    Problem,
    QuadraticProblem,
    declared_capabilities,
)
from fedtheory.problems.base import CAPABILITY_PROTOCOLS
from fedtheory.simulate import simulate

N, D = 6, 4


class MinimalQuadratic:
    r"""A third-party problem written against the :class:`Problem` protocol only (no
    inheritance, no ``capabilities``): the diagonal quadratic
    :math:`f_i(x) = \tfrac12 \sum_j a_{ij}(x_j - c_{ij})^2`, in plain numpy."""

    def __init__(self, a, c, weights):
        self.a, self.c = np.asarray(a, dtype=float), np.asarray(c, dtype=float)
        self.n, self.d = self.a.shape
        self.weights = np.asarray(weights, dtype=float)
        abar = self.weights @ self.a
        self.L = float(self.a.max())
        self.mu = float(abar.min())
        self.x_star = (self.weights @ (self.a * self.c)) / abar
        self.f_star = float(self.loss(self.x_star))

    def client_losses(self, x):
        r = np.asarray(x)[..., None, :] - self.c
        return 0.5 * np.sum(self.a * r * r, axis=-1)

    def loss(self, x):
        return self.client_losses(x) @ self.weights

    def client_grads(self, x):
        return self.a * (np.asarray(x)[..., None, :] - self.c)

    def grad(self, x):
        return np.einsum("i,...id->...d", self.weights, self.client_grads(x))

    def client_gradients(self, y, clients):
        return self.a[clients] * (y - self.c[clients])

    def heterogeneity(self, x):
        g = self.client_grads(x)
        dev = g - self.grad(x)[..., None, :]
        return np.einsum("i,...i->...", self.weights, np.sum(dev * dev, axis=-1))


def minimal_twin(prob: QuadraticProblem) -> MinimalQuadratic:
    """The :class:`MinimalQuadratic` with the arrays of a diagonal ``prob``."""
    return MinimalQuadratic(prob.hessians, prob.centers, prob.weights)


@pytest.fixture(scope="module")
def prob():
    return QuadraticProblem.heterogeneous(N, D, L=1.0, mu=0.2, sigma_G2=2.0,
                                          rng=np.random.default_rng(0))


def run(problem, **kw):
    kw = {"rounds": 3, "replicas": 2, "lr": 0.1, "x0": np.linspace(-1.0, 2.0, D), **kw}
    return simulate(problem, "fedavg", BernoulliParticipation(0.6, n=N), **kw)


def test_a_bare_problem_declares_nothing_and_runs(prob):
    bare = minimal_twin(prob)
    assert isinstance(bare, Problem)
    assert declared_capabilities(bare) == frozenset()
    res = run(bare, local_steps=3, fuse_local_steps=None)
    assert not res.config["fused_local_steps"]
    assert res.grad_evals == 3 * res.client_rounds  # step by step: tau rows per update
    with pytest.raises(ValueError, match="fuse_local_steps=True needs a problem"):
        run(bare, local_steps=3, fuse_local_steps=True)


@pytest.mark.parametrize("kw", [{}, {"diagonal": False}])
def test_quadratic_declares_every_fast_path(kw):
    p = QuadraticProblem.heterogeneous(N, D, L=1.0, mu=0.2, sigma_G2=1.0,
                                       rng=np.random.default_rng(1), **kw)
    # every fast path but mini-batches (a quadratic has no samples)
    assert declared_capabilities(p) == frozenset(Capability) - {Capability.MINIBATCH_GRADIENTS}
    for proto in (GradientsIntoBuffer, OwnLocalSteps, FusedLocalSteps, ExactLossGap):
        assert isinstance(p, proto)
    # a dense quadratic has the method but no closed form: the engine does not fuse
    assert p.can_fuse_local_steps is p.diagonal
    assert run(p, local_steps=3).config["fused_local_steps"] is p.diagonal


def test_every_capability_names_its_protocol():
    assert set(CAPABILITY_PROTOCOLS) == set(Capability)
    for proto, members in CAPABILITY_PROTOCOLS.values():
        for m in members:
            assert hasattr(proto, m) or m in proto.__annotations__


class Declares(MinimalQuadratic):
    """A bare problem with a declaration of its own (set per test)."""

    capabilities = frozenset()


@pytest.mark.parametrize(
    "declared, extra, message",
    [
        ({Capability.LOCAL_STEPS}, {},
         r"declares capability LOCAL_STEPS \(protocol OwnLocalSteps\) but lacks local_steps"),
        ({Capability.FUSED_LOCAL_STEPS}, {"fused_local_steps": lambda *a, **k: None},
         "declares capability FUSED_LOCAL_STEPS .* lacks can_fuse_local_steps"),
        ({Capability.FUSED_LOCAL_STEPS}, {"can_fuse_local_steps": True},
         "FUSED_LOCAL_STEPS .* lacks fused_local_steps"),
        ({Capability.EXACT_LOSS_GAP, Capability.GRADIENTS_INTO_BUFFER}, {"loss_gap": 0.0},
         "declares capability EXACT_LOSS_GAP .* lacks loss_gap"),
    ],
)
def test_a_declared_capability_without_its_method_fails_when_the_engine_is_built(
        prob, declared, extra, message):
    cls = type("Claims", (Declares,), {"capabilities": frozenset(declared), **extra})
    bad = cls(prob.hessians, prob.centers, prob.weights)
    with pytest.raises(ValueError, match=message):
        declared_capabilities(bad)
    with pytest.raises(ValueError, match=message):
        run(bad, rounds=0)  # before any round


@pytest.mark.parametrize("declared", [["local_steps"], {"exact_loss_gap"}, "loss_gap", None])
def test_a_declaration_must_be_a_set_of_capabilities(prob, declared):
    bad = minimal_twin(prob)
    bad.capabilities = declared
    with pytest.raises(ValueError, match=r"capabilities of problem MinimalQuadratic must be a "
                                         r"frozenset of Capability members, got"):
        run(bad)


class Undeclared(MinimalQuadratic):
    """Has the fast-path methods but declares none of them: the engine must not call them."""

    can_fuse_local_steps = True

    def client_gradients(self, y, clients, out=None):
        if out is not None:
            raise AssertionError("out= passed to an undeclared GRADIENTS_INTO_BUFFER")
        return super().client_gradients(y, clients)

    def local_steps(self, *args, **kwargs):
        raise AssertionError("undeclared local_steps called")

    def fused_local_steps(self, *args, **kwargs):
        raise AssertionError("undeclared fused_local_steps called")

    def loss_gap(self, x):
        raise AssertionError("undeclared loss_gap called")


def test_undeclared_methods_are_never_called(prob):
    twin = Undeclared(prob.hessians, prob.centers, prob.weights)
    for tau in (1, 3):
        res = run(twin, local_steps=tau)
        np.testing.assert_array_equal(  # bit-identical: the same problem, the same route
            res.x, run(minimal_twin(prob), local_steps=tau).x)


class IntoBuffer(MinimalQuadratic):
    """Declares ``GRADIENTS_INTO_BUFFER`` and records the buffers it is handed."""

    capabilities = frozenset({Capability.GRADIENTS_INTO_BUFFER})

    def __init__(self, *args):
        super().__init__(*args)
        self.outs = 0

    def client_gradients(self, y, clients, out=None):
        g = super().client_gradients(y, clients)
        if out is None:
            return g
        self.outs += 1
        out[...] = g
        return out


def test_a_declared_buffer_is_handed_over(prob):
    twin = IntoBuffer(prob.hessians, prob.centers, prob.weights)
    res = run(twin, local_steps=2)
    assert twin.outs > 0
    np.testing.assert_array_equal(  # bit-identical: the same arithmetic, copied into a buffer
        res.x, run(minimal_twin(prob), local_steps=2).x)
