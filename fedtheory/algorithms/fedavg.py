r"""Memoryless aggregation: FedAvg, FedAvg with importance sampling, FedPGD, full participation.

Notation: :math:`\mathcal A(t)` the active clients of round :math:`t`, :math:`\Delta_i` their
updates, :math:`p_i` the participation probabilities and :math:`w_i` the objective weights
(:math:`f = \sum_i w_i f_i`, uniform :math:`w_i = 1/n` by default). None of these rules keeps
memory between rounds: the state only holds the weights (and :math:`p`).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from fedtheory.algorithms.base import (
    Participants,
    Rule,
    add_scaled_sums,
    cached_coef,
    client_coef,
    rows_coef,
    segment_sum,
    weight_coef,
)

__all__ = ["FedAvg", "FedAvgIS", "FedPGD", "FullParticipation"]


class FedAvg(Rule):
    r"""FedAvg: the (weighted) average of the participants' updates (seed 003, Algorithm 3).

    .. math::

        G_t = \frac{\sum_{i\in\mathcal A(t)} w_i \Delta_i}{\sum_{i\in\mathcal A(t)} w_i}
        \;=\; \frac{1}{|\mathcal A(t)|}\sum_{i\in\mathcal A(t)} \Delta_i
        \quad (w_i = 1/n),

    and :math:`G_t = 0` in a round without participants (the round is skipped). No memory.
    Biased under heterogeneous :math:`p_i` (it favours frequent participants).

    >>> rule = FedAvg()
    >>> st = rule.init(1, 3, 1)
    >>> G, st = rule.step(st, np.array([True, False, True]), np.array([[1.0], [5.0], [3.0]]))
    >>> G.tolist()
    [2.0]
    """

    name: ClassVar[str] = "fedavg"

    def begin(self, state: dict[str, Any], part: Participants,
              p: np.ndarray | None = None) -> dict[str, Any]:
        acc = super().begin(state, part, p)
        acc["num"] = self._zeros(state, state["d"])
        acc["den"] = np.zeros(state["replicas"])
        return acc

    def accumulate(self, state: dict[str, Any], acc: dict[str, Any], block: Participants,
                   updates: np.ndarray, consume: bool = False) -> None:
        add_scaled_sums(acc["num"], updates, block, rows_coef(weight_coef(state), block))
        acc["den"] += segment_sum(state["weights"][block.cols], block)

    def finish(self, state: dict[str, Any], acc: dict[str, Any]) -> np.ndarray:
        return self._ratio(acc["num"], acc["den"])


class FedAvgIS(Rule):
    r"""FedAvg with importance sampling, the unbiased estimator of seed 000 (i).

    .. math:: G_t = \sum_{i\in\mathcal A(t)} \frac{w_i}{p_i}\,\Delta_i
        \;=\; \frac1n \sum_{i\in\mathcal A(t)} \frac{\Delta_i}{p_i}\quad (w_i = 1/n),

    unbiased for :math:`\sum_i w_i \Delta_i` when client :math:`i` is active with probability
    :math:`p_i`; :math:`G_t = 0` without participants. No memory.

    Pairs that carry their own coefficients (``Participants.coef``, set by a round-aware
    participation process such as OCS with this round's :math:`a_i = w_i/p_i^t`) are
    aggregated with them instead, :math:`G_t = \sum_{i\in\mathcal A(t)} a_i\Delta_i`
    (``pair_coefficients``).

    >>> rule = FedAvgIS()
    >>> st = rule.init(1, 2, 1, p=[0.5, 1.0])
    >>> rule.step(st, np.array([True, True]), np.array([[1.0], [3.0]]))[0].tolist()
    [2.5]
    """

    name: ClassVar[str] = "fedavg_is"
    importance_weighted: ClassVar[bool] = True
    pair_coefficients: ClassVar[bool] = True

    def begin(self, state: dict[str, Any], part: Participants,
              p: np.ndarray | None = None) -> dict[str, Any]:
        acc = super().begin(state, part, p)
        acc["coef"] = cached_coef(state, "is", acc["p"], lambda p: state["weights"] / p)
        acc["num"] = self._zeros(state, state["d"])
        return acc

    def accumulate(self, state: dict[str, Any], acc: dict[str, Any], block: Participants,
                   updates: np.ndarray, consume: bool = False) -> None:
        if block.coef is not None and self.pair_coefficients:
            coef = block.coef.astype(state["dtype"], copy=False)[:, None]
        else:
            coef = rows_coef(acc["coef"], block)
        add_scaled_sums(acc["num"], updates, block, coef)

    def finish(self, state: dict[str, Any], acc: dict[str, Any]) -> np.ndarray:
        return acc["num"]


class FedPGD(Rule):
    r"""FedPGD (seed 000's tables): the sum of the participants' updates divided by the budget
    :math:`b`, as for sampling :math:`b` of :math:`n` clients without replacement.

    .. math:: G_t = \frac{n}{b}\sum_{i\in\mathcal A(t)} w_i \Delta_i
        \;=\; \frac1b\sum_{i\in\mathcal A(t)} \Delta_i \quad (w_i = 1/n),

    with :math:`b` given, or by default the expected number of participants
    :math:`\sum_i p_i` (exactly :math:`b` under uniform :math:`b`-of-:math:`n` sampling, where
    FedPGD, FedAvg and FedAvg-IS coincide). No memory.
    """

    name: ClassVar[str] = "fedpgd"

    def __init__(self, b: float | None = None) -> None:
        if b is not None and not (np.isfinite(b) and b > 0):
            raise ValueError(f"b must be positive, got {b!r}")
        self.b = b

    def begin(self, state: dict[str, Any], part: Participants,
              p: np.ndarray | None = None) -> dict[str, Any]:
        acc = super().begin(state, part, p)
        if self.b is None:
            if acc["p"] is None:
                raise ValueError("p must be given for rule 'fedpgd' when b is not set")
            b = float(np.sum(acc["p"]))
        else:
            b = float(self.b)
        acc["coef"] = client_coef(state["weights"] * (state["n"] / b), state["dtype"])
        acc["num"] = self._zeros(state, state["d"])
        return acc

    accumulate = FedAvgIS.accumulate
    finish = FedAvgIS.finish


class FullParticipation(Rule):
    r"""Full participation (FedGD when :math:`\tau = 1`): every client's update, whatever the
    mask.

    .. math:: G_t = \sum_{i=1}^n w_i \Delta_i.

    It asks the engine for all :math:`n` updates every round (``needs_all``) and pays their
    communication. No memory.
    """

    name: ClassVar[str] = "full"
    needs_all: ClassVar[bool] = True

    def begin(self, state: dict[str, Any], part: Participants,
              p: np.ndarray | None = None) -> dict[str, Any]:
        if part.size != part.replicas * part.n:
            raise ValueError(
                f"rule 'full' needs every client's update: got {part.size} of "
                f"{part.replicas * part.n} pairs"
            )
        acc = super().begin(state, part, p)
        acc["coef"] = weight_coef(state)
        acc["num"] = self._zeros(state, state["d"])
        return acc

    accumulate = FedAvgIS.accumulate
    finish = FedAvgIS.finish
