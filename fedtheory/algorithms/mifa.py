r"""Memory-based aggregation of seed 000: MIFA, U-MIFA and their heavy-ball variants.

Every client :math:`i` has a row :math:`G^{(i)}` in a table (memory :math:`O(Rnd)`); the
direction is the weighted table mean :math:`G_t = \sum_i w_i G_t^{(i)}`
(:math:`= \frac1n\sum_i G_t^{(i)}` for uniform weights), kept as a running sum so that a round
costs :math:`O(Kd)` for :math:`K` participants.

Memory initialisation (``memory_init``): ``"zeros"`` (default, :math:`G_{-1}^{(i)} = 0`) or
``"full"`` (:math:`G_{-1}^{(i)} = \Delta_i(w_0)`, every client's update at the initial point,
which the engine then computes once and counts as communication).
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
    scratch,
    take_rows,
    weight_coef,
)
from fedtheory.compiled import importance_rows

__all__ = ["MIFA", "UMIFA", "MIFAm", "UMIFAm"]


class MIFA(TableRule):
    r"""MIFA (seed 000, ii): an active client overwrites its row, the others keep theirs.

    .. math::

        G_t^{(i)} = \begin{cases}\Delta_i, & i\in\mathcal A(t)\\ G_{t-1}^{(i)}, &
        \text{otherwise}\end{cases}\qquad G_t = \sum_{i=1}^n w_i G_t^{(i)}.

    Biased: :math:`\mathbb E[G_t^{(i)}\mid\text{past}] = p_i\Delta_i + (1-p_i)G_{t-1}^{(i)}`.
    Memory: table :math:`G^{(i)}`, initialised by ``memory_init`` (zeros by default).

    >>> rule = MIFA()
    >>> st = rule.init(1, 2, 1)
    >>> G, st = rule.step(st, np.array([True, False]), np.array([[4.0], [9.0]]))
    >>> G.tolist()  # (4 + 0) / 2
    [2.0]
    """

    name: ClassVar[str] = "mifa"

    def __init__(self, memory_init: str = "zeros") -> None:
        self.memory_init = self._check_memory_init(memory_init)

    def accumulate(self, state: dict[str, Any], acc: dict[str, Any], block: Participants,
                   updates: np.ndarray, consume: bool = False) -> None:
        idx, change = self._gather(state, block)
        np.subtract(updates, change, out=change)  # Delta_i - G_{t-1}^i
        self._scatter(state, block, idx, updates, change)

    def finish(self, state: dict[str, Any], acc: dict[str, Any]) -> np.ndarray:
        self._end_round(state)
        return self._direction(state, state["total"].copy())

    def _direction(self, state: dict[str, Any], G: np.ndarray) -> np.ndarray:
        return G


class UMIFA(MIFA):
    r"""Unbiased MIFA (seed 000, iii): an active client corrects its row by importance
    weighting.

    .. math::

        G_t^{(i)} = \begin{cases}\frac{1}{p_i}\Delta_i - \big(\frac1{p_i}-1\big)G_{t-1}^{(i)}
        = G_{t-1}^{(i)} + \frac{\Delta_i - G_{t-1}^{(i)}}{p_i}, & i\in\mathcal A(t)\\
        G_{t-1}^{(i)}, & \text{otherwise}\end{cases}\qquad G_t = \sum_i w_i G_t^{(i)},

    so that :math:`\mathbb E[G_t^{(i)}\mid\text{past}] = \Delta_i` under independent
    participation with probabilities :math:`p_i`. Memory: table :math:`G^{(i)}`, initialised by
    ``memory_init`` (zeros by default).

    >>> rule = UMIFA()
    >>> st = rule.init(1, 2, 1, p=0.5)
    >>> rule.step(st, np.array([True, False]), np.array([[4.0], [9.0]]))[0].tolist()
    [4.0]
    """

    name: ClassVar[str] = "umifa"
    importance_weighted: ClassVar[bool] = True

    def begin(self, state: dict[str, Any], part: Participants,
              p: np.ndarray | None = None) -> dict[str, Any]:
        acc = super().begin(state, part, p)
        acc["inv_p"] = cached_coef(state, "inv_p", acc["p"], lambda p: 1.0 / p)
        return acc

    def accumulate(self, state: dict[str, Any], acc: dict[str, Any], block: Participants,
                   updates: np.ndarray, consume: bool = False) -> None:
        # the engine's hot path for U-MIFA: _gather / _scatter written out
        rows = self._rows_view(state)
        idx = block.flat_index
        if consume:
            change = updates
        else:
            change = scratch(state, "change", *updates.shape, state["dtype"])
        w = weight_coef(state)
        r = block.only if np.ndim(w) == 0 and updates.shape[1] > 1 else None
        if importance_rows(rows, idx, updates, acc["inv_p"], block.cols,
                           change if r is None else None, state["total"], r, w):
            # one compiled pass, the same numbers as the numpy lines below
            if r is None:
                add_scaled_sums(state["total"], change, block, rows_coef(w, block))
            return
        old = take_rows(rows, idx, scratch(state, "gather", *updates.shape, state["dtype"]))
        np.subtract(updates, old, out=change)
        change *= rows_coef(acc["inv_p"], block)  # (Delta_i - G_{t-1}^i) / p_i
        old += change  # G_t^i = G_{t-1}^i + (Delta_i - G_{t-1}^i) / p_i
        rows[idx] = old
        add_scaled_sums(state["total"], change, block, rows_coef(weight_coef(state), block))


class _Momentum:
    r"""Heavy ball on the aggregate: :math:`v_t = \beta v_{t-1} + G_t`, :math:`v_{-1} = 0`."""

    own_momentum: ClassVar[bool] = True

    def _init(self, state: dict[str, Any], initial: np.ndarray | None) -> None:
        super()._init(state, initial)  # type: ignore[misc]
        state["v"] = np.zeros((state["replicas"], state["d"]), dtype=state["dtype"])

    def _direction(self, state: dict[str, Any], G: np.ndarray) -> np.ndarray:
        v = state["v"]
        v *= self.beta  # type: ignore[attr-defined]
        v += G
        return v.copy()


class MIFAm(_Momentum, MIFA):
    r"""MIFAm (seed 000, iv): MIFA with heavy-ball momentum :math:`\beta` on the server.

    .. math::

        G_t = \sum_i w_i G_t^{(i)}\ \text{(MIFA table)},\qquad v_t = \beta v_{t-1} + G_t,
        \qquad w_t = w_{t-1} - \eta v_t;

    the rule returns :math:`v_t` (the engine then steps :math:`-\eta_g\eta v_t`, so its own
    ``momentum`` must stay 0). Memory: the table (``memory_init``, zeros by default) and
    :math:`v_{-1} = 0`. The seed gives no :math:`\beta`; the default is 0.9.
    """

    name: ClassVar[str] = "mifam"

    def __init__(self, beta: float = 0.9, memory_init: str = "zeros") -> None:
        super().__init__(memory_init)
        self.beta = self._check_beta(beta)


class UMIFAm(_Momentum, UMIFA):
    r"""U-MIFAm (seed 000, v): U-MIFA with heavy-ball momentum :math:`\beta` on the server.

    .. math::

        G_t = \sum_i w_i G_t^{(i)}\ \text{(U-MIFA table)},\qquad v_t = \beta v_{t-1} + G_t,
        \qquad w_t = w_{t-1} - \eta v_t;

    returns :math:`v_t`. Memory: the table (``memory_init``, zeros by default) and
    :math:`v_{-1} = 0`. The seed gives no :math:`\beta`; the default is 0.9.
    """

    name: ClassVar[str] = "umifam"

    def __init__(self, beta: float = 0.9, memory_init: str = "zeros") -> None:
        super().__init__(memory_init)
        self.beta = self._check_beta(beta)
