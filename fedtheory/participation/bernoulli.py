r"""Independent participation: client :math:`i` takes part with probability :math:`p_i`,
independently of the other clients and of the past (seed 000 setup (i), seed 002's
independent sampling).

.. math:: 1_i^t \sim \text{Bernoulli}(p_i)\ \text{independent over } i, t.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from fedtheory.participation.base import (
    ParticipationProcess,
    RNGLike,
    uniforms,
    validate_probability_vector,
)
from fedtheory.sampling.independent import IndependentSampling

__all__ = ["BernoulliParticipation"]


class BernoulliParticipation(ParticipationProcess, register=True):
    """Independent Bernoulli(:math:`p_i`) participation.

    Parameters
    ----------
    p
        Probabilities in (0, 1], a scalar (then ``n`` is required) or an ``(n,)`` array.
    n
        Number of clients (checked against ``p``'s length when both are given).

    >>> proc = BernoulliParticipation(0.5, n=3)
    >>> rng = np.random.default_rng(0)
    >>> mask, state = proc.step(proc.init(rng, 2), rng)
    >>> mask.shape, mask.dtype, proc.stationary.tolist()
    ((2, 3), dtype('bool'), [0.5, 0.5, 0.5])
    """

    name: ClassVar[str] = "bernoulli"
    design_class: ClassVar[type[IndependentSampling]] = IndependentSampling

    def __init__(self, p: Any, n: int | None = None) -> None:
        self.p = validate_probability_vector(p, n)
        self.n = int(self.p.shape[0])

    @property
    def stationary(self) -> np.ndarray:
        return self.p.copy()

    def design(self) -> IndependentSampling:
        """The law of one round's participants, as a sampling design (its exact moments,
        estimators and enumeration: :mod:`fedtheory.sampling`).

        >>> BernoulliParticipation([0.5, 0.25]).design().P_exact[0, 1]
        Fraction(1, 8)
        """
        return IndependentSampling(self.p)

    @classmethod
    def from_design(cls, design: IndependentSampling) -> BernoulliParticipation:
        """The process whose every round is drawn from ``design``."""
        return cls(design.p)

    def _step(self, state: dict[str, Any], rng: RNGLike) -> np.ndarray:
        return uniforms(rng, state["replicas"], self.n) < self.p
