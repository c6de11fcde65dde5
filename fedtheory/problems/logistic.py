r"""ℓ2-regularised logistic regression (binary and multinomial) on a federated data set.

Client :math:`i` holds :math:`s_i` samples :math:`(a_j, t_j)` (features with a bias column,
labels) and the objective

.. math::

    f_i(x) = \frac{1}{s_i} \sum_{j \in \mathcal D_i} \ell(x; a_j, t_j)
             + \frac{\lambda}{2} \|x\|^2, \qquad f(x) = \sum_{i=1}^n w_i f_i(x),

with :math:`w_i = s_i / \sum_k s_k` by default (then :math:`f` is the pooled empirical risk,
the weighting of seed 002, Algorithm 3) or :math:`w_i = 1/n`. The losses are

* binary (:math:`t_j \in \{0, 1\}`, :math:`x \in \mathbb R^p`):
  :math:`\ell = \log(1 + e^{-b_j a_j^\top x})`, :math:`b_j = 2 t_j - 1`;
* multinomial (:math:`C` classes, :math:`x = \operatorname{vec}(V)`, :math:`V \in
  \mathbb R^{C \times p}` row-major, so :math:`x_{cp + a} = V_{ca}`):
  :math:`\ell = \log \sum_c e^{(V a_j)_c} - (V a_j)_{t_j}`.

Constants, computed from the data (not guessed):

* smoothness: the Hessian of :math:`\ell` in the logits is :math:`\sigma(1-\sigma) \le 1/4`
  (binary) and :math:`\operatorname{Diag}(\pi) - \pi\pi^\top \preceq \tfrac12 I` (multinomial:
  a variance of a vector with unit norm is at most 1/2), so
  :math:`\nabla^2 f_i \preceq (c\, \|A_i\|_2^2 / s_i + \lambda) I` with :math:`c = 1/4` or
  :math:`1/2`, :math:`A_i` the client's design matrix. ``L_clients`` holds these and
  :math:`L = \max_i L_i`;
* strong convexity: :math:`\mu = \lambda` (the loss is convex, the regulariser
  :math:`\lambda`-strongly convex);
* :math:`x^\star`, :math:`f^\star`: damped Newton's method with an Armijo line search from
  :math:`0` until :math:`\|\nabla f(x)\| \le` ``tol``; ``grad_norm_star`` is the certificate,
  and by strong convexity :math:`f(x^\star) - \min f \le \|\nabla f(x^\star)\|^2 / (2\mu)`;
* :math:`\sigma_G^2 =` ``heterogeneity(x_star)`` :math:`= \sum_i w_i \|\nabla f_i(x^\star)\|^2`
  (since :math:`\nabla f(x^\star) = 0`): the gradient dissimilarity at the optimum.

The per-client data are stored padded, ``(n, s_max, p)`` with a mask, so that gradients of many
clients, each at its own point, are one batched matrix product.

Examples
--------
>>> prob = make_logistic_problem("breast_cancer", n_clients=4, alpha=1.0, seed=0, lam=1e-2)
>>> prob.n, prob.d
(4, 31)
>>> bool(prob.grad_norm_star < 1e-10)
True
>>> bool(np.allclose(prob.client_grads(prob.x_star).T @ prob.weights, 0.0, atol=1e-10))
True
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import ClassVar

import numpy as np
from scipy.special import expit, log_expit, softmax

from fedtheory.problems.base import Capability, validate_weights
from fedtheory.problems.datasets import FederatedData, federated_split

__all__ = ["LogisticProblem", "make_logistic_problem"]

#: Memory budget (float64 elements) of one gathered block in :meth:`client_gradients`.
_BLOCK_ELEMENTS = 1 << 22


class LogisticProblem:
    r"""Federated ℓ2-regularised logistic regression (see the module docstring).

    Parameters
    ----------
    data:
        A :class:`~fedtheory.problems.datasets.FederatedData`.
    lam:
        Regularisation :math:`\lambda > 0` (also the strong-convexity constant :math:`\mu`).
    weights:
        ``"size"`` (:math:`w_i \propto s_i`, default), ``"uniform"`` or an array ``(n,)`` of
        non-negative weights summing to 1.
    multinomial:
        Softmax over :math:`C` classes (``True``) or binary logistic (``False``, needs
        :math:`C = 2`). Default: binary iff :math:`C = 2`.
    tol:
        Target gradient norm of the Newton solve for :math:`x^\star`.
    """

    #: One optional path (:class:`~fedtheory.problems.base.Capability`): gradients on
    #: mini-batches of a client's samples (:meth:`minibatch_gradients`, for local mini-batch
    #: SGD); otherwise the simulator calls :meth:`client_gradients` (no ``out=``) step by step
    #: and uses ``loss - f_star``.
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {Capability.MINIBATCH_GRADIENTS})

    def __init__(
        self,
        data: FederatedData,
        lam: float = 1e-3,
        weights: str | np.ndarray = "size",
        multinomial: bool | None = None,
        tol: float = 1e-11,
    ) -> None:
        if not isinstance(data, FederatedData):
            raise ValueError(f"data must be a FederatedData, got {type(data).__name__}")
        if not (isinstance(lam, (int, float, np.floating)) and np.isfinite(lam) and lam > 0):
            raise ValueError(f"lam must be a positive finite number, got {lam!r}")
        if multinomial is None:
            multinomial = data.n_classes > 2
        if not multinomial and data.n_classes != 2:
            raise ValueError(
                f"multinomial=False needs 2 classes, got n_classes={data.n_classes!r}"
            )
        self.data = data
        self.lam = float(lam)
        self.multinomial = bool(multinomial)
        self.n = data.n_clients
        self.p = data.n_features
        self.n_classes = data.n_classes
        self._C = data.n_classes if self.multinomial else 1  # rows of V
        self.d = self.p * self._C
        self.sizes = data.sizes
        if np.any(self.sizes < 1):
            raise ValueError(f"every client needs at least one sample, got sizes {self.sizes}")
        self.weights = self._make_weights(weights)
        # padded per-client arrays
        s_max = int(self.sizes.max())
        self.s_max = s_max
        X = np.zeros((self.n, s_max, self.p))
        T = np.zeros((self.n, s_max, self._C))
        mask = np.zeros((self.n, s_max))
        for i, (Xi, yi) in enumerate(zip(data.X_clients, data.y_clients, strict=True)):
            s = Xi.shape[0]
            X[i, :s] = Xi
            T[i, :s] = self._targets(yi)
            mask[i, :s] = 1.0 / s
        self.X_padded, self.T_padded, self.mask = X, T, mask
        for a in (X, T, mask):
            a.flags.writeable = False
        self._Tt = np.swapaxes(T, -1, -2)  # (n, C, s_max) view
        self._padded32: tuple[np.ndarray, np.ndarray] | None = None
        # pooled arrays for f and its derivatives (no padding)
        self._X_all = np.concatenate(data.X_clients)
        self._T_all = self._targets(np.concatenate(data.y_clients)).T  # (C, N)
        self._sw_all = np.repeat(self.weights / self.sizes, self.sizes)
        # smoothness
        curv = 0.5 if self.multinomial else 0.25
        spec = np.linalg.norm(X, ord=2, axis=(1, 2)) ** 2  # ||A_i||_2^2 (padding adds nothing)
        self.L_clients = curv * spec / self.sizes + self.lam
        self.L = float(self.L_clients.max())
        self.mu = self.lam
        # optimum
        self.tol = float(tol)
        self.x_star, self.newton_iterations = self._newton(self.tol)
        self.x_star.flags.writeable = False
        self.f_star = float(self.loss(self.x_star))
        self.grad_norm_star = float(np.linalg.norm(self.grad(self.x_star)))
        self.sigma_G2 = float(self.heterogeneity(self.x_star))

    # ------------------------------------------------------------------ set-up helpers
    def _make_weights(self, weights: str | np.ndarray) -> np.ndarray:
        if isinstance(weights, str):
            if weights == "size":
                return self.sizes / self.sizes.sum()
            if weights == "uniform":
                return np.full(self.n, 1.0 / self.n)
            raise ValueError(f"weights must be 'size', 'uniform' or an array, got {weights!r}")
        return validate_weights(weights, self.n)

    def _targets(self, y: np.ndarray) -> np.ndarray:
        y = np.asarray(y, dtype=np.int64)
        if self.multinomial:
            return np.eye(self.n_classes)[y]
        return (2.0 * y - 1.0)[:, None]  # b_j in {-1, +1}

    def _V(self, x: np.ndarray) -> np.ndarray:
        """``x (..., d)`` as the weight matrix ``V (..., C, p)`` (classes first, row-major);
        float32 input stays float32, anything else becomes float64."""
        x = np.asarray(x)
        if x.dtype != np.float32:
            x = x.astype(float, copy=False)
        if x.ndim == 0 or x.shape[-1] != self.d:
            raise ValueError(f"x must have last dimension d = {self.d}, got shape {x.shape}")
        return x.reshape(*x.shape[:-1], self._C, self.p)

    # ------------------------------------------------------------------ the link
    # Logits are kept as (..., C, s): reductions over the C classes then run over a non-inner
    # axis, which numpy vectorises far better than a reduction over a short last axis.
    def _ell(self, Z: np.ndarray, T: np.ndarray) -> np.ndarray:
        """Per-sample loss from logits ``Z (..., C, s)`` and targets ``T`` (one-hot or b)."""
        if self.multinomial:
            zmax = Z.max(axis=-2, keepdims=True)
            lse = np.log(np.exp(Z - zmax).sum(axis=-2)) + zmax[..., 0, :]
            return lse - (Z * T).sum(axis=-2)
        return -log_expit(T[..., 0, :] * Z[..., 0, :])

    def _dell(self, Z: np.ndarray, T: np.ndarray) -> np.ndarray:
        """Derivative of the loss in the logits, shape of ``Z`` (``Z`` is overwritten)."""
        if self.multinomial:  # softmax(Z) - T, in place
            Z -= Z.max(axis=-2, keepdims=True)
            np.exp(Z, out=Z)
            Z /= Z.sum(axis=-2, keepdims=True)
            Z -= T
            return Z
        return -T * expit(-T * Z)

    # ------------------------------------------------------------------ the interface
    def client_losses(self, x: np.ndarray) -> np.ndarray:
        """:math:`f_i(x)` for every client, x of shape ``(..., d)`` -> ``(..., n)``."""
        V = self._V(x)
        Z = V[..., None, :, :] @ np.swapaxes(self.X_padded, -1, -2)  # (..., n, C, s)
        ell = self._ell(Z, self._Tt)  # (..., n, s)
        reg = 0.5 * self.lam * np.sum(np.asarray(x, dtype=float) ** 2, axis=-1)
        return np.sum(ell * self.mask, axis=-1) + reg[..., None]

    def loss(self, x: np.ndarray) -> np.ndarray | float:
        r""":math:`f(x) = \sum_i w_i f_i(x)`, x of shape ``(..., d)``."""
        Z = self._V(x) @ self._X_all.T  # (..., C, N)
        val = self._ell(Z, self._T_all) @ self._sw_all
        val = val + 0.5 * self.lam * np.sum(np.asarray(x, dtype=float) ** 2, axis=-1)
        return float(val) if np.ndim(val) == 0 else val

    def grad(self, x: np.ndarray) -> np.ndarray:
        r""":math:`\nabla f(x)`, x of shape ``(..., d)`` -> ``(..., d)``."""
        R = self._dell(self._V(x) @ self._X_all.T, self._T_all)
        R *= self._sw_all
        G = R @ self._X_all  # (..., C, p)
        return G.reshape(*G.shape[:-2], self.d) + self.lam * np.asarray(x, dtype=float)

    def _grads_padded(self, V: np.ndarray, X: np.ndarray, T: np.ndarray, M: np.ndarray
                      ) -> np.ndarray:
        """Gradients at ``V (.., k, C, p)`` of clients with padded data ``X (.., k, s, p)``,
        targets ``T (.., k, C, s)`` and row weights ``M (.., k, s)``."""
        R = self._dell(V @ np.swapaxes(X, -1, -2), T)  # (..., k, C, s)
        R *= M[..., None, :]
        G = R @ X  # (..., k, C, p)
        return G.reshape(*G.shape[:-2], self.d) + self.lam * V.reshape(*V.shape[:-2], self.d)

    def client_grads(self, x: np.ndarray) -> np.ndarray:
        r"""Every client's :math:`\nabla f_i(x)` at a common x: ``(..., d)`` -> ``(..., n, d)``."""
        V = self._V(x)[..., None, :, :]
        V = np.broadcast_to(V, (*V.shape[:-3], self.n, self._C, self.p))
        return self._grads_padded(V, self.X_padded, self._Tt, self.mask)

    def client_grads_at(self, y: np.ndarray) -> np.ndarray:
        r"""Every client's gradient at its own point: ``y (..., n, d)`` -> ``(..., n, d)``.

        Row ``i`` of the result is :math:`\nabla f_i(y_i)`; this is FedAvg's local step for all
        clients (and replicas on the leading axes) in one batched product.
        """
        y = np.asarray(y, dtype=float)
        if y.ndim < 2 or y.shape[-2] != self.n:
            raise ValueError(f"y must have shape (..., n={self.n}, d), got {y.shape}")
        return self._grads_padded(self._V(y), self.X_padded, self._Tt, self.mask)

    def client_gradients(self, y: np.ndarray, clients: np.ndarray) -> np.ndarray:
        r"""Row-wise client gradients :math:`\nabla f_{c_k}(y_k)`: ``y (K, d)``, ``clients (K,)``.

        The clients' padded data are gathered in blocks (bounded memory) and each block is one
        batched matrix product.
        """
        y = np.asarray(y, dtype=float)
        c = np.asarray(clients)
        if y.ndim != 2 or y.shape[1] != self.d:
            raise ValueError(f"y must have shape (K, d={self.d}), got {y.shape}")
        if c.shape != (y.shape[0],) or not np.issubdtype(c.dtype, np.integer):
            raise ValueError(f"clients must be an integer array of shape ({y.shape[0]},), "
                             f"got {c!r}")
        if c.size and (c.min() < 0 or c.max() >= self.n):
            raise ValueError(f"clients must be in [0, {self.n}), got {c!r}")
        out = np.empty_like(y)
        block = max(1, _BLOCK_ELEMENTS // (self.s_max * (self.p + self._C)))
        V = self._V(y)
        for lo in range(0, y.shape[0], block):
            cb = c[lo:lo + block]
            s = int(self.sizes[cb].max()) if cb.size else 0
            out[lo:lo + block] = self._grads_padded(
                V[lo:lo + block], self.X_padded[cb, :s], self._Tt[cb, :, :s],
                self.mask[cb, :s])
        return out

    def minibatch_grads_at(self, y: np.ndarray, batch: np.ndarray,
                           valid: np.ndarray | None = None,
                           clients: np.ndarray | None = None) -> np.ndarray:
        r"""Mini-batch gradients of clients, each at its own point.

        Parameters
        ----------
        y:
            Points, shape ``(..., k, d)``: one per client of ``clients``.
        batch:
            Row indices into each client's data, shape ``(..., k, B)`` (leading axes
            broadcastable to those of ``y``: replicas of several runs may share batches), in
            ``[0, s_i)``.
        valid:
            Optional boolean mask of the shape of ``batch``; the gradient averages the valid
            rows only (a client with no valid row gets the gradient of the regulariser alone).
        clients:
            The clients on axis ``-2`` of ``y``, shape ``(k,)`` (default: all ``n`` in order).

        Returns
        -------
        numpy.ndarray
            :math:`\lambda y_i + \frac{1}{|B_i|}\sum_{j \in B_i} \nabla \ell(y_i; a_j, t_j)`,
            shape ``(..., k, d)``, computed in float32 when ``y`` is float32 (simulations that
            trade precision for speed) and in float64 otherwise.
        """
        y = np.asarray(y)
        if y.dtype != np.float32:
            y = y.astype(float, copy=False)
        batch = np.asarray(batch)
        if clients is None:
            cl = np.arange(self.n)
        else:
            cl = np.asarray(clients)
            if (cl.ndim != 1 or not np.issubdtype(cl.dtype, np.integer)
                    or (cl.size and (cl.min() < 0 or cl.max() >= self.n))):
                raise ValueError(f"clients must be a 1-D integer array in [0, {self.n}), "
                                 f"got {clients!r}")
        k = cl.size
        if y.ndim < 2 or y.shape[-2] != k:
            raise ValueError(f"y must have shape (..., {k}, d), got {y.shape}")
        try:
            ok = np.broadcast_shapes(batch.shape[:-1], y.shape[:-1]) == y.shape[:-1]
        except ValueError:
            ok = False
        if batch.ndim < 2 or not ok:
            raise ValueError(f"batch must have shape (..., {k}, B) broadcastable to "
                             f"{y.shape[:-1]} + (B,), got {batch.shape}")
        v = np.ones(batch.shape, dtype=bool) if valid is None else np.asarray(valid, dtype=bool)
        if v.shape != batch.shape:
            raise ValueError(f"valid must have the shape of batch {batch.shape}, got {v.shape}")
        if np.any(v & ((batch < 0) | (batch >= self.sizes[cl][:, None]))):
            raise ValueError("batch has row indices outside [0, s_i) for some client")
        X, T = self._padded(y.dtype)
        # rows of the clients' padded data as rows of one (n s_max, .) table: np.take of flat
        # indices copies them in one pass (two index arrays cost numpy's general fancy
        # indexing far more)
        flat = (cl * self.s_max)[:, None] + batch
        Xb = np.take(X.reshape(-1, self.p), flat, axis=0)  # (..., k, B, p)
        Tb = np.swapaxes(np.take(T.reshape(-1, T.shape[-1]), flat, axis=0), -1, -2)  # (.., C, B)
        cnt = v.sum(axis=-1, keepdims=True)
        M = np.where(v, 1.0 / np.maximum(cnt, 1), 0.0).astype(X.dtype, copy=False)
        return self._grads_padded(self._V(y), Xb, Tb, M)

    def minibatch_gradients(self, y: np.ndarray, clients: np.ndarray, samples: np.ndarray,
                            valid: np.ndarray) -> np.ndarray:
        r"""Row ``k``: client :math:`c_k`'s mini-batch gradient at :math:`y_k`,
        :math:`\lambda y_k + \frac{1}{|B_k|}\sum_{j\in B_k}\nabla\ell(y_k; a_j, t_j)` with
        :math:`B_k` = ``samples[k, valid[k]]`` (capability ``MINIBATCH_GRADIENTS``): ``y``
        ``(K, d)``, ``clients`` ``(K,)``, ``samples`` and ``valid`` ``(K, B)``; in float32 when
        ``y`` is float32. :meth:`minibatch_grads_at` with the clients on the rows."""
        return self.minibatch_grads_at(y, samples, valid, clients=clients)

    def _padded(self, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
        """Padded features and targets in float32 (for float32 ``y``) or float64."""
        if dtype != np.float32:
            return self.X_padded, self.T_padded
        if self._padded32 is None:
            self._padded32 = (self.X_padded.astype(np.float32),
                              self.T_padded.astype(np.float32))
        return self._padded32

    def heterogeneity(self, x: np.ndarray) -> np.ndarray | float:
        r""":math:`\sum_i w_i \|\nabla f_i(x) - \nabla f(x)\|^2`, x of shape ``(..., d)``."""
        G = self.client_grads(x)
        gbar = np.einsum("i,...id->...d", self.weights, G)
        val = np.einsum("i,...i->...", self.weights, np.sum((G - gbar[..., None, :]) ** 2, -1))
        return float(val) if np.ndim(val) == 0 else val

    # ------------------------------------------------------------------ extras
    def hessian(self, x: np.ndarray) -> np.ndarray:
        r""":math:`\nabla^2 f(x)` at a single point ``x (d,)``, shape ``(d, d)``."""
        V = self._V(x)
        if V.ndim != 2:
            raise ValueError(f"x must have shape (d,), got {np.shape(x)}")
        Z = self._X_all @ V.T  # (N, C)
        Xs = self._X_all * self._sw_all[:, None]
        if self.multinomial:
            P = softmax(Z, axis=-1)
            D = P[:, :, None] * (np.eye(self._C) - P[:, None, :])  # (N, C, C)
        else:
            s = expit(Z)
            D = (s * (1 - s))[:, :, None]
        H = np.empty((self._C, self.p, self._C, self.p))
        for c in range(self._C):  # C <= 10 products (N, p)^T (N, C p)
            B = (D[:, c, :, None] * self._X_all[:, None, :]).reshape(len(Xs), -1)
            H[c] = (Xs.T @ B).reshape(self.p, self._C, self.p)
        return H.reshape(self.d, self.d) + self.lam * np.eye(self.d)

    def accuracy(self, x: np.ndarray, X: np.ndarray | None = None,
                 y: np.ndarray | None = None) -> np.ndarray | float:
        """Classification accuracy of ``x (..., d)`` on ``(X, y)`` (default: validation set)."""
        X = self.data.X_val if X is None else np.asarray(X, dtype=float)
        y = self.data.y_val if y is None else np.asarray(y)
        Z = self._V(x) @ X.T  # (..., C, N)
        pred = np.argmax(Z, axis=-2) if self.multinomial else (Z[..., 0, :] > 0).astype(np.int64)
        acc = np.mean(pred == y, axis=-1)
        return float(acc) if np.ndim(acc) == 0 else acc

    def _newton(self, tol: float, max_iter: int = 100) -> tuple[np.ndarray, int]:
        """Damped Newton from 0: Armijo backtracking on f; once the predicted decrease is below
        f's floating-point resolution, full steps are accepted while they reduce |grad f|."""
        x = np.zeros(self.d)
        fx = self.loss(x)
        g = self.grad(x)
        for it in range(1, max_iter + 1):
            gnorm = float(np.linalg.norm(g))
            if gnorm <= tol:
                return x, it - 1
            step = np.linalg.solve(self.hessian(x), g)
            dec = float(g @ step)
            if dec <= 1e-13 * max(1.0, abs(fx)):  # quadratic phase: f cannot see the decrease
                x_new = x - step
                g_new = self.grad(x_new)
                if np.linalg.norm(g_new) >= gnorm:
                    return x, it  # no further progress possible in floating point
                x, fx, g = x_new, self.loss(x_new), g_new
                continue
            t = 1.0
            while True:
                x_new = x - t * step
                f_new = self.loss(x_new)
                if f_new <= fx - 1e-4 * t * dec:
                    break
                t *= 0.5
                if t < 1e-10:
                    raise RuntimeError(f"Newton line search failed at |grad f| = {gnorm:.3g}")
            x, fx, g = x_new, f_new, self.grad(x_new)
        raise RuntimeError(f"Newton did not converge in {max_iter} iterations: "
                           f"|grad f| = {np.linalg.norm(g):.3g}")

    @classmethod
    def stack(cls, problems: Sequence[LogisticProblem]) -> LogisticProblem:
        r"""The flat problem of a :class:`~fedtheory.problems.stack.ProblemStack`: one
        problem of :math:`Rn` clients whose client :math:`rn + i` holds ``problems[r]``'s
        client :math:`i`'s samples (same :math:`\lambda`, link and classes; uniform weights and
        no optimum solved: only its clients' gradients are used), so that the engine's local
        work on every (replica, client) pair is one batched product."""
        probs = list(problems)
        if not probs or not all(isinstance(p, LogisticProblem) for p in probs):
            raise ValueError(f"problems must be a non-empty sequence of LogisticProblem, "
                             f"got {problems!r}")
        first = probs[0]
        for k, q in enumerate(probs):
            if (q.lam, q.multinomial, q.n_classes, q.p) != (first.lam, first.multinomial,
                                                            first.n_classes, first.p):
                raise ValueError(f"problems must share lam, the link, the classes and the "
                                 f"features to be stacked: problems[{k}] differs from "
                                 f"problems[0]")
        data = FederatedData(
            X_clients=tuple(a for q in probs for a in q.data.X_clients),
            y_clients=tuple(b for q in probs for b in q.data.y_clients),
            X_val=first.data.X_val, y_val=first.data.y_val, n_classes=first.n_classes,
            name=first.data.name, params={"stacked": len(probs)})
        return cls(data, lam=first.lam, weights="uniform", multinomial=first.multinomial,
                   tol=float("inf"))

    def __repr__(self) -> str:
        kind = "multinomial" if self.multinomial else "binary"
        return (f"LogisticProblem({self.data.name!r}, {kind}, n={self.n}, d={self.d}, "
                f"lam={self.lam:g}, L={self.L:.4g}, f*={self.f_star:.6g})")


# A pure memo (one process): the value is a function of the arguments only, never of what
# ran before, and is not modified by its readers (issue 18: the one cache keeps the rest).
@lru_cache(maxsize=16)
def make_logistic_problem(
    name: str = "digits",
    n_clients: int = 32,
    alpha: float = 0.5,
    seed: int = 0,
    lam: float = 1e-3,
    unbalance: tuple[float, int, int] | None = None,
    val_fraction: float = 0.2,
    weights: str = "size",
    multinomial: bool | None = None,
) -> LogisticProblem:
    """Split a bundled data set (:func:`~fedtheory.problems.datasets.federated_split`) and
    build its :class:`LogisticProblem`; cached, so treat the result as read-only."""
    data = federated_split(name, n_clients=n_clients, alpha=alpha, seed=seed,
                           val_fraction=val_fraction, unbalance=unbalance)
    return LogisticProblem(data, lam=lam, weights=weights, multinomial=multinomial)
