r"""The closed form of the local steps (``Capability.FUSED_LOCAL_STEPS``, exact for additive
Gaussian noise or none, one lr): ``fused_local_steps(y, clients, lr, tau, correction=,
normals=, noise_sd=, out=)``, one normal per coordinate per pair instead of :math:`\tau`;
per-client counts by one call per distinct :math:`\tau` on the normals of all pairs; a
schedule of one factor :math:`s_t` per round by the step size :math:`\eta s_t`, the update
scaled by :math:`s_t`."""

from __future__ import annotations

from typing import Any

import numpy as np

from fedtheory.algorithms import Participants
from fedtheory.algorithms.base import scratch
from fedtheory.engine.local_work.base import LocalWorkStrategy

__all__ = ["FusedSteps"]


class FusedSteps(LocalWorkStrategy):
    """The problem's closed form of :math:`\\tau` steps."""

    fused = True

    def _normals(self, part: Participants, rngs: Any, work: dict[str, Any]) -> Any:
        noise = self.engine.noise_route
        return noise.normals(part, rngs, work) if noise.sd > 0 else None

    def uniform(self, x: np.ndarray, part: Participants, corr: np.ndarray | None, rngs: Any,
                work: dict[str, Any], tau: int) -> tuple[np.ndarray, int]:
        e = self.engine
        K = part.size
        cols, y0 = self.pairs(x, part, work)
        z = self._normals(part, rngs, work)
        lr, scale = e.round_lr(work)  # (a schedule of one factor per round: lr s_t, s_t)
        upd = e.hot.fused_local_steps(
            y0, cols, lr, tau, correction=corr, normals=z, noise_sd=e.noise_route.sd,
            out=scratch(work, "upd", K, e.d, e.dtype))
        if scale is not None:
            upd *= scale
        return upd, K

    def varied(self, x: np.ndarray, part: Participants, corr: np.ndarray | None, rngs: Any,
               work: dict[str, Any], taus: np.ndarray) -> tuple[np.ndarray, int]:
        e = self.engine
        K = part.size
        cols, y0 = self.pairs(x, part, work)
        z = self._normals(part, rngs, work)
        upd = scratch(work, "upd", K, e.d, e.dtype)
        lr, scale = e.round_lr(work)
        for tv in np.unique(taus).tolist():
            idx = np.flatnonzero(taus == tv)
            upd[idx] = e.hot.fused_local_steps(
                y0[idx], cols[idx], lr, int(tv),
                correction=None if corr is None else corr[idx],
                normals=None if z is None else z[idx], noise_sd=e.noise_route.sd)
        if scale is not None:
            upd *= scale
        return upd, K
