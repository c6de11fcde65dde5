r"""Federated splits of small real data sets that ship with scikit-learn.

The data sets are scikit-learn's ``load_digits`` (1797 images of 8x8 pixels, 10 classes) and
``load_breast_cancer`` (569 samples, 30 features, 2 classes): no download, a few milliseconds
to load. A federated split is built in three steps, each driven by one
:class:`numpy.random.Generator` so that the same seed always gives the same split:

1. a stratified-at-random validation hold-out (``val_fraction`` of the samples);
2. :func:`dirichlet_label_split`: for every class :math:`c`, proportions
   :math:`q_c \sim \operatorname{Dir}(\alpha \mathbf 1_n)` over the :math:`n` clients, and the
   class's training samples are dealt out accordingly. Small :math:`\alpha` gives clients with
   few labels and very unequal sizes (non-iid, unbalanced); large :math:`\alpha` tends to iid;
3. optionally :func:`unbalance_clients`, the procedure of seed 002, Section 5.2 (how FEMNIST is
   unbalanced there): with :math:`s \in (0, 1)` and integers :math:`a < b`, a client with
   :math:`n_c` examples is kept unchanged if :math:`n_c \le a` or :math:`n_c \ge b`; otherwise
   it is removed with probability :math:`s`, or keeps only :math:`a` of its examples, drawn
   uniformly without replacement, with probability :math:`1 - s`.

Features are standardised with the training samples' mean and standard deviation (constant
features are left at zero) and a bias column of ones is appended.

Examples
--------
>>> fd = federated_split("digits", n_clients=8, alpha=0.5, seed=0)
>>> fd.n_clients, fd.n_features, fd.n_classes
(8, 65, 10)
>>> int(fd.sizes.sum()) + fd.X_val.shape[0] == 1797
True
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fedtheory.validation import (
    finite_array,
    integer_at_least,
    nonnegative_integer,
    positive_integer,
)

__all__ = [
    "DATASETS",
    "FederatedData",
    "dirichlet_label_split",
    "federated_split",
    "load_dataset",
    "unbalance_clients",
]

#: Data sets known to :func:`load_dataset`.
DATASETS = ("digits", "breast_cancer")


def load_dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Raw features ``(N, p)`` (float64) and integer labels ``(N,)`` of a bundled data set.

    >>> X, y = load_dataset("breast_cancer")
    >>> X.shape, sorted(set(y.tolist()))
    ((569, 30), [0, 1])
    """
    from sklearn import datasets as skd

    if name == "digits":
        bunch = skd.load_digits()
    elif name == "breast_cancer":
        bunch = skd.load_breast_cancer()
    else:
        raise ValueError(f"name must be one of {DATASETS}, got {name!r}")
    return np.asarray(bunch.data, dtype=float), np.asarray(bunch.target, dtype=np.int64)


def _check_rng(rng: np.random.Generator | int | None) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(rng)
    raise ValueError(f"rng must be a numpy Generator, an int seed or None, got {rng!r}")


def dirichlet_label_split(
    labels: np.ndarray,
    n_clients: int,
    alpha: float,
    rng: np.random.Generator | int | None = None,
    min_size: int = 1,
    max_tries: int = 1000,
) -> list[np.ndarray]:
    r"""Deal sample indices to clients with Dirichlet(:math:`\alpha`) label proportions.

    For each class :math:`c` draw :math:`q_c \sim \operatorname{Dir}(\alpha, \dots, \alpha)`
    over the clients and give client :math:`i` the share :math:`q_{c,i}` of the (shuffled)
    samples of class :math:`c` (cut points :math:`\lfloor N_c \sum_{j \le i} q_{c,j} \rceil`).
    The draw is repeated until every client holds at least ``min_size`` samples.

    Parameters
    ----------
    labels:
        Integer labels, shape ``(N,)``.
    n_clients:
        Number of clients :math:`n \ge 1`.
    alpha:
        Dirichlet concentration, :math:`\alpha > 0`.
    rng:
        Generator (or seed) driving the split.
    min_size:
        Minimum number of samples per client (``0`` allows empty clients).
    max_tries:
        Give up (``ValueError``) after this many draws.

    Returns
    -------
    list of numpy.ndarray
        ``n_clients`` sorted integer index arrays that partition ``range(N)``.

    Examples
    --------
    >>> parts = dirichlet_label_split(np.repeat([0, 1, 2], 20), 4, alpha=1.0, rng=0)
    >>> sorted(np.concatenate(parts).tolist()) == list(range(60))
    True
    """
    y = np.asarray(labels)
    if y.ndim != 1 or y.size == 0:
        raise ValueError(f"labels must be a non-empty 1-D array, got shape {y.shape}")
    positive_integer("n_clients", n_clients)
    if not (isinstance(alpha, (int, float, np.floating)) and np.isfinite(alpha) and alpha > 0):
        raise ValueError(f"alpha must be a positive finite number, got {alpha!r}")
    nonnegative_integer("min_size", min_size)
    if min_size * n_clients > y.size:
        raise ValueError(
            f"min_size must satisfy min_size * n_clients <= {y.size}, got {min_size!r}"
        )
    gen = _check_rng(rng)
    classes = np.unique(y)
    by_class = [np.flatnonzero(y == c) for c in classes]
    for _ in range(max_tries):
        q = gen.dirichlet(np.full(n_clients, float(alpha)), size=len(classes))
        parts: list[list[np.ndarray]] = [[] for _ in range(n_clients)]
        for idx, qc in zip(by_class, q, strict=True):
            perm = gen.permutation(idx)
            cuts = np.rint(np.cumsum(qc)[:-1] * idx.size).astype(int)
            for i, chunk in enumerate(np.split(perm, cuts)):
                parts[i].append(chunk)
        out = [np.sort(np.concatenate(p)) for p in parts]
        if min(o.size for o in out) >= min_size:
            return out
    raise ValueError(
        f"could not give every client min_size={min_size} samples in {max_tries} draws "
        f"with alpha={alpha!r}; increase alpha or lower min_size"
    )


