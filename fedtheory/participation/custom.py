r"""A user's own round-aware scheme: a callable given the round's view.

``CustomParticipation(n, fn, stationary=...)`` runs ``fn(view, rng, state)`` every round,
where ``view`` is the read-only :class:`~fedtheory.participation.base.RoundView` (iterates,
and lazily the updates, norms, similarities, losses), ``rng`` one generator per replica (draw
row :math:`r` from ``rng[r]`` to keep results independent of the chunking of replicas) and
``state`` a dict the scheme may keep its own arrays in. ``fn`` returns a bool mask ``(R, n)``
or a :class:`~fedtheory.participation.base.Selection` (with unbiased coefficients, if any).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from fedtheory.participation.base import (
    RNGLike,
    RoundAwareProcess,
    RoundView,
    Selection,
    validate_n,
)
from fedtheory.validation import probabilities

__all__ = ["CustomParticipation"]


class CustomParticipation(RoundAwareProcess, register=True):
    r"""A scheme given as ``fn(view, rng, state) -> mask | Selection``.

    ``stationary``: the nominal marginal :math:`p_i` (a number or ``(n,)``; it sizes the
    engine's chunks and serves rules that read :math:`p`); ``coefficients``: whether ``fn``'s
    selections carry aggregation coefficients (then the rule must apply them).

    >>> proc = CustomParticipation(3, lambda view, rng, state: view.x[:, :3] > 0, 0.5)
    >>> proc.stationary.tolist()
    [0.5, 0.5, 0.5]
    """

    name: ClassVar[str] = "custom"

    def __init__(self, n: int, fn: Callable[[RoundView, RNGLike, dict[str, Any]],
                                            np.ndarray | Selection],
                 stationary: Any = 1.0, coefficients: bool = False) -> None:
        self.n = validate_n(n)
        if not callable(fn):
            raise ValueError(f"fn must be callable (view, rng, state) -> mask, got {fn!r}")
        self.fn = fn
        self._p = probabilities("stationary", stationary, self.n)
        self.coefficients = bool(coefficients)

    @property
    def sets_coefficients(self) -> bool:  # type: ignore[override]
        return self.coefficients

    @property
    def stationary(self) -> np.ndarray:
        return self._p.copy()

    def _select(self, state: dict[str, Any], rng: RNGLike, view: RoundView) -> Selection:
        out = self.fn(view, rng, state)
        return out if isinstance(out, Selection) else Selection(np.asarray(out))
