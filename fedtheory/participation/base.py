r"""What every participation process shares: the state/step interface, random draws per
replica, validation.

A process decides, round after round, which of the :math:`n` clients take part, for ``R``
independent replicas at once::

    state = proc.init(rng, replicas)
    mask, state = proc.step(state, rng)      # mask: bool (replicas, n)

``rng`` is either one :class:`numpy.random.Generator` shared by all replicas, or a sequence of
one generator per replica. With per-replica generators, replica ``r``'s masks depend only on
its own generator, so splitting the replicas into chunks never changes them (the simulator
relies on this). Every process draws only uniforms, row by row, so the two forms cost the same
arithmetic.

Each process exposes :attr:`ParticipationProcess.stationary`, the probability
:math:`p_i = P(1_i^t = 1)` that client :math:`i` takes part in a round (the same in every
round: chains start in their stationary law, cycles at a uniformly random phase).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from fedtheory.validation import probabilities

__all__ = [
    "ParticipationProcess",
    "RNGLike",
    "uniforms",
    "validate_n",
    "validate_probability_vector",
]

#: One generator for all replicas, or one per replica.
RNGLike = np.random.Generator | Sequence[np.random.Generator]


def uniforms(rng: RNGLike, replicas: int, *shape: int) -> np.ndarray:
    """Uniforms on [0, 1), shape ``(replicas, *shape)``: row ``r`` from ``rng[r]`` when ``rng``
    is a sequence of per-replica generators.

    >>> u = uniforms([np.random.default_rng(s) for s in (1, 2, 3)], 3, 4)
    >>> v = uniforms([np.random.default_rng(s) for s in (2, 3)], 2, 4)
    >>> bool(np.array_equal(u[1:], v))
    True
    """
    if isinstance(rng, np.random.Generator):
        return rng.random((replicas, *shape))
    if len(rng) != replicas:
        raise ValueError(f"rng must hold one generator per replica ({replicas}), got {len(rng)}")
    out = np.empty((replicas, *shape))
    for r, g in enumerate(rng):
        g.random(out=out[r])
    return out


def validate_n(n: Any, name: str = "n") -> int:
    """``n`` as a positive int, or ``ValueError``."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{name} must be a positive integer, got {n!r}")
    return int(n)


def validate_probability_vector(p: Any, n: int | None, name: str = "p") -> np.ndarray:
    """``p`` as an ``(n,)`` float array with entries in (0, 1]; a scalar needs ``n``
    (:func:`fedtheory.validation.probabilities`)."""
    return probabilities(name, p, None if n is None else validate_n(n))


class ParticipationProcess:
    """Base class: subclasses set :attr:`name`, :attr:`n`, :attr:`stationary` and implement
    ``_init(state, rng)`` and ``_step(state, rng) -> mask``."""

    name: ClassVar[str] = ""
    n: int

    @property
    def stationary(self) -> np.ndarray:
        """``(n,)``: :math:`P(\\text{client } i \\text{ takes part in a round})`."""
        raise NotImplementedError

    @property
    def expected_participants(self) -> float:
        """:math:`\\sum_i p_i`, the expected number of participants per round."""
        return float(np.sum(self.stationary))

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({params})"

    def init(self, rng: RNGLike, replicas: int) -> dict[str, Any]:
        """The state of ``replicas`` independent copies of the process before round 0."""
        replicas = validate_n(replicas, "replicas")
        state: dict[str, Any] = {"replicas": replicas, "t": 0}
        self._init(state, rng)
        return state

    def step(self, state: dict[str, Any], rng: RNGLike) -> tuple[np.ndarray, dict[str, Any]]:
        """The participation mask of the next round, bool ``(replicas, n)``, and the state."""
        mask = self._step(state, rng)
        state["t"] += 1
        return mask, state

    def sample(self, rng: RNGLike, replicas: int, rounds: int) -> np.ndarray:
        """``rounds`` consecutive masks from a fresh state: bool ``(rounds, replicas, n)``."""
        rounds = validate_n(rounds, "rounds")
        state = self.init(rng, replicas)
        out = np.empty((rounds, state["replicas"], self.n), dtype=bool)
        for t in range(rounds):
            out[t], state = self.step(state, rng)
        return out

    def _init(self, state: dict[str, Any], rng: RNGLike) -> None:
        """Add the process's arrays to ``state`` (stateless processes add nothing)."""

    def _step(self, state: dict[str, Any], rng: RNGLike) -> np.ndarray:
        raise NotImplementedError