def unbalance_clients(
    client_indices: list[np.ndarray],
    s: float,
    a: int,
    b: int,
    rng: np.random.Generator | int | None = None,
) -> list[np.ndarray]:
    r"""Seed 002, Section 5.2: remove or shrink the clients of medium size.

    A client with :math:`n_c` examples is kept unchanged if :math:`n_c \le a` or
    :math:`n_c \ge b`; otherwise, with probability :math:`s` it is removed, and with
    probability :math:`1 - s` it keeps only :math:`a` examples sampled uniformly without
    replacement.

    Parameters
    ----------
    client_indices:
        Index arrays, one per client.
    s:
        Removal probability, :math:`s \in (0, 1)`.
    a, b:
        Positive integers with :math:`a < b`.
    rng:
        Generator (or seed).

    Returns
    -------
    list of numpy.ndarray
        The surviving clients' (sorted) index arrays, in their original order.

    Examples
    --------
    >>> parts = [np.arange(3), np.arange(3, 13), np.arange(13, 63)]
    >>> [p.size for p in unbalance_clients(parts, s=0.5, a=4, b=20, rng=1)]
    [3, 4, 50]
    """
    if not (isinstance(s, (int, float, np.floating)) and 0.0 < s < 1.0):
        raise ValueError(f"s must be in (0, 1), got {s!r}")
    positive_integer("a", a)
    if not isinstance(b, (int, np.integer)) or b <= a:
        raise ValueError(f"b must be an integer with b > a = {a}, got {b!r}")
    gen = _check_rng(rng)
    out: list[np.ndarray] = []
    for idx in client_indices:
        idx = np.asarray(idx)
        n_c = idx.size
        if n_c <= a or n_c >= b:
            out.append(idx)
            continue
        if gen.random() < s:
            continue  # removed
        out.append(np.sort(gen.choice(idx, size=a, replace=False)))
    return out


