"""What a client's local work may be asked to be: how many steps (:data:`LocalSteps`: one int,
per client, a per-round draw :class:`LocalStepsDraw` or a callable; checked by
:func:`resolve_local_steps`) and on what (:class:`MiniBatches`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fedtheory.validation import integer_at_least

__all__ = ["LocalSteps", "LocalStepsDraw", "MiniBatches", "mean_local_steps",
           "resolve_local_steps"]


@dataclass(frozen=True)
class LocalStepsDraw:
    r"""Per-round random local work: every round, each (replica, client) pair draws its
    :math:`\tau_{r,i}^t` uniformly from the integers :math:`\{\text{low}, \dots,
    \text{high}\}` (both included), replica :math:`r` from its own stream
    (``SeedSequence(seed, spawn_key=(r, 2))``, so chunking never changes the draws).

    >>> LocalStepsDraw(1, 4).draw([np.random.default_rng(0)], 1, 3).shape
    (1, 3)
    """

    low: int
    high: int

    def __post_init__(self) -> None:
        for name in ("low", "high"):
            integer_at_least(f"LocalStepsDraw.{name}", getattr(self, name))
        if self.high < self.low:
            raise ValueError(f"LocalStepsDraw.high must be >= low={self.low}, got {self.high!r}")

    @property
    def max(self) -> int:
        """The most steps a pair can take."""
        return int(self.high)

    @property
    def mean(self) -> float:
        """The expected number of steps."""
        return (self.low + self.high) / 2

    def draw(self, rngs: Sequence[np.random.Generator], replicas: int, n: int) -> np.ndarray:
        """``(replicas, n)`` step counts, row ``r`` from ``rngs[r]``."""
        out = np.empty((replicas, n), dtype=np.int64)
        for r in range(replicas):
            out[r] = rngs[r].integers(self.low, self.high + 1, size=n)
        return out


#: What ``local_steps`` may be: one int for every client, ``(n,)`` ints per client, a
#: :class:`LocalStepsDraw`, or ``callable(rngs, replicas, n) -> (replicas, n)`` ints (row
#: ``r`` drawn from ``rngs[r]``, one generator per replica, for chunk-independent results).
LocalSteps = int | np.ndarray | LocalStepsDraw | Callable[..., np.ndarray]


def _check_taus(taus: Any, shape: tuple[int, ...], name: str = "local_steps") -> np.ndarray:
    """Integer step counts >= 1 of the given shape, or a ``ValueError`` naming ``name``."""
    a = np.asarray(taus)
    if a.shape != shape or not np.issubdtype(a.dtype, np.integer) or (a.size and a.min() < 1):
        raise ValueError(f"{name} must be integers >= 1 of shape {shape}, got "
                         f"{a.dtype} array of shape {a.shape}"
                         + (f" with minimum {a.min()}" if a.size and a.dtype.kind in "iuf" else ""))
    return a.astype(np.int64, copy=False)


def resolve_local_steps(local_steps: Any, n: int) -> int | np.ndarray | Callable[..., np.ndarray]:
    r"""Validate ``local_steps``: an int :math:`\tau \ge 1` (returned as int), an ``(n,)``
    array of ints :math:`\ge 1` (returned as an int64 array; a constant array becomes its
    int, the same run), a :class:`LocalStepsDraw` or a callable (returned as is, checked each
    round). Otherwise a ``ValueError`` naming ``local_steps``."""
    if isinstance(local_steps, LocalStepsDraw) or (callable(local_steps)
                                                    and not isinstance(local_steps, np.ndarray)):
        return local_steps
    if isinstance(local_steps, (list, tuple, np.ndarray)):
        a = _check_taus(local_steps, (n,))
        if a.min() == a.max():
            return int(a[0])
        return a
    if isinstance(local_steps, bool) or not isinstance(local_steps, (int, np.integer)) \
            or local_steps < 1:
        raise ValueError(f"local_steps must be an integer >= 1, got {local_steps!r} (or an "
                         f"(n,) = ({n},) array of such integers, a LocalStepsDraw or a "
                         f"callable(rngs, replicas, n))")
    return int(local_steps)


@dataclass(frozen=True)
class MiniBatches:
    r"""Local mini-batch SGD: every round, each (replica, client) pair reads its :math:`s_i`
    samples in a fresh random order and takes each local step on a batch of them.

    The order is a uniform permutation per (replica, client, round), replica :math:`r`'s from
    its own stream ``SeedSequence(seed, spawn_key=(r, 3))``, drawn for *every* client every
    round whoever takes part: chunking never changes it, and runs on one seed with different
    processes or rules share it (common random numbers). With :math:`B = \min(\text{size},
    \max_i s_i)`, step :math:`k` of client :math:`i` reads the positions

    * ``wrap=False`` (epochs): :math:`bB, \dots, \min((b+1)B, s_i) - 1` of the order,
      :math:`b = k \bmod \lceil s_i/B\rceil` (the last batch of an epoch is partial;
      :meth:`epoch_steps` steps are one epoch);
    * ``wrap=True``: the :math:`\min(B, s_i)` positions :math:`kB, kB + 1, \dots` modulo
      :math:`s_i` (full batches, cycling through the order).

    The problem declares ``Capability.MINIBATCH_GRADIENTS`` (its ``sizes`` and
    ``minibatch_gradients``).

    >>> MiniBatches(20).epoch_steps(np.array([2, 20, 81])).tolist()
    [1, 1, 5]
    """

    size: int
    wrap: bool = False

    def __post_init__(self) -> None:
        integer_at_least("MiniBatches.size", self.size)
        if not isinstance(self.wrap, (bool, np.bool_)):
            raise ValueError(f"MiniBatches.wrap must be a bool, got {self.wrap!r}")

    def epoch_steps(self, sizes: np.ndarray) -> np.ndarray:
        r"""Local steps of one epoch per client, :math:`\lceil s_i / B\rceil` (``(n,)`` ints)."""
        sizes = np.asarray(sizes, dtype=np.int64)
        B = min(int(self.size), int(sizes.max()))
        return -(-sizes // B)


def mean_local_steps(local_steps: Any) -> float:
    """The mean local steps of a run (1 for a callable draw: unknown before it runs)."""
    if isinstance(local_steps, int):
        return float(local_steps)
    if isinstance(local_steps, np.ndarray):
        return float(np.mean(local_steps))
    return float(local_steps.mean) if isinstance(local_steps, LocalStepsDraw) else 1.0
