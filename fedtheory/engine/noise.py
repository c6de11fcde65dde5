"""Gradient noise on the hot path: the route of a noise model, chosen once (:class:`NoiseKind`),
and its draws into the gradient rows of the active pairs (:class:`GradientNoise`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any

import numpy as np

from fedtheory.algorithms import Participants
from fedtheory.algorithms.base import scratch
from fedtheory.engine.streams import NormalStreams

if TYPE_CHECKING:
    from fedtheory.problems.noise import NoiseSampler

__all__ = ["GradientNoise", "NoiseKind"]


class NoiseKind(str, Enum):
    """How the noise is drawn: none; Gaussian (a :class:`~fedtheory.problems.noise.NoiseModel`)
    with a fixed scale (``ADDITIVE``) or one relative to the gradient (``RELATIVE``), both
    from standard normals drawn ahead (:class:`NormalStreams`); or the model's own ``sample``
    (``GENERIC``)."""

    NONE = "none"
    ADDITIVE = "additive"
    RELATIVE = "relative"
    GENERIC = "generic"

    @classmethod
    def of(cls, noise: Any) -> NoiseKind:
        """The route of ``noise`` (a noise model or None); a ``ValueError`` for anything else."""
        from fedtheory.problems.noise import NoiseModel, NoiseSampler

        if noise is None:
            return cls.NONE
        if not isinstance(noise, NoiseSampler):
            raise ValueError(f"noise must be a noise model with .sample(), got {noise!r}")
        if isinstance(noise, NoiseModel) and noise.distribution == "gaussian":
            # xi = s z / sqrt(d), s^2 = M ||g||^2 + sigma^2: the normals are drawn here,
            # per replica, into one buffer, and scaled for all rows at once
            return cls.ADDITIVE if noise.M == 0 else cls.RELATIVE
        return cls.GENERIC


class GradientNoise:
    """The noise of a run in ``d`` coordinates of ``dtype``: :attr:`kind` and, for additive
    Gaussian noise, the per-coordinate standard deviation :attr:`sd`."""

    def __init__(self, noise: NoiseSampler | None, d: int, dtype: np.dtype) -> None:
        self.noise, self.d, self.dtype = noise, d, dtype
        self.kind = NoiseKind.of(noise)
        self.sd = (math.sqrt(noise.sigma2 / d) if self.kind is NoiseKind.ADDITIVE
                   else 0.0)  # type: ignore[union-attr]

    @property
    def present(self) -> bool:
        """Whether any noise is drawn."""
        return self.kind is not NoiseKind.NONE

    def streams(self, rngs: list[np.random.Generator]) -> Any:
        """The block's noise streams: standard normals drawn ahead for a Gaussian model."""
        if self.kind in (NoiseKind.ADDITIVE, NoiseKind.RELATIVE):
            return NormalStreams(rngs, self.dtype)
        return rngs

    def normals(self, part: Participants, rngs: NormalStreams | Sequence[np.random.Generator],
                work: dict[str, Any]) -> np.ndarray:
        """Standard normals ``(K, d)``: replica r's rows from its own noise stream (drawn
        ahead by a :class:`NormalStreams`, or on demand from a list of generators)."""
        z = scratch(work, "z", part.size, self.d, self.dtype)
        if isinstance(rngs, NormalStreams):
            rngs.fill(part, z)
            return z
        starts = part.starts
        for r in part.present.tolist():
            rngs[r].standard_normal(out=z[starts[r] : starts[r + 1]], dtype=self.dtype)
        return z

    def add(self, g: np.ndarray, part: Participants, rngs: Any, work: dict[str, Any]) -> None:
        """Add one noise draw to every row of the gradients ``g`` in place."""
        if self.kind is NoiseKind.GENERIC:
            starts = part.starts
            for r in part.present.tolist():
                s, e = starts[r], starts[r + 1]
                g[s:e] += self.noise.sample(g[s:e], rngs[r], dtype=self.dtype)
            return
        z = self.normals(part, rngs, work)
        if self.kind is NoiseKind.ADDITIVE:
            z *= self.dtype.type(self.sd)
        else:
            scale = np.sqrt(self.noise.variance(g) / self.d).astype(self.dtype)
            z *= scale[:, None]
        g += z
