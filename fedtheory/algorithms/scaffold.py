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

from fedtheory.algorithms.base import Participants, TableRule, segment_sum

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
    ``"full"`` (:math:`u_i = \nabla f_i(x_0)`: the initial updates divided by
    ``local_steps``).

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

    def correction(self, state: dict[str, Any], part: Participants) -> np.ndarray:
        """:math:`\\bar u - u_i` for every active pair, ``(K, d)``."""
        flat = state["table"].reshape(-1, state["d"])
        return np.take(state["total"], part.rows, axis=0) - np.take(flat, part.flat_index, axis=0)

    def _step(self, state: dict[str, Any], part: Participants, updates: np.ndarray,
              p: np.ndarray | None) -> np.ndarray:
        dt = updates.dtype
        w_coef = self._pair_coef(state["weights"], part, dt)
        num = self._scaled_sum(updates, part, w_coef)
        den = segment_sum(state["weights"][part.cols], part)
        G = np.zeros_like(num)
        np.divide(num, den[:, None], out=G, where=den[:, None] > 0)
        idx, old = self._gather(state, part)
        change = updates * dt.type(1.0 / state["local_steps"])
        change -= np.take(state["total"], part.rows, axis=0)  # u_i^+ - u_i = Delta_i/tau - u
        old += change
        self._scatter(state, part, idx, old, change)
        return G
