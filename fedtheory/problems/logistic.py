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
* multinomial (:math:`C` classes, :math:`x = \operatorname{vec}(W)`, :math:`W \in
  \mathbb R^{p \times C}` row-major): :math:`\ell = \log \sum_c e^{(a_j^\top W)_c} -
  (a_j^\top W)_{t_j}`.

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

from functools import lru_cache

import numpy as np
from scipy.special import expit, log_expit, logsumexp, softmax

from fedtheory.problems.base import validate_weights
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
        self._C = data.n_classes if self.multinomial else 1  # columns of W
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
        # pooled arrays for f and its derivatives (no padding)
        self._X_all = np.concatenate(data.X_clients)
        self._T_all = self._targets(np.concatenate(data.y_clients))
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

    def _W(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if x.ndim == 0 or x.shape[-1] != self.d:
            raise ValueError(f"x must have last dimension d = {self.d}, got shape {x.shape}")
        return x.reshape(*x.shape[:-1], self.p, self._C)

    # ------------------------------------------------------------------ the link
    def _ell(self, Z: np.ndarray, T: np.ndarray) -> np.ndarray:
        """Per-sample loss from logits ``Z (..., C)`` and targets ``T`` (one-hot or b)."""
        if self.multinomial:
            return logsumexp(Z, axis=-1) - np.sum(T * Z, axis=-1)
        return -log_expit(T[..., 0] * Z[..., 0])

    def _dell(self, Z: np.ndarray, T: np.ndarray) -> np.ndarray:
        """Derivative of the loss in the logits, shape of ``Z``."""
        if self.multinomial:
            return softmax(Z, axis=-1) - T
        return -T * expit(-T * Z)

    # ------------------------------------------------------------------ the interface
    def client_losses(self, x: np.ndarray) -> np.ndarray:
        """:math:`f_i(x)` for every client, x of shape ``(..., d)`` -> ``(..., n)``."""
        W = self._W(x)
        Z = self.X_padded @ W[..., None, :, :]  # (..., n, s, C)
        ell = self._ell(Z, self.T_padded)  # (..., n, s)
        reg = 0.5 * self.lam * np.sum(np.asarray(x, dtype=float) ** 2, axis=-1)
        return np.sum(ell * self.mask, axis=-1) + reg[..., None]

    def loss(self, x: np.ndarray) -> np.ndarray | float:
        r""":math:`f(x) = \sum_i w_i f_i(x)`, x of shape ``(..., d)``."""
        W = self._W(x)
        Z = self._X_all @ W  # (..., N, C)
        val = np.sum(self._ell(Z, self._T_all) * self._sw_all, axis=-1)
        val = val + 0.5 * self.lam * np.sum(np.asarray(x, dtype=float) ** 2, axis=-1)
        return float(val) if np.ndim(val) == 0 else val

    def grad(self, x: np.ndarray) -> np.ndarray:
        r""":math:`\nabla f(x)`, x of shape ``(..., d)`` -> ``(..., d)``."""
        W = self._W(x)
        R = self._dell(self._X_all @ W, self._T_all) * self._sw_all[:, None]
        G = np.swapaxes(self._X_all, -1, -2) @ R  # (..., p, C)
        return G.reshape(*G.shape[:-2], self.d) + self.lam * np.asarray(x, dtype=float)

    def _grads_padded(self, W: np.ndarray, X: np.ndarray, T: np.ndarray, M: np.ndarray
                      ) -> np.ndarray:
        """Gradients of clients with padded data ``X (.., k, s, p)`` at ``W (.., k, p, C)``."""
        R = self._dell(X @ W, T) * M[..., None]  # (..., k, s, C)
        G = np.swapaxes(X, -1, -2) @ R  # (..., k, p, C)
        return G.reshape(*G.shape[:-2], self.d) + self.lam * W.reshape(*W.shape[:-2], self.d)

    def client_grads(self, x: np.ndarray) -> np.ndarray:
        r"""Every client's :math:`\nabla f_i(x)` at a common x: ``(..., d)`` -> ``(..., n, d)``."""
        W = self._W(x)[..., None, :, :]
        W = np.broadcast_to(W, (*W.shape[:-3], self.n, self.p, self._C))
        return self._grads_padded(W, self.X_padded, self.T_padded, self.mask)

    def client_grads_at(self, y: np.ndarray) -> np.ndarray:
        r"""Every client's gradient at its own point: ``y (..., n, d)`` -> ``(..., n, d)``.

        Row ``i`` of the result is :math:`\nabla f_i(y_i)`; this is FedAvg's local step for all
        clients (and replicas on the leading axes) in one batched product.
        """
        y = np.asarray(y, dtype=float)
        if y.ndim < 2 or y.shape[-2] != self.n:
            raise ValueError(f"y must have shape (..., n={self.n}, d), got {y.shape}")
        return self._grads_padded(self._W(y), self.X_padded, self.T_padded, self.mask)

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
        W = self._W(y)
        for lo in range(0, y.shape[0], block):
            cb = c[lo:lo + block]
            s = int(self.sizes[cb].max()) if cb.size else 0
            out[lo:lo + block] = self._grads_padded(
                W[lo:lo + block], self.X_padded[cb, :s], self.T_padded[cb, :s],
                self.mask[cb, :s])
        return out

    def minibatch_grads_at(self, y: np.ndarray, batch: np.ndarray,
                           valid: np.ndarray | None = None) -> np.ndarray:
        r"""Mini-batch gradients of every client at its own point.

        Parameters
        ----------
        y:
            Points, shape ``(..., n, d)``.
        batch:
            Row indices into each client's data, shape ``(..., n, B)``, in ``[0, s_i)``.
        valid:
            Optional boolean mask ``(..., n, B)``; the gradient averages the valid rows only
            (a client with no valid row gets the gradient of the regulariser alone).

        Returns
        -------
        numpy.ndarray
            :math:`\lambda y_i + \frac{1}{|B_i|}\sum_{j \in B_i} \nabla \ell(y_i; a_j, t_j)`,
            shape ``(..., n, d)``.
        """
        y = np.asarray(y, dtype=float)
        batch = np.asarray(batch)
        if y.ndim < 2 or y.shape[-2] != self.n:
            raise ValueError(f"y must have shape (..., n={self.n}, d), got {y.shape}")
        if batch.shape[:-1] != y.shape[:-1]:
            raise ValueError(f"batch must have shape {y.shape[:-1]} + (B,), got {batch.shape}")
        v = np.ones(batch.shape, dtype=bool) if valid is None else np.asarray(valid, dtype=bool)
        if v.shape != batch.shape:
            raise ValueError(f"valid must have the shape of batch {batch.shape}, got {v.shape}")
        if np.any(v & ((batch < 0) | (batch >= self.sizes[:, None]))):
            raise ValueError("batch has row indices outside [0, s_i) for some client")
        ii = np.arange(self.n)[:, None]
        Xb = self.X_padded[ii, batch]  # (..., n, B, p)
        Tb = self.T_padded[ii, batch]
        cnt = v.sum(axis=-1, keepdims=True)
        M = np.where(v, 1.0 / np.maximum(cnt, 1), 0.0)
        return self._grads_padded(self._W(y), Xb, Tb, M)

    def heterogeneity(self, x: np.ndarray) -> np.ndarray | float:
        r""":math:`\sum_i w_i \|\nabla f_i(x) - \nabla f(x)\|^2`, x of shape ``(..., d)``."""
        G = self.client_grads(x)
        gbar = np.einsum("i,...id->...d", self.weights, G)
        val = np.einsum("i,...i->...", self.weights, np.sum((G - gbar[..., None, :]) ** 2, -1))
        return float(val) if np.ndim(val) == 0 else val

    # ------------------------------------------------------------------ extras
    def hessian(self, x: np.ndarray) -> np.ndarray:
        r""":math:`\nabla^2 f(x)` at a single point ``x (d,)``, shape ``(d, d)``."""
        W = self._W(x)
        if W.ndim != 2:
            raise ValueError(f"x must have shape (d,), got {np.shape(x)}")
        Z = self._X_all @ W
        Xs = self._X_all * self._sw_all[:, None]
        if self.multinomial:
            P = softmax(Z, axis=-1)
            D = P[:, :, None] * (np.eye(self._C) - P[:, None, :])  # (N, C, C)
        else:
            s = expit(Z)
            D = (s * (1 - s))[:, :, None]
        H = np.empty((self.p, self._C, self.p, self._C))
        for c in range(self._C):  # C <= 10 small products
            H[:, c] = np.einsum("ja,jbe->abe", Xs, self._X_all[:, :, None] * D[:, None, c, :])
        H = H.reshape(self.d, self.d)
        return H + self.lam * np.eye(self.d)

    def accuracy(self, x: np.ndarray, X: np.ndarray | None = None,
                 y: np.ndarray | None = None) -> np.ndarray | float:
        """Classification accuracy of ``x (..., d)`` on ``(X, y)`` (default: validation set)."""
        X = self.data.X_val if X is None else np.asarray(X, dtype=float)
        y = self.data.y_val if y is None else np.asarray(y)
        Z = X @ self._W(x)  # (..., N, C)
        pred = np.argmax(Z, axis=-1) if self.multinomial else (Z[..., 0] > 0).astype(np.int64)
        acc = np.mean(pred == y, axis=-1)
        return float(acc) if np.ndim(acc) == 0 else acc

    def _newton(self, tol: float, max_iter: int = 100) -> tuple[np.ndarray, int]:
        x = np.zeros(self.d)
        fx = self.loss(x)
        for it in range(1, max_iter + 1):
            g = self.grad(x)
            if np.linalg.norm(g) <= tol:
                return x, it - 1
            step = np.linalg.solve(self.hessian(x), g)
            t, dec = 1.0, float(g @ step)
            while True:
                x_new = x - t * step
                f_new = self.loss(x_new)
                if f_new <= fx - 1e-4 * t * dec or t < 1e-12:
                    break
                t *= 0.5
            if t < 1e-12:  # no decrease possible in floating point: at the optimum
                return x, it
            x, fx = x_new, f_new
        if np.linalg.norm(self.grad(x)) > max(tol, 1e-8):
            raise RuntimeError(f"Newton did not converge: |grad f| = {np.linalg.norm(g):.3g}")
        return x, max_iter

    def __repr__(self) -> str:
        kind = "multinomial" if self.multinomial else "binary"
        return (f"LogisticProblem({self.data.name!r}, {kind}, n={self.n}, d={self.d}, "
                f"lam={self.lam:g}, L={self.L:.4g}, f*={self.f_star:.6g})")


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
