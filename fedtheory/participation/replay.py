r"""Replayed participation: the masks of every round given in advance.

A deterministic process for comparisons: two simulators (or two rules) fed the same
:class:`ReplayParticipation` see exactly the same active sets :math:`\mathcal A(t)`, whatever
random generators they pass. Round :math:`t` (the :math:`t`-th call of ``step``, from 0) of
replica :math:`r` is ``masks[t, r]``, or ``masks[t]`` for every replica when the masks have
no replica axis.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from fedtheory.participation.base import (
    ParticipationProcess,
    RNGLike,
    validate_probability_vector,
)
from fedtheory.validation import whole_block

__all__ = ["ReplayParticipation"]


class ReplayParticipation(ParticipationProcess, register=True):
    r"""Replays a boolean mask array, round after round; ignores the random generators.

    Parameters
    ----------
    masks
        Boolean, shape ``(T, R, n)`` (round, replica, client) or ``(T, n)`` (the same mask for
        every replica). At most ``T`` rounds can be drawn from a fresh state.
    p
        The stationary probabilities :math:`p_i` the rules use (``(n,)`` or a scalar, in
        (0, 1]); by default the empirical frequencies
        :math:`\hat p_i = \frac{1}{TR}\sum_{t,r} 1_{t,r,i}` (0 for a client never active).

    With ``(T, R, n)`` masks the process has one mask sequence per replica of a run of ``R``
    replicas; a block of them is :meth:`for_replicas` (what the engine asks for, so the
    replicas may be simulated in any chunks), and :meth:`init` rejects any other count.

    >>> proc = ReplayParticipation(np.array([[True, False], [False, True]]))
    >>> proc.sample(np.random.default_rng(0), 3, 2)[:, 0].tolist(), proc.stationary.tolist()
    ([[True, False], [False, True]], [0.5, 0.5])
    """

    name: ClassVar[str] = "replay"

    def __init__(self, masks: Any, p: Any = None) -> None:
        m = np.asarray(masks)
        if m.dtype != bool or m.ndim not in (2, 3) or m.size == 0:
            raise ValueError(
                "masks must be a non-empty boolean array of shape (T, R, n) or (T, n), got "
                f"dtype {m.dtype} and shape {m.shape}"
            )
        self._masks = m.copy()
        self._masks.flags.writeable = False
        self.rounds = int(m.shape[0])
        self.replicas = int(m.shape[1]) if m.ndim == 3 else None
        self.n = int(m.shape[-1])
        if p is None:
            self.p = m.reshape(self.rounds, -1, self.n).mean(axis=(0, 1))
        else:
            self.p = validate_probability_vector(p, self.n)

    def for_replicas(self, start: int, stop: int) -> ReplayParticipation:
        """The masks of replicas ``start .. stop - 1`` (same ``p``); itself without a replica
        axis.

        >>> m = np.zeros((2, 3, 1), dtype=bool); m[:, 1] = True
        >>> ReplayParticipation(m).for_replicas(1, 3).masks[:, :, 0].tolist()
        [[True, False], [True, False]]
        """
        if self.replicas is None or whole_block(start, stop, self.replicas):
            return self
        return ReplayParticipation(self._masks[:, start:stop], p=self.p)

    @property
    def masks(self) -> np.ndarray:
        """The replayed masks (read-only)."""
        return self._masks

    @property
    def stationary(self) -> np.ndarray:
        return self.p.copy()

    def _init(self, state: dict[str, Any], rng: RNGLike) -> None:
        if self.replicas is not None and state["replicas"] != self.replicas:
            raise ValueError(
                f"replicas must be {self.replicas}, the replicas of the masks, got "
                f"{state['replicas']} (see for_replicas)"
            )

    def _step(self, state: dict[str, Any], rng: RNGLike) -> np.ndarray:
        t = state["t"]
        if t >= self.rounds:
            raise ValueError(f"masks hold {self.rounds} rounds, round {t} was asked for")
        mask = self._masks[t]
        if mask.ndim == 1:
            return np.repeat(mask[None], state["replicas"], axis=0)
        return mask.copy()
