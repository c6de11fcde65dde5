r"""The engine's random streams: one generator per replica and job, named.

Replica :math:`r` of a run (stream index ``Run.stream_indices``) draws each job's numbers from
``SeedSequence(seed, spawn_key=(r, stream))`` with the run's bit generator, ``stream`` one of
:class:`Stream`; the jobs never share a generator, so chunking never changes the draws.

>>> int(Stream.NOISE), Stream(3).name
(1, 'SAMPLE_ORDERS')
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from fedtheory.algorithms import Participants

__all__ = ["NormalStreams", "Stream", "replica_streams"]


class Stream(IntEnum):
    """The second spawn-key entry of each job's stream (the numbers of a seed depend on it)."""

    #: who takes part (the participation process)
    PARTICIPATION = 0
    #: gradient noise
    NOISE = 1
    #: drawn local-step counts (:class:`~fedtheory.engine.LocalStepsDraw` or a callable)
    LOCAL_STEPS = 2
    #: the sample orders of :class:`~fedtheory.engine.MiniBatches`
    SAMPLE_ORDERS = 3


def replica_streams(seed: int, indices: np.ndarray,
                    bit_generator: type[np.random.BitGenerator],
                    which: Stream) -> list[np.random.Generator]:
    """The generators of job ``which`` of the replicas of stream ``indices`` (``Run.seed``
    and ``Run.stream_indices``)."""
    return [
        np.random.Generator(bit_generator(np.random.SeedSequence(seed,
                                                                 spawn_key=(r, int(which)))))
        for r in indices.tolist()
    ]


class NormalStreams:
    """Standard normals from one generator per replica, drawn ahead in blocks.

    numpy draws normals one after another from the bit stream, so ``k`` then ``l`` normals are
    the first ``k + l`` of one draw: handing replica ``r``'s normals out of a buffer filled
    ahead gives bitwise the numbers of drawing each request from its generator on demand, with
    one generator call per replica every few rounds instead of one per round (that call, not
    the drawing, dominated the noise of many small replicas). ``streams[r]`` is replica
    ``r``'s generator (not to be drawn from directly once this has read ahead of it).
    """

    #: Requests of the largest size read ahead, as far as :attr:`BUDGET` allows.
    AHEAD = 8
    #: At least this many normals per replica read ahead (small requests, e.g. a scalar per
    #: client, would otherwise call every replica's generator every few rounds).
    MIN_AHEAD = 1024
    #: Numbers held ahead for all replicas together (8 MiB of float64) beyond one request: a
    #: one-off large request (a table rule's first round of every client) is not multiplied.
    BUDGET = 1 << 20

    def __init__(self, streams: list[np.random.Generator], dtype: np.dtype) -> None:
        self.streams, self.dtype = streams, np.dtype(dtype)
        self.cap = 0
        self.buf = np.empty((len(streams), 0), dtype=self.dtype)
        self.pos = np.zeros(len(streams), dtype=np.intp)  # next unread, per replica

    def __getitem__(self, r: int) -> np.random.Generator:
        return self.streams[r]

    def __len__(self) -> int:
        return len(self.streams)

    def _refill(self, replicas: np.ndarray, cap: int) -> None:
        """Move the unread normals of ``replicas`` to the front (into a buffer of ``cap`` per
        replica) and draw the rest."""
        if cap != self.cap:  # a larger buffer; the unread normals go to the end of each row
            new = np.empty((len(self.streams), cap), dtype=self.dtype)
            keep = self.cap - self.pos
            for r in np.flatnonzero(keep).tolist():
                new[r, cap - keep[r] :] = self.buf[r, self.pos[r] :]
            self.buf, self.cap = new, cap
            self.pos = cap - keep
        for r in replicas.tolist():
            left = self.cap - self.pos[r]
            row = self.buf[r]
            if left:
                row[:left] = row[self.pos[r] :].copy()
            self.streams[r].standard_normal(out=row[left:], dtype=self.dtype)
            self.pos[r] = 0

    def fill(self, part: Participants, z: np.ndarray) -> None:
        """Fill ``z`` (``(K, d)``, contiguous) with normals: the rows of replica ``r``
        (``part.starts[r]:part.starts[r + 1]``) with its next ones, in order."""
        present, starts = part.present, part.starts
        d = z.shape[1]
        need = (starts[present + 1] - starts[present]) * d
        if not need.size:
            return
        top = int(need.max())
        if top > self.cap:  # grow: room for up to AHEAD such requests
            ahead = min(max(self.AHEAD * top, self.MIN_AHEAD),
                        self.BUDGET // max(len(self.streams), 1))
            self._refill(np.empty(0, dtype=np.intp), max(top, ahead))
        pos = self.pos[present]
        short = pos + need > self.cap
        if short.any():
            self._refill(present[short], self.cap)
            pos = self.pos[present]
        flat = z.reshape(-1)
        if need[0] == top and need.min() == top and pos.min() == pos.max():
            # every replica takes as many from the same position: one strided copy
            flat.reshape(-1, top)[:] = self.buf[present, pos[0] : pos[0] + top]
        else:
            src = np.repeat(present * self.cap + pos - starts[present] * d, need)
            src += np.arange(flat.size)
            np.take(self.buf.reshape(-1), src, out=flat)
        self.pos[present] = pos + need


