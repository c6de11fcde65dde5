r"""Arbitrary client dropout with a bound on the dropout ratio (seed 004): in round :math:`t`
:math:`S_t` of the :math:`K = n` clients stay, with

.. math:: \frac{K - S_t}{K} \le \alpha < 1 ,

so at least one client always takes part. Here the number dropped :math:`D_t = n - S_t` is
drawn independently each round on :math:`\{0, \dots, \lfloor\alpha n\rfloor\}`
(``"uniform"``) or is always :math:`\lfloor\alpha n\rfloor` (``"max"``, the worst case the
bound allows); the dropped clients are a uniformly random subset of that size. Hence

.. math:: p_i = 1 - \mathbb E[D_t]/n,\quad \mathbb E[D_t] = \lfloor\alpha n\rfloor / 2
    \text{ (uniform) or } \lfloor\alpha n\rfloor \text{ (max)}.

Two more dropout laws meet the same ratio bound in every round: :class:`ClusterDropout`
(adversarial: whole clusters drop together, so a dropped client has no active friend and
Assumption 5 of seed 004 fails; with a fixed schedule also Assumption 6) and
:class:`CorrelatedDropout` (the dropout set persists over rounds). :func:`pair_counts` and
:func:`realised_beta` give :math:`N_t^{ij}` and the :math:`\beta` of Assumption 6 a mask
history meets; :func:`realised_ratio` its largest dropout ratio.

The three classes are registered in :data:`fedtheory.participation.PROCESSES`
(``register=True``; their cases in the common battery are ``tests/test_participation.py``'s,
their own tests ``tests/test_fdms_engine.py``).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from fedtheory.participation.base import (
    ParticipationProcess,
    RNGLike,
    uniforms,
    validate_dropout_rate,
    validate_n,
)
from fedtheory.validation import integer_in

__all__ = ["ClusterDropout", "CorrelatedDropout", "DropoutParticipation", "pair_counts",
           "realised_beta", "realised_ratio", "validate_clusters"]


class _Reports:
    """What the dropout processes report about a sample of their masks."""

    def realised(self, rng: RNGLike, replicas: int, rounds: int, start: int = 1
                 ) -> dict[str, np.ndarray]:
        r"""``rounds`` masks of ``replicas`` fresh copies: the realised :math:`\beta` of
        Assumption 6 (:func:`realised_beta` from round ``start``) and the largest dropout ratio
        (:func:`realised_ratio`), each ``(replicas,)``."""
        masks = self.sample(rng, replicas, rounds)  # type: ignore[attr-defined]
        return {"beta": realised_beta(masks, start), "ratio": realised_ratio(masks)}


class DropoutParticipation(_Reports, ParticipationProcess, register=True):
    """Dropout of at most :math:`\\lfloor\\alpha n\\rfloor` random clients per round.

    Parameters
    ----------
    n
        Number of clients.
    alpha
        Bound on the dropout ratio, in [0, 1).
    distribution
        ``"uniform"`` (default) or ``"max"``: law of the number of dropped clients.
    full_first
        The first round has every client active (seed 004's code; default False). Its
        uniforms are drawn and discarded all the same, so the later rounds' masks do not
        depend on it.

    >>> proc = DropoutParticipation(10, 0.3, distribution="max")
    >>> rng = np.random.default_rng(0)
    >>> mask, _ = proc.step(proc.init(rng, 3), rng)
    >>> mask.sum(axis=1).tolist(), proc.max_dropped
    ([7, 7, 7], 3)
    """

    name: ClassVar[str] = "dropout"

    def __init__(self, n: int, alpha: float, distribution: str = "uniform",
                 full_first: bool = False) -> None:
        self.n = validate_n(n)
        a = float(alpha)
        if not 0.0 <= a < 1.0:
            raise ValueError(f"alpha must be in [0, 1), got {alpha!r}")
        self.alpha = a
        if distribution not in ("uniform", "max"):
            raise ValueError(f"distribution must be 'uniform' or 'max', got {distribution!r}")
        self.distribution = distribution
        if not isinstance(full_first, (bool, np.bool_)):
            raise ValueError(f"full_first must be a bool, got {full_first!r}")
        self.full_first = bool(full_first)

    @property
    def max_dropped(self) -> int:
        """:math:`\\lfloor\\alpha n\\rfloor` (rounding error of ``alpha * n`` forgiven)."""
        return min(self.n - 1, math.floor(self.alpha * self.n + 1e-9))

    @property
    def stationary(self) -> np.ndarray:
        mean_dropped = self.max_dropped / 2 if self.distribution == "uniform" else self.max_dropped
        return np.full(self.n, 1.0 - mean_dropped / self.n)

    def _step(self, state: dict[str, Any], rng: RNGLike) -> np.ndarray:
        R, dmax = state["replicas"], self.max_dropped
        u = uniforms(rng, R, self.n + 1)
        if self.distribution == "uniform":
            dropped = np.minimum(np.floor(u[:, 0] * (dmax + 1)).astype(np.intp), dmax)
        else:
            dropped = np.full(R, dmax, dtype=np.intp)
        rank = u[:, 1:]
        if self.full_first and state["t"] == 0:
            return np.ones((R, self.n), dtype=bool)
        # the clients with the `dropped` smallest uniforms drop out
        kth = np.sort(rank, axis=1)[np.arange(R), dropped]
        return rank >= kth[:, None]


def _dropout_count(n: int, alpha: Any) -> tuple[float, int]:
    """Validated ``alpha`` and :math:`\\lfloor\\alpha n\\rfloor` (capped at ``n - 1``)."""
    a = validate_dropout_rate(alpha)
    return a, min(n - 1, math.floor(a * n + 1e-9))


def validate_clusters(labels: Any, n: int | None = None) -> np.ndarray:
    """Cluster labels ``(n,)`` with values ``0..C-1``, every cluster non-empty, or
    ``ValueError`` naming the bad entry (an empty cluster is named by its label).

    >>> validate_clusters([0, 0, 1, 1]).tolist()
    [0, 0, 1, 1]
    """
    arr = np.asarray(labels)
    if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"labels must be a non-empty 1-D integer array, got {labels!r}")
    if n is not None and arr.shape != (n,):
        raise ValueError(f"labels must have shape ({n},), got shape {arr.shape}")
    if arr.min() < 0:
        raise ValueError(f"labels must be >= 0, got {int(arr.min())}")
    sizes = np.bincount(arr)
    if (sizes == 0).any():
        c = int(np.flatnonzero(sizes == 0)[0])
        raise ValueError(f"labels: cluster {c} is empty (labels must use every value 0.."
                         f"{sizes.size - 1})")
    return arr.astype(np.intp)


class ClusterDropout(_Reports, ParticipationProcess, register=True):
    r"""Adversarial dropout: ``k`` whole clusters drop out together every round.

    The clusters are those of ``labels`` (clients with identical data in the experiments), so
    a dropped client has no active friend: Assumption 5 fails on purpose. Which clusters drop:

    - ``"fixed"``: always clusters :math:`0, \dots, k-1` (their members never take part, and
      :math:`N_t^{ij} = 0` for them: Assumption 6 fails, :math:`\beta = 0`);
    - ``"cycle"``: clusters :math:`(\phi + t + j) \bmod C`, :math:`j < k`, with a uniformly
      random phase :math:`\phi` per replica;
    - ``"random"``: a uniformly random set of :math:`k` clusters, independently each round.

    The ratio bound holds by construction, :math:`(K - S_t)/K \le \alpha`: ``k`` clusters must
    fit, i.e. the :math:`k` largest clusters hold at most :math:`\lfloor\alpha K\rfloor`
    clients (else ``ValueError`` naming ``labels``). Stationary law: :math:`p_i = 0` for the
    fixed dropped clusters (1 for the others); :math:`p_i = 1 - k/C` for cycle and random.

    >>> proc = ClusterDropout([0, 0, 1, 1, 2, 2], alpha=0.4)
    >>> rng = np.random.default_rng(0)
    >>> proc.sample(rng, 1, 2)[:, 0].astype(int).tolist()
    [[0, 0, 1, 1, 1, 1], [0, 0, 1, 1, 1, 1]]
    """

    name: ClassVar[str] = "cluster_dropout"

    def __init__(self, labels: Any, alpha: float, k: int = 1, schedule: str = "fixed") -> None:
        self.labels = validate_clusters(labels)
        self.n = int(self.labels.size)
        self.alpha, dmax = _dropout_count(self.n, alpha)
        self.n_clusters = int(self.labels.max()) + 1
        integer_in("k", k, 1, self.n_clusters - 1, f"an integer in [1, {self.n_clusters - 1}] "
                   "(the number of clusters dropped per round)")
        self.k = int(k)
        sizes = np.sort(np.bincount(self.labels))[::-1]
        if int(sizes[: self.k].sum()) > dmax:
            raise ValueError(
                f"labels: the {self.k} largest clusters hold {int(sizes[: self.k].sum())} "
                f"clients, more than floor(alpha K) = {dmax} (alpha={self.alpha!r}, "
                f"K={self.n}): whole-cluster dropout cannot meet the ratio bound")
        if schedule not in ("fixed", "cycle", "random"):
            raise ValueError(f"schedule must be 'fixed', 'cycle' or 'random', got {schedule!r}")
        self.schedule = schedule

    @property
    def stationary(self) -> np.ndarray:
        if self.schedule == "fixed":
            return np.where(self.labels < self.k, 0.0, 1.0)
        return np.full(self.n, 1.0 - self.k / self.n_clusters)

    def _init(self, state: dict[str, Any], rng: RNGLike) -> None:
        state["phase"] = np.floor(uniforms(rng, state["replicas"], 1)[:, 0]
                                  * self.n_clusters).astype(np.intp)

    def _step(self, state: dict[str, Any], rng: RNGLike) -> np.ndarray:
        R, C = state["replicas"], self.n_clusters
        if self.schedule == "fixed":
            down = np.zeros((R, C), dtype=bool)
            down[:, : self.k] = True
        elif self.schedule == "cycle":
            start = (state["phase"] + state["t"]) % C
            offs = (np.arange(C)[None, :] - start[:, None]) % C
            down = offs < self.k
        else:
            u = uniforms(rng, R, C)
            kth = np.sort(u, axis=1)[:, self.k - 1 : self.k]
            down = u <= kth
        return ~down[:, self.labels]


class CorrelatedDropout(_Reports, ParticipationProcess, register=True):
    r"""Dropout correlated over time: the set of dropped clients persists.

    Round 1 draws a dropout set as :class:`DropoutParticipation` does (its ``distribution``);
    afterwards, each round keeps the previous set with probability ``stay`` and draws a fresh
    one otherwise (spells of mean length :math:`1/(1 - \text{stay})` rounds). Every set has at
    most :math:`\lfloor\alpha K\rfloor` clients, so :math:`(K - S_t)/K \le \alpha` in every
    round; each round's set has the law of a fresh draw, hence the same
    :math:`p_i = 1 - \mathbb E[D_t]/K`, but :math:`P(1_i^t = 1_i^{t+1})` is larger.

    >>> proc = CorrelatedDropout(10, 0.3, stay=0.9, distribution="max")
    >>> m = proc.sample(np.random.default_rng(0), 2, 5)
    >>> bool(((~m).sum(axis=2) == 3).all())
    True
    >>> rep = proc.realised(np.random.default_rng(0), 2, 400, start=100)
    >>> rep["ratio"].tolist(), bool((rep["beta"] > 0).all())
    ([0.3, 0.3], True)
    """

    name: ClassVar[str] = "correlated_dropout"

    def __init__(self, n: int, alpha: float, stay: float = 0.9,
                 distribution: str = "uniform") -> None:
        self.n = validate_n(n)
        self.alpha, _ = _dropout_count(self.n, alpha)
        s = float(stay)
        if not 0.0 <= s < 1.0:
            raise ValueError(f"stay must be in [0, 1), got {stay!r}")
        self.stay = s
        self._fresh = DropoutParticipation(self.n, self.alpha, distribution)
        self.distribution = distribution

    @property
    def stationary(self) -> np.ndarray:
        return self._fresh.stationary

    def _init(self, state: dict[str, Any], rng: RNGLike) -> None:
        state["mask"] = None

    def _step(self, state: dict[str, Any], rng: RNGLike) -> np.ndarray:
        R = state["replicas"]
        keep = uniforms(rng, R, 1)[:, 0] < self.stay
        fresh = self._fresh._step(state, rng)
        if state["mask"] is not None:
            fresh[keep] = state["mask"][keep]
        state["mask"] = fresh
        return fresh.copy()


def pair_counts(masks: np.ndarray) -> np.ndarray:
    r""":math:`N_t^{ij}`, the rounds :math:`s \le t` in which clients :math:`i` and :math:`j`
    were both active: ``masks`` bool ``(T, R, n)`` (rounds :math:`t = 1..T`) ->
    ``(T, R, n, n)`` int.

    .. math:: N_t^{ij} = \sum_{s=1}^t 1_i^s 1_j^s .
    """
    m = np.asarray(masks)
    if m.ndim != 3 or m.dtype != bool:
        raise ValueError(f"masks must be a boolean array (T, R, n), got {m.dtype} {m.shape}")
    both = m[..., :, None] & m[..., None, :]
    return np.cumsum(both, axis=0, dtype=np.int64)


def realised_beta(masks: np.ndarray, start: int = 1, first_round: int = 1) -> np.ndarray:
    r"""The largest :math:`\beta` of Assumption 6 that a mask history meets, per replica:

    .. math:: \hat\beta = \min_{t \ge t_0}\ \min_{i \ne j} N_t^{ij} / t ,

    over the rounds :math:`t \ge t_0` (``start`` :math:`= t_0 \ge 1`) of the history.
    ``masks`` bool ``(T, R, n)`` -> ``(R,)``; 1 for a single client (no pairs) or when no round
    is :math:`\ge t_0`. ``first_round`` is the index of the history's first round:
    1 (default) numbers the rounds :math:`1..T`, and the seed's "every :math:`t \ge 1`" then
    makes any dropout in round 1 give :math:`\hat\beta = 0`; 0 numbers them :math:`0..T-1`
    as the seed's :math:`e_0, \dots, e_{T-1}` (:math:`N_t^{ij}` counts rounds :math:`0..t`),
    the looser reading. A loop over rounds, memory :math:`O(Rn^2)`.

    >>> m = np.array([[[True, True, False]], [[True, True, True]]])
    >>> realised_beta(m).tolist(), realised_beta(m, start=2).tolist()
    ([0.0], [0.5])
    >>> realised_beta(m, first_round=0).tolist()
    [1.0]
    """
    m = np.asarray(masks)
    if m.ndim != 3 or m.dtype != bool:
        raise ValueError(f"masks must be a boolean array (T, R, n), got {m.dtype} {m.shape}")
    if first_round not in (0, 1) or isinstance(first_round, bool):
        raise ValueError(f"first_round must be 0 or 1, got {first_round!r}")
    T, R, n = m.shape
    last = T - 1 + first_round
    integer_in("start", start, 1, max(1, last))
    best = np.ones(R)
    if n < 2:
        return best
    off = ~np.eye(n, dtype=bool)
    count = np.zeros((R, n, n), dtype=np.int64)
    for k in range(T):
        count += m[k][:, :, None] & m[k][:, None, :]
        t = k + first_round
        if t >= start:
            np.minimum(best, count[:, off].min(axis=1) / t, out=best)
    return best


def realised_ratio(masks: np.ndarray) -> np.ndarray:
    r"""The largest dropout ratio :math:`\max_t (K - S_t)/K` per replica: ``(T, R, n)`` ->
    ``(R,)`` (the process meets its :math:`\alpha` iff this is :math:`\le\alpha`)."""
    m = np.asarray(masks)
    if m.ndim != 3 or m.dtype != bool:
        raise ValueError(f"masks must be a boolean array (T, R, n), got {m.dtype} {m.shape}")
    return (m.shape[2] - m.sum(axis=2)).max(axis=0) / m.shape[2]
