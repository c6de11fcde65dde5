"""What every local-work strategy shares: the protocol (:class:`LocalWorkStrategy`), the
start points and gradients of the hot path, and the sub-blocks of still-running pairs.

A strategy reads the engine it serves (``engine``: a :class:`fedtheory.engine.Engine`, not
imported here, since the engine imports the strategies): its problem on the hot path
(``hot``), sizes, dtype, step size, noise and local-step schedule.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedtheory.algorithms import Participants
from fedtheory.algorithms.base import scratch, take_rows

__all__ = ["LocalWorkStrategy", "subset"]


def subset(part: Participants, idx: np.ndarray) -> Participants:
    """The pairs ``idx`` (increasing) of ``part``, still sorted by replica."""
    rows = part.rows[idx]
    starts = np.zeros(part.replicas + 1, dtype=np.intp)
    np.cumsum(np.bincount(rows, minlength=part.replicas), out=starts[1:])
    return Participants(part.replicas, part.n, rows, part.cols[idx], starts)


class LocalWorkStrategy:
    r"""How the active pairs run their local steps, chosen once when the engine is built.

    A strategy implements :meth:`uniform` (every pair of the block runs :math:`\tau` steps)
    and :meth:`varied` (``(K,)`` steps per pair), or overrides :meth:`updates` (the one call
    of the engine, which routes a block to one of them). Each returns the pairs'
    pseudo-gradients ``(K, d)`` (in a work buffer of ``work``) and the gradient rows evaluated.
    """

    #: whether this is the problem's closed form of the steps (a run's ``fused_local_steps``)
    fused = False

    def __init__(self, engine: Any) -> None:
        self.engine = engine

    def updates(self, x: np.ndarray, part: Participants, corr: np.ndarray | None, rngs: Any,
                work: dict[str, Any], taus: np.ndarray | None,
                orders: np.ndarray | None) -> tuple[np.ndarray, int]:
        """The block's updates: one :math:`\\tau` for the block (the configuration's, or the
        pairs' when they agree) by :meth:`uniform`, else :meth:`varied`."""
        if taus is None:
            return self.uniform(x, part, corr, rngs, work, self.engine.tau_fixed)
        lo, hi = int(taus.min()), int(taus.max())
        if lo == hi:  # one tau for the block: the uniform path
            return self.uniform(x, part, corr, rngs, work, lo)
        return self.varied(x, part, corr, rngs, work, taus)

    def uniform(self, x: np.ndarray, part: Participants, corr: np.ndarray | None, rngs: Any,
                work: dict[str, Any], tau: int) -> tuple[np.ndarray, int]:
        """Every pair runs ``tau`` steps."""
        raise NotImplementedError

    def varied(self, x: np.ndarray, part: Participants, corr: np.ndarray | None, rngs: Any,
               work: dict[str, Any], taus: np.ndarray) -> tuple[np.ndarray, int]:
        """Pair ``k`` runs ``taus[k]`` steps (they differ)."""
        raise NotImplementedError

    # -- the hot path's pieces -------------------------------------------------------------
    def gradients(self, y: np.ndarray, cols: np.ndarray, work: dict[str, Any]) -> np.ndarray:
        """The problem's gradient rows at ``y``, in a work buffer the engine may overwrite."""
        e = self.engine
        if e.grads_take_out:
            out = scratch(work, "g", y.shape[0], e.d, e.dtype)
            return e.hot.client_gradients(y, cols, out=out)
        return np.array(e.hot.client_gradients(y, cols), dtype=e.dtype)

    def pairs(self, x: np.ndarray, part: Participants,
              work: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        """The pairs' clients in the hot problem ``(K,)`` and their start points ``(K, d)``
        (:meth:`start_points`)."""
        return self.engine.client_ids(part, work), self.start_points(x, part, work)

    def start_points(self, x: np.ndarray, part: Participants,
                     work: dict[str, Any]) -> np.ndarray:
        """:math:`x_t` of each pair's replica, ``(K, d)``, read-only for the caller.

        Gathered rows when the pairs belong to several replicas. For one replica (the usual
        block when ``d`` is large): rows of a contiguous tile of :math:`x_t`, filled once per
        replica and round, so that the problem's first pass runs as one loop over the block
        (a broadcast view would cost one inner loop per row); a broadcast view beyond the
        tile's rows."""
        e = self.engine
        r, K, d, block_rows = part.only, part.size, e.d, e.block_rows
        if r is None:
            return take_rows(x, part.rows, scratch(work, "x", K, d, e.dtype))
        if K > block_rows:
            return np.broadcast_to(x[r], (K, d))
        key = (work.get("round"), r)
        tile = work.get("x_tile")
        filled = work["x_tile_rows"] if work.get("x_tile_key") == key else 0
        if tile is None or tile.shape[0] < K:  # grow (the rows filled so far are lost)
            rows = K if tile is None else max(K, tile.shape[0] + tile.shape[0] // 4)
            tile = work["x_tile"] = np.empty((min(rows, block_rows), d), e.dtype)
            filled = 0
        if filled < K:  # rows of this replica and round not written yet
            tile[filled:K] = x[r]
            work["x_tile_key"], work["x_tile_rows"] = key, K
        return tile[:K]

    def noisy(self, g: np.ndarray, part: Participants, rngs: Any, work: dict[str, Any],
              corr: np.ndarray | None) -> np.ndarray:
        """``g`` with one noise draw per row and the correction ``corr`` added, in place."""
        noise = self.engine.noise_route
        if noise.present:
            noise.add(g, part, rngs, work)
        if corr is not None:
            g += corr
        return g
