r"""The participants of a round and the kernels every rule sums with.

A round of ``R`` replicas of an ``n``-client federation is represented by its :math:`K`
active (replica, client) pairs, flattened and sorted by replica (:class:`Participants`); the
clients' updates arrive as a ``(K, d)`` array aligned with those pairs. The kernels here sum
them per replica (:func:`segment_sum`), with per-pair or per-client coefficients
(:func:`scaled_sum`, :func:`add_scaled_sums`), gather rows (:func:`take_rows`) and keep work
arrays and cached coefficients between calls in a state's ``"scratch"`` (:func:`scratch`,
:func:`cached`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np
from scipy import sparse as _sparse

from fedtheory.validation import positive_integer

__all__ = [
    "Participants",
    "add_scaled_sums",
    "as_participants",
    "cached",
    "cached_coef",
    "client_coef",
    "pair_coef",
    "rows_coef",
    "scaled_sum",
    "scratch",
    "segment_sum",
    "take_rows",
    "weight_coef",
]


@dataclass(frozen=True)
class Participants:
    r"""The :math:`K` active (replica, client) pairs of one round, sorted by replica.

    Attributes
    ----------
    replicas, n
        The shape ``(R, n)`` of the participation mask this was built from.
    rows, cols
        ``(K,)`` replica and client index of each pair; ``rows`` is non-decreasing.
    starts
        ``(R + 1,)`` offsets: the pairs of replica ``r`` are ``starts[r]:starts[r + 1]``.
    coef
        ``(K,)`` per-pair aggregation coefficients :math:`a_{r,i}` chosen by a round-aware
        participation process (e.g. OCS's :math:`w_i/p_i^t`), or None (the rule's own
        coefficients). Rules with ``pair_coefficients`` aggregate
        :math:`G_r = \sum_{i \in \mathcal A_r} a_{r,i}\Delta_{r,i}` with them.

    Examples
    --------
    >>> part = Participants.from_mask(np.array([[True, False, True], [False, False, False]]))
    >>> part.rows.tolist(), part.cols.tolist(), part.counts.tolist()
    ([0, 0], [0, 2], [2, 0])
    """

    replicas: int
    n: int
    rows: np.ndarray
    cols: np.ndarray
    starts: np.ndarray
    coef: np.ndarray | None = None

    @classmethod
    def from_mask(cls, mask: np.ndarray, coef: np.ndarray | None = None) -> Participants:
        """Compress a boolean participation mask of shape ``(R, n)``; ``coef``, ``(R, n)``
        per-pair aggregation coefficients (read at the active pairs) or None."""
        mask = np.asarray(mask)
        if mask.ndim != 2 or mask.dtype != bool:
            raise ValueError(
                f"mask must be a boolean array of shape (replicas, n), got dtype {mask.dtype} "
                f"and shape {mask.shape}"
            )
        rows, cols = np.nonzero(mask)
        counts = np.count_nonzero(mask, axis=1)
        starts = np.zeros(mask.shape[0] + 1, dtype=np.intp)
        np.cumsum(counts, out=starts[1:])
        pair = None
        if coef is not None:
            coef = np.asarray(coef, dtype=float)
            if coef.shape != mask.shape:
                raise ValueError(f"coef must have the mask's shape {mask.shape}, got {coef.shape}")
            pair = coef[rows, cols]
        part = cls(mask.shape[0], mask.shape[1], rows, cols, starts, pair)
        part.__dict__["_mask"] = mask.copy()  # for :attr:`mask` (a copy: the caller's may change)
        return part

    @classmethod
    def full(cls, replicas: int, n: int) -> Participants:
        """Every client of every replica."""
        rows = np.repeat(np.arange(replicas, dtype=np.intp), n)
        cols = np.tile(np.arange(n, dtype=np.intp), replicas)
        starts = np.arange(0, replicas * n + 1, n, dtype=np.intp)
        return cls(replicas, n, rows, cols, starts)

    @property
    def size(self) -> int:
        """:math:`K`, the number of active pairs."""
        return int(self.rows.shape[0])

    # derived arrays, computed on first use and kept (plain dict caching: cheaper than
    # functools.cached_property, which takes a lock on every access in Python 3.11)
    @property
    def counts(self) -> np.ndarray:
        """``(R,)`` number of participants of each replica."""
        val = self.__dict__.get("_counts")
        if val is None:
            val = self.__dict__["_counts"] = np.diff(self.starts)
        return val

    @property
    def present(self) -> np.ndarray:
        """The replicas with at least one participant, increasing."""
        val = self.__dict__.get("_present")
        if val is None:
            val = self.__dict__["_present"] = np.flatnonzero(self.counts)
        return val

    @property
    def only(self) -> int | None:
        """The replica of every pair when they all belong to one replica, else None."""
        cache = self.__dict__
        if "_only" not in cache:
            rows = self.rows
            cache["_only"] = (int(rows[0]) if rows.shape[0] and rows[0] == rows[-1]
                              else None)
        return cache["_only"]

    @property
    def flat_index(self) -> np.ndarray:
        """``(K,)`` index ``row * n + col`` into a table viewed as ``(R * n, d)``."""
        val = self.__dict__.get("_flat_index")
        if val is None:
            r = self.only
            if r == 0:
                val = self.cols
            elif r is not None:
                val = self.cols + r * self.n
            else:
                val = self.rows * self.n + self.cols
            self.__dict__["_flat_index"] = val
        return val

    def blocks(self, size: int) -> Iterator[Participants]:
        """Split the pairs into consecutive blocks of at most ``2 * size - 1`` pairs.

        Each replica's pairs are cut into pieces at its local positions ``0, size,
        2 size, ...``; a piece goes to block ``floor(global start / size)``. Consecutive pieces
        of a replica start ``size`` apart, so a block holds at most one piece of each replica,
        and the pieces do not depend on the other replicas present: blockwise per-replica
        sums, and hence the trajectories, do not depend on the chunking of replicas. Blocks
        are contiguous ranges of the pairs (no reordering); a replica with many pairs spreads
        over blocks of ``size`` pairs, replicas with few share blocks.

        >>> part = Participants.from_mask(np.array([[1, 1, 1], [0, 1, 0]], dtype=bool))
        >>> [(b.rows.tolist(), b.cols.tolist()) for b in part.blocks(2)]
        [([0, 0], [0, 1]), ([0, 1], [2, 1])]
        """
        positive_integer("size", size)
        K = self.size
        if K <= size:
            yield self
            return
        rows, cols, R, n = self.rows, self.cols, self.replicas, self.n
        r = self.only
        if r is not None:  # one replica: consecutive pieces of `size` pairs
            full = np.zeros(R + 1, dtype=np.intp)
            full[r + 1:] = size
            for s in range(0, K, size):
                e = min(s + size, K)
                if e - s == size:
                    starts = full
                else:
                    starts = np.zeros(R + 1, dtype=np.intp)
                    starts[r + 1:] = e - s
                block = Participants(R, n, rows[s:e], cols[s:e], starts,
                                     None if self.coef is None else self.coef[s:e])
                block.__dict__["_only"] = r
                yield block
            return
        pieces = -(-self.counts // size)
        first = np.cumsum(pieces) - pieces
        local = np.arange(int(first[-1] + pieces[-1])) - np.repeat(first, pieces)
        start = np.repeat(self.starts[:-1], pieces) + size * local
        cuts = np.concatenate(([0], start[np.flatnonzero(np.diff(start // size)) + 1], [K]))
        # every block's starts at once: (blocks, R + 1), clipped to the block's range
        lo = cuts[:-1, None]
        starts = np.minimum(np.maximum(self.starts, lo), cuts[1:, None]) - lo
        for j, (s, e) in enumerate(pairwise(cuts.tolist())):
            yield Participants(R, n, rows[s:e], cols[s:e], starts[j],
                               None if self.coef is None else self.coef[s:e])

    @property
    def mask(self) -> np.ndarray:
        """The dense ``(R, n)`` boolean mask (a new array on every call)."""
        kept = self.__dict__.get("_mask")
        if kept is not None:  # built from this mask
            return kept.copy()
        out = np.zeros((self.replicas, self.n), dtype=bool)
        out[self.rows, self.cols] = True
        return out


#: Up to this many non-empty replicas, :func:`segment_sum` loops over them (same numbers).
_FEW_SEGMENTS = 4


def _padded_sum(flat: np.ndarray, part: Participants,
                c: np.ndarray | None) -> np.ndarray | None:
    r"""The sparse product of :func:`segment_sum` without the sparse matrix (whose set-up costs
    more than the sum for the small rounds of many replicas): the pairs laid out as a zero-padded
    ``(m, R, cols)`` array (:math:`m` the most pairs of a replica; pair :math:`j` of replica
    :math:`r` at ``[j, r]``), summed slice after slice from zero. Each replica's sum is
    :math:`((0 + c_0v_0) + c_1v_1) + \dots`, the sparse product's order and roundings; the
    padding adds :math:`+0`, which leaves a running sum started at :math:`+0` unchanged (it is
    never :math:`-0`). None when the padding would more than double the pairs (a few
    replicas with many pairs: the sparse product then)."""
    R, K = part.replicas, part.size
    counts = part.counts
    m = int(counts.max())
    if R * m > 2 * K + 64:
        return None
    pos = np.arange(K) - part.starts[part.rows]
    pad = np.zeros((m, R, flat.shape[1]), dtype=flat.dtype)
    if c is None:
        pad[pos, part.rows] = flat
    else:
        pad[pos, part.rows] = flat * c[:, None]
    out = np.zeros((R, flat.shape[1]), dtype=flat.dtype)
    for j in range(m):
        out += pad[j]
    return out


def segment_sum(values: np.ndarray, part: Participants,
                coef: np.ndarray | None = None) -> np.ndarray:
    r"""Sum the ``(K, ...)`` rows of ``values`` per replica: ``(R, ...)``, zero where none.

    .. math:: S_r = \sum_{k:\ \text{rows}_k = r} c_k\, v_k \qquad (c_k = 1 \text{ by default})

    Computed as the product of the sparse ``(R, K)`` selector with ``values`` (compiled, no
    :func:`numpy.add.at`), the same additions on a zero-padded dense layout when the replicas
    hold similar numbers of pairs (:func:`_padded_sum`: no sparse set-up, the usual small
    round of many replicas), or for a few replicas (and more than one column) by a loop of
    :func:`numpy.sum`: either way each replica's rows are added one after the other, in
    order, so a replica's sum does not depend on which other replicas share the call
    (chunking).

    >>> part = Participants.from_mask(np.array([[True, True], [False, False], [False, True]]))
    >>> segment_sum(np.array([1.0, 2.0, 5.0]), part).tolist()
    [3.0, 0.0, 5.0]
    >>> segment_sum(np.array([1.0, 2.0, 5.0]), part, coef=np.array([1.0, 0.5, 2.0])).tolist()
    [2.0, 0.0, 10.0]
    """
    values = np.asarray(values)
    tail = values.shape[1:]
    flat = values.reshape(part.size, math.prod(tail))
    c = None if coef is None else np.asarray(coef, dtype=values.dtype).reshape(part.size)
    # one column: numpy sums a contiguous axis pairwise, so only the (sequential) sparse
    # product keeps the sums independent of the chunking
    nonempty = part.present if flat.shape[1] > 1 else None
    if part.size and flat.dtype.kind == "f" and (nonempty is None
                                                 or len(nonempty) > _FEW_SEGMENTS):
        padded = _padded_sum(flat, part, c)
        if padded is not None:
            return padded.reshape((part.replicas,) + tail)
    if nonempty is not None and len(nonempty) <= _FEW_SEGMENTS:
        # the same sequential sums without the sparse matrix's set-up cost
        out = np.zeros((part.replicas, flat.shape[1]), dtype=values.dtype)
        for r in nonempty:
            s, e = part.starts[r], part.starts[r + 1]
            seg = flat[s:e] if c is None else flat[s:e] * c[s:e, None]
            np.sum(seg, axis=0, out=out[r])
    else:
        data = np.ones(part.size, dtype=values.dtype) if c is None else c
        sel = _sparse.csr_array((data, np.arange(part.size), part.starts),
                                shape=(part.replicas, part.size))
        out = np.asarray(sel @ flat)
    return out.reshape((part.replicas,) + tail)


def pair_coef(values: np.ndarray, part: Participants, dtype: Any) -> Any:
    """``values[cols]`` as a ``(K, 1)`` column, or one scalar when all ``values`` are equal
    (then a sum is scaled after the reduction instead of every row before it).

    >>> part = Participants.from_mask(np.array([[True, True]]))
    >>> pair_coef(np.array([0.5, 0.5]), part, np.float64)
    np.float64(0.5)
    """
    dtype = np.dtype(dtype)
    if values.min() == values.max():
        return dtype.type(values[0])
    return values[part.cols].astype(dtype)[:, None]


def scaled_sum(values: np.ndarray, part: Participants, coef: Any) -> np.ndarray:
    r""":math:`\sum_{k:\ \text{rows}_k = r} \text{coef}_k\, v_k` per replica, ``(R, d)``;
    ``coef`` from :func:`pair_coef` (a scalar is applied after the sum)."""
    if np.ndim(coef) == 0:
        out = segment_sum(values, part)
        out *= coef
        return out
    return segment_sum(values, part, coef=coef)


def client_coef(values: np.ndarray, dtype: Any) -> Any:
    """Per-client coefficients in ``dtype``: one scalar when all are equal, else ``(n,)``.

    Computed once per round (or run), so that a block only indexes it (:func:`rows_coef`)
    instead of testing uniformity every time (:func:`pair_coef`); the same numbers.

    >>> client_coef(np.array([0.5, 0.5]), np.float32)
    np.float32(0.5)
    """
    dtype = np.dtype(dtype)
    values = np.asarray(values)
    if values.min() == values.max():
        return dtype.type(values[0])
    return values.astype(dtype)


def cached(state: dict[str, Any], key: str, compute: Any) -> Any:
    """``state["scratch"][key]``, computed by ``compute()`` on first use (and again after the
    scratch was cleared): for values that follow from the model state alone, so that dropping
    them never changes a result."""
    cache = state.setdefault("scratch", {})
    val = cache.get(key)
    if val is None:
        val = cache[key] = compute()
    return val


def cached_coef(state: dict[str, Any], name: str, p: np.ndarray | None,
                fn: Any) -> Any:
    """``client_coef(fn(p))``, kept in the state's scratch when ``p`` is the state's own
    probabilities (the engine's case), else computed every call (``p`` given to a step)."""
    if p is None or p is not state["p"]:
        return client_coef(fn(p), state["dtype"])
    return cached(state, "coef:" + name, lambda: client_coef(fn(p), state["dtype"]))


def weight_coef(state: dict[str, Any]) -> Any:
    """The objective weights :math:`w_i` as a :func:`client_coef` (kept in the scratch)."""
    return cached(state, "coef:w", lambda: client_coef(state["weights"], state["dtype"]))


def rows_coef(coef: Any, part: Participants) -> Any:
    """A :func:`client_coef` for the pairs of ``part``: the scalar, or a ``(K, 1)`` column."""
    if isinstance(coef, np.ndarray) and coef.ndim:
        return coef[part.cols][:, None]
    return coef


def add_scaled_sums(target: np.ndarray, values: np.ndarray, part: Participants,
                    coef: Any) -> None:
    r"""``target[r] +=`` :math:`\sum_{k:\ \text{rows}_k = r} \text{coef}_k v_k` for every
    replica, in place; ``coef`` from :func:`rows_coef`. The same numbers as
    ``target += scaled_sum(values, part, coef)``, without the ``(R, d)`` temporaries when the
    pairs belong to one replica.
    """
    r = part.only
    if (r is None or (isinstance(coef, np.ndarray) and coef.ndim) or values.ndim != 2
            or values.shape[1] < 2):
        target += scaled_sum(values, part, coef)
        return
    s = np.add.reduce(values, axis=0)  # = np.sum, without its Python wrapper
    s *= coef
    target[r] += s


def take_rows(src: np.ndarray, idx: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``src[idx]`` (rows) written into ``out``; ``idx`` must be valid (``mode="clip"``, which
    lets numpy write ``out`` directly instead of through a buffer)."""
    return src.take(idx, axis=0, out=out, mode="clip")


def scratch(store: dict[str, Any], name: str, rows: int, cols: int, dtype: Any) -> np.ndarray:
    """A ``(rows, cols)`` work array kept in ``store["scratch"]`` and reused from round to round.

    ``store`` is a rule's state (whose ``"scratch"`` dict may be cleared between any two calls)
    or a caller's own work dict. Fresh multi-megabyte temporaries cost a page fault per 4 KiB
    page every round (the allocator returns them to the system); reusing buffers avoids that.
    The buffer grows by a quarter when too small. Its contents are valid until the next call
    with the same name.
    """
    buffers = store.setdefault("scratch", {})
    buf = buffers.get(name)
    if buf is None or buf.shape[0] < rows or buf.shape[1] != cols or buf.dtype != dtype:
        grow = 0 if buf is None or buf.shape[1] != cols else buf.shape[0] + buf.shape[0] // 4
        buf = np.empty((max(rows, grow), cols), dtype=dtype)
        buffers[name] = buf
    return buf[:rows]


def as_participants(
    active: Participants | np.ndarray, updates: np.ndarray, n: int
) -> tuple[Participants, np.ndarray, bool]:
    """Bring ``(active, updates)`` to the compressed form ``(Participants, (K, d))``.

    Returns the participants, the compressed updates and whether the caller passed a single
    replica (a mask of shape ``(n,)``), in which case results should drop the replica axis.
    """
    if isinstance(active, Participants):
        updates = np.asarray(updates)
        if active.n != n:
            raise ValueError(f"active has n={active.n} clients, the state has n={n}")
        if updates.ndim != 2 or updates.shape[0] != active.size:
            raise ValueError(
                f"updates must have shape (K, d) = ({active.size}, d) for {active.size} active "
                f"pairs, got shape {updates.shape}"
            )
        return active, updates, False
    mask = np.asarray(active)
    if mask.dtype != bool:
        raise ValueError(f"active must be a boolean mask or Participants, got dtype {mask.dtype}")
    single = mask.ndim == 1
    if single:
        mask = mask[None]
    if mask.ndim != 2 or mask.shape[1] != n:
        raise ValueError(f"active must have shape (replicas, {n}) or ({n},), got {mask.shape}")
    updates = np.asarray(updates)
    dense = updates[None] if single else updates
    if dense.ndim != 3 or dense.shape[:2] != mask.shape:
        want = f"({n}, d)" if single else f"({mask.shape[0]}, {n}, d)"
        raise ValueError(f"updates must have shape {want} with this mask, got {updates.shape}")
    part = Participants.from_mask(mask)
    return part, dense[part.rows, part.cols], single
