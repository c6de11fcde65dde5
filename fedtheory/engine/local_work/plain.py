"""Plain local steps: repeated ``client_gradients`` (into the engine's buffers when the problem
declares ``GRADIENTS_INTO_BUFFER``), :math:`y^{k+1} = y^k - \\eta(\\nabla f_i(y^k) + \\xi^k +
c_i)`, the update the sum of the :math:`\\tau` gradients (with a schedule, step :math:`k`'s
size :math:`\\eta s_k` and the update :math:`\\sum_k s_k g^k`:
:mod:`fedtheory.engine.schedule`). Every problem can do it."""

from __future__ import annotations

from typing import Any

import numpy as np

from fedtheory.algorithms import Participants
from fedtheory.algorithms.base import scratch
from fedtheory.engine.local_work.per_client import PerClientSteps

__all__ = ["PlainSteps"]


class PlainSteps(PerClientSteps):
    """The step loop of the problem protocol (per-client counts by masking)."""

    def uniform(self, x: np.ndarray, part: Participants, corr: np.ndarray | None, rngs: Any,
                work: dict[str, Any], tau: int) -> tuple[np.ndarray, int]:
        K = part.size
        cols, y0 = self.pairs(x, part, work)
        if tau == 1:
            g = self.noisy(self.gradients(y0, cols, work), part, rngs, work, corr)
            s = self.engine.step_factors(work)
            if s is not None:  # the schedule's factor of the one step
                g *= s[0]
            return g, K
        return self.steps(y0, part, cols, corr, rngs, work, tau)

    def steps(self, y0: np.ndarray, part: Participants, cols: np.ndarray,
              corr: np.ndarray | None, rngs: Any, work: dict[str, Any],
              tau: int) -> tuple[np.ndarray, int]:
        """``tau > 1`` steps of every pair from ``y0``."""
        e = self.engine
        K, d, dt = part.size, e.d, e.dtype
        y = scratch(work, "y", K, d, dt)
        y[...] = y0
        total = scratch(work, "total", K, d, dt)
        lr = e.pair_lr(part, work)
        s = e.step_factors(work)
        for k in range(tau):
            g = self.noisy(self.gradients(y, cols, work), part, rngs, work, corr)
            if s is not None:  # step k's size lr * s[k]; the update sums s[k] g
                g *= s[k]
            if k == 0:
                total[...] = g
            else:
                total += g
            if k + 1 < tau:
                g *= lr
                y -= g
        return total, K * tau
