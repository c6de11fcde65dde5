r"""The participation patterns of FedAU's public code (seed 001; ``util/util.py``,
``WorkerSampler``), in their own parametrisation.

The code's ``-participation`` option takes ``bernoulli``, ``markov-<q>`` and ``cyclic-<P>``.
Bernoulli is :class:`~fedtheory.participation.BernoulliParticipation`; the other two differ
from this package's :class:`~fedtheory.participation.MarkovParticipation` (one lag-one
correlation for every client) and :class:`~fedtheory.participation.CyclicParticipation`
(on-run :math:`\lfloor pP\rfloor` or :math:`\lceil pP\rceil` by a uniform phase), so they are
here, as the code draws them:

* :class:`JoinRateMarkov` (``markov-q``): every client's on/off chain joins with probability
  :math:`q` and leaves with :math:`q(1/p_n - 1)`; when that exceeds 1 both are divided by it
  (leave 1, join :math:`p_n/(1-p_n)`). The stationary probability is :math:`p_n` either way,
  the lag-one correlation :math:`\lambda_n = 1 - \text{join} - \text{leave}` differs per client
  (:math:`1 - q/p_n`; negative, :math:`-p_n/(1-p_n)`, below :math:`p_n = q/(1+q)`). The chain
  starts in its stationary law and moves once before each round's draw, as the code does.
* :class:`OffsetCyclic` (``cyclic-P``): client :math:`n` is on for
  :math:`m_n = \max(1, \mathrm{round}(P p_n))` consecutive rounds (numpy's round, half to
  even) and off for :math:`\max(1, P - m_n)`; it starts off, with a random offset
  :math:`r_n` uniform on :math:`\{0, \dots, \text{off}-1\}`: off for rounds
  :math:`0..r_n-1`, then on. Its long-run frequency is :math:`m_n/(m_n + \text{off}_n)`
  (:attr:`OffsetCyclic.stationary`), which is :math:`\mathrm{round}(Pp_n)/P`, not
  :math:`p_n`, and the first rounds are not stationary (a client is never on in the middle
  of a run at round 0).

Neither is registered in :data:`~fedtheory.participation.PROCESSES` (the generic battery of
``tests/test_participation.py`` asks every registered process to be stationary from round 0,
which :class:`OffsetCyclic` by design is not): build them directly.

>>> proc = OffsetCyclic([0.02, 0.5], period=100)
>>> proc.on_rounds.tolist(), proc.off_rounds.tolist(), proc.stationary.tolist()
([2, 50], [98, 50], [0.02, 0.5])
>>> JoinRateMarkov([0.02, 0.5], to_active=0.05).correlation.round(4).tolist()
[-0.0204, 0.9]
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from fedtheory.participation.base import (
    ParticipationProcess,
    RNGLike,
    uniforms,
    validate_n,
    validate_probability_vector,
)
from fedtheory.participation.markov import OnOffChain

__all__ = ["JoinRateMarkov", "OffsetCyclic"]


class JoinRateMarkov(OnOffChain):
    r"""FedAU's ``markov-q`` pattern: on/off chains with join probability ``to_active``
    (see the module docstring).

    Parameters
    ----------
    p
        Stationary probabilities in (0, 1), scalar (needs ``n``) or ``(n,)``.
    to_active
        The join probability :math:`q\in(0, 1]` before clipping (the code's 0.05).
    n
        Number of clients.

    >>> proc = JoinRateMarkov([0.1, 0.02], to_active=0.05)
    >>> proc.p_on.round(4).tolist(), proc.p_off.round(4).tolist()
    ([0.05, 0.0204], [0.45, 1.0])
    """

    name: ClassVar[str] = "markov_join"
    leave_below: ClassVar[bool] = True  # as the code: an active client leaves when u < leave

    def __init__(self, p: Any, to_active: float = 0.05, n: int | None = None) -> None:
        self.p = validate_probability_vector(p, n)
        self.n = int(self.p.shape[0])
        if np.any(self.p >= 1.0):
            raise ValueError(f"p must be below 1 for a Markov chain that leaves, got {p!r}")
        q = float(to_active)
        if not 0.0 < q <= 1.0:
            raise ValueError(f"to_active must be in (0, 1], got {to_active!r}")
        self.to_active = q
        leave = q * (1.0 / self.p - 1.0)
        scale = np.maximum(leave, 1.0)  # the code divides both by leave when it exceeds 1
        self._on = q / scale
        self._off = leave / scale

    @property
    def p_on(self) -> np.ndarray:
        """:math:`P(\\text{off}\\to\\text{on})` per client, ``(n,)``."""
        return self._on.copy()

    @property
    def p_off(self) -> np.ndarray:
        """:math:`P(\\text{on}\\to\\text{off})` per client, ``(n,)``."""
        return self._off.copy()

    @property
    def correlation(self) -> np.ndarray:
        """Lag-one correlation :math:`1 - \\text{join} - \\text{leave}` per client."""
        return 1.0 - self._on - self._off


class OffsetCyclic(ParticipationProcess):
    r"""FedAU's ``cyclic-P`` pattern: fixed on-runs of :math:`\max(1, \mathrm{round}(Pp_n))`
    rounds, starting off at a random offset (see the module docstring).

    Parameters
    ----------
    p
        Nominal probabilities in (0, 1], scalar (needs ``n``) or ``(n,)``.
    period
        The code's cycle :math:`P`, a positive integer (100 in the paper's runs).
    n
        Number of clients.

    >>> proc = OffsetCyclic(0.3, period=4, n=1)
    >>> proc.on_rounds.tolist(), proc.off_rounds.tolist()
    ([1], [3])
    >>> proc.sample(np.random.default_rng(0), 1, 9)[:, 0, 0].astype(int).tolist()
    [0, 1, 0, 0, 0, 1, 0, 0, 0]
    """

    name: ClassVar[str] = "cyclic_offset"

    def __init__(self, p: Any, period: int = 100, n: int | None = None) -> None:
        self.p = validate_probability_vector(p, n)
        self.n = int(self.p.shape[0])
        self.period = validate_n(period, "period")
        self.on_rounds = np.maximum(1, np.round(self.period * self.p).astype(np.int64))
        self.off_rounds = np.maximum(1, self.period - self.on_rounds)

    @property
    def cycle(self) -> np.ndarray:
        """Rounds per cycle, on + off, ``(n,)`` (``period``, or ``period + 1`` when
        :math:`m_n = P`)."""
        return self.on_rounds + self.off_rounds

    @property
    def stationary(self) -> np.ndarray:
        """The long-run frequency :math:`m_n / (m_n + \\text{off}_n)` (see the module
        docstring: not the law of round 0)."""
        return self.on_rounds / self.cycle

    def _init(self, state: dict[str, Any], rng: RNGLike) -> None:
        u = uniforms(rng, state["replicas"], self.n)
        state["offset"] = np.minimum(np.floor(u * self.off_rounds), self.off_rounds - 1
                                     ).astype(np.int64)

    def _step(self, state: dict[str, Any], rng: RNGLike) -> np.ndarray:
        pos = (state["t"] - state["offset"]) % self.cycle
        return pos < self.on_rounds
