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

*The authors' splits* (seed 004's public code, ``Code/FL_FDMS/sampling.py``), on the digits
images as the code prepares CIFAR-10 (:func:`digits_images`: pixels mapped to
:math:`[-1, 1]` like ``ToTensor`` then ``Normalize(0.5, 0.5)``, a bias column, a fixed
stratified test set for the test accuracy):

- :func:`authors_clustered_split` (``cifar_extr_noniid``): 5 groups of 4 consecutive clients,
  each group given 2 classes (disjoint pairs, at random), each client an equal share of each
  of its group's classes (disjoint samples: friends share a distribution, not data);
- :func:`authors_shard_split` (``mnist_extr_noniid_freedom``, the general setting): the
  training samples sorted by label and cut into 100 shards, each client 3 random shards;

both keep the first 80 % of each client's list for training, as ``LocalUpdate`` does
(``idxs[:int(0.8 * len(idxs))]``, the list ordered class by class or shard by shard).

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
from fedtheory.validation import nonnegative_real, positive_integer

__all__ = ["authors_clustered_split", "authors_shard_split", "cluster_labels",
           "clustered_digits", "clustered_quadratic", "digits_images", "general_digits",
           "general_quadratic", "validate_n_groups"]


def _sizes(n: int, clusters: int) -> tuple[int, int]:
    for name, v in (("n", n), ("clusters", clusters)):
        positive_integer(name, v)
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


# A pure memo (one process): the value is a function of the arguments only, never of what
# ran before, and is not modified by its readers (issue 18: the one cache keeps the rest).
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


# ------------------------------------------------------------------ the authors' splits


# A pure memo (one process): the value is a function of the arguments only, never of what
# ran before, and is not modified by its readers (issue 18: the one cache keeps the rest).
@lru_cache(maxsize=2)
def digits_images(test_fraction: float = 1 / 6, seed: int = 0
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""scikit-learn's digits (1797 images of 8x8 pixels in 0..16, 10 classes) prepared as
    seed 004's code prepares CIFAR-10: pixels :math:`x/16` (``ToTensor``) then
    :math:`(x - 0.5)/0.5` (``Normalize``), so in :math:`[-1, 1]`, with a bias column of ones;
    a stratified test set of ``test_fraction`` of each class (1/6, CIFAR-10's 10000 of
    60000), fixed by ``seed``. Returns ``(X_train, y_train, X_test, y_test)`` (read-only,
    cached).

    >>> Xtr, ytr, Xte, yte = digits_images()
    >>> Xtr.shape, Xte.shape, float(Xtr[:, :-1].min()), float(Xtr[:, :-1].max())
    ((1498, 65), (299, 65), -1.0, 1.0)
    """
    f = float(test_fraction)
    if not 0.0 < f < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction!r}")
    from fedtheory.problems.datasets import load_dataset

    X, y = load_dataset("digits")
    X = np.hstack([X / 8.0 - 1.0, np.ones((X.shape[0], 1))])
    rng = np.random.default_rng([seed, 4, 6])
    test = np.sort(np.concatenate([
        rng.permutation(np.flatnonzero(y == c))[: int(round(f * np.sum(y == c)))]
        for c in np.unique(y)]))
    train = np.setdiff1d(np.arange(y.size), test)
    out = (X[train], y[train], X[test], y[test])
    for a in out:
        a.flags.writeable = False
    return out


def _first(parts: list[np.ndarray], train_fraction: float) -> list[np.ndarray]:
    f = float(train_fraction)
    if not 0.0 < f <= 1.0:
        raise ValueError(f"train_fraction must be in (0, 1], got {train_fraction!r}")
    return [p[: int(f * len(p))] for p in parts]


def authors_clustered_split(labels: np.ndarray, rng: np.random.Generator, n: int = 20,
                            group_size: int = 4, classes_per_group: int = 2,
                            train_fraction: float = 0.8) -> list[np.ndarray]:
    r"""The clustered split of seed 004's code (``cifar_extr_noniid``) on sample ``labels``:
    the classes dealt at random into disjoint sets of ``classes_per_group``, one per group of
    ``group_size`` consecutive clients; each client of a group gets
    :math:`\lfloor N_c/g
floor` samples of each of its classes :math:`c` (disjoint, at random;
    the code takes 500 per class of CIFAR-10's 5000), listed class by class; the first
    ``train_fraction`` of each list is its training data. Returns ``n`` index arrays.

    >>> ytr = digits_images()[1]
    >>> parts = authors_clustered_split(ytr, np.random.default_rng(0))
    >>> len(parts), set(ytr[parts[0]]) == set(ytr[parts[3]]) != set(ytr[parts[4]])
    (20, True)
    """
    y = np.asarray(labels)
    n, g = validate_n_groups(n, group_size)
    classes = np.unique(y)
    groups = n // g
    if groups * classes_per_group > classes.size:
        raise ValueError(f"classes_per_group={classes_per_group!r} x {groups} groups needs "
                         f"{groups * classes_per_group} classes, the labels have {classes.size}")
    pairs = rng.permutation(classes)[: groups * classes_per_group].reshape(groups, -1)
    pools = {int(c): rng.permutation(np.flatnonzero(y == c)) for c in pairs.ravel()}
    parts = []
    for j in range(groups):
        for m in range(g):
            idx = []
            for c in pairs[j]:
                pool = pools[int(c)]
                share = pool.size // g
                idx.append(pool[m * share:(m + 1) * share])
            parts.append(np.concatenate(idx))
    return _first(parts, train_fraction)


def authors_shard_split(labels: np.ndarray, rng: np.random.Generator, n: int = 20,
                        shards: int = 100, per_client: int = 3,
                        train_fraction: float = 0.8) -> list[np.ndarray]:
    r"""The general non-iid split of seed 004's code (``mnist_extr_noniid_freedom``, used with
    ``--unequal 1``): the samples sorted by label, cut into ``shards`` equal shards (the rest
    dropped), each client ``per_client`` shards drawn without replacement (listed in the
    order drawn); the first ``train_fraction`` of each list is its training data.

    >>> ytr = digits_images()[1]
    >>> parts = authors_shard_split(ytr, np.random.default_rng(0))
    >>> len(parts), {len(p) for p in parts}
    (20, {33})
    """
    y = np.asarray(labels)
    n = validate_n_groups(n, 1)[0]
    if shards < n * per_client or per_client < 1:
        raise ValueError(f"need shards >= n * per_client >= n, got shards={shards!r}, "
                         f"per_client={per_client!r}, n={n}")
    size = y.size // shards
    order = np.argsort(y, kind="stable")[: shards * size].reshape(shards, size)
    pick = rng.permutation(shards)[: n * per_client].reshape(n, per_client)
    return _first([order[row].ravel() for row in pick], train_fraction)


def validate_n_groups(n: int, group_size: int) -> tuple[int, int]:
    """``n`` and ``group_size`` as positive ints with ``group_size`` dividing ``n``, or
    ``ValueError`` naming the bad one."""
    for name, v in (("n", n), ("group_size", group_size)):
        positive_integer(name, v)
    if n % group_size:
        raise ValueError(f"group_size must divide n={n}, got {group_size!r}")
    return int(n), int(group_size)