@dataclass(frozen=True)
class FederatedData:
    """A federated classification data set: per-client training data and a validation set.

    Attributes
    ----------
    X_clients, y_clients:
        Per-client standardised features with a bias column ``(s_i, p)`` and labels ``(s_i,)``.
    X_val, y_val:
        The validation hold-out (same preprocessing).
    n_classes:
        Number of classes :math:`C` (labels are ``0..C-1``).
    name:
        Which data set, and ``params`` how it was split (for reports).
    """

    X_clients: tuple[np.ndarray, ...]
    y_clients: tuple[np.ndarray, ...]
    X_val: np.ndarray
    y_val: np.ndarray
    n_classes: int
    name: str = ""
    params: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Check the data (a ``ValueError`` naming the bad part): at least one client, every
        client's features a finite real ``(s_i, p)`` array with ``s_i >= 1`` and one label per
        row, the validation set's features ``(N, p)``, labels integers in ``0 .. C-1``."""
        c = integer_at_least("n_classes", self.n_classes, 2)
        if not isinstance(self.X_clients, (tuple, list)) or not isinstance(
                self.y_clients, (tuple, list)) or len(self.X_clients) == 0 \
                or len(self.X_clients) != len(self.y_clients):
            raise ValueError("X_clients and y_clients must be equally long non-empty sequences "
                             "of arrays, one per client")
        X_val = finite_array("X_val", self.X_val, [np.shape(self.X_val)])
        if X_val.ndim != 2:
            raise ValueError(f"X_val must have shape (N, p), got shape {X_val.shape}")
        p = X_val.shape[1]
        parts = [(f"X_clients[{i}]", f"y_clients[{i}]", x, y)
                 for i, (x, y) in enumerate(zip(self.X_clients, self.y_clients, strict=True))]
        for xname, yname, x, y in [*parts, ("X_val", "y_val", self.X_val, self.y_val)]:
            shape = np.shape(x)
            finite_array(xname, x, [shape])
            if len(shape) != 2 or shape[1] != p or shape[0] < 1:
                raise ValueError(f"{xname} must have shape (s, {p}) with s >= 1, got shape "
                                 f"{shape}")
            labels = np.asarray(y)
            if labels.shape != (shape[0],) or not np.issubdtype(labels.dtype, np.integer) \
                    or labels.min() < 0 or labels.max() >= c:
                raise ValueError(f"{yname} must be {shape[0]} integer labels in [0, {c}), got "
                                 f"{labels.dtype} of shape {labels.shape}")

    @property
    def n_clients(self) -> int:
        return len(self.X_clients)

    @property
    def n_features(self) -> int:
        """Features per sample, bias column included."""
        return int(self.X_val.shape[1])

    @property
    def sizes(self) -> np.ndarray:
        """Number of training samples per client, shape ``(n,)``."""
        return np.array([x.shape[0] for x in self.X_clients], dtype=np.int64)


def federated_split(
    name: str = "digits",
    n_clients: int = 32,
    alpha: float = 0.5,
    seed: int | np.random.Generator = 0,
    val_fraction: float = 0.2,
    unbalance: tuple[float, int, int] | None = None,
    min_size: int = 2,
) -> FederatedData:
    r"""Load a bundled data set and split it into a non-iid, unbalanced federation.

    Parameters
    ----------
    name:
        ``"digits"`` or ``"breast_cancer"``.
    n_clients:
        Number of clients before :func:`unbalance_clients` (which may remove some).
    alpha:
        Dirichlet concentration of :func:`dirichlet_label_split`.
    seed:
        Seed (or generator) for the hold-out, the split and the unbalancing.
    val_fraction:
        Fraction of samples held out for validation, in :math:`[0, 1)`; with ``0`` the
        validation set is the whole training set.
    unbalance:
        ``(s, a, b)`` of seed 002, Section 5.2, or ``None`` to skip that step.
    min_size:
        Minimum number of samples per client in the Dirichlet split.

    Returns
    -------
    FederatedData
    """
    if not (isinstance(val_fraction, (int, float)) and 0.0 <= val_fraction < 1.0):
        raise ValueError(f"val_fraction must be in [0, 1), got {val_fraction!r}")
    X, y = load_dataset(name)
    gen = _check_rng(seed)
    perm = gen.permutation(y.size)
    n_val = int(round(val_fraction * y.size))
    val_idx, tr_idx = np.sort(perm[:n_val]), np.sort(perm[n_val:])
    parts = dirichlet_label_split(y[tr_idx], n_clients, alpha, gen, min_size=min_size)
    if unbalance is not None:
        if len(unbalance) != 3:
            raise ValueError(f"unbalance must be a tuple (s, a, b), got {unbalance!r}")
        parts = unbalance_clients(parts, *unbalance, rng=gen)
        if not parts:
            raise ValueError(f"unbalance={unbalance!r} removed every client")
    X_tr = X[tr_idx]
    mean = X_tr.mean(axis=0)
    std = X_tr.std(axis=0)
    std = np.where(std > 0, std, 1.0)

    def prep(A: np.ndarray) -> np.ndarray:
        Z = (A - mean) / std
        return np.hstack([Z, np.ones((Z.shape[0], 1))])

    Xp_tr = prep(X_tr)
    y_tr = y[tr_idx]
    X_val = prep(X[val_idx]) if n_val > 0 else Xp_tr
    y_val = y[val_idx] if n_val > 0 else y_tr
    return FederatedData(
        X_clients=tuple(Xp_tr[p] for p in parts),
        y_clients=tuple(y_tr[p] for p in parts),
        X_val=X_val,
        y_val=y_val,
        n_classes=int(y.max()) + 1,
        name=name,
        params={
            "n_clients": n_clients,
            "alpha": alpha,
            "val_fraction": val_fraction,
            "unbalance": unbalance,
            "min_size": min_size,
        },
    )
