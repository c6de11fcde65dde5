r"""Uniform sampling of :math:`b` of the :math:`n` clients without replacement (seed 000's
tables, seed 003 Theorem 3): every subset of size :math:`b` equally likely, independently
over rounds, so :math:`p_i = b/n` and :math:`p_{ij} = \frac{b(b-1)}{n(n-1)}`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from fedtheory.participation.base import ParticipationProcess, RNGLike, uniforms, validate_n
from fedtheory.sampling.without_replacement import UniformWithoutReplacement
from fedtheory.validation import integer_in

__all__ = ["UniformParticipation"]


class UniformParticipation(ParticipationProcess, register=True):
    """``b``-of-``n`` uniform sampling without replacement.

    The ``b`` clients with the smallest of ``n`` independent uniforms take part (a uniformly
    random subset). With ``b = n`` every client takes part and nothing is drawn.

    >>> proc = UniformParticipation(5, 2)
    >>> rng = np.random.default_rng(0)
    >>> mask, _ = proc.step(proc.init(rng, 4), rng)
    >>> mask.sum(axis=1).tolist(), proc.stationary.tolist()
    ([2, 2, 2, 2], [0.4, 0.4, 0.4, 0.4, 0.4])
    """

    name: ClassVar[str] = "uniform"
    design_class: ClassVar[type[UniformWithoutReplacement]] = UniformWithoutReplacement

    def __init__(self, n: int, b: int) -> None:
        self.n = validate_n(n)
        integer_in("b", b, 1, self.n, f"an integer in [1, n={self.n}]")
        self.b = int(b)

    @property
    def stationary(self) -> np.ndarray:
        return np.full(self.n, self.b / self.n)

    def design(self) -> UniformWithoutReplacement:
        """The law of one round's participants, as a sampling design (:mod:`fedtheory.
        sampling`).

        >>> UniformParticipation(4, 2).design().P_exact[0, 1]
        Fraction(1, 6)
        """
        return UniformWithoutReplacement(self.n, self.b)

    @classmethod
    def from_design(cls, design: UniformWithoutReplacement) -> UniformParticipation:
        """The process whose every round is drawn from ``design``."""
        return cls(design.n, design.b)

    def _step(self, state: dict[str, Any], rng: RNGLike) -> np.ndarray:
        if self.b == self.n:  # no randomness to draw (full participation)
            return np.ones((state["replicas"], self.n), dtype=bool)
        u = uniforms(rng, state["replicas"], self.n)
        kth = np.partition(u, self.b - 1, axis=1)[:, self.b - 1 : self.b]
        return u <= kth
