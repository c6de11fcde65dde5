r"""A partial Fisher--Yates shuffle vectorised over rows, for the uniform subsets of
:class:`~fedtheory.sampling.without_replacement.UniformWithoutReplacement` (the Monte Carlo hot
path): the work arrays are kept per thread and shape.
"""

from __future__ import annotations

import threading

import numpy as np

#: Per thread: the work arrays of :func:`_partial_shuffle`, by shape (``(n, k, rows)``).
#: Scratch only (each table is restored after its call): no result depends on what ran
#: before, and a thread never sees another's (issue 18: no shared mutable module state).
_SHUFFLE_WORK = threading.local()

#: Work arrays for tables of up to this many entries (``rows * n``) are kept between calls (one
#: chunk of the Monte Carlo sampler is far smaller); larger ones are made for the call.
_SHUFFLE_KEEP = 1 << 18


class _ShuffleWork:
    """The arrays of one shape of :func:`_partial_shuffle`: the identity table ``(rows, n)``
    (entry = its flat index; 16-bit integers while they fit, so that it stays in cache), its
    pristine copy, the per-step constants and the buffers."""

    def __init__(self, n: int, k: int, rows: int, keep: bool) -> None:
        size = rows * n
        dtype = np.int16 if size <= 1 << 15 else np.int32 if size <= 1 << 31 else np.int64
        steps = np.arange(k, dtype=np.intp)
        self.keep = keep  # reused: the table is restored after each call
        self.template = np.arange(size, dtype=dtype).reshape(rows, n)
        self.table = self.template.copy() if keep else self.template
        self.span = (n - steps).astype(float)[:, None]  # n - j
        self.top = (n - 1 - steps)[:, None]  # the largest offset, n - 1 - j
        self.base = steps[:, None] + np.arange(rows, dtype=np.intp) * n  # r n + j
        self.x = np.empty((k, rows))
        self.pos = np.empty((k, rows), dtype=np.intp)
        self.chosen = np.empty((k, rows), dtype=dtype)


def _shuffle_work(n: int, k: int, rows: int) -> _ShuffleWork:
    if rows * n > _SHUFFLE_KEEP:
        return _ShuffleWork(n, k, rows, keep=False)
    kept = getattr(_SHUFFLE_WORK, "kept", None)
    if kept is None:
        kept = _SHUFFLE_WORK.kept = {}
    work = kept.get((n, k, rows))
    if work is None:
        if len(kept) >= 8:
            kept.clear()
        work = kept[(n, k, rows)] = _ShuffleWork(n, k, rows, keep=True)
    return work


def _partial_shuffle(u: np.ndarray, n: int) -> np.ndarray:
    r"""The first :math:`k` positions of a partial Fisher--Yates shuffle of :math:`0..n-1`, per
    row, as flat indices into a ``(rows, n)`` array: entry ``[j, r]`` is :math:`r n + v_{rj}`.

    ``u`` has shape ``(rows, k)``, :math:`k \le n`: step :math:`j` swaps position :math:`j`
    with position :math:`o_{rj} = j + \min(\lfloor u_{rj}(n-j)\rfloor, n-1-j)` of row
    :math:`r`, and :math:`v_{rj}` is the value that lands at position :math:`j`.

    The permutations of all rows are one table of shape ``(rows, n)`` whose entries start as
    their own flat index :math:`r n + x` (so a value read off is already an index into the
    ``(rows, n)`` result). Step :math:`j` gathers the entries at the :math:`o_{\cdot j}` (the
    chosen values) and scatters the front column :math:`j` there; the front itself is never
    read again, so it is not written: two array operations per step. The table (16-bit while
    its entries fit, cache-resident for a sampler chunk) and the buffers are kept per thread
    and shape, and the table is copied back from its pristine twin after each call.
    """
    rows, k = u.shape
    work = _shuffle_work(n, k, rows)
    np.multiply(u.T, work.span, out=work.x)  # (k, rows): u (n - j)
    pos = work.pos
    np.copyto(pos, work.x, casting="unsafe")  # truncation = floor (u >= 0)
    np.minimum(pos, work.top, out=pos)  # against rounding up to n - j
    pos += work.base  # flat index of (r, o) in the table
    table, chosen = work.table, work.chosen
    flat = table.reshape(-1)
    try:
        for j in range(k):
            flat.take(pos[j], out=chosen[j], mode="clip")  # indices are in range
            flat[pos[j]] = table[:, j]
    finally:
        if work.keep:
            np.copyto(table, work.template)  # the identity again, for the next call
    return chosen.astype(np.intp)
