r"""A FedVARP-style rule: SAGA-type memory correction normalised by the realised number of
participants, a contrast to U-MIFA (which normalises by the expected one, :math:`np`).

Memory: a table :math:`y_i` of the last update of client :math:`i` and its weighted mean
:math:`\bar y = \sum_i w_i y_i` (:math:`O(Rnd)`).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from fedtheory.algorithms.base import (
    Participants,
    TableRule,
    rows_coef,
    scaled_sum,
    segment_sum,
    weight_coef,
)

__all__ = ["FedVARP"]


class FedVARP(TableRule):
    r"""FedVARP-style aggregation (Jhunjhunwala et al., 2022).

    .. math::

        G_t = \bar y_{t-1} + \frac{\sum_{i\in\mathcal A(t)} w_i(\Delta_i - y_i^{t-1})}
        {\sum_{i\in\mathcal A(t)} w_i}
        \;=\; \bar y_{t-1} + \frac1{|\mathcal A(t)|}\sum_{i\in\mathcal A(t)}
        (\Delta_i - y_i^{t-1})\quad(w_i = 1/n),

    then :math:`y_i^t = \Delta_i` for the active clients; :math:`G_t = \bar y_{t-1}` in a
    round without participants. Under uniform :math:`b`-of-:math:`n` sampling
    (:math:`|\mathcal A(t)| = b = np`) it coincides with SAGA / U-MIFA's direction; under
    independent participation the random denominator makes it biased (by the factor
    :math:`P(\mathcal A(t)\neq\emptyset)` on the correction when all :math:`p_i` are equal).

    Memory initialisation: ``memory_init="zeros"`` (default, :math:`y_i = 0`) or ``"full"``.

    >>> rule = FedVARP()
    >>> st = rule.init(1, 2, 1)
    >>> rule.step(st, np.array([True, False]), np.array([[4.0], [9.0]]))[0].tolist()
    [4.0]
    """

    name: ClassVar[str] = "fedvarp"

    def __init__(self, memory_init: str = "zeros") -> None:
        self.memory_init = self._check_memory_init(memory_init)

    def begin(self, state: dict[str, Any], part: Participants,
              p: np.ndarray | None = None) -> dict[str, Any]:
        acc = super().begin(state, part, p)
        acc["G"] = state["total"].copy()  # y_bar_{t-1}
        acc["num"] = self._zeros(state, state["d"])
        acc["den"] = np.zeros(state["replicas"])
        return acc

    def accumulate(self, state: dict[str, Any], acc: dict[str, Any], block: Participants,
                   updates: np.ndarray, consume: bool = False) -> None:
        idx, change = self._gather(state, block)
        np.subtract(updates, change, out=change)  # Delta_i - y_i
        num = scaled_sum(change, block, rows_coef(weight_coef(state), block))
        acc["num"] += num
        acc["den"] += segment_sum(state["weights"][block.cols], block)
        self._scatter(state, block, idx, updates, change_sum=num)

    def finish(self, state: dict[str, Any], acc: dict[str, Any]) -> np.ndarray:
        self._end_round(state)
        return acc["G"] + self._ratio(acc["num"], acc["den"])
