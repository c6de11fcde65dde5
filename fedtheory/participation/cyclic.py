r"""Cyclic participation (seed 001): each client is on for a fraction :math:`p_i` of every
cycle of ``period`` rounds, in one consecutive run, at a random phase.

Client :math:`i` of replica :math:`r` draws a phase :math:`\varphi_{ri}\sim U[0, 1)` once and
takes part in round :math:`t` when

.. math:: \big(\varphi_{ri} + t/P\big) \bmod 1 < p_i ,

so :math:`P(1_i^t = 1) = p_i` in every round (the stationary probability) and, when
:math:`p_i P` is an integer, the client is on for exactly :math:`p_i P` consecutive rounds per
cycle. ``phase="aligned"`` starts every client at phase 0 (deterministic groups; then
:math:`p_i` is only the long-run frequency).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from fedtheory.participation.base import (
    ParticipationProcess,
    RNGLike,
    uniforms,
    validate_n,
    validate_probability_vector,
)

__all__ = ["CyclicParticipation"]


class CyclicParticipation(ParticipationProcess, register=True):
    """Cycles of ``period`` rounds, on for a fraction ``p`` of each, random phase.

    Parameters
    ----------
    p
        Fraction of each cycle a client is on, in (0, 1]; scalar (needs ``n``) or ``(n,)``.
    period
        Cycle length in rounds, a positive integer.
    n
        Number of clients.
    phase
        ``"random"`` (default, uniform per replica and client) or ``"aligned"``.

    >>> proc = CyclicParticipation(0.5, period=4, n=1, phase="aligned")
    >>> proc.sample(np.random.default_rng(0), 1, 8)[:, 0, 0].astype(int).tolist()
    [1, 1, 0, 0, 1, 1, 0, 0]
    """

    name: ClassVar[str] = "cyclic"

    def __init__(self, p: Any, period: int = 10, n: int | None = None,
                 phase: str = "random") -> None:
        self.p = validate_probability_vector(p, n)
        self.n = int(self.p.shape[0])
        self.period = validate_n(period, "period")
        if phase not in ("random", "aligned"):
            raise ValueError(f"phase must be 'random' or 'aligned', got {phase!r}")
        self.phase = phase

    @property
    def stationary(self) -> np.ndarray:
        return self.p.copy()

    def _init(self, state: dict[str, Any], rng: RNGLike) -> None:
        if self.phase == "random":
            state["phase"] = uniforms(rng, state["replicas"], self.n)
        else:
            state["phase"] = np.zeros((state["replicas"], self.n))

    def _step(self, state: dict[str, Any], rng: RNGLike) -> np.ndarray:
        pos = state["phase"] + (state["t"] % self.period) / self.period
        pos -= np.floor(pos)
        return pos < self.p
