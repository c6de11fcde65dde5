r"""Unregularised softmax regression in float32: seed 004's stand-in model.

Client :math:`i` holds :math:`n_i` samples :math:`(a_j, t_j)` (features with a bias column,
labels in :math:`0..C-1`). The model is :math:`x = \operatorname{vec}(W)`,
:math:`W \in \mathbb R^{C\times p}` row-major, with

.. math:: f_i(W) = \frac{1}{n_i}\sum_{j\in\mathcal D_i}\Big(\log\sum_c
    e^{(Wa_j)_c} - (Wa_j)_{t_j}\Big),\qquad f = \frac1n\sum_i f_i ,

the mean negative log-likelihood of the authors' code (no weight decay). Seed 004's
experiment draws a fresh split per seed: a run's replicas train on their own splits through
a :class:`~fedtheory.problems.stack.ProblemStack` of these problems, whose hot path is
:meth:`SoftmaxRegression.stack` (one problem of every split's clients).

:math:`\mu = 0` and the optimum need not exist: :attr:`SoftmaxRegression.x_star` is NaN and
a run on it skips the metrics that need it (``skip_metrics=("f_gap", "grad_norm2",
"dist2")``) and records its own (:meth:`SoftmaxRegression.accuracy`). Unlike
:class:`~fedtheory.problems.LogisticProblem` (regularised, float64, Newton's :math:`x^\star`)
it is cheap to build. It declares ``LOCAL_STEPS``: the :math:`\tau` full-batch steps of many
(replica, client) pairs as batched matrix products in float32 (padded rows weigh 0).

>>> X = [np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[1.0, 1.0]])]
>>> prob = SoftmaxRegression(X, [np.array([0, 1]), np.array([1])], 2)
>>> prob.n, prob.d
(2, 4)
>>> prob.client_gradients(np.zeros((1, 4)), np.array([1])).round(3).tolist()
[[0.5, 0.5, -0.5, -0.5]]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

import numpy as np

from fedtheory.problems.base import Capability
from fedtheory.validation import finite_array, integer_at_least, real_array

__all__ = ["SoftmaxRegression"]


class SoftmaxRegression:
    r"""Softmax regression (mean NLL, no regulariser) on ``n`` clients.

    Parameters
    ----------
    X_clients, y_clients
        Per client its features ``(n_i, p)`` (at least one row) and labels ``(n_i,)`` in
        ``0 .. n_classes - 1``.
    n_classes
        :math:`C \ge 2`.

    :math:`d = Cp`; :math:`L = \max_i \|A_i\|_2^2/(2n_i)` (the softmax Hessian in the logits
    is at most :math:`\tfrac12 I`); weights :math:`1/n`.
    """

    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.LOCAL_STEPS})

    def __init__(self, X_clients: Sequence[np.ndarray], y_clients: Sequence[np.ndarray],
                 n_classes: int) -> None:
        integer_at_least("n_classes", n_classes, 2)
        if len(X_clients) == 0 or len(X_clients) != len(y_clients):
            raise ValueError(f"X_clients and y_clients must be equally long and non-empty, "
                             f"got {len(X_clients)} and {len(y_clients)}")
        Xs = [real_array(f"X_clients[{i}]", a) for i, a in enumerate(X_clients)]
        ys = [np.asarray(b) for b in y_clients]
        n = len(Xs)
        p = Xs[0].shape[1] if Xs[0].ndim == 2 else -1
        for i, (a, b) in enumerate(zip(Xs, ys, strict=True)):
            if a.ndim != 2 or a.shape[1] != p or a.shape[0] < 1 or b.shape != (a.shape[0],):
                raise ValueError(f"client {i} must hold (s, {p}) features (s >= 1) and (s,) "
                                 f"labels, got {a.shape} and {b.shape}")
            finite_array(f"X_clients[{i}]", a, [a.shape])
            if not np.issubdtype(b.dtype, np.integer) or b.min() < 0 or b.max() >= n_classes:
                raise ValueError(f"client {i}: labels must be integers in [0, {n_classes}), "
                                 f"got {b!r}")
        self.n, self.p, self.n_classes = n, int(p), int(n_classes)
        self.d = self.n_classes * self.p
        self._data = (Xs, ys)
        #: samples per client, ``(n,)``
        self.sizes = np.array([a.shape[0] for a in Xs], dtype=np.int64)
        s = int(self.sizes.max())
        X = np.zeros((n, s, self.p), dtype=np.float32)
        Y = np.zeros((n, self.n_classes, s), dtype=np.float32)
        v = np.zeros((n, s), dtype=np.float32)
        for i, (a, b) in enumerate(zip(Xs, ys, strict=True)):
            X[i, :len(b)] = a
            Y[i, b, np.arange(len(b))] = 1.0
            v[i, :len(b)] = 1.0 / len(b)
        self.X, self.XT, self.Y, self.v = X, np.ascontiguousarray(np.swapaxes(X, 1, 2)), Y, v
        # the gradient's two terms: softmax(W A^T) (A/n_i) and the fixed T^T (A/n_i)
        self._Xv = X * v[..., None]
        self._YX = Y @ self._Xv  # (n, C, p)
        self._H = self._Xv @ self.XT  # (n, s, s): the steps in logit space
        self.weights = np.full(self.n, 1.0 / self.n)
        self.L = float(max(np.linalg.norm(a, 2) ** 2 / (2 * a.shape[0]) for a in Xs))
        self.mu = 0.0
        self.x_star = np.full(self.d, np.nan)
        self.f_star = float("nan")

    @classmethod
    def stack(cls, problems: Sequence[SoftmaxRegression]) -> SoftmaxRegression:
        r"""The flat problem of a :class:`~fedtheory.problems.stack.ProblemStack`: one
        problem of :math:`Rn` clients whose client :math:`rn + i` holds ``problems[r]``'s
        client :math:`i`'s samples (so that the engine's local work on every (replica, client)
        pair is one batched product).

        >>> one = SoftmaxRegression([np.eye(2)], [np.array([0, 1])], 2)
        >>> SoftmaxRegression.stack([one, one]).n
        2
        """
        probs = list(problems)
        if not probs or not all(isinstance(q, SoftmaxRegression) for q in probs):
            raise ValueError(f"problems must be a non-empty sequence of SoftmaxRegression, "
                             f"got {problems!r}")
        if len({(q.p, q.n_classes) for q in probs}) != 1:
            raise ValueError("problems must have equal features and classes to be stacked")
        return cls([a for q in probs for a in q._data[0]], [b for q in probs for b in q._data[1]],
                   probs[0].n_classes)

    # -- the hot path -------------------------------------------------------------------
    def _gather(self, c: np.ndarray) -> tuple[np.ndarray, ...]:
        """The padded data of the clients ``c``."""
        return self.XT[c], self._Xv[c], self._YX[c]

    def _grads(self, W: np.ndarray, data: tuple[np.ndarray, ...]) -> np.ndarray:
        r"""Gradients in :math:`W` ``(K, C, p)`` float32 of the pairs with gathered ``data``:
        :math:`\frac{1}{n_i}(\operatorname{softmax}(WA^\top) - T^\top)A` (padded rows of
        :math:`A` are 0)."""
        XT, Xv, YX = data
        Z = W @ XT  # (K, C, s)
        Z -= Z.max(axis=1, keepdims=True)
        np.exp(Z, out=Z)
        Z /= Z.sum(axis=1, keepdims=True)
        out = Z @ Xv
        out -= YX
        return out

    def _clients(self, clients: np.ndarray, K: int) -> np.ndarray:
        c = np.asarray(clients)
        if c.shape != (K,) or not np.issubdtype(c.dtype, np.integer) \
                or (K and (c.min() < 0 or c.max() >= self.n)):
            raise ValueError(f"clients must be {K} integers in [0, {self.n}), got {clients!r}")
        return c.astype(np.intp, copy=False)

    def client_gradients(self, y: np.ndarray, clients: np.ndarray) -> np.ndarray:
        r""":math:`\nabla f_{c_k}(y_k)`, ``y`` ``(K, d)``, ``clients`` ``(K,)``: ``(K, d)``
        float32."""
        y = np.asarray(y)
        K = y.shape[0]
        data = self._gather(self._clients(clients, K))
        W = np.asarray(y, dtype=np.float32).reshape(K, self.n_classes, self.p)
        return self._grads(W, data).reshape(K, self.d)

    def local_steps(self, y: np.ndarray, clients: np.ndarray, lr: float, steps: int, *,
                    correction: np.ndarray | None = None,
                    add_noise: Callable[[np.ndarray], None] | None = None,
                    out: np.ndarray | None = None) -> np.ndarray:
        r"""Capability ``LOCAL_STEPS``: :math:`\Delta_k = (y^0_k - y^\tau_k)/\eta =
        \sum_{j<\tau}(\nabla f_{c_k}(y^j_k) + \xi^j + u_k)`, ``(K, d)`` (the pairs' data
        gathered once for the :math:`\tau` steps)."""
        y = np.asarray(y)
        K = y.shape[0]
        c = self._clients(clients, K)
        if out is None:
            out = np.empty((K, self.d), dtype=np.float32)
        W = np.array(y, dtype=np.float32).reshape(K, self.n_classes, self.p)
        if add_noise is None and correction is None:
            out[...] = self._logit_steps(W, c, lr, int(steps)).reshape(K, -1)
            return out
        data = self._gather(c)
        total = np.zeros((K, self.d), dtype=np.float32)
        eta = np.float32(lr)
        for _ in range(int(steps)):  # noise and corrections act on the (K, d) rows
            g = self._grads(W, data).reshape(K, self.d)
            if add_noise is not None:
                add_noise(g)
            if correction is not None:
                g += correction
            total += g
            W -= eta * g.reshape(K, self.n_classes, self.p)
        out[...] = total
        return out

    def _logit_steps(self, W: np.ndarray, c: np.ndarray, lr: float, steps: int) -> np.ndarray:
        r"""The sum of the gradients of ``steps`` full-batch steps from :math:`W` ``(K, C, p)``,
        taken in logit space: with :math:`Z_j = W_j A^\top`, :math:`P_j =
        \operatorname{softmax}(Z_j)` and :math:`\tilde A = A/n_i`, the step
        :math:`W_{j+1} = W_j - \eta(P_j - T^\top)\tilde A` is
        :math:`Z_{j+1} = Z_j - \eta (P_j - T^\top) H`, :math:`H = \tilde A A^\top`
        (:math:`s\times s`, per client, computed once), and
        :math:`\sum_j g_j = (\sum_j P_j)\tilde A - \tau T^\top\tilde A`: two products a step
        fewer than in weight space (the same steps, other roundings)."""
        XT, YX, H, Y = self.XT[c], self._YX[c], self._H[c], self.Y[c]
        eta = np.float32(lr)
        Z = W @ XT  # (K, C, s)
        P = np.empty_like(Z)
        Psum = np.zeros_like(Z)
        for j in range(steps):
            np.subtract(Z, Z.max(axis=1, keepdims=True), out=P)
            np.exp(P, out=P)
            P /= P.sum(axis=1, keepdims=True)
            Psum += P
            if j + 1 < steps:
                P -= Y
                P *= eta
                Z -= P @ H
        Psum *= self.v[c][:, None, :]  # (sum_j P_j) A/n_i, without gathering A/n_i
        total = Psum @ np.swapaxes(XT, 1, 2)
        total -= np.float32(steps) * YX
        return total

    # -- the protocol's full-batch quantities -------------------------------------------
    def client_losses(self, x: np.ndarray) -> np.ndarray:
        r""":math:`f_i(x)` for every client, ``(..., d)`` -> ``(..., n)``."""
        x = np.asarray(x, dtype=float)
        W = x[..., None, :].reshape(*x.shape[:-1], 1, self.n_classes, self.p)
        Z = W @ self.XT.astype(float)  # (..., n, C, s)
        m = Z.max(axis=-2, keepdims=True)
        lse = (m + np.log(np.exp(Z - m).sum(axis=-2, keepdims=True)))[..., 0, :]
        own = (Z * self.Y).sum(axis=-2)
        return ((lse - own) * self.v).sum(axis=-1)

    def loss(self, x: np.ndarray) -> np.ndarray:
        """:math:`f(x)`, ``(..., d)`` -> ``(...)``."""
        return self.client_losses(x) @ self.weights

    def client_grads(self, x: np.ndarray) -> np.ndarray:
        r""":math:`\nabla f_i(x)` for every client, ``(..., d)`` -> ``(..., n, d)``."""
        x = np.asarray(x, dtype=float)
        lead = x.shape[:-1]
        flat = x.reshape(-1, self.d)
        y = np.repeat(flat, self.n, axis=0)
        c = np.tile(np.arange(self.n), flat.shape[0])
        return self.client_gradients(y, c).astype(float).reshape(*lead, self.n, self.d)

    def grad(self, x: np.ndarray) -> np.ndarray:
        r""":math:`\nabla f(x)`, ``(..., d)``."""
        return np.einsum("...nd,n->...d", self.client_grads(x), self.weights)

    def heterogeneity(self, x: np.ndarray) -> np.ndarray:
        r""":math:`\sum_i w_i\|\nabla f_i(x) - \nabla f(x)\|^2`, ``(..., d)`` -> ``(...)``."""
        G = self.client_grads(x)
        g = np.einsum("...nd,n->...d", G, self.weights)
        return np.einsum("...n,n->...", ((G - g[..., None, :]) ** 2).sum(axis=-1), self.weights)

    def accuracy(self, x: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        r"""The share of rows of ``X`` ``(N, p)`` whose argmax class under :math:`W` is ``y``:
        ``(R, d)`` -> ``(R,)``."""
        W = np.asarray(x, dtype=np.float32).reshape(-1, self.p)  # (R C, p)
        Z = np.asarray(X, dtype=np.float32) @ W.T  # (N, R C): one product for every replica
        pred = np.argmax(Z.reshape(Z.shape[0], -1, self.n_classes), axis=2)  # (N, R)
        return (pred == np.asarray(y)[:, None]).mean(axis=0)

    def __repr__(self) -> str:
        return f"SoftmaxRegression(n={self.n}, p={self.p}, n_classes={self.n_classes})"
