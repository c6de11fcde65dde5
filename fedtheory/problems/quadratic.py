r"""Heterogeneous quadratic federated problems with closed-form constants.

Client :math:`i` holds

.. math::

    f_i(x) = \tfrac12 (x - c_i)^\top A_i (x - c_i) + e_i,
    \qquad f(x) = \sum_{i=1}^n w_i f_i(x),

with a symmetric Hessian :math:`A_i` stored either as its diagonal (shape ``(n, d)``, the fast
path used by simulations) or densely (shape ``(n, d, d)``). Everything is in closed form:

.. math::

    \bar A = \sum_i w_i A_i,\quad \bar A\,x^\star = \sum_i w_i A_i c_i,\quad
    \nabla f_i(x) = A_i (x - c_i),\quad
    Z_i = f_i(x^\star) - f_i^\star = \tfrac12 (x^\star - c_i)^\top A_i (x^\star - c_i),

:math:`L = \max_i \|A_i\|_2` (the largest eigenvalue in absolute value over the clients),
:math:`\mu = \lambda_{\min}(\bar A)` (``0.0`` when :math:`\bar A` is not positive definite) and
:math:`\mu_{\text{clients}} = \min_i \lambda_{\min}(A_i)`. The gradient dissimilarity

.. math::

    \sum_i w_i \|\nabla f_i(x) - \nabla f(x)\|^2
    = \sum_i w_i \|(A_i - \bar A)x - (A_i c_i - \bar A x^\star)\|^2

is a quadratic in :math:`x`; it is bounded (Assumption 9 of seed 002 holds with a finite
:math:`\rho`) exactly when every client of positive weight has the Hessian :math:`\bar A`, in
which case it is the constant :attr:`QuadraticProblem.rho`.

Examples
--------
>>> import numpy as np
>>> prob = QuadraticProblem.heterogeneous(4, 3, L=2.0, mu=0.5, sigma_G2=1.0,
...                                       rng=np.random.default_rng(0))
>>> prob.L, prob.mu
(2.0, 0.5)
>>> float(np.round(prob.heterogeneity(prob.x_star), 12))
1.0
>>> prob.client_grads(np.zeros((7, 3))).shape
(7, 4, 3)
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from fedtheory.problems import quadratic_kernels as kernels
from fedtheory.problems import quadratic_random
from fedtheory.problems.base import Capability, validate_weights
from fedtheory.problems.quadratic_local_work import QuadraticLocalWork
from fedtheory.validation import finite_array, real_array

__all__ = ["QuadraticProblem"]


class QuadraticProblem(QuadraticLocalWork):
    r"""Federated quadratic problem :math:`f = \sum_i w_i f_i`, :math:`f_i` as in the module doc.

    Parameters
    ----------
    hessians:
        Diagonal Hessians, shape ``(n, d)``, or dense symmetric Hessians, shape ``(n, d, d)``.
    centers:
        :math:`c_i`, shape ``(n, d)``.
    offsets:
        :math:`e_i` (the minimum value of a convex :math:`f_i`), shape ``(n,)``; zeros by
        default.
    weights:
        :math:`w_i`, non-negative, summing to 1; uniform :math:`1/n` by default.

    Notes
    -----
    It declares every fast path of the simulator (:class:`~fedtheory.problems.base.Capability`;
    closed-form local steps for diagonal Hessians only); their array kernels are in
    :mod:`fedtheory.problems.quadratic_kernels`.

    :attr:`x_star` solves :math:`\bar A x = \sum_i w_i A_i c_i` (least-norm solution when
    :math:`\bar A` is singular). It is the minimiser of :math:`f` when :math:`\bar A \succ 0`;
    for an indefinite :math:`\bar A` it is the unique stationary point (a saddle) and
    :attr:`mu` is 0.
    """

    #: The simulator's fast paths this class offers (see :mod:`fedtheory.problems.base`).
    capabilities: ClassVar[frozenset[Capability]] = frozenset({
        Capability.GRADIENTS_INTO_BUFFER, Capability.LOCAL_STEPS,
        Capability.FUSED_LOCAL_STEPS, Capability.EXACT_LOSS_GAP})

    def __init__(
        self,
        hessians: np.ndarray,
        centers: np.ndarray,
        offsets: np.ndarray | None = None,
        weights: np.ndarray | None = None,
    ) -> None:
        A = real_array("hessians", hessians)
        c = real_array("centers", centers)
        if c.ndim != 2 or c.shape[0] < 1 or c.shape[1] < 1:
            raise ValueError(f"centers must have shape (n, d) with n, d >= 1, got {c.shape}")
        n, d = c.shape
        finite_array("centers", c, [c.shape])
        finite_array("hessians", A, [A.shape])
        if A.shape == (n, d):
            self.diagonal = True
        elif A.shape == (n, d, d):
            self.diagonal = False
            if not np.allclose(A, np.swapaxes(A, -1, -2), rtol=1e-12, atol=1e-12):
                raise ValueError("hessians must be symmetric (A_i == A_i^T)")
            A = 0.5 * (A + np.swapaxes(A, -1, -2))
        else:
            raise ValueError(
                f"hessians must have shape ({n}, {d}) (diagonal) or ({n}, {d}, {d}) (dense), "
                f"got {A.shape}"
            )
        e = np.zeros(n) if offsets is None else real_array("offsets", offsets)
        if e.shape != (n,):
            raise ValueError(f"offsets must have shape ({n},), got shape {e.shape}")
        finite_array("offsets", e, [(n,)])
        self.n = int(n)
        self.d = int(d)
        self.hessians = A
        self.centers = c
        self.offsets = e
        self.weights = validate_weights(weights, n)
        self._cast: dict[Any, Any] = {}  # parameters per dtype (hot-path layouts)

    def __repr__(self) -> str:
        kind = "diagonal" if self.diagonal else "dense"
        return (
            f"QuadraticProblem(n={self.n}, d={self.d}, {kind}, L={self.L:.4g}, "
            f"mu={self.mu:.4g}, rho={self.rho if self.rho is None else round(self.rho, 6)})"
        )

    # ------------------------------------------------------------------ constants
    @cached_property
    def client_eigenvalues(self) -> np.ndarray:
        """Eigenvalues of each :math:`A_i`, increasing, shape ``(n, d)``."""
        if self.diagonal:
            return np.sort(self.hessians, axis=-1)
        return np.linalg.eigvalsh(self.hessians)

    @cached_property
    def hessian(self) -> np.ndarray:
        r""":math:`\bar A = \sum_i w_i A_i` (shape ``(d,)`` if diagonal, else ``(d, d)``)."""
        return np.tensordot(self.weights, self.hessians, axes=1)

    @cached_property
    def _hessian_eigenvalues(self) -> np.ndarray:
        if self.diagonal:
            return np.sort(self.hessian)
        return np.linalg.eigvalsh(self.hessian)

    @cached_property
    def L(self) -> float:
        r"""Smoothness constant of every :math:`f_i`: :math:`\max_i \|A_i\|_2`."""
        return float(np.max(np.abs(self.client_eigenvalues)))

    @cached_property
    def mu(self) -> float:
        r""":math:`\lambda_{\min}(\bar A)` if positive (``f`` strongly convex), else ``0.0``.

        Eigenvalues below :math:`10^{-12}\,\|\bar A\|_2` (rounding of a zero) count as zero.
        """
        eig = self._hessian_eigenvalues
        lam = float(eig[0])
        return lam if lam > 1e-12 * float(np.max(np.abs(eig))) else 0.0

    @cached_property
    def mu_clients(self) -> float:
        r""":math:`\min_i \lambda_{\min}(A_i)`: every :math:`f_i` is this strongly convex if > 0.

        Negative when some :math:`f_i` is non-convex (then it is the most negative curvature).
        """
        return float(np.min(self.client_eigenvalues))

    @cached_property
    def clients_convex(self) -> bool:
        """Whether every :math:`f_i` is convex (every :math:`A_i` positive semidefinite)."""
        return bool(self.mu_clients >= 0)

    @cached_property
    def _b(self) -> np.ndarray:
        """:math:`\\sum_i w_i A_i c_i`."""
        return self.weights @ self._apply(self.hessians, self.centers)

    @cached_property
    def x_star(self) -> np.ndarray:
        r"""Solution of :math:`\bar A x = \sum_i w_i A_i c_i` (least norm if singular)."""
        if self.diagonal:
            h = self.hessian
            safe = np.where(h != 0, h, 1.0)
            return np.where(h != 0, self._b / safe, 0.0)
        return np.linalg.lstsq(self.hessian, self._b, rcond=None)[0]

    @cached_property
    def f_star(self) -> float:
        """:math:`f(x^\\star) = \\sum_i w_i f_i(x^\\star)`."""
        return float(self.client_losses(self.x_star) @ self.weights)

    @property
    def client_minima(self) -> np.ndarray:
        r""":math:`f_i^\star = e_i` for convex :math:`f_i`, :math:`-\infty` otherwise, ``(n,)``."""
        convex = np.min(self.client_eigenvalues, axis=-1) >= 0
        return np.where(convex, self.offsets, -np.inf)

    @cached_property
    def Z(self) -> np.ndarray:
        r""":math:`Z_i = f_i(x^\star) - f_i^\star` (Definition 12 of seed 002), shape ``(n,)``."""
        return self.client_losses(self.x_star) - self.client_minima

    @cached_property
    def rho(self) -> float | None:
        r"""The constant of Assumption 9, :math:`\sup_x \sum_i w_i\|\nabla f_i - \nabla f\|^2`.

        Finite (and attained at every :math:`x`) exactly when every client with
        :math:`w_i > 0` has the same Hessian (then :math:`\bar A`, and
        :math:`\nabla f_i - \nabla f` is constant); ``None`` (unbounded) otherwise.
        """
        active = self.hessians[self.weights > 0]
        if not np.array_equal(active, np.broadcast_to(active[0], active.shape)):
            return None
        return float(self.heterogeneity(self.x_star))

    @property
    def heterogeneity_at_optimum(self) -> float:
        r""":math:`\sigma_G^2 = \sum_i w_i \|\nabla f_i(x^\star)\|^2`."""
        return float(self.heterogeneity(self.x_star))

    # ------------------------------------------------------------------ evaluations
    def _apply(self, A: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Hessians times vectors: ``A`` ``(..., d)`` or ``(..., d, d)``, ``v`` ``(..., d)``."""
        if self.diagonal:
            return A * v
        return np.einsum("...ij,...j->...i", A, v)

    def _x(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x)
        if x.ndim < 1 or x.shape[-1] != self.d:
            raise ValueError(f"x must have shape (..., {self.d}), got shape {x.shape}")
        return x

    def _params(self, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
        """Hessians and centers cast to ``dtype`` (cached: the simulator may run in float32),
        C-contiguous so that gathered rows stay contiguous (numpy then runs one loop over a
        whole block instead of one per row)."""
        dtype = np.dtype(dtype)
        if dtype.kind != "f":
            dtype = np.dtype(float)
        if dtype not in self._cast:
            self._cast[dtype] = (np.ascontiguousarray(self.hessians, dtype=dtype),
                                 np.ascontiguousarray(self.centers, dtype=dtype))
        return self._cast[dtype]

    def client_losses(self, x: np.ndarray) -> np.ndarray:
        r""":math:`f_i(x)` for every client: ``(..., d)`` -> ``(..., n)``."""
        x = self._x(x)
        A, c = self._params(x.dtype)
        r = x[..., None, :] - c
        return 0.5 * np.sum(r * self._apply(A, r), axis=-1) + self.offsets.astype(A.dtype)

    @cached_property
    def _residual_at_x_star(self) -> np.ndarray | None:
        r""":math:`\nabla f(x^\star) = \bar A x^\star - \sum_i w_i A_i c_i`, or None where it is
        zero: always, unless :math:`\bar A` is singular and :math:`\sum_i w_i A_i c_i` has a
        component in its null space (then :math:`x^\star` is the least-squares point and
        :math:`f` is unbounded along that component).

        The component is taken exactly (no rounding residue of the solve): for diagonal
        :math:`\bar A` the coordinates where it is 0; for dense :math:`\bar A` the
        eigenvectors that :func:`numpy.linalg.lstsq` treats as null (eigenvalues below
        :math:`\epsilon d \max|\lambda|`).
        """
        if self.diagonal:
            r = np.where(self.hessian == 0, -self._b, 0.0)
        else:
            lam, V = np.linalg.eigh(self.hessian)
            null = np.abs(lam) <= np.finfo(float).eps * self.d * np.max(np.abs(lam))
            Vn = V[:, null]
            r = -(Vn @ (Vn.T @ self._b))
        return r if np.any(r != 0) else None

    def loss_gap(self, x: np.ndarray) -> np.ndarray:
        r""":math:`f(x) - f^\star` without cancellation: ``(..., d)`` -> ``(...)``.

        A quadratic equals its second-order expansion at :math:`x^\star`,

        .. math::

            f(x) - f(x^\star) = \tfrac12 (x - x^\star)^\top \bar A\, (x - x^\star)
            + \nabla f(x^\star)^\top (x - x^\star),

        with :math:`\nabla f(x^\star) = 0` unless :math:`\bar A` is singular and the linear
        term has a component in its null space. Costs :math:`O(d)` per point
        (:math:`O(d^2)` dense), and stays accurate down to the smallest gaps, where
        ``loss(x) - f_star`` would be rounding noise of size :math:`10^{-16}|f^\star|`.

        >>> prob = QuadraticProblem(np.array([[2.0], [4.0]]), np.array([[1.0], [-1.0]]))
        >>> x = prob.x_star + 1e-9  # the gap is 3/2 * 1e-18, f_star is 5/3
        >>> round(float(prob.loss_gap(x)) * 1e18, 6), float(prob.loss(x) - prob.f_star)
        (1.5, 0.0)
        """
        x = self._x(x)
        dtype = x.dtype if x.dtype.kind == "f" else np.dtype(float)
        e = x - self.x_star.astype(dtype)
        H = self.hessian.astype(dtype)
        He = e * H if self.diagonal else e @ H
        gap = 0.5 * kernels.rowdot(e, He)
        r = self._residual_at_x_star
        if r is not None:
            gap = gap + kernels.rowdot(e, np.broadcast_to(r.astype(dtype), e.shape))
        return gap

    def loss(self, x: np.ndarray) -> np.ndarray:
        r""":math:`f(x) = \sum_i w_i f_i(x)`: ``(..., d)`` -> ``(...)``.

        Computed as :math:`f^\star + (f(x) - f^\star)` (:meth:`loss_gap`): :math:`O(d)` per
        point (:math:`O(d^2)` dense) instead of :math:`O(nd)`, with no ``(..., n, d)``
        temporary; equal to :math:`\sum_i w_i f_i(x)` (:meth:`client_losses`) up to rounding.
        """
        return self.f_star + self.loss_gap(x)

    def client_grads(self, x: np.ndarray) -> np.ndarray:
        r""":math:`\nabla f_i(x) = A_i(x - c_i)`, all clients: ``(..., d)`` -> ``(..., n, d)``."""
        x = self._x(x)
        A, c = self._params(x.dtype)
        return self._apply(A, x[..., None, :] - c)

    def grad(self, x: np.ndarray) -> np.ndarray:
        r""":math:`\nabla f(x) = \bar A (x - x^\star)`: ``(..., d)`` -> ``(..., d)``."""
        x = self._x(x)
        dtype = x.dtype if x.dtype.kind == "f" else np.dtype(float)
        H = self.hessian.astype(dtype)
        b = self._b.astype(dtype)
        if self.diagonal:
            return H * x - b
        return x @ H.T - b

    def heterogeneity(self, x: np.ndarray) -> np.ndarray:
        r""":math:`\sum_i w_i \|\nabla f_i(x) - \nabla f(x)\|^2`: ``(..., d)`` -> ``(...)``."""
        g = self.client_grads(x)
        gbar = np.einsum("i,...id->...d", self.weights, g)
        return np.einsum("i,...i->...", self.weights, np.sum((g - gbar[..., None, :]) ** 2, -1))

    # ------------------------------------------------------------------ constructors
    @classmethod
    def stack(cls, problems: Sequence[QuadraticProblem]) -> QuadraticProblem:
        r"""The flat problem of a :class:`~fedtheory.problems.stack.ProblemStack`: one
        quadratic of :math:`Rn` clients whose client :math:`rn + i` is ``problems[r]``'s
        client :math:`i` (uniform weights: only its clients are used), so that the engine's
        local work on every (replica, client) pair is one batched call.

        >>> q = QuadraticProblem(np.ones((2, 1)), np.array([[0.0], [1.0]]))
        >>> QuadraticProblem.stack([q, q]).centers.ravel().tolist()
        [0.0, 1.0, 0.0, 1.0]
        """
        probs = list(problems)
        if not probs or not all(isinstance(p, QuadraticProblem) for p in probs):
            raise ValueError(f"problems must be a non-empty sequence of QuadraticProblem, "
                             f"got {problems!r}")
        if len({(p.n, p.d, p.diagonal) for p in probs}) != 1:
            raise ValueError("problems must have equal n, d and Hessian layout (diagonal or "
                             "dense) to be stacked")
        return cls(np.concatenate([p.hessians for p in probs]),
                   np.concatenate([p.centers for p in probs]),
                   np.concatenate([p.offsets for p in probs]))

    #: A random problem with given :math:`L`, :math:`\mu` and heterogeneity
    #: :math:`\sigma_G^2` (:func:`fedtheory.problems.quadratic_random.heterogeneous`).
    heterogeneous = classmethod(quadratic_random.heterogeneous)
