r"""Optional compiled kernels (numba) for the two row loops of the simulator that memory
bandwidth bounds; numpy everywhere else, and numpy here too when numba is not installed.

A U-MIFA round touches, for each of its ``K`` (replica, client) pairs, four rows of ``d``
numbers: the client's Hessian diagonal :math:`a_i` and center :math:`c_i` (the gradient
:math:`a_i \odot (y_k - c_i)`) and the pair's table row :math:`G^{(i)}`, read and written. In
numpy each of these is a fancy-index gather into a copy, then whole-array passes over the copies,
then a fancy-index scatter: about three times the traffic the round needs. The two kernels here
do each in one pass over the rows, with the **same floating-point operations in the same order**
as the numpy code they replace (no fused multiply-add, no reassociation: numba's default, not
``fastmath``), so a result, and so a report, is bitwise the same with or without numba:

- :func:`diagonal_gradient_rows`: row ``k`` of ``out`` is :math:`a_{i_k}\odot(y_k - c_{i_k})`;
- :func:`importance_rows`: the U-MIFA update of the table rows ``idx``,

  .. math::

      \text{change}_k = (u_k - G_{\text{idx}_k})\,\kappa_k,\qquad
      G_{\text{idx}_k} \leftarrow G_{\text{idx}_k} + \text{change}_k .

Install with ``pip install "fedtheory[fast]"``. ``FEDTHEORY_NUMBA=0`` in the environment turns
the kernels off; so does a ``with numba_kernels(False):`` block (or :func:`use_numba`
``(False)``, for the rest of the current context); :func:`numba_enabled` tells whether they are
used. The switch is a :class:`contextvars.ContextVar`, never a mutable module global: it holds
in the thread (or asyncio task) that set it, and :func:`fedtheory.simulate.simulate` runs its
worker threads in a copy of the caller's context, so they follow the caller's switch. Either
way the numbers are the same. The kernels are compiled on first use (:func:`_kernels`, a pure
memo: the compiled functions depend on nothing) and cached on disk (``cache=True``, in
:func:`cache_dir`: never inside the installed package); they
release the GIL, so the simulator's replica threads run them in parallel.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

__all__ = ["cache_dir", "diagonal_gradient_rows", "importance_rows", "numba_enabled",
           "numba_kernels", "use_numba"]

#: The switch of the current context: True (on, if numba is installed), False (off) or None
#: (the default: on unless ``FEDTHEORY_NUMBA=0``). A context variable, not a module global.
_USE_NUMBA: contextvars.ContextVar[bool | None] = contextvars.ContextVar(
    "fedtheory_use_numba", default=None)


@functools.cache
def _kernels() -> dict[str, Callable[..., Any]] | None:
    """The compiled kernels (None without numba): compiled once per process, a pure memo (the
    kernels depend on no argument and no setting)."""
    return _compile()


def _compile() -> dict[str, Callable[..., Any]] | None:
    try:
        import numba
    except ImportError:
        return None
    saved = numba.config.CACHE_DIR
    if not os.environ.get("NUMBA_CACHE_DIR"):  # (a folder the user chose is kept)
        numba.config.CACHE_DIR = cache_dir()  # read when a function is decorated: only ours
    try:  # cached on disk in fedtheory's cache folder, never inside the installed package
        return _define(numba.njit(nogil=True, cache=True, error_model="numpy"))
    except RuntimeError:  # no cache location at all ("no locator available"): compile each run
        return _define(numba.njit(nogil=True, error_model="numpy"))
    finally:
        numba.config.CACHE_DIR = saved


def cache_dir() -> str:
    """Where numba keeps the compiled kernels: ``numba/`` in fedtheory's cache folder
    (``$FEDTHEORY_CACHE_DIR``, else the user's cache folder: the folder of the claim index,
    :func:`fedtheory.index.cache_dir`, which a test holds equal), never beside this file (a
    file left in an installed package outlives ``pip uninstall``)."""
    given = os.environ.get("FEDTHEORY_CACHE_DIR")
    if not given:
        from platformdirs import user_cache_dir

        given = user_cache_dir("fedtheory", appauthor=False)
    return os.path.join(given, "numba")


def _define(jit: Callable[[Callable[..., Any]], Any]) -> dict[str, Callable[..., Any]]:
    """The kernels, compiled (lazily, on first call) by ``jit``."""

    @jit
    def gradient(a, c, idx, y, out):  # pragma: no cover - compiled
        K, d = out.shape
        for k in range(K):
            i = idx[k]
            for j in range(d):
                out[k, j] = a[i, j] * (y[k, j] - c[i, j])

    @jit
    def importance(rows, idx, updates, coef, cols, change, total, replica, weight, acc
                   ):  # pragma: no cover - compiled
        K, d = updates.shape
        for k in range(K):
            r = idx[k]
            kappa = coef[cols[k]] if cols.shape[0] else coef[0]
            # three loops, not one with branches inside: each vectorises
            if replica < 0:  # the change rows out
                for j in range(d):
                    old = rows[r, j]
                    ch = (updates[k, j] - old) * kappa
                    change[k, j] = ch
                    rows[r, j] = old + ch
            elif k == 0:  # acc = np.add.reduce(change, axis=0): row by row, in order
                for j in range(d):
                    old = rows[r, j]
                    ch = (updates[k, j] - old) * kappa
                    rows[r, j] = old + ch
                    acc[j] = ch
            else:
                for j in range(d):
                    old = rows[r, j]
                    ch = (updates[k, j] - old) * kappa
                    rows[r, j] = old + ch
                    acc[j] = acc[j] + ch
        if replica >= 0:  # then acc *= weight; total[replica] += acc
            for j in range(d):
                total[replica, j] = total[replica, j] + acc[j] * weight[0]

    return {"gradient": gradient, "importance": importance}


def _check_flag(flag: Any) -> bool | None:
    if flag is not None and not isinstance(flag, (bool, np.bool_)):
        raise ValueError(f"flag must be True, False or None, got {flag!r}")
    return None if flag is None else bool(flag)


def use_numba(flag: bool | None = None) -> bool:
    """Turn the compiled kernels on (``True``: if numba is installed), off (``False``), or back
    to the default (``None``: on unless ``FEDTHEORY_NUMBA=0``) for the rest of the current
    context (thread or task; prefer the scoped :func:`numba_kernels`). Returns whether they
    are on.

    >>> with numba_kernels(None):  # a scope, so that the doctest leaves the switch as it was
    ...     use_numba(False)
    False
    """
    _USE_NUMBA.set(_check_flag(flag))
    return numba_enabled()


@contextlib.contextmanager
def numba_kernels(flag: bool | None) -> Iterator[bool]:
    """Within the block, the compiled kernels are on (``True``, if numba is installed), off
    (``False``) or as by default (``None``); yields whether they are on. Scoped to the block
    and to its thread or task (and to :func:`~fedtheory.simulate.simulate`'s worker threads
    started in it); never changes the numbers.

    >>> with numba_kernels(False) as on:
    ...     on, numba_enabled()
    (False, False)
    """
    token = _USE_NUMBA.set(_check_flag(flag))
    try:
        yield numba_enabled()
    finally:
        _USE_NUMBA.reset(token)


def numba_enabled() -> bool:
    """Whether the compiled kernels are used in the current context (numba installed and not
    turned off by the context's switch or, by default, by ``FEDTHEORY_NUMBA=0``)."""
    flag = _USE_NUMBA.get()
    want = os.environ.get("FEDTHEORY_NUMBA", "1") != "0" if flag is None else flag
    return want and _kernels() is not None


def diagonal_gradient_rows(a: np.ndarray, c: np.ndarray, idx: np.ndarray, y: np.ndarray,
                           out: np.ndarray) -> bool:
    r"""Row ``k`` of ``out``: :math:`a_{i_k}\odot(y_k - c_{i_k})`, ``i = idx`` (valid indices;
    ``a``, ``c`` ``(n, d)`` and ``y``, ``out`` ``(K, d)`` of one floating dtype; ``y`` may be
    ``out`` or a broadcast view). Returns ``False`` (and does nothing) without the kernels.

    >>> a, c = np.array([[2.0, 3.0]]), np.array([[1.0, 1.0]])
    >>> out = np.empty((1, 2))
    >>> if diagonal_gradient_rows(a, c, np.array([0]), np.array([[4.0, 0.0]]), out):
    ...     assert out.tolist() == [[6.0, -3.0]]
    """
    kernels = _kernels() if numba_enabled() else None
    if kernels is None:
        return False
    kernels["gradient"](a, c, idx, y, out)
    return True


def importance_rows(rows: np.ndarray, idx: np.ndarray, updates: np.ndarray, coef: Any,
                    cols: np.ndarray, change: np.ndarray | None, total: np.ndarray | None = None,
                    replica: int | None = None, weight: Any = None) -> bool:
    r"""The U-MIFA row update: :math:`\text{change}_k = (u_k - G_{\text{idx}_k})\,\kappa_k`
    into ``change`` (which may be ``updates``) and :math:`G_{\text{idx}_k} \mathrel{+}=
    \text{change}_k` in ``rows`` ``(N, d)``, for distinct valid ``idx``. ``coef``: one scalar
    :math:`\kappa` of the rows' dtype, or per client ``(n,)`` read at ``cols``. With ``total``
    ``(R, d)``, ``replica`` and a scalar ``weight`` :math:`w` (all the rows belong to that
    replica), also :math:`\text{total}_{\text{replica}} \mathrel{+}= w\sum_k
    \text{change}_k`, summed row by row in order as ``np.add.reduce(change, axis=0)`` does;
    then ``change`` may be None (not written).
    Returns ``False`` (and does nothing) without the kernels or without rows.

    >>> G = np.array([[1.0], [2.0]])
    >>> ch = np.empty((1, 1))
    >>> if importance_rows(G, np.array([1]), np.array([[4.0]]), np.float64(0.5),
    ...                    np.array([0]), ch):
    ...     assert G.tolist() == [[1.0], [3.0]] and ch.tolist() == [[1.0]]
    """
    summed = total is not None and replica is not None
    if not summed and change is None:
        raise ValueError("change must be an array when no total is given, got None")
    if summed and np.ndim(weight):
        raise ValueError(f"weight must be a scalar, got {weight!r}")
    kernels = _kernels() if numba_enabled() else None
    if kernels is None or not updates.shape[0]:
        return False
    per_client = isinstance(coef, np.ndarray) and coef.ndim > 0
    kappa = coef if per_client else np.full(1, coef, dtype=rows.dtype)
    cols = cols if per_client else cols[:0]
    if not summed or change is not None:  # the change rows out, then (numpy) their sum
        kernels["importance"](rows, idx, updates, kappa, cols, change, rows[:1], -1,
                               rows[0, :1], rows[0, :1])
        if summed:
            s = np.add.reduce(change, axis=0)
            s *= weight
            total[replica] += s
        return True
    kernels["importance"](rows, idx, updates, kappa, cols, updates[:0], total, replica,
                           np.full(1, weight, dtype=rows.dtype),
                           np.empty(rows.shape[1], dtype=rows.dtype))
    return True
