r"""Federations of seed 004's experiments: a clustered one and a general non-iid one.

*Clustered* (seed 004, Section 6): :math:`K` clients in :math:`C` clusters of equal size
:math:`K/C`; inside a cluster every client has the same data distribution.

- :func:`clustered_quadratic`: client :math:`i` of cluster :math:`c(i)` holds
  :math:`f_i(x) = \tfrac12 (x - c_{c(i)})^\top A_{c(i)} (x - c_{c(i)})` (diagonal
  :math:`A_c` with eigenvalues in :math:`[\mu, L]`, centres :math:`c_c` spread so that the
  cluster gradients at :math:`x^\star` have :math:`\frac1K\sum_i\|\nabla f_i(x^\star)\|^2 =
  \sigma_G^2`); with ``within > 0`` each client's centre is moved by
  :math:`\mathcal N(0, \text{within}^2 I/d)` (friends that are similar, not identical).
  Clients of one cluster then differ only by their gradient noise.
- :func:`clustered_digits`: the digits data set (:mod:`fedtheory.problems.datasets`), cluster
  :math:`c` holding the classes :math:`\{c, c + C, c + 2C, \dots\}` (two digits each for
  :math:`C = 5`), its samples dealt at random into :math:`K/C` equal shares; multinomial
  logistic regression with uniform weights :math:`1/K` (the seed's :math:`f`).

*General non-iid*: :func:`general_quadratic` (:meth:`QuadraticProblem.heterogeneous`) and
:func:`general_digits` (a Dirichlet label split, :func:`make_logistic_problem`, uniform
weights).

:func:`cluster_labels` gives the labels :math:`c(i)` (client :math:`i` is in cluster
:math:`\lfloor i C / K\rfloor`).

>>> prob = clustered_quadratic(20, 5, d=4, seed=0)
>>> labels = cluster_labels(20, 5)
>>> bool(np.allclose(prob.centers[labels == 1], prob.centers[labels == 1][0]))
True
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from fedtheory.problems.datasets import FederatedData, federated_split
from fedtheory.problems.logistic import LogisticProblem, make_logistic_problem
from fedtheory.problems.quadratic import QuadraticProblem
from fedtheory.validation import nonnegative_real

__all__ = ["cluster_labels", "clustered_digits", "clustered_quadratic", "general_digits",
           "general_quadratic"]


def _sizes(n: int, clusters: int) -> tuple[int, int]:
    for name, v in (("n", n), ("clusters", clusters)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    if n % clusters:
        raise ValueError(f"clusters must divide n={n} (clusters of equal size), got {clusters!r}")
    return int(n), int(clusters)


def cluster_labels(n: int, clusters: int) -> np.ndarray:
    r"""The cluster of each client, :math:`c(i) = \lfloor iC/K\rfloor`: ``(n,)`` int.

    >>> cluster_labels(6, 3).tolist()
    [0, 0, 1, 1, 2, 2]
    """
    n, clusters = _sizes(n, clusters)
    return np.repeat(np.arange(clusters, dtype=np.intp), n // clusters)


def clustered_quadratic(n: int = 20, clusters: int = 5, *, d: int = 10, L: float = 1.0,
                        mu: float = 0.1, sigma_G2: float = 1.0, within: float = 0.0,
                        seed: int = 0) -> QuadraticProblem:
    r"""The clustered quadratic federation (module docstring): ``clusters`` distinct
    quadratics (:meth:`QuadraticProblem.heterogeneous` over the clusters), each repeated for
    its :math:`K/C` clients; ``within`` moves each client's centre by
    :math:`\mathcal N(0, \text{within}^2 I_d/d)`."""
    n, clusters = _sizes(n, clusters)
    within = nonnegative_real("within", within)
    rng = np.random.default_rng(seed)
    base = QuadraticProblem.heterogeneous(clusters, d, L, mu, sigma_G2, rng)
    labels = cluster_labels(n, clusters)
    centers = base.centers[labels]
    if within > 0:
        centers = centers + within * rng.standard_normal(centers.shape) / np.sqrt(d)
    return QuadraticProblem(base.hessians[labels], centers)


def general_quadratic(n: int = 20, *, d: int = 10, L: float = 1.0, mu: float = 0.1,
                      sigma_G2: float = 1.0, seed: int = 0) -> QuadraticProblem:
    """A general non-iid quadratic federation: every client its own random quadratic
    (:meth:`QuadraticProblem.heterogeneous`)."""
    return QuadraticProblem.heterogeneous(n, d, L, mu, sigma_G2, np.random.default_rng(seed))


@lru_cache(maxsize=4)
def clustered_digits(n: int = 20, clusters: int = 5, *, seed: int = 0, lam: float = 1e-3,
                     val_fraction: float = 0.2) -> LogisticProblem:
    r"""The clustered digits federation (module docstring): cluster :math:`c` holds the
    classes :math:`\equiv c \pmod C`, dealt at random into :math:`K/C` equal shares (cached:
    read-only)."""
    n, clusters = _sizes(n, clusters)
    pooled = federated_split("digits", n_clients=1, alpha=1.0, seed=seed,
                             val_fraction=val_fraction)
    X, y = pooled.X_clients[0], pooled.y_clients[0]
    if clusters > pooled.n_classes:
        raise ValueError(f"clusters must be at most the {pooled.n_classes} classes, "
                         f"got {clusters!r}")
    rng = np.random.default_rng([seed, 4])
    per = n // clusters
    parts: list[np.ndarray] = []
    for c in range(clusters):
        idx = rng.permutation(np.flatnonzero(y % clusters == c))
        parts.extend(np.array_split(idx, per))
    data = FederatedData(X_clients=tuple(X[p] for p in parts),
                         y_clients=tuple(y[p] for p in parts), X_val=pooled.X_val,
                         y_val=pooled.y_val, n_classes=pooled.n_classes, name="digits",
                         params={"n_clients": n, "clusters": clusters, "split": "clustered",
                                 "val_fraction": val_fraction})
    return LogisticProblem(data, lam=lam, weights="uniform")


def general_digits(n: int = 20, *, alpha: float = 0.5, seed: int = 0,
                   lam: float = 1e-3) -> LogisticProblem:
    """The general non-iid digits federation: Dirichlet(``alpha``) label split, uniform
    weights (:func:`make_logistic_problem`, cached: read-only)."""
    return make_logistic_problem("digits", n_clients=n, alpha=alpha, seed=seed, lam=lam,
                                 weights="uniform")
