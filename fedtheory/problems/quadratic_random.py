r"""The random quadratic problems of
:meth:`fedtheory.problems.quadratic.QuadraticProblem.heterogeneous`: given :math:`L`,
:math:`\mu` and heterogeneity :math:`\sigma_G^2`, exactly."""

from __future__ import annotations

from typing import Any

import numpy as np

from fedtheory.problems.base import validate_weights
from fedtheory.validation import finite_real, positive_integer

__all__ = ["heterogeneous"]


def _orthogonal_with_first_column(v: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random orthogonal matrix whose first column is the unit vector ``v``."""
    d = v.shape[0]
    g = rng.standard_normal((d, d))
    g[:, 0] = v
    q, r = np.linalg.qr(g)
    q = q * np.sign(np.where(np.diag(r) == 0, 1.0, np.diag(r)))  # makes q[:, 0] = +v
    return q


def heterogeneous(
    cls: Any,
    n: int,
    d: int,
    L: float,
    mu: float,
    sigma_G2: float,
    rng: np.random.Generator,
    *,
    weights: np.ndarray | None = None,
    identical_hessians: bool = False,
    diagonal: bool = True,
    indefinite: bool = False,
    x_star: np.ndarray | None = None,
    offsets: np.ndarray | None = None,
) -> Any:
    r"""A random problem with given :math:`L`, :math:`\mu` and heterogeneity :math:`\sigma_G^2`.

    The Hessians' eigenvalues lie in :math:`[\mu, L]`; one client has eigenvalue :math:`L`
    and all clients share an eigenvector of eigenvalue :math:`\mu`, so that exactly

    .. math::

        \max_i \|A_i\|_2 = L,\quad \lambda_{\min}(\bar A) = \min_i \lambda_{\min}(A_i) = \mu,
        \quad \sum_i w_i \|\nabla f_i(x^\star)\|^2 = \sigma_G^2 ,

    the last by scaling the centers about :math:`x^\star` (which leaves :math:`x^\star`
    fixed). With ``identical_hessians`` every client has the same :math:`A`, the gradient
    differences :math:`\nabla f_i - \nabla f = A(\bar c - c_i)` are constant in :math:`x`, and
    :attr:`~fedtheory.problems.quadratic.QuadraticProblem.rho` :math:`= \sigma_G^2`. With
    ``indefinite`` (which requires ``mu == 0``) the eigenvalues lie in :math:`[-L, L]`,
    :math:`L` and :math:`-L/2` both occur: the :math:`f_i` are :math:`L`-smooth and
    non-convex.

    Parameters
    ----------
    cls:
        The class built, called as ``cls(hessians, centers, offsets, weights)``
        (:class:`~fedtheory.problems.quadratic.QuadraticProblem` or a subclass: this is its
        classmethod ``heterogeneous``).
    n, d:
        Number of clients and dimension (``d >= 2`` unless ``mu == L`` or ``indefinite``).
    L, mu:
        :math:`0 \le \mu \le L`, :math:`L > 0`.
    sigma_G2:
        :math:`\sigma_G^2 \ge 0`; positive requires ``n >= 2``.
    rng:
        Source of randomness.
    weights:
        Client weights (uniform by default).
    identical_hessians, diagonal, indefinite:
        See above; ``diagonal=False`` gives dense Hessians with random eigenvectors.
    x_star:
        Where to put the minimiser (the origin by default).
    offsets:
        :math:`e_i = f_i^\star` (zeros by default).
    """
    n = positive_integer("n", n)
    d = positive_integer("d", d)
    L = finite_real("L", L)
    mu = finite_real("mu", mu)
    sigma_G2 = finite_real("sigma_G2", sigma_G2)
    if L <= 0:
        raise ValueError(f"L must be positive, got {L!r}")
    if mu < 0:
        raise ValueError(f"mu must be non-negative, got {mu!r}")
    if mu > L:
        raise ValueError(f"mu must be <= L = {L!r}, got {mu!r}")
    if sigma_G2 < 0:
        raise ValueError(f"sigma_G2 must be non-negative, got {sigma_G2!r}")
    if sigma_G2 > 0 and n < 2:
        raise ValueError(f"sigma_G2 > 0 needs n >= 2 clients, got n={n!r}")
    if indefinite and mu != 0:
        raise ValueError(f"indefinite Hessians need mu == 0, got mu={mu!r}")
    if d < 2 and (mu < L or indefinite):
        raise ValueError(f"d must be >= 2 to have both mu < L (or indefinite), got d={d!r}")
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator, got {rng!r}")
    w = validate_weights(weights, n)
    target = np.zeros(d) if x_star is None else np.asarray(x_star, dtype=float)
    if target.shape != (d,):
        raise ValueError(f"x_star must have shape ({d},), got shape {target.shape}")

    k = 1 if identical_hessians else n
    if indefinite:
        lam = rng.uniform(-L, L, size=(k, d))
        lam[:, 0] = -0.5 * L  # a shared direction of negative curvature
        lam[0, 1] = L
    else:
        lam = rng.uniform(mu, L, size=(k, d))
        lam[:, 0] = mu  # shared eigenvector of eigenvalue mu: lambda_min(A_bar) = mu
        lam[0, -1] = L
    if diagonal:
        A = lam
    else:
        v = rng.standard_normal(d)
        v /= np.linalg.norm(v)
        Q = np.stack([_orthogonal_with_first_column(v, rng) for _ in range(k)])
        A = np.einsum("kij,kj,klj->kil", Q, lam, Q)
        A = 0.5 * (A + np.swapaxes(A, -1, -2))
    if identical_hessians:
        A = np.repeat(A, n, axis=0)

    # raw centers, then scale about x* (x* is linear in the centers)
    c = rng.standard_normal((n, d))
    raw = cls(A, c, offsets, w)
    c = c - raw.x_star  # now x* = 0
    g = raw._apply(A, -c)  # grad f_i(0) = A_i (0 - c_i)
    h0 = float(w @ np.sum(g**2, axis=-1))
    if sigma_G2 == 0:
        c = np.zeros_like(c)
    elif h0 <= 0:
        raise ValueError(
            f"cannot reach sigma_G2={sigma_G2!r}: the drawn problem has no heterogeneity "
            "(are all weights on one client?)"
        )
    else:
        c = c * np.sqrt(sigma_G2 / h0)
    return cls(A, c + target, offsets, w)
