r"""SCAFFOLD (seed 003, Algorithm 2; Karimireddy et al., 2020) with partial participation.

Client :math:`i` keeps a control variate :math:`u_i`, the server :math:`\bar u = \sum_i w_i
u_i` (memory :math:`O(Rnd)`). During its :math:`\tau` local steps an active client follows
the corrected gradient :math:`\nabla F(y_i;\xi_i) - u_i + \bar u` (the engine asks
:meth:`SCAFFOLD.correction` for :math:`\bar u - u_i`), so its pseudo-gradient is
:math:`\Delta_i = (x - y_i)/\eta = \sum_k \big(\nabla F(y_i^k;\xi_i^k) - u_i + \bar u\big)`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from fedtheory.algorithms.base import (
    Participants,
    TableRule,
    add_scaled_sums,
    rows_coef,
    scratch,
    segment_sum,
    take_rows,
    weight_coef,
)

__all__ = ["SCAFFOLD"]


class SCAFFOLD(TableRule):
    r"""SCAFFOLD: drift-corrected local steps, control variates refreshed by participants.

    .. math::

        G_t = \frac{\sum_{i\in\mathcal A(t)} w_i\Delta_i}{\sum_{i\in\mathcal A(t)} w_i},\qquad
        u_i^{+} = u_i - \bar u + \frac{\Delta_i}{\tau}
        \;\Big(= \frac1\tau\sum_k \nabla F(y_i^k;\xi_i^k)\Big),\qquad
        \bar u \leftarrow \bar u + \sum_{i\in\mathcal A(t)} w_i (u_i^{+} - u_i),

    :math:`G_t = 0` in a round without participants. Each participant sends
    :math:`(\Delta y_i, \Delta u_i)`: two vectors (``floats_per_update = 2``).

    Memory initialisation: ``memory_init="zeros"`` (default, :math:`u_i = \bar u = 0`) or
    ``"full"`` (the initial updates divided by ``local_steps``: each client's mean local
    gradient from :math:`x_0`, which is :math:`\nabla f_i(x_0)` when :math:`\tau = 1`).

    >>> rule = SCAFFOLD()
    >>> st = rule.init(1, 2, 1)
    >>> G, st = rule.step(st, np.array([True, False]), np.array([[4.0], [9.0]]))
    >>> G.tolist(), st["table"][0, :, 0].tolist(), st["total"].tolist()
    ([4.0], [4.0, 0.0], [[2.0]])
    """

    name: ClassVar[str] = "scaffold"
    floats_per_update: ClassVar[int] = 2

    def __init__(self, memory_init: str = "zeros") -> None:
        self.memory_init = self._check_memory_init(memory_init)

    def _init(self, state: dict[str, Any], initial: np.ndarray | None) -> None:
        if self.memory_init == "full" and initial is not None:
            initial = initial / state["local_steps"]
        super()._init(state, initial)

    def begin(self, state: dict[str, Any], part: Participants,
              p: np.ndarray | None = None) -> dict[str, Any]:
        acc = super().begin(state, part, p)
        state["round_total"] = state["total"].copy()  # u_bar at the start of the round
        acc["num"] = self._zeros(state, state["d"])
        acc["den"] = np.zeros(state["replicas"])
        return acc

    def correction(self, state: dict[str, Any], part: Participants) -> np.ndarray:
        """:math:`\bar u - u_i` for every active pair, ``(K, d)`` (:math:`\bar u` as at the
        start of the round)."""
        flat = self._rows_view(state)
        shape = (part.size, state["d"], state["dtype"])
        ubar = state.get("round_total", state["total"])
        out = take_rows(ubar, part.rows, scratch(state, "correction", *shape))
        out -= take_rows(flat, part.flat_index, scratch(state, "rows", *shape))
        return out

    def accumulate(self, state: dict[str, Any], acc: dict[str, Any], block: Participants,
                   updates: np.ndarray, consume: bool = False) -> None:
        dt = updates.dtype
        add_scaled_sums(acc["num"], updates, block, rows_coef(weight_coef(state), block))
        acc["den"] += segment_sum(state["weights"][block.cols], block)
        idx, old = self._gather(state, block)
        change = updates if consume else scratch(state, "change", *updates.shape, dt)
        np.multiply(updates, dt.type(1.0 / state["local_steps"]), out=change)
        # u_i^+ - u_i = Delta_i / tau - u_bar
        change -= take_rows(state["round_total"], block.rows,
                            scratch(state, "rows", *updates.shape, dt))
        old += change
        self._scatter(state, block, idx, old, change)

    def finish(self, state: dict[str, Any], acc: dict[str, Any]) -> np.ndarray:
        self._end_round(state)
        del state["round_total"]
        return self._ratio(acc["num"], acc["den"])
