"""Local mini-batch SGD (:class:`~fedtheory.engine.MiniBatches`,
``Capability.MINIBATCH_GRADIENTS``):
every step of a pair on a batch of its sample order, all pairs in one call of
``minibatch_gradients``; the pairs with fewer steps drop out by masking; a schedule's
factors scale the steps as in the plain steps (:mod:`fedtheory.engine.schedule`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fedtheory.algorithms import Participants
from fedtheory.algorithms.base import scratch
from fedtheory.engine.local_work.base import LocalWorkStrategy, subset

__all__ = ["MiniBatchSteps"]


class MiniBatchSteps(LocalWorkStrategy):
    """Mini-batch steps; the sizes and batches per client set once from the hot problem."""

    def __init__(self, engine: Any) -> None:
        super().__init__(engine)
        prob, n = engine.hot, engine.n
        self.batches = engine.local.batches
        # per client of the hot path: (n,), or (U n,) for a stack's U distinct problems
        # (checked by EngineConfig)
        self.sizes = np.asarray(prob.sizes, dtype=np.int64)
        self.s_max = int(self.sizes.max())
        self.batch_rows = min(int(self.batches.size), self.s_max)  # B
        #: per hot-path client its problem's B = min(size, its largest client's samples)
        #: (they differ only in a stack whose problems' largest clients are below
        #: MiniBatches.size), and its batches per epoch
        tops = self.sizes.reshape(-1, n).max(axis=1)
        self.batch_of = np.repeat(np.minimum(int(self.batches.size), tops), n)
        self.epoch_batches = -(-self.sizes // self.batch_of)

    def updates(self, x: np.ndarray, part: Participants, corr: np.ndarray | None, rngs: Any,
                work: dict[str, Any], taus: np.ndarray | None,
                orders: np.ndarray | None) -> tuple[np.ndarray, int]:
        r"""Step :math:`k` of every pair still running (:math:`\tau > k`; the others drop out
        by masking) on its batch of the pair's sample order (``orders``: the round's sort
        keys, :meth:`sample_keys`)."""
        e = self.engine
        if orders is None:
            raise ValueError("orders must give the round's sample-order keys with batches="
                             f"{self.batches!r} (see sample_keys)")
        K, d, dt = part.size, e.d, e.dtype
        cols = e.client_ids(part, work)  # the hot path's clients (sizes, gradients)
        steps = np.full(K, e.tau_fixed, dtype=np.int64) if taus is None else taus
        top = int(steps.max())
        if not e.noise_route.present and int(steps.min()) < top:
            return self._sorted(x, part, corr, work, steps, orders)
        B = self.batch_rows
        j = np.arange(B)
        order = self.sample_orders(orders, part.rows, part.cols)  # (K, s_max)
        size = self.sizes[cols]
        y = scratch(work, "y", K, d, dt)
        y[...] = self.start_points(x, part, work)
        total = scratch(work, "total", K, d, dt)
        lr = e.pair_lr(part, work)
        factors = e.step_factors(work)  # (the schedule's factors of the round, or None)
        every = np.arange(K)
        for k in range(top):
            idx = every if k == 0 or steps.min() > k else np.flatnonzero(steps > k)
            s_k = size[idx, None]
            pos, valid = self._batch_positions(k, cols[idx], s_k, j)
            samples = np.take_along_axis(order[idx], pos, axis=1)
            yk = y if idx is every else y[idx]
            g = np.asarray(e.hot.minibatch_gradients(yk, cols[idx], samples, valid),
                           dtype=dt)
            if e.noise_route.present:
                e.noise_route.add(g, part if idx is every else subset(part, idx), rngs, work)
            if corr is not None:
                g += corr if idx is every else corr[idx]
            if factors is not None:
                g *= factors[k]
            if k == 0:
                total[...] = g
            elif idx is every:
                total += g
            else:
                total[idx] += g
            if k + 1 < top:
                g *= lr if np.ndim(lr) == 0 or idx is every else lr[idx]
                if idx is every:
                    y -= g
                else:
                    y[idx] = yk - g
        return total, int(steps.sum())

    def _batch_positions(self, k: int, cols: np.ndarray, s_k: np.ndarray,
                         j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Step ``k``'s positions in the pairs' sample orders and which are read, ``(K, B)``
        each (see :class:`MiniBatches`), for the hot path's clients ``cols`` of sizes ``s_k``
        ``(K, 1)``, each pair with its problem's :math:`B` (``batch_of``)."""
        Bc = self.batch_of[cols][:, None]
        if self.batches.wrap:
            pos = (k * Bc + j[None, :]) % s_k
            valid = j[None, :] < np.minimum(s_k, Bc)
        else:
            pos = (k % self.epoch_batches[cols])[:, None] * Bc + j[None, :]
            valid = (pos < s_k) & (j[None, :] < Bc)
            pos = np.where(valid, pos, 0)
        return pos, valid

    def _sorted(self, x: np.ndarray, part: Participants, corr: np.ndarray | None,
                work: dict[str, Any], steps: np.ndarray,
                orders: np.ndarray) -> tuple[np.ndarray, int]:
        r""":meth:`updates` without noise when the pairs' steps differ: the pairs
        sorted by decreasing steps, so that those still running at step :math:`k` are a prefix
        (slices, not gathered rows), then put back in order. Row by row the same arithmetic,
        so the same numbers."""
        e = self.engine
        K, d, dt = part.size, e.d, e.dtype
        perm = np.argsort(-steps, kind="stable")
        cols, st = e.client_ids(part, work)[perm], steps[perm]
        active = np.searchsorted(-st, -np.arange(int(st[0])), side="left")  # (steps > k).sum()
        B = self.batch_rows
        j = np.arange(B)
        order = self.sample_orders(orders, part.rows[perm], part.cols[perm])  # (K, s_max)
        size = self.sizes[cols][:, None]
        y = scratch(work, "y", K, d, dt)
        np.take(self.start_points(x, part, work), perm, axis=0, out=y)
        cs = None if corr is None else corr[perm]
        total = scratch(work, "total_sorted", K, d, dt)
        lr = e.pair_lr(part, work)
        if np.ndim(lr):
            lr = lr[perm]
        factors = e.step_factors(work)
        top = int(st[0])
        for k in range(top):
            c = K if k == 0 else int(active[k])
            s_k = size[:c]
            pos, valid = self._batch_positions(k, cols[:c], s_k, j)
            samples = np.take_along_axis(order[:c], pos, axis=1)
            yk = y[:c]
            g = np.asarray(e.hot.minibatch_gradients(yk, cols[:c], samples, valid),
                           dtype=dt)
            if cs is not None:
                g += cs[:c]
            if factors is not None:
                g *= factors[k]
            if k == 0:
                total[...] = g
            else:
                total[:c] += g
            if k + 1 < top:
                g *= lr if np.ndim(lr) == 0 else lr[:c]
                yk -= g
        out = scratch(work, "total", K, d, dt)
        out[perm] = total
        return out, int(steps.sum())

    def sample_keys(self, rngs: Sequence[np.random.Generator], first: int = 0,
                    leaders: np.ndarray | None = None) -> np.ndarray:
        """This round's sort keys of :class:`MiniBatches`' sample orders, ``(R, n, s_max)``: row
        ``r`` from ``rngs[r]``, uniforms in the first ``sizes[i]`` places of ``[r, i]`` and 2
        in the padding after them (for a stack, the sizes of the run's replicas ``first,
        first + 1, ...``). A pair's order is the stable argsort of its row
        (:meth:`sample_orders`): a uniform permutation of its samples (the keys are distinct
        almost surely, so whatever the sort), then the padding in place order. Only the pairs
        that work this round are sorted; every pair's keys are drawn, so chunking never
        changes them. ``leaders`` (:meth:`_shared_draws`): replicas whose stream and problem
        are another's copy its keys (the same numbers) instead of drawing them."""
        R = len(rngs)
        sizes = (self.engine.stack.sizes[first:first + R] if self.engine.stack is not None
                 else np.broadcast_to(self.sizes, (R, self.engine.n)))
        tops = sizes.max(axis=1)
        keys = np.empty((R, self.engine.n, self.s_max))
        own = range(R) if leaders is None else np.flatnonzero(leaders == np.arange(R)).tolist()
        for r in own:  # (n, its problem's largest size) keys, as a run of its problem alone
            if tops[r] == self.s_max:
                rngs[r].random(out=keys[r])
            else:
                keys[r, :, :tops[r]] = rngs[r].random((self.engine.n, int(tops[r])))
        if leaders is not None:
            copies = np.flatnonzero(leaders != np.arange(R))
            keys[copies] = keys[leaders[copies]]
        keys[np.arange(self.s_max) >= sizes[..., None]] = 2.0
        return keys

    @staticmethod
    def sample_orders(keys: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """The sample orders ``(K, s_max)`` of the pairs ``(rows, cols)`` from the round's keys
        (:meth:`sample_keys`)."""
        return np.argsort(keys[rows, cols], axis=-1, kind="stable")

