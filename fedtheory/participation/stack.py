r"""One participation process per replica: :class:`ProcessStack`.

Replica :math:`r` of a run (:math:`0 \le r < R`) takes part as ``processes[r]`` says, from
its own stream: seed 001's instances each have their own participation means :math:`p_{r,n}`
(drawn with the data), so each instance's Bernoulli, Markov or cyclic pattern is its own
process. The engine asks the stack for the block of replicas it simulates
(:meth:`ProcessStack.for_replicas`); each replica's process runs with one replica and the
replica's generator, so its masks are the ones a run of that process alone draws from that
generator.

.. math:: \mathbb 1^t_{r,i} \sim \text{processes}[r] .

>>> from fedtheory.participation import BernoulliParticipation
>>> stack = ProcessStack([BernoulliParticipation([0.5, 1.0]),
...                       BernoulliParticipation([1.0, 0.5])])
>>> stack.stationary.tolist()
[[0.5, 1.0], [1.0, 0.5]]
>>> rngs = [np.random.default_rng(0), np.random.default_rng(1)]
>>> mask, state = stack.step(stack.init(rngs, 2), rngs)
>>> mask.shape, bool(mask[0, 1] and mask[1, 0])
((2, 2), True)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from fedtheory.participation.base import ParticipationProcess, RNGLike
from fedtheory.validation import equal_across, per_replica, stack_replicas, whole_block

__all__ = ["ProcessStack"]


class ProcessStack(ParticipationProcess):
    r"""Replica :math:`r` of the run takes part as ``processes[r]`` (see the module docstring).

    Parameters
    ----------
    processes
        :math:`R \ge 1` processes over the same ``n`` clients that do not see the round (a
        round-aware process reads the block's updates: not stacked); the run's ``replicas``
        must be :math:`R`.
    """

    name: ClassVar[str] = "stack"

    def __init__(self, processes: Sequence[ParticipationProcess]) -> None:
        procs = per_replica("processes", processes, "participation processes")
        for k, p in enumerate(procs):
            if not isinstance(p, ParticipationProcess):
                raise ValueError(f"processes[{k}] must be a participation process, got {p!r}")
            if getattr(p, "sees_round", False):
                raise ValueError(f"processes[{k}] = {p!r} sees the round (its replicas' "
                                 f"updates): a ProcessStack holds processes that do not")
            if isinstance(p, ProcessStack):
                raise ValueError(f"processes[{k}] is itself a ProcessStack")
        (n,) = equal_across("processes", procs, "n")
        self.processes, self.n, self.replicas = procs, n, len(procs)

    @property
    def stationary(self) -> np.ndarray:
        """``(R, n)``: replica :math:`r`'s stationary probabilities, row :math:`r`."""
        return np.stack([np.asarray(p.stationary, dtype=float) for p in self.processes])

    @property
    def expected_participants(self) -> float:
        """The mean over the replicas of :math:`\\sum_i p_{r,i}`."""
        return float(np.sum(self.stationary) / self.replicas)

    def for_replicas(self, start: int, stop: int) -> ProcessStack:
        """The stack of replicas ``start .. stop - 1`` (a block the engine simulates)."""
        if whole_block(start, stop, self.replicas):
            return self
        return ProcessStack(self.processes[start:stop])

    def _generators(self, rng: RNGLike) -> list[Any]:
        if isinstance(rng, np.random.Generator):
            raise ValueError("a ProcessStack draws every replica from its own generator: rng "
                             f"must be a list of {self.replicas} generators, got one Generator")
        gens = list(rng)
        if len(gens) != self.replicas:
            raise ValueError(f"rng must hold one generator per replica ({self.replicas}), "
                             f"got {len(gens)}")
        return gens

    def init(self, rng: RNGLike, replicas: int) -> dict[str, Any]:
        stack_replicas(replicas, self.replicas, "process")
        gens = self._generators(rng)
        states = [p.init([g], 1) for p, g in zip(self.processes, gens, strict=True)]
        return {"replicas": self.replicas, "t": 0, "states": states}

    def _step(self, state: dict[str, Any], rng: RNGLike) -> np.ndarray:
        gens = self._generators(rng)
        out = np.empty((self.replicas, self.n), dtype=bool)
        states = state["states"]
        for r, (p, g) in enumerate(zip(self.processes, gens, strict=True)):
            mask, states[r] = p.step(states[r], [g])
            out[r] = np.asarray(mask).reshape(self.n)
        return out

    def __repr__(self) -> str:
        kinds = sorted({type(p).__name__ for p in self.processes})
        return f"ProcessStack(replicas={self.replicas}, n={self.n}, processes={'/'.join(kinds)})"
