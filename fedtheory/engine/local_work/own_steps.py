"""The problem's own local steps (``Capability.LOCAL_STEPS``: ``local_steps(y, clients, lr,
steps, correction=, add_noise=, out=)``, e.g. a quadratic gathers :math:`a_i, c_i` once for
all steps); one lr for every replica. Per-client counts by masking, as the plain steps."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from fedtheory.algorithms import Participants
from fedtheory.algorithms.base import scratch
from fedtheory.engine.local_work.plain import PlainSteps

__all__ = ["ProblemSteps"]


class ProblemSteps(PlainSteps):
    """:class:`PlainSteps` whose ``tau > 1`` uniform steps the problem runs."""

    def steps(self, y0: np.ndarray, part: Participants, cols: np.ndarray,
              corr: np.ndarray | None, rngs: Any, work: dict[str, Any],
              tau: int) -> tuple[np.ndarray, int]:
        e = self.engine
        K = part.size
        noise = e.noise_route
        add_noise = partial(noise.add, part=part, rngs=rngs, work=work) if noise.present \
            else None
        upd = e.hot.local_steps(y0, cols, e.lr, tau, correction=corr, add_noise=add_noise,
                                out=scratch(work, "upd", K, e.d, e.dtype))
        return upd, K * tau
