r"""Unregularised softmax regression on several data splits at once, in float32: seed 004's
stand-in model.

Client :math:`i` of split :math:`s` holds :math:`n_{s,i}` samples :math:`(a_j, t_j)` (features
with a bias column, labels in :math:`0..C-1`). The model is :math:`x = (\operatorname{vec}(W),
s)`, :math:`W \in \mathbb R^{C\times p}` row-major, and a last coordinate :math:`s` naming the
split, with

.. math:: f_i(W, s) = \frac{1}{n_{s,i}}\sum_{j\in\mathcal D_{s,i}}\Big(\log\sum_c
    e^{(Wa_j)_c} - (Wa_j)_{t_j}\Big),\qquad f = \frac1n\sum_i f_i ,

the mean negative log-likelihood of the authors' code (no weight decay). The gradient in
:math:`s` is 0 (:math:`s` is a label, not a parameter): started at :math:`s = r` (``x0`` of
:meth:`SoftmaxRegression.initial`), a run never leaves split :math:`r`. So the engine's
replicas, which share one problem, can each train on their own split (seed 004's experiment
draws a fresh split per seed), every replica's numbers those of a run on its split alone.

:math:`\mu = 0` and the optimum need not exist: :attr:`SoftmaxRegression.x_star` is NaN and
a run on it skips the metrics that need it (``skip_metrics=("f_gap", "grad_norm2",
"dist2")``) and records its own (:meth:`SoftmaxRegression.accuracy`). Unlike
:class:`~fedtheory.problems.LogisticProblem` (regularised, float64, Newton's :math:`x^\star`)
it is cheap to build. It declares ``LOCAL_STEPS``: the :math:`\tau` full-batch steps of many
(replica, client) pairs as batched matrix products in float32 (padded rows weigh 0).

>>> X = [np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[1.0, 1.0]])]
>>> prob = SoftmaxRegression([(X, [np.array([0, 1]), np.array([1])])], 2)
>>> prob.n, prob.d
(2, 5)
>>> prob.client_gradients(prob.initial([0]), np.array([1])).round(3).tolist()
[[0.5, 0.5, -0.5, -0.5, 0.0]]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

import numpy as np

from fedtheory.problems.base import Capability

__all__ = ["SoftmaxRegression"]


class SoftmaxRegression:
    r"""Softmax regression (mean NLL, no regulariser) on ``n`` clients, one or more splits.

    Parameters
    ----------
    splits
        One data set per split, ``(X_clients, y_clients)``: per client its features
        ``(n_{s,i}, p)`` (at least one row) and labels ``(n_{s,i},)`` in
        ``0 .. n_classes - 1``; every split has the same ``n`` clients and ``p``.
    n_classes
        :math:`C \ge 2`.

    :math:`d = Cp + 1`; :math:`L = \max_{s,i} \|A_{s,i}\|_2^2/(2n_{s,i})` (the softmax
    Hessian in the logits is at most :math:`\tfrac12 I`); weights :math:`1/n`.
    """

    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.LOCAL_STEPS})

    def __init__(self, splits: Sequence[tuple[Sequence[np.ndarray], Sequence[np.ndarray]]],
                 n_classes: int) -> None:
        if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)) \
                or n_classes < 2:
            raise ValueError(f"n_classes must be an integer >= 2, got {n_classes!r}")
        if len(splits) == 0:
            raise ValueError(f"splits must hold at least one data set, got {splits!r}")
        data = []
        for k, (X_clients, y_clients) in enumerate(splits):
            if len(X_clients) == 0 or len(X_clients) != len(y_clients):
                raise ValueError(f"split {k}: X_clients and y_clients must be equally long and "
                                 f"non-empty, got {len(X_clients)} and {len(y_clients)}")
            data.append(([np.asarray(a, dtype=float) for a in X_clients],
                         [np.asarray(b) for b in y_clients]))
        n = len(data[0][0])
        p = data[0][0][0].shape[1] if data[0][0][0].ndim == 2 else -1
        for k, (Xs, ys) in enumerate(data):
            if len(Xs) != n:
                raise ValueError(f"every split must have n={n} clients, split {k} has {len(Xs)}")
            for i, (a, b) in enumerate(zip(Xs, ys, strict=True)):
                if a.ndim != 2 or a.shape[1] != p or a.shape[0] < 1 or b.shape != (a.shape[0],):
                    raise ValueError(f"split {k}, client {i} must hold (s, {p}) features (s >= 1) "
                                     f"and (s,) labels, got {a.shape} and {b.shape}")
                if not np.issubdtype(b.dtype, np.integer) or b.min() < 0 \
                        or b.max() >= n_classes:
                    raise ValueError(f"split {k}, client {i}: labels must be integers in "
                                     f"[0, {n_classes}), got {b!r}")
        self.n, self.p, self.n_classes, self.splits = n, int(p), int(n_classes), len(data)
        self.d = self.n_classes * self.p + 1
        #: samples per (split, client), ``(S, n)``
        self.split_sizes = np.array([[a.shape[0] for a in Xs] for Xs, _ in data],
                                    dtype=np.int64)
        S, s = self.splits, int(self.split_sizes.max())
        X = np.zeros((S, n, s, self.p), dtype=np.float32)
        Y = np.zeros((S, n, self.n_classes, s), dtype=np.float32)
        v = np.zeros((S, n, s), dtype=np.float32)
        for k, (Xs, ys) in enumerate(data):
            for i, (a, b) in enumerate(zip(Xs, ys, strict=True)):
                X[k, i, :len(b)] = a
                Y[k, i, b, np.arange(len(b))] = 1.0
                v[k, i, :len(b)] = 1.0 / len(b)
        self.X, self.XT, self.Y, self.v = X, np.ascontiguousarray(np.swapaxes(X, 2, 3)), Y, v
        # the gradient's two terms: softmax(W A^T) (A/n_i) and the fixed T^T (A/n_i)
        self._Xv = X * v[..., None]
        self._YX = Y @ self._Xv  # (S, n, C, p)
        self._H = self._Xv @ self.XT  # (S, n, s, s): the steps in logit space
        self.weights = np.full(self.n, 1.0 / self.n)
        self.L = float(max(np.linalg.norm(a, 2) ** 2 / (2 * a.shape[0])
                           for Xs, _ in data for a in Xs))
        self.mu = 0.0
        self.x_star = np.full(self.d, np.nan)
        self.f_star = float("nan")

    def initial(self, splits: Sequence[int]) -> np.ndarray:
        """The initial models :math:`(W = 0, s)` of replicas on the given ``splits``,
        ``(R, d)``: ``x0`` of a run whose replica ``r`` trains on split ``splits[r]``."""
        s = np.asarray(splits)
        if s.ndim != 1 or s.size == 0 or not np.issubdtype(s.dtype, np.integer) \
                or s.min() < 0 or s.max() >= self.splits:
            raise ValueError(f"splits must be a non-empty 1-D array of integers in "
                             f"[0, {self.splits}), got {splits!r}")
        x0 = np.zeros((s.size, self.d))
        x0[:, -1] = s
        return x0

    def _split_of(self, y: np.ndarray) -> np.ndarray:
        """The split named by the last coordinate of ``y`` ``(..., d)``."""
        s = np.rint(np.asarray(y)[..., -1]).astype(np.intp)
        if s.size and (s.min() < 0 or s.max() >= self.splits):
            raise ValueError(f"the last coordinate of x must name a split in "
                             f"[0, {self.splits}), got {np.unique(s)!r}")
        return s

    # -- the hot path -------------------------------------------------------------------
    def _gather(self, y: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, ...]:
        """The padded data of the pairs (split of ``y``'s rows, client ``c``)."""
        k = self._split_of(y)
        return self.XT[k, c], self._Xv[k, c], self._YX[k, c]

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

    def client_gradients(self, y: np.ndarray, clients: np.ndarray) -> np.ndarray:
        r""":math:`\nabla f_{c_k}(y_k)`, ``y`` ``(K, d)``, ``clients`` ``(K,)``: ``(K, d)``
        float32 (0 in the split coordinate)."""
        y = np.asarray(y)
        K = y.shape[0]
        data = self._gather(y, np.asarray(clients, dtype=np.intp))
        W = np.asarray(y[:, :-1], dtype=np.float32).reshape(K, self.n_classes, self.p)
        out = np.zeros((K, self.d), dtype=np.float32)
        out[:, :-1] = self._grads(W, data).reshape(K, -1)
        return out

    def local_steps(self, y: np.ndarray, clients: np.ndarray, lr: float, steps: int, *,
                    correction: np.ndarray | None = None,
                    add_noise: Callable[[np.ndarray], None] | None = None,
                    out: np.ndarray | None = None) -> np.ndarray:
        r"""Capability ``LOCAL_STEPS``: :math:`\Delta_k = (y^0_k - y^\tau_k)/\eta =
        \sum_{j<\tau}(\nabla f_{c_k}(y^j_k) + \xi^j + u_k)`, ``(K, d)`` (the pairs' data
        gathered once for the :math:`\tau` steps)."""
        y = np.asarray(y)
        K, c = y.shape[0], np.asarray(clients, dtype=np.intp)
        if out is None:
            out = np.empty((K, self.d), dtype=np.float32)
        out[:, -1] = 0.0
        W = np.array(y[:, :-1], dtype=np.float32).reshape(K, self.n_classes, self.p)
        if add_noise is None and correction is None:
            out[:, :-1] = self._logit_steps(W, self._split_of(y), c, lr, int(steps)
                                            ).reshape(K, -1)
            return out
        data = self._gather(y, c)
        total = np.zeros_like(W)
        eta = np.float32(lr)
        g = np.zeros((K, self.d), dtype=np.float32)
        for _ in range(int(steps)):  # noise and corrections act on the full (K, d) rows
            g[:, :-1] = self._grads(W, data).reshape(K, -1)
            if add_noise is not None:
                add_noise(g)
            if correction is not None:
                g += correction
            if g[:, -1].any():
                raise ValueError("the noise or correction must leave the split coordinate "
                                 "(the last) at 0")
            gw = g[:, :-1].reshape(K, self.n_classes, self.p)
            total += gw
            W -= eta * gw
        out[:, :-1] = total.reshape(K, -1)
        return out

    def _logit_steps(self, W: np.ndarray, k: np.ndarray, c: np.ndarray, lr: float,
                     steps: int) -> np.ndarray:
        r"""The sum of the gradients of ``steps`` full-batch steps from :math:`W` ``(K, C, p)``,
        taken in logit space: with :math:`Z_j = W_j A^\top`, :math:`P_j =
        \operatorname{softmax}(Z_j)` and :math:`\tilde A = A/n_i`, the step
        :math:`W_{j+1} = W_j - \eta(P_j - T^\top)\tilde A` is
        :math:`Z_{j+1} = Z_j - \eta (P_j - T^\top) H`, :math:`H = \tilde A A^\top`
        (:math:`s\times s`, per split and client, computed once), and
        :math:`\sum_j g_j = (\sum_j P_j)\tilde A - \tau T^\top\tilde A`: two products a step
        fewer than in weight space (the same steps, other roundings)."""
        XT, YX, H, Y = self.XT[k, c], self._YX[k, c], self._H[k, c], self.Y[k, c]
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
        Psum *= self.v[k, c][:, None, :]  # (sum_j P_j) A/n_i, without gathering A/n_i
        total = Psum @ np.swapaxes(XT, 1, 2)
        total -= np.float32(steps) * YX
        return total

    # -- the protocol's full-batch quantities -------------------------------------------
    def client_losses(self, x: np.ndarray) -> np.ndarray:
        r""":math:`f_i(x)` for every client, ``(..., d)`` -> ``(..., n)``."""
        x = np.asarray(x, dtype=float)
        k = self._split_of(x)[..., None]
        W = x[..., None, :-1].reshape(*x.shape[:-1], 1, self.n_classes, self.p)
        c = np.arange(self.n)
        Z = W @ self.XT[k, c].astype(float)  # (..., n, C, s)
        m = Z.max(axis=-2, keepdims=True)
        lse = (m + np.log(np.exp(Z - m).sum(axis=-2, keepdims=True)))[..., 0, :]
        own = (Z * self.Y[k, c]).sum(axis=-2)
        return ((lse - own) * self.v[k, c]).sum(axis=-1)

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
        W = np.asarray(x, dtype=np.float32)[:, :-1].reshape(-1, self.p)  # (R C, p)
        Z = np.asarray(X, dtype=np.float32) @ W.T  # (N, R C): one product for every replica
        pred = np.argmax(Z.reshape(Z.shape[0], -1, self.n_classes), axis=2)  # (N, R)
        return (pred == np.asarray(y)[:, None]).mean(axis=0)

    def __repr__(self) -> str:
        return (f"SoftmaxRegression(n={self.n}, p={self.p}, n_classes={self.n_classes}, "
                f"splits={self.splits})")
