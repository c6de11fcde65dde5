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
"""

from __future__ import annotations

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

__all__ = ["FDMSFriendChoice"]


class FDMSFriendChoice(RoundAwareProcess):
    r"""FL-FDMS friend choice over the dropouts of ``base``.

    ``reduction`` and ``similarity`` as for :class:`~fedtheory.algorithms.FLFDMS`.
    :attr:`stationary` is the base process's.
    """

    name: ClassVar[str] = "fdms_friends"
    sets_coefficients: ClassVar[bool] = True

    def __init__(self, base: ParticipationProcess, reduction: dict[str, Any] | None = None,
                 similarity: str = "cosine") -> None:
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

    def threshold(self, t: int) -> float:
        r""":math:`\Theta_t` of the complexity reduction (``inf`` without it)."""
        if self.reduction is None:
            return float("inf")
        return float(fs.complexity_threshold(t, n_clients=self.n, **self.reduction))

    def _select(self, state: dict[str, Any], rng: RNGLike, view: RoundView) -> Selection:
        mask, state["base"] = self.base.step(state["base"], rng)
        mask = np.asarray(mask, dtype=bool)
        upd = view.updates(only=mask)
        theta = None if self.reduction is None else self.threshold
        friends = fs.discovery_round(state["discovery"], mask, upd, self.similarity, theta)
        state["friends"] = friends
        return Selection(mask, fs.substitution_coefficients(mask, friends, view.weights))
