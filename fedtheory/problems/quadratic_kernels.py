r"""The array kernels of :class:`~fedtheory.problems.quadratic.QuadraticProblem`'s hot path.

The simulator asks a quadratic problem, many times per round, for the gradients
:math:`A_{c_k}(y_k - c_{c_k})` of ``K`` (replica, client) rows, or for the pseudo-gradient of
:math:`\tau` local steps of each row. The maths (and the validation of the caller's
arguments) lives in :mod:`fedtheory.problems.quadratic`; this module holds the array work,
written for speed on large blocks of rows:

- :func:`check_rows`: validation of a hot-path call, a few attribute reads and one reduction
  for the simulator's own (already well-formed) calls;
- :func:`thread_rows`: per-thread work arrays reused from call to call (no page faults for
  fresh multi-megabyte temporaries; the simulator runs chunks of replicas in threads);
- row gathers :math:`y_k - c_{c_k}` (:func:`minus_rows`) and, for dense Hessians, the grouped
  matrix-vector product :math:`A_{c_k} v_k` (:func:`grouped_matvec`);
- :func:`gradient_rows`, :func:`local_step_rows` (the :math:`\tau` steps with the centers and
  Hessians gathered once) and the closed form of the steps for diagonal Hessians
  (:func:`fused_coefficients`, :func:`fused_step_rows`).

The functions take the problem's arrays (Hessians ``A`` and centers ``c`` in the working
dtype) and already validated arguments.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from fedtheory.compiled import diagonal_gradient_rows

__all__ = [
    "check_rows",
    "fused_coefficients",
    "fused_step_rows",
    "gradient_rows",
    "grouped_matvec",
    "local_step_rows",
    "minus_rows",
    "rowdot",
    "thread_rows",
]

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_UMAX = np.maximum.reduce

#: Work arrays of the hot path, one set per thread (the simulator runs replica chunks in
#: threads), reused from call to call: no page faults for fresh multi-megabyte temporaries.
_LOCAL = threading.local()


def thread_rows(name: str, rows: int, d: int, dtype: np.dtype) -> np.ndarray:
    """A C-contiguous ``(rows, d)`` work array owned by the calling thread (the first rows of
    a kept buffer); valid until the thread's next request of ``name``."""
    try:
        bufs = _LOCAL.buffers
    except AttributeError:
        bufs = _LOCAL.buffers = {}
    key = (name, dtype, d)
    buf = bufs.get(key)
    if buf is None or buf.shape[0] < rows:
        grow = 0 if buf is None else buf.shape[0] + buf.shape[0] // 4
        buf = bufs[key] = np.empty((max(rows, grow), d), dtype=dtype)
    return buf[:rows]


