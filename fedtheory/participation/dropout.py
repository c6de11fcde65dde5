r"""Arbitrary client dropout with a bound on the dropout ratio (seed 004): in round :math:`t`
:math:`S_t` of the :math:`K = n` clients stay, with

.. math:: \frac{K - S_t}{K} \le \alpha < 1 ,

so at least one client always takes part. Here the number dropped :math:`D_t = n - S_t` is
drawn independently each round on :math:`\{0, \dots, \lfloor\alpha n\rfloor\}`
(``"uniform"``) or is always :math:`\lfloor\alpha n\rfloor` (``"max"``, the worst case the
bound allows); the dropped clients are a uniformly random subset of that size. Hence

.. math:: p_i = 1 - \mathbb E[D_t]/n,\quad \mathbb E[D_t] = \lfloor\alpha n\rfloor / 2
    \text{ (uniform) or } \lfloor\alpha n\rfloor \text{ (max)}.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from fedtheory.participation.base import ParticipationProcess, RNGLike, uniforms, validate_n

__all__ = ["DropoutParticipation"]


class DropoutParticipation(ParticipationProcess):
    """Dropout of at most :math:`\\lfloor\\alpha n\\rfloor` random clients per round.

    Parameters
    ----------
    n
        Number of clients.
    alpha
        Bound on the dropout ratio, in [0, 1).
    distribution
        ``"uniform"`` (default) or ``"max"``: law of the number of dropped clients.

    >>> proc = DropoutParticipation(10, 0.3, distribution="max")
    >>> rng = np.random.default_rng(0)
    >>> mask, _ = proc.step(proc.init(rng, 3), rng)
    >>> mask.sum(axis=1).tolist(), proc.max_dropped
    ([7, 7, 7], 3)
    """

    name: ClassVar[str] = "dropout"

    def __init__(self, n: int, alpha: float, distribution: str = "uniform") -> None:
        self.n = validate_n(n)
        a = float(alpha)
        if not 0.0 <= a < 1.0:
            raise ValueError(f"alpha must be in [0, 1), got {alpha!r}")
        self.alpha = a
        if distribution not in ("uniform", "max"):
            raise ValueError(f"distribution must be 'uniform' or 'max', got {distribution!r}")
        self.distribution = distribution

    @property
    def max_dropped(self) -> int:
        """:math:`\\lfloor\\alpha n\\rfloor` (rounding error of ``alpha * n`` forgiven)."""
        return min(self.n - 1, math.floor(self.alpha * self.n + 1e-9))

    @property
    def stationary(self) -> np.ndarray:
        mean_dropped = self.max_dropped / 2 if self.distribution == "uniform" else self.max_dropped
        return np.full(self.n, 1.0 - mean_dropped / self.n)

    def _step(self, state: dict[str, Any], rng: RNGLike) -> np.ndarray:
        R, dmax = state["replicas"], self.max_dropped
        u = uniforms(rng, R, self.n + 1)
        if self.distribution == "uniform":
            dropped = np.minimum(np.floor(u[:, 0] * (dmax + 1)).astype(np.intp), dmax)
        else:
            dropped = np.full(R, dmax, dtype=np.intp)
        rank = u[:, 1:]
        # the clients with the `dropped` smallest uniforms drop out
        kth = np.sort(rank, axis=1)[np.arange(R), dropped]
        return rank >= kth[:, None]
