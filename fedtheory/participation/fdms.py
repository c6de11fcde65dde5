r"""FL-FDMS's friend choice (seed 004, Section 5) as a participation process that sees the round.

Who takes part is decided by a base process (the dropout model: e.g.
:class:`~fedtheory.participation.DropoutParticipation`); the active clients' updates are then
read (:meth:`RoundView.updates` with ``only`` the active set: dropped clients compute
nothing), the similarity scores of eq. (14) and their running means (eq. 15) updated, each
dropped client :math:`k` given the active friend :math:`\phi_t(k)` of largest mean similarity
(with the complexity reduction of Section 5.3 when ``reduction`` is given), exactly as the
rule :class:`~fedtheory.algorithms.FLFDMS` does (the process runs that rule's discovery on its
own state: :func:`~fedtheory.sampling.friend_selection.discovery_round`). The selection
carries the coefficients of eq. (5),

.. math:: a_i = w_i + \sum_{k\notin\mathcal S_t:\ \phi_t(k) = i} w_k
    + W_{\text{none}}\frac{w_i}{\sum_{j\in\mathcal S_t}w_j},

(:func:`~fedtheory.sampling.friend_selection.substitution_coefficients`) so that
``"fedavg_is"`` aggregates :math:`\sum_{i\in\mathcal S_t}w_i\Delta^i + \sum_{k\notin
\mathcal S_t} w_k\Delta^{\phi_t(k)}`: the same direction as the rule ``"fl_fdms"`` under the
base process. The process's state holds the similarity sums and counts, the candidate sets,
the similarity scores computed (``computations``) and the last friends (``friends``).

The elimination thresholds are Theorem 2's :math:`\Theta_t` (``reduction``) or any schedule
(``thresholds``: :math:`\Theta` applied after round :math:`t` is ``thresholds[t - 1]``;
``inf`` eliminates nothing that round), e.g. a claim's stated or mutated one.

Measuring the substitution error (``measure_error=True``): the process then asks for *every*
client's update (the dropped clients' updates are computed to measure only; they are never
aggregated) and keeps, in ``state["error2"]`` ``(R,)``, the squared norm of the substituted
aggregate minus the full-participation one,

.. math:: \|e_t\|^2,\qquad e_t = \sum_{k\notin\mathcal S_t:\ \phi_t(k)\ne -1}
    w_k\big(\Delta^{\phi_t(k)}_t - \Delta^k_t\big)

(seed 004's :math:`e_t`, eq. 16, with :math:`w_k = 1/K`). An ``observe`` callback of
:func:`~fedtheory.simulate.simulate` reads it, with the friends and the candidate sets, from
:attr:`~fedtheory.engine.RoundRecord.participation_state`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from fedtheory.participation.base import (
    ParticipationProcess,
    RNGLike,
    RoundAwareProcess,
    RoundView,
    Selection,
)
from fedtheory.sampling import friend_selection as fs

__all__ = ["FDMSFriendChoice", "substitution_error2"]


def substitution_error2(updates: np.ndarray, active: np.ndarray, friends: np.ndarray,
                        weights: np.ndarray) -> np.ndarray:
    r"""``(R,)``: :math:`\|e\|^2`, :math:`e = \sum_{k\notin\mathcal S:\ \phi(k)\ne-1}
    w_k(\Delta^{\phi(k)} - \Delta^k)`, the substituted aggregate minus the full one
    (``updates`` ``(R, n, d)`` of every client, ``active`` ``(R, n)``, ``friends`` ``(R, n)``
    the substitutes :math:`\phi`, -1 for none).

    >>> u = np.array([[[1.0], [3.0]]])
    >>> substitution_error2(u, np.array([[True, False]]), np.array([[-1, 0]]),
    ...                     np.full(2, 0.5)).tolist()
    [1.0]
    """
    R, n, _ = updates.shape
    ok = ~np.asarray(active, dtype=bool) & (friends >= 0)
    safe = np.where(ok, friends, 0)
    diff = np.where(ok[..., None], updates[np.arange(R)[:, None], safe] - updates, 0.0)
    e = np.einsum("rkd,k->rd", diff, np.asarray(weights, dtype=float))
    return np.einsum("rd,rd->r", e, e)


class FDMSFriendChoice(RoundAwareProcess, register=True):
    r"""FL-FDMS friend choice over the dropouts of ``base``.

    ``reduction`` and ``similarity`` as for :class:`~fedtheory.algorithms.FLFDMS`;
    ``thresholds`` (instead of ``reduction``): the elimination schedule, ``thresholds[t - 1]``
    after round :math:`t` (positive, ``inf``: none); ``measure_error``: keep
    :math:`\|e_t\|^2` in the state (module docstring). :attr:`stationary` is the base
    process's.
    """

    name: ClassVar[str] = "fdms_friends"
    sets_coefficients: ClassVar[bool] = True

    def __init__(self, base: ParticipationProcess, reduction: dict[str, Any] | None = None,
                 similarity: str = "cosine", *, thresholds: Sequence[float] | None = None,
                 measure_error: bool = False) -> None:
        if not isinstance(base, ParticipationProcess) or getattr(base, "sees_round", False):
            raise ValueError(f"base must be a participation process that does not see the "
                             f"round, got {base!r}")
        if similarity not in fs.SIMILARITIES:
            raise ValueError(f"similarity must be one of {sorted(fs.SIMILARITIES)}, "
                             f"got {similarity!r}")
        if reduction is not None:
            keys = {"horizon", "max_friends", "beta", "p", "delta_f"}
            if not isinstance(reduction, dict) or not keys <= set(reduction) <= keys | {"scale"}:
                raise ValueError(f"reduction must be None or a dict with the keys {sorted(keys)} "
                                 f"(and optionally 'scale'), got {reduction!r}")
            fs.complexity_threshold(1, n_clients=1, **reduction)  # validated once
            reduction = dict(reduction)
        if thresholds is not None:
            if reduction is not None:
                raise ValueError("give reduction or thresholds, not both")
            th = np.array(thresholds, dtype=float).reshape(-1)
            if th.size == 0 or np.isnan(th).any() or (th <= 0).any():
                raise ValueError(f"thresholds must be a non-empty sequence of numbers > 0 (inf: "
                                 f"no elimination), got {thresholds!r}")
            th.flags.writeable = False
            thresholds = th
        if not isinstance(measure_error, (bool, np.bool_)):
            raise ValueError(f"measure_error must be a bool, got {measure_error!r}")
        self.thresholds = thresholds
        self.measure_error = bool(measure_error)
        self.base = base
        self.n = base.n
        self.reduction, self.similarity = reduction, similarity

    @property
    def stationary(self) -> np.ndarray:
        return self.base.stationary

    def _init(self, state: dict[str, Any], rng: RNGLike) -> None:
        R, n = state["replicas"], self.n
        state["base"] = self.base.init(rng, R)
        sim = fs.init_similarity(R, n)
        state["discovery"] = {"similarity_sum": sim["sum"], "similarity_count": sim["count"],
                              "candidates": fs.init_candidates(R, n), "t": 0,
                              "computations": np.zeros(R, dtype=np.int64)}
        state["friends"] = np.full((R, n), -1, dtype=np.intp)
        if self.measure_error:
            state["error2"] = np.zeros(R)

    @property
    def eliminates(self) -> bool:
        """Whether candidate sets are pruned (``reduction`` or ``thresholds`` given)."""
        return self.reduction is not None or self.thresholds is not None

    def threshold(self, t: int) -> float:
        r""":math:`\Theta_t` applied after round :math:`t \ge 1` (``inf`` without
        elimination)."""
        if self.thresholds is not None:
            if not 1 <= t <= self.thresholds.size:
                raise ValueError(f"thresholds hold rounds 1..{self.thresholds.size}, round {t} "
                                 "was asked for")
            return float(self.thresholds[t - 1])
        if self.reduction is None:
            return float("inf")
        return float(fs.complexity_threshold(t, n_clients=self.n, **self.reduction))

    def _select(self, state: dict[str, Any], rng: RNGLike, view: RoundView) -> Selection:
        mask, state["base"] = self.base.step(state["base"], rng)
        mask = np.asarray(mask, dtype=bool)
        upd = view.updates(only=None if self.measure_error else mask)
        theta = self.threshold if self.eliminates else None
        friends = fs.discovery_round(state["discovery"], mask, upd, self.similarity, theta)
        state["friends"] = friends
        if self.measure_error:
            state["error2"] = substitution_error2(upd, mask, friends, view.weights)
        return Selection(mask, fs.substitution_coefficients(mask, friends, view.weights))