def rowdot(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """:math:`\\sum_j u_{\\dots j} v_{\\dots j}` over the last axis, ``(...)``, in numpy's own
    loops: ``einsum("rd,rd->r")`` on 2-D views. (An ``einsum`` with an ellipsis, or a dot of
    1-D vectors, goes through BLAS, whose worker threads then spin for milliseconds and take
    a core from the simulator's own threads.)"""
    lead = u.shape[:-1]
    d = u.shape[-1]
    return np.einsum("rd,rd->r", u.reshape(-1, d), v.reshape(-1, d)).reshape(lead)


def minus_rows(y: np.ndarray, c: np.ndarray, idx: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``y - c[idx]`` into ``out`` (``(K, d)``; ``idx`` already checked): the rows are
    gathered straight into ``out`` unless ``out`` may overlap ``y``."""
    if np.may_share_memory(y, out):
        rows = c.take(idx, axis=0, out=thread_rows("centers", *out.shape, out.dtype),
                      mode="clip")
        return np.subtract(y, rows, out=out)
    c.take(idx, axis=0, out=out, mode="clip")
    return np.subtract(y, out, out=out)


def grouped_matvec(A: np.ndarray, idx: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rows ``A[idx[k]] @ v[k]`` without materialising ``A[idx]`` (``K d^2`` numbers).

    Rows are sorted by client and packed into a ``(clients present, largest group, d)`` array,
    so one batched matrix product does the work; if the groups are very uneven (packing would
    cost more than four times the rows), the gather is done in chunks of bounded memory.
    """
    K, d = v.shape
    if K == 0:
        return np.empty_like(v)
    order = np.argsort(idx, kind="stable")
    sidx = idx[order]
    present, first, counts = np.unique(sidx, return_index=True, return_counts=True)
    G = int(counts.max())
    if len(present) * G <= 4 * K:
        group = np.repeat(np.arange(len(present)), counts)
        pos = np.arange(K) - np.repeat(first, counts)
        packed = np.zeros((len(present), G, d), dtype=v.dtype)
        packed[group, pos] = v[order]
        prod = np.matmul(packed, np.swapaxes(A[present], -1, -2))  # rows times A_i^T = A_i
        out = np.empty_like(v)
        out[order] = prod[group, pos]
        return out
    out = np.empty_like(v)
    rows = max(1, (1 << 22) // max(1, d * d))  # about 32 MB of gathered Hessians per chunk
    for s in range(0, K, rows):
        out[s:s + rows] = np.matmul(A[idx[s:s + rows]], v[s:s + rows, :, None])[..., 0]
    return out


def check_rows(y: np.ndarray, clients: Any, out: np.ndarray | None, n: int, d: int,
               two_d: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate a hot-path call: ``y`` ``(..., d)``, ``clients`` of shape ``y.shape[:-1]``
    in ``[0, n)``, ``out`` None or of ``y``'s shape and floating dtype. Returns ``y``,
    the client indices (1-D) and the output array (2-D views ``(K, d)``)."""
    if (type(y) is np.ndarray and type(clients) is np.ndarray and type(out) is np.ndarray
            and len(y.shape) == 2 and y.shape[1] == d and clients.shape == y.shape[:1]
            and out.shape == y.shape and y.dtype.kind == "f" and out.dtype == y.dtype
            and clients.dtype == np.intp):
        # the simulator's call, checked in a few attribute reads and one reduction
        if clients.size and _UMAX(clients.view(np.uintp)) >= n:
            raise ValueError(f"clients must be integers in [0, {n}), got {clients!r}")
        return y, clients, out
    if type(y) is not np.ndarray:
        y = np.asarray(y)
    shape = y.shape
    if not shape or shape[-1] != d or (two_d and len(shape) != 2):
        want = f"(K, {d})" if two_d else f"(..., {d})"
        raise ValueError(f"y must have shape {want}, got shape {shape}")
    idx = clients if type(clients) is np.ndarray else np.asarray(clients)
    if idx.shape != shape[:-1]:
        raise ValueError(f"clients must have shape {shape[:-1]}, got shape {idx.shape}")
    if idx.size:
        kind = idx.dtype.kind
        # one reduction: negative signed indices are huge as unsigned
        top = (_UMAX(idx.view(_UNSIGNED[idx.dtype.itemsize]), axis=None)
               if kind in "iu" else None)
        if top is None or top >= n:
            raise ValueError(f"clients must be integers in [0, {n}), got {idx!r}")
    dtype = y.dtype if y.dtype.kind == "f" else np.dtype(float)
    if out is None:
        out = np.empty(shape, dtype=dtype)
    elif not (type(out) is np.ndarray and out.shape == shape and out.dtype == dtype):
        raise ValueError(
            f"out must be an array of shape {shape} and dtype {dtype}, got "
            f"{getattr(out, 'shape', None)} {getattr(out, 'dtype', type(out).__name__)}"
        )
    if len(shape) == 2:
        return y, idx, out
    K = idx.size
    return y.reshape(K, d), idx.reshape(K), out.reshape(K, d)


def gradient_rows(A: np.ndarray, c: np.ndarray, idx: np.ndarray, y: np.ndarray,
                  out: np.ndarray, diagonal: bool) -> np.ndarray:
    r"""Row ``k``: :math:`A_{c_k}(y_k - c_{c_k})` into ``out`` ``(K, d)``.

    Diagonal Hessians ``A`` ``(n, d)``: two row gathers (:math:`c_i` into ``out``, :math:`a_i`
    into a per-thread buffer) and two in-place passes; dense ``(n, d, d)``:
    :func:`grouped_matvec`.
    """
    if diagonal and (y is out or not np.may_share_memory(y, out)) and \
            diagonal_gradient_rows(A, c, idx, y, out):
        return out  # one compiled pass, the same numbers as the numpy lines below
    v = minus_rows(y, c, idx, out)
    if diagonal:
        a = A.take(idx, axis=0, out=thread_rows("rows", v.shape[0], v.shape[1], v.dtype),
                   mode="clip")
        np.multiply(a, v, out=v)
    else:
        v[...] = grouped_matvec(A, idx, v)
    return v


def local_step_rows(A: np.ndarray, c: np.ndarray, idx: np.ndarray, y: np.ndarray,
                    total: np.ndarray, lr: float, steps: int, diagonal: bool,
                    correction: np.ndarray | None,
                    add_noise: Callable[[np.ndarray], None] | None) -> np.ndarray:
    r""":math:`\Delta_k = \sum_{j<\tau} (A_{c_k} e^j + \xi^j + u_k)` into ``total`` ``(K, d)``,
    with :math:`e^0 = y_k - c_{c_k}`, :math:`e^{j+1} = e^j - \eta(A_{c_k} e^j + \xi^j + u_k)`:
    the centers and Hessian diagonals are gathered once for all steps."""
    dtype, K = total.dtype, idx.size
    d = total.shape[1]
    e = c.take(idx, axis=0, out=thread_rows("iterate", K, d, dtype), mode="clip")
    np.subtract(y, e, out=e)
    if diagonal:
        a = A.take(idx, axis=0, out=thread_rows("rows", K, d, dtype), mode="clip")
    g = total if steps == 1 else thread_rows("grad", K, d, dtype)
    step = dtype.type(lr)
    for k in range(steps):
        if diagonal:
            np.multiply(a, e, out=g)
        else:
            g[...] = grouped_matvec(A, idx, e)
        if add_noise is not None:
            add_noise(g)
        if correction is not None:
            g += correction
        if steps == 1:
            break
        if k == 0:
            total[...] = g
        else:
            total += g
        if k + 1 < steps:
            g *= step
            e -= g
    return total


def fused_coefficients(a: np.ndarray, lr: float, steps: int, noise_sd: float,
                       dtype: np.dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""For diagonal Hessians ``a`` ``(n, d)`` (float64): the gain :math:`S_1 a_i`,
    :math:`S_1` and the noise scale :math:`\sigma_\xi\sqrt{S_2}`, in ``dtype``, with
    :math:`S_q = \sum_{j<\tau} m^{qj}`, :math:`m = 1 - \eta a_i`."""
    m = 1.0 - lr * a
    s1 = np.zeros_like(a)
    s2 = np.zeros_like(a)
    power = np.ones_like(a)
    for _ in range(steps):
        s1 += power
        s2 += power * power
        power = power * m
    return ((s1 * a).astype(dtype), s1.astype(dtype), (noise_sd * np.sqrt(s2)).astype(dtype))


def fused_step_rows(coefficients: tuple[np.ndarray, np.ndarray, np.ndarray], c: np.ndarray,
                    idx: np.ndarray, y: np.ndarray, out: np.ndarray,
                    correction: np.ndarray | None, normals: np.ndarray | None,
                    noise_sd: float) -> np.ndarray:
    r""":math:`\Delta_k = S_1 a_i (y_k - c_i) + S_1 u_k + \sigma_\xi\sqrt{S_2}\, z_k`
    (:math:`i = c_k`) into ``out`` ``(K, d)``, from :func:`fused_coefficients`; ``normals``
    :math:`z` is overwritten."""
    gain, s1, sd = coefficients
    K, d = out.shape
    dtype = out.dtype
    minus_rows(y, c, idx, out)
    aux = thread_rows("rows", K, d, dtype)
    out *= gain.take(idx, axis=0, out=aux, mode="clip")  # S1 a (y - c)
    if correction is not None:
        s1.take(idx, axis=0, out=aux, mode="clip")
        aux *= correction
        out += aux  # + S1 u
    if normals is not None and noise_sd > 0:
        normals *= sd.take(idx, axis=0, out=aux, mode="clip")
        out += normals
    return out
