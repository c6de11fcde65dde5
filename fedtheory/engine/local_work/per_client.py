"""Per-client step counts by masking: the pairs of a block run together and those with fewer
steps drop out of the step loop (the gradients of step :math:`k` are computed for the pairs
with :math:`\\tau > k` only); replica :math:`r` draws its noise for its still-running pairs,
step after step, so the draws do not depend on the other replicas of the block."""

from __future__ import annotations

from typing import Any

import numpy as np

from fedtheory.algorithms import Participants
from fedtheory.algorithms.base import scratch
from fedtheory.engine.local_work.base import LocalWorkStrategy, subset

__all__ = ["PerClientSteps"]


class PerClientSteps(LocalWorkStrategy):
    """:meth:`varied` by the masked step loop (the base of the gradient-step strategies)."""

    def varied(self, x: np.ndarray, part: Participants, corr: np.ndarray | None, rngs: Any,
               work: dict[str, Any], taus: np.ndarray) -> tuple[np.ndarray, int]:
        e = self.engine
        K, d, dt = part.size, e.d, e.dtype
        cols, y0 = self.pairs(x, part, work)
        y = scratch(work, "y", K, d, dt)
        y[...] = y0
        total = scratch(work, "total", K, d, dt)
        lr = e.pair_lr(part, work)
        s = e.step_factors(work)  # (the schedule's factors of the round, or None)
        top = int(taus.max())
        for k in range(top):
            if k == 0:  # every pair runs at least one step
                g = self.noisy(self.gradients(y, cols, work), part, rngs, work, corr)
                if s is not None:
                    g *= s[0]
                total[...] = g
                if top > 1:
                    g *= lr
                    y -= g
                continue
            idx = np.flatnonzero(taus > k)
            sub = subset(part, idx)
            yk = y[idx]
            g = self.noisy(self.gradients(yk, cols[idx], work), sub, rngs, work,
                           None if corr is None else corr[idx])
            if s is not None:
                g *= s[k]
            total[idx] += g
            if k + 1 < top:
                g *= lr if np.ndim(lr) == 0 else lr[idx]
                y[idx] = yk - g
        return total, int(taus.sum())
