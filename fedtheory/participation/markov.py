r"""Markovian participation (seed 001): every client follows its own two-state on/off chain
with a given stationary probability :math:`p_i`, started in its stationary law.

With lag-one autocorrelation :math:`\lambda` ("correlation") the transition probabilities are

.. math::

    P(\text{off}\to\text{on}) = p_i(1-\lambda),\qquad
    P(\text{on}\to\text{off}) = (1-p_i)(1-\lambda),

so that :math:`p_i` is stationary and :math:`\operatorname{corr}(1_i^t, 1_i^{t+1}) = \lambda`;
:math:`\lambda = 0` is Bernoulli participation, :math:`\lambda \to 1` long on/off spells.
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

__all__ = ["MarkovParticipation", "OnOffChain"]


class OnOffChain(ParticipationProcess):
    r"""Base class of the two-state on/off chains, one per client, with stationary
    probabilities :attr:`p`, started in their stationary law before round 0 and moved once
    before each round's draw, one uniform per client and round: an inactive client joins when
    :math:`u < P(\text{off}\to\text{on})`; an active one stays when
    :math:`u < 1 - P(\text{on}\to\text{off})`, or, with :attr:`leave_below` (FedAU's
    code), leaves when :math:`u < P(\text{on}\to\text{off})` (the same law, other draws).
    Subclasses set :attr:`p`, :attr:`n` and implement :attr:`p_on` and :attr:`p_off`.
    """

    p: np.ndarray
    #: Whether an active client leaves when its uniform is below :attr:`p_off` (else it stays
    #: when its uniform is below ``1 - p_off``).
    leave_below: ClassVar[bool] = False

    @property
    def p_on(self) -> np.ndarray:
        r""":math:`P(\text{off}\to\text{on})` per client, ``(n,)``."""
        raise NotImplementedError

    @property
    def p_off(self) -> np.ndarray:
        r""":math:`P(\text{on}\to\text{off})` per client, ``(n,)``."""
        raise NotImplementedError

    @property
    def stationary(self) -> np.ndarray:
        return self.p.copy()

    def _init(self, state: dict[str, Any], rng: RNGLike) -> None:
        # the chain before round 0, in its stationary law
        state["on"] = uniforms(rng, state["replicas"], self.n) < self.p

    def _step(self, state: dict[str, Any], rng: RNGLike) -> np.ndarray:
        u = uniforms(rng, state["replicas"], self.n)
        stays = u >= self.p_off if self.leave_below else u < 1.0 - self.p_off
        state["on"] = np.where(state["on"], stays, u < self.p_on)
        return state["on"].copy()


class MarkovParticipation(OnOffChain, register=True):
    """On/off Markov chains with stationary probabilities ``p`` and lag-one correlation.

    Parameters
    ----------
    p
        Stationary probabilities in (0, 1], scalar (needs ``n``) or ``(n,)``.
    correlation
        :math:`\\lambda \\in (-1, 1)` such that both transition probabilities lie in [0, 1]
        (any :math:`\\lambda \\in [0, 1)` does); default 0.5.
    n
        Number of clients.

    >>> proc = MarkovParticipation([0.2, 0.9], correlation=0.8)
    >>> proc.p_on.round(3).tolist(), proc.p_off.round(3).tolist()
    ([0.04, 0.18], [0.16, 0.02])
    """

    name: ClassVar[str] = "markov"

    def __init__(self, p: Any, correlation: float = 0.5, n: int | None = None) -> None:
        self.p = validate_probability_vector(p, n)
        self.n = int(self.p.shape[0])
        lam = float(correlation)
        if not -1.0 < lam < 1.0:
            raise ValueError(f"correlation must be in (-1, 1), got {correlation!r}")
        self.correlation = lam
        on, off = self.p * (1 - lam), (1 - self.p) * (1 - lam)
        if (on > 1).any() or (off > 1).any():
            raise ValueError(
                f"correlation={correlation!r} gives transition probabilities above 1 for "
                f"p={self.p[(on > 1) | (off > 1)][0]!r}"
            )

    @property
    def p_on(self) -> np.ndarray:
        """:math:`P(\\text{off}\\to\\text{on})`, ``(n,)``."""
        return self.p * (1 - self.correlation)

    @property
    def p_off(self) -> np.ndarray:
        """:math:`P(\\text{on}\\to\\text{off})`, ``(n,)``."""
        return (1 - self.p) * (1 - self.correlation)
