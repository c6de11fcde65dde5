"""What the engine asks of the components, declared (no ``hasattr`` probes): a process with one
part per replica, a process that sees the round, a problem that gives its clients' losses."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from fedtheory.participation.base import RoundView

__all__ = ["ClientLosses", "PerReplicaParts", "SeesTheRound", "sees_the_round"]


@runtime_checkable
class PerReplicaParts(Protocol):
    """A process asked for the part of a block of replicas (the base class gives itself)."""

    def for_replicas(self, start: int, stop: int) -> Any: ...


@runtime_checkable
class SeesTheRound(Protocol):
    """A process that may see the round (:class:`~fedtheory.participation.RoundAwareProcess`
    when its ``sees_round``): stepped by ``select`` on a :class:`RoundView`."""

    sees_round: bool

    def select(self, state: dict[str, Any], rng: Any, view: RoundView) -> Any: ...


def sees_the_round(process: Any) -> bool:
    """Whether a process is stepped by ``select`` on a view of the round."""
    return isinstance(process, SeesTheRound) and bool(process.sees_round)


@runtime_checkable
class ClientLosses(Protocol):
    """A problem that gives every client's loss (for a process that sees the round)."""

    def client_losses(self, x: np.ndarray) -> np.ndarray: ...
