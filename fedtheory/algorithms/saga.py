r"""SAGA as a partial-participation rule (seed 003's "extending SAGA to federated learning").

A table :math:`u_i` holds the last update received from client :math:`i` and
:math:`\bar u = \sum_i w_i u_i` its weighted mean (memory :math:`O(Rnd)`).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from fedtheory.algorithms.base import (
    Participants,
    TableRule,
    add_scaled_sums,
    cached_coef,
    rows_coef,
    segment_sum,
    weight_coef,
)

__all__ = ["SAGA"]


class SAGA(TableRule):
    r"""SAGA with importance weights over the active set.

    .. math::

        G_t = \bar u_{t-1} + \sum_{i\in\mathcal A(t)} \frac{w_i}{p_i}
        \big(\Delta_i - u_i^{t-1}\big),\qquad
        u_i^{t} = \begin{cases}\Delta_i, & i\in\mathcal A(t)\\ u_i^{t-1}, &
        \text{otherwise,}\end{cases}\qquad \bar u_t = \sum_i w_i u_i^t.

    With one client sampled uniformly (:math:`p_i = 1/n`) and :math:`\tau = 1` this is the
    lecture's SAGA step :math:`g_k = \nabla f_{i_k}(x_k) - u_{i_k} + \bar u`; with
    :math:`b`-of-:math:`n` sampling it is mini-batch SAGA. :math:`G_t` is unbiased for
    :math:`\sum_i w_i\Delta_i` and coincides, for the same table, with U-MIFA's direction; the
    two differ in what they store (SAGA :math:`\Delta_i`, U-MIFA the corrected row).

    Memory initialisation: ``memory_init="full"`` by default, the lecture's
    :math:`u_j^0 = \nabla f_j(x_0)` (every client's update at the initial point);
    ``"zeros"`` starts from :math:`u_j = 0`.

    >>> rule = SAGA(memory_init="zeros")
    >>> st = rule.init(1, 2, 1, p=0.5)
    >>> rule.step(st, np.array([True, False]), np.array([[4.0], [9.0]]))[0].tolist()
    [4.0]
    """

    name: ClassVar[str] = "saga"
    importance_weighted: ClassVar[bool] = True

    def __init__(self, memory_init: str = "full") -> None:
        self.memory_init = self._check_memory_init(memory_init)

    def begin(self, state: dict[str, Any], part: Participants,
              p: np.ndarray | None = None) -> dict[str, Any]:
        acc = super().begin(state, part, p)
        acc["G"] = state["total"].copy()  # G_t = u_bar_{t-1} + ...
        acc["is"] = cached_coef(state, "is", acc["p"], lambda p: state["weights"] / p)
        return acc

    def accumulate(self, state: dict[str, Any], acc: dict[str, Any], block: Participants,
                   updates: np.ndarray, consume: bool = False) -> None:
        idx, change = self._gather(state, block)
        np.subtract(updates, change, out=change)  # Delta_i - u_i
        w_coef = rows_coef(weight_coef(state), block)
        is_coef = rows_coef(acc["is"], block)
        if np.ndim(w_coef) == 0 and np.ndim(is_coef) == 0:
            raw = segment_sum(change, block)
            acc["G"] += raw * is_coef
            self._scatter(state, block, idx, updates, change_sum=raw * w_coef)
        else:
            add_scaled_sums(acc["G"], change, block, is_coef)
            self._scatter(state, block, idx, updates, change)

    def finish(self, state: dict[str, Any], acc: dict[str, Any]) -> np.ndarray:
        self._end_round(state)
        return acc["G"]
