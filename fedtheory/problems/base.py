r"""The interface every federated optimisation problem offers (duck-typed).

A federated problem has :math:`n` clients with local objectives :math:`f_i:\mathbb R^d\to\mathbb R`
and the global objective

.. math::

    f(x) = \sum_{i=1}^n w_i f_i(x), \qquad w_i \ge 0,\ \ \sum_i w_i = 1 .

Every method is vectorised over leading axes of ``x`` (replicas): ``x`` of shape ``(..., d)``.
The simulator's hot path is :meth:`Problem.client_gradients`, which receives only the
(replica, client) pairs that compute a gradient, flattened to ``K`` rows.

:class:`Problem` is a :class:`typing.Protocol`: any object with these attributes is a problem,
no inheritance needed (``isinstance(obj, Problem)`` checks the names only).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Problem", "validate_weights"]


@runtime_checkable
class Problem(Protocol):
    r"""A federated problem :math:`f = \sum_i w_i f_i` (see the module docstring).

    Attributes
    ----------
    n:
        Number of clients.
    d:
        Dimension of the model :math:`x`.
    weights:
        :math:`w \in \Delta^n`, shape ``(n,)`` (uniform :math:`1/n` unless stated).
    L:
        Every :math:`f_i` is :math:`L`-smooth: :math:`\|\nabla f_i(x)-\nabla f_i(y)\|\le L\|x-y\|`.
    mu:
        :math:`f` is :math:`\mu`-strongly convex (``0.0`` if it is not strongly convex).
    x_star:
        The minimiser of :math:`f`, shape ``(d,)``.
    f_star:
        :math:`f(x^\star)`.
    """

    n: int
    d: int
    weights: np.ndarray
    L: float
    mu: float
    x_star: np.ndarray
    f_star: float

    def loss(self, x: np.ndarray) -> np.ndarray:
        """:math:`f(x)`, ``x`` of shape ``(..., d)`` -> ``(...)``."""
        ...

    def client_losses(self, x: np.ndarray) -> np.ndarray:
        """:math:`(f_1(x), \\dots, f_n(x))`, ``(..., d)`` -> ``(..., n)``."""
        ...

    def grad(self, x: np.ndarray) -> np.ndarray:
        """:math:`\\nabla f(x)`, ``(..., d)`` -> ``(..., d)``."""
        ...

    def client_grads(self, x: np.ndarray) -> np.ndarray:
        """Every client's gradient at a common point: ``(..., d)`` -> ``(..., n, d)``."""
        ...

    def client_gradients(self, y: np.ndarray, clients: np.ndarray) -> np.ndarray:
        """Row ``k``: :math:`\\nabla f_{c_k}(y_k)`; ``y`` ``(K, d)``, ``clients`` ``(K,)``."""
        ...

    def heterogeneity(self, x: np.ndarray) -> np.ndarray:
        """:math:`\\sum_i w_i\\|\\nabla f_i(x)-\\nabla f(x)\\|^2`, ``(..., d)`` -> ``(...)``."""
        ...


def validate_weights(weights: np.ndarray | list[float] | None, n: int) -> np.ndarray:
    """Return the client weights as a float array of shape ``(n,)`` (uniform when ``None``).

    Raises ``ValueError`` naming the argument and the bad value when the weights have the wrong
    shape, are negative or not finite, or do not sum to 1 (within ``1e-9``).

    >>> validate_weights(None, 4)
    array([0.25, 0.25, 0.25, 0.25])
    >>> validate_weights([0.5, 0.6], 2)
    Traceback (most recent call last):
    ...
    ValueError: weights must sum to 1, got sum 1.1
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if weights is None:
        return np.full(int(n), 1.0 / n)
    w = np.asarray(weights, dtype=float)
    if w.shape != (n,):
        raise ValueError(f"weights must have shape ({n},), got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError(f"weights must be finite, got {w[~np.isfinite(w)][0]!r}")
    if np.any(w < 0):
        raise ValueError(f"weights must be non-negative, got {w[w < 0][0]!r}")
    total = float(w.sum())
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"weights must sum to 1, got sum {total!r}")
    return w
