r"""Model substitution for dropped clients (seed 004): FL-FDMS, its complexity reduction, and a
friend oracle.

Seed 004 writes every aggregate as a full average in which each dropped client :math:`k
\notin \mathcal S_t` contributes a substitute :math:`\tilde\Delta^k_t` (eq. 5):

.. math:: \Delta_t = \sum_{i \in \mathcal S_t} w_i \Delta^i_t
    + \sum_{k \notin \mathcal S_t} w_k \tilde\Delta^k_t \qquad (w_i = 1/K).

The rules of the seed's comparisons, and where they live:

==========================  ================================================  ===============
seed                        substitute :math:`\tilde\Delta^k_t`               rule
==========================  ================================================  ===============
Dropout (eq. 4)             mean of the active updates                        ``"fedavg"``
Stale (the text's)          :math:`k`'s last upload (0 before its first one)  ``"mifa"``
Stale (the code's)          :math:`k`'s last *local model*                    ``ModelSubstitution``
FL-FDMS (Section 5.1)       :math:`\Delta^{\phi_t(k)}_t`, best active friend  ``"fl_fdms"``
FL-FDMS + CR (Section 5.3)  the same, candidates pruned with :math:`\Theta_t`  ``"fl_fdms"``
oracle (Assumption 5)       an active true friend's update                    ``"oracle"``
Full                        (nobody drops: every client's own update)         ``"full"``
==========================  ================================================  ===============

Dropout *is* FedAvg: the active mean substituted for every dropped client gives
:math:`\sum_{\mathcal S} w_i\Delta^i (1 + W_{\bar{\mathcal S}}/W_{\mathcal S}) =
\sum_{\mathcal S} w_i\Delta^i / W_{\mathcal S}` (eq. 5, ``fdms.dropout_is_substitution``), so
it is not duplicated. Stale *is* MIFA with zero memory: MIFA's table row of a dropped client
is its last upload (zero before the first), and the direction is the weighted table mean.

The friend discovery maths (eq. 14, 15, the argmax and the pruning of Section 5.3) is in
:mod:`fedtheory.sampling.friend_selection`; this module keeps its state per replica and turns
the chosen substitutes into the aggregate. Ties: the lowest client index (``choose_friends``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from fedtheory.algorithms.base import Participants, Rule, TableRule
from fedtheory.participation.dropout import validate_clusters
from fedtheory.sampling import friend_selection as fs
from fedtheory.validation import positive_real

__all__ = ["FLFDMS", "FriendOracle", "ModelSubstitution", "oracle_friends",
           "substituted_aggregate", "substitution_coefficients"]

substitution_coefficients = fs.substitution_coefficients


def substituted_aggregate(updates: np.ndarray, active: np.ndarray, source: np.ndarray,
                          weights: np.ndarray) -> np.ndarray:
    r"""The aggregate of eq. (5) with substitutes taken from active clients.

    .. math:: G = \sum_{i\in\mathcal S} w_i\Delta^i + \sum_{k\notin\mathcal S,\ s_k \ge 0}
        w_k \Delta^{s_k} + W_{\text{none}}\,\frac{\sum_{i\in\mathcal S} w_i \Delta^i}
        {\sum_{i\in\mathcal S} w_i},

    where :math:`s_k` = ``source[r, k]`` is the active client whose update substitutes the
    dropped client :math:`k` (``-1``: none, then the weighted active mean substitutes, the
    Dropout rule's choice; its weight :math:`W_{\text{none}}`). A replica without active
    clients gets :math:`G = 0` (the round is skipped).

    Parameters
    ----------
    updates
        ``(R, n, d)``; rows of dropped clients are never read.
    active
        ``(R, n)`` bool.
    source
        ``(R, n)`` int: for a dropped client an active client or -1; ignored for active ones.
    weights
        ``(n,)`` objective weights :math:`w_i`.

    >>> u = np.array([[[1.0], [2.0], [9.0]]])
    >>> substituted_aggregate(u, np.array([[True, True, False]]), np.array([[-1, -1, 1]]),
    ...                       np.full(3, 1 / 3)).tolist()  # (1 + 2 + 2) / 3
    [[1.6666666666666665]]
    """
    a = np.asarray(active, dtype=bool)
    coef = fs.substitution_coefficients(a, source, weights)
    u = np.where(a[:, :, None], np.asarray(updates), 0.0)
    return np.einsum("rn,rnd->rd", coef, u)


class _Substitution(Rule):
    """Base of the substitution rules: collects the round's updates densely in the round's
    accumulator (``acc``; never in the scratch, which may be cleared within a round), then
    :meth:`_sources` picks the substitutes and :func:`substituted_aggregate` sums."""

    def begin(self, state: dict[str, Any], part: Participants,
              p: np.ndarray | None = None) -> dict[str, Any]:
        acc = super().begin(state, part, p)
        acc["active"] = part.mask
        acc["dense"] = np.zeros((state["replicas"], state["n"], state["d"]),
                                dtype=state["dtype"])
        return acc

    def accumulate(self, state: dict[str, Any], acc: dict[str, Any], block: Participants,
                   updates: np.ndarray, consume: bool = False) -> None:
        acc["dense"][block.rows, block.cols] = updates

    def finish(self, state: dict[str, Any], acc: dict[str, Any]) -> np.ndarray:
        active, dense = acc["active"], acc["dense"]
        source = self._sources(state, active, dense)
        state["friends"] = source
        G = substituted_aggregate(dense, active, source, state["weights"])
        return G.astype(state["dtype"], copy=False)

    def _sources(self, state: dict[str, Any], active: np.ndarray,
                 dense: np.ndarray) -> np.ndarray:
        raise NotImplementedError


def oracle_friends(labels: Any) -> np.ndarray:
    r"""The true friendship of a clustered federation: :math:`i \ne j` in one cluster,
    ``(n, n)`` bool.

    >>> oracle_friends([0, 0, 1]).astype(int).tolist()
    [[0, 1, 0], [1, 0, 0], [0, 0, 0]]
    """
    lab = validate_clusters(labels)
    F = lab[:, None] == lab[None, :]
    np.fill_diagonal(F, False)
    return F


class FriendOracle(_Substitution):
    r"""A dropped client is substituted by an *active true friend* (the non-realisable
    baseline of Section 5, Assumption 5), known from the cluster ``labels``.

    .. math:: \tilde\Delta^k_t = \Delta^{j}_t,\quad j = \min\{i \in \mathcal S_t\cap
        \mathcal B_k\}

    (lowest-index active friend). When no friend of :math:`k` is active (Assumption 5 fails)
    the active mean substitutes, as Dropout does. ``labels=None``: no friendships (then it is
    Dropout). Memory: the last round's choices (``state["friends"]``).

    >>> rule = FriendOracle([0, 0, 1, 1])
    >>> st = rule.init(1, 4, 1)
    >>> G, st = rule.step(st, np.array([True, False, True, True]),
    ...                   np.array([[1.0], [8.0], [3.0], [5.0]]))
    >>> G.tolist(), st["friends"].tolist()  # client 1 takes client 0's update: (1+1+3+5)/4
    ([2.5], [[-1, 0, -1, -1]])
    """

    name: ClassVar[str] = "oracle"

    def __init__(self, labels: Any = None) -> None:
        self.labels = None if labels is None else validate_clusters(labels)

    def _init(self, state: dict[str, Any], initial: np.ndarray | None) -> None:
        n = state["n"]
        if self.labels is not None and self.labels.shape != (n,):
            raise ValueError(f"labels must have shape ({n},) for n={n} clients, got "
                             f"{self.labels.shape}")
        state["friends"] = np.full((state["replicas"], n), -1, dtype=np.intp)

    def _sources(self, state: dict[str, Any], active: np.ndarray,
                 dense: np.ndarray) -> np.ndarray:
        n = state["n"]
        F = (np.zeros((n, n), dtype=bool) if self.labels is None
             else oracle_friends(self.labels))
        allowed = ~active[:, :, None] & active[:, None, :] & F[None]
        return np.where(allowed.any(axis=2), np.argmax(allowed, axis=2), -1)


class FLFDMS(_Substitution):
    r"""FL-FDMS (seed 004, Section 5.1), optionally with the complexity reduction of 5.3.

    Every round: the scores :math:`r^{i,j}_t` of eq. (14) for the active pairs (with the
    reduction: only pairs where one is a candidate of the other), their running means
    :math:`R^{i,j}_t` (eq. 15), and for each dropped client :math:`k`

    .. math:: \tilde\Delta^k_t = \Delta^{\phi_t(k)}_t,\qquad
        \phi_t(k) = \arg\max_{i\in\mathcal S_t\,(\cap\,\mathcal C^k_t)} R^{k,i}_t

    (ties: lowest index; no history ranks last; an empty active candidate set falls back to
    all active clients: :func:`~fedtheory.sampling.friend_selection.choose_friends`). With
    ``reduction`` the candidate sets are then pruned,
    :math:`\mathcal C^k_{t+1} = \mathcal C^k_t\setminus\{i: R^{k,\phi}_t - R^{k,i}_t \ge
    \Theta_t\}`, :math:`\Theta_t` of Theorem 2
    (:func:`~fedtheory.sampling.friend_selection.complexity_threshold`).

    Parameters
    ----------
    reduction
        None (plain FL-FDMS) or the keyword arguments of ``complexity_threshold`` except
        ``t`` and ``n_clients``: ``horizon``, ``max_friends``, ``beta``, ``p``, ``delta_f``
        and optionally ``scale`` (1 for Theorem 2's :math:`\Theta_t`, 0.5 for the seed's
        case 2).
    similarity
        A score of :data:`~fedtheory.sampling.friend_selection.SIMILARITIES` (eq. 14:
        ``"cosine"``).

    Model state: ``similarity_sum`` and ``similarity_count`` (the running sums of
    :math:`r^{i,j}` and the counts :math:`N^{i,j}_t`, ``(R, n, n)``),
    ``candidates`` ``(R, n, n)``, ``t``, ``computations`` (cumulative similarity scores
    computed, ``(R,)``), ``friends`` (the last :math:`\phi_t`, -1 for active clients).

    >>> rule = FLFDMS()
    >>> st = rule.init(1, 3, 2)
    >>> u = np.array([[1.0, 0.0], [0.9, 0.1], [-1.0, 0.0]])
    >>> _, st = rule.step(st, np.array([True, True, True]), u)
    >>> G, st = rule.step(st, np.array([True, False, True]), u)
    >>> st["friends"].tolist(), int(st["computations"][0])  # client 1 takes client 0
    ([[-1, 0, -1]], 4)
    """

    name: ClassVar[str] = "fl_fdms"

    def __init__(self, reduction: dict[str, Any] | None = None,
                 similarity: str = "cosine") -> None:
        if similarity not in fs.SIMILARITIES:
            raise ValueError(f"similarity must be one of {sorted(fs.SIMILARITIES)}, "
                             f"got {similarity!r}")
        self.similarity = similarity
        if reduction is not None:
            if not isinstance(reduction, dict):
                raise ValueError(f"reduction must be None or a dict, got {reduction!r}")
            keys = {"horizon", "max_friends", "beta", "p", "delta_f"}
            missing = keys - set(reduction)
            extra = set(reduction) - keys - {"scale"}
            if missing or extra:
                raise ValueError(f"reduction must have the keys {sorted(keys)} (and optionally "
                                 f"'scale'), got {sorted(reduction)}")
            # validated once here (n_clients=1 is a placeholder: any positive int)
            fs.complexity_threshold(1, n_clients=1, **reduction)
            reduction = dict(reduction)
        self.reduction = reduction

    def _init(self, state: dict[str, Any], initial: np.ndarray | None) -> None:
        R, n = state["replicas"], state["n"]
        sim = fs.init_similarity(R, n)
        state["similarity_sum"], state["similarity_count"] = sim["sum"], sim["count"]
        state["candidates"] = fs.init_candidates(R, n)
        state["t"] = 0
        state["computations"] = np.zeros(R, dtype=np.int64)
        state["friends"] = np.full((R, n), -1, dtype=np.intp)

    def threshold(self, t: int, n: int) -> float:
        r""":math:`\Theta_t` (the reduction's), ``inf`` without reduction."""
        if self.reduction is None:
            return float("inf")
        return float(fs.complexity_threshold(t, n_clients=n, **self.reduction))

    def _sources(self, state: dict[str, Any], active: np.ndarray,
                 dense: np.ndarray) -> np.ndarray:
        theta = None
        if self.reduction is not None:
            def theta(t: int) -> float:
                return self.threshold(t, state["n"])
        return fs.discovery_round(state, active, dense, self.similarity, theta)


class ModelSubstitution(TableRule):
    r"""The authors' Stale (``FL_Stale/pl_per.py``, ``PL_Update``): the new model is the
    weighted mean of every client's **last uploaded local model** (model substitution),

    .. math:: m^i_t = \begin{cases} x_t - \eta\Delta^i_t, & i \in \mathcal S_t\\
        m^i_{t-1}, & \text{otherwise}\end{cases},\qquad x_{t+1} = \sum_i w_i m^i_t,
        \qquad G_t = (x_t - x_{t+1})/\eta ,

    with :math:`m^i_0 = x_0` (a client that never uploaded stands at the initial model). The
    rule sees updates, not models: its table holds the models relative to the server's,
    :math:`e^i_t = m^i_t - x_{t+1}`, so that

    .. math:: e'^i = \begin{cases} -\eta\Delta^i_t, & i \in \mathcal S_t\\
        e^i_{t-1}, & \text{otherwise}\end{cases},\quad \bar e = \sum_i w_i e'^i,\quad
        G_t = -\bar e/\eta,\quad e^i_t = e'^i - \bar e ,

    exact when the server's step is plain, :math:`x_{t+1} = x_t - \eta G_t` (``global_lr =
    1``, no momentum) with :math:`\eta` = ``lr``, the local step.

    >>> rule = ModelSubstitution(lr=0.5)
    >>> st = rule.init(1, 2, 1)
    >>> G, st = rule.step(st, np.array([True, True]), np.array([[2.0], [4.0]]))
    >>> G.tolist()  # models -1 and -2 from x = 0: x moves to -1.5
    [3.0]
    >>> G, st = rule.step(st, np.array([True, False]), np.array([[1.0], [9.0]]))
    >>> G.tolist()  # models -1.5 - 0.5 = -2 and -2 (kept): x moves to -2
    [1.0]
    """

    name: ClassVar[str] = "model_substitution"

    def __init__(self, lr: float) -> None:
        self.lr = positive_real("lr", lr)
        self.memory_init = "zeros"

    def accumulate(self, state: dict[str, Any], acc: dict[str, Any], block: Participants,
                   updates: np.ndarray, consume: bool = False) -> None:
        idx, change = self._gather(state, block)
        rel = updates * -state["dtype"].type(self.lr)  # e'^i = -eta Delta^i
        np.subtract(rel, change, out=change)
        self._scatter(state, block, idx, rel, change)

    def finish(self, state: dict[str, Any], acc: dict[str, Any]) -> np.ndarray:
        mean = self._weighted_sum(state)  # exact each round: the table moves every round
        state["table"] -= mean[:, None, :]
        state["total"] = self._weighted_sum(state)
        state["since_refresh"] = 0
        return mean / -state["dtype"].type(self.lr)
