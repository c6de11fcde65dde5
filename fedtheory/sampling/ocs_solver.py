r"""The threshold :math:`l` of eq. (7) of seed 002 (:mod:`fedtheory.sampling.ocs`): the checks of
the norms and the budget, the KKT solution's threshold (by sort, or by selection for long rows
with a large budget) in scale-safe working units, the probabilities from it, and the mantissa /
binary-exponent helpers the variances are assembled with."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from fedtheory.validation import probabilities, real_array

__all__ = ["validate_norms", "validate_probabilities"]

#: Relative slack in the threshold test :math:`(m+l-n)u_{(l)} \le S_l`: a few thousand ulps, so
#: that rounding in the prefix sums never splits a block of equal norms.
_THRESHOLD_RTOL = 1e-12

#: Working units: a row is rescaled when :math:`n \max_i u_i` could reach :math:`2^{1022}`, so
#: that every prefix sum, every product :math:`(m+l-n)u_{(l)} \le n \max_i u_i` and the slack
#: :math:`S_l(1 + \text{rtol})` stay a factor 2 below the overflow threshold :math:`2^{1024}`.
_TOP_EXPONENT = 1022

#: A decisive threshold product :math:`(m+l-n)u_{(l)}` below this may have lost bits to gradual
#: underflow (the subnormal range starts at :math:`2^{-1022}`): its row is recomputed scaled up.
_TINY_PRODUCT = 2.0**-1021

#: Rows of at least this many norms with a large budget (:math:`8(\lfloor m\rfloor + 1) > n`)
#: find the threshold by selection (:func:`_threshold_select`, :math:`O(n)`) instead of a full
#: sort (:math:`O(n \log n)`); below it the sort is as fast, and vectorised over rows.
_SELECT_MIN_N = 8192


def _ceil_log2(n: int) -> int:
    r""":math:`\lceil \log_2 n \rceil` for :math:`n \ge 1`, in integer arithmetic."""
    return (int(n) - 1).bit_length()


def _top_exponent(n: int) -> int:
    """The largest binary exponent ``e`` a row maximum may have (``max < 2**e``) in working
    units: then ``n * max < 2**_TOP_EXPONENT``."""
    return _TOP_EXPONENT - _ceil_log2(n)


def _check_norms(
    norms: np.ndarray | Sequence[float], m: float
) -> tuple[np.ndarray, float, np.ndarray]:
    """:func:`validate_norms`, also returning the largest norm of each row (shape
    ``u.shape[:-1]``).

    Two reductions (max and min, into which a NaN propagates) certify finite, non-negative
    norms; only invalid input pays for the element-wise search that names the bad value.
    """
    u = real_array("norms", norms)
    if u.ndim not in (1, 2):
        raise ValueError(f"norms must be 1-D (n,) or 2-D (rounds, n), got shape {u.shape}")
    if u.size == 0:
        raise ValueError(f"norms must be non-empty, got shape {u.shape}")
    umax = u.max(axis=-1)
    if not (np.all(np.isfinite(umax)) and np.all(u.min(axis=-1) >= 0)):
        bad = ~np.isfinite(u)
        if bad.any():
            raise ValueError(f"norms must be finite, got {float(u[bad].ravel()[0])!r}")
        raise ValueError(f"norms must be non-negative, got {float(u[u < 0].ravel()[0])!r}")
    n = u.shape[-1]
    if isinstance(m, (bool, np.bool_, complex, np.complexfloating)):
        raise ValueError(f"m must be a real number, got {m!r}")
    try:
        m_f = float(m)
    except (TypeError, ValueError):
        raise ValueError(f"m must be a real number, got {m!r}") from None
    if not np.isfinite(m_f) or m_f <= 0 or m_f > n:
        raise ValueError(f"m must satisfy 0 < m <= n = {n}, got {m!r}")
    return u, m_f, umax


def validate_norms(norms: np.ndarray | Sequence[float], m: float) -> tuple[np.ndarray, float]:
    """Check ``norms`` (shape ``(n,)`` or ``(rounds, n)``) and ``m``; return them as floats.

    Raises ``ValueError`` naming the argument and the bad value: negative, NaN or infinite
    norms, empty or non-1-D/2-D input, :math:`m \\le 0`, :math:`m > n` or non-finite ``m``.

    >>> validate_norms([1, 2], 1)
    (array([1., 2.]), 1.0)
    >>> validate_norms([1, -2], 1)
    Traceback (most recent call last):
    ...
    ValueError: norms must be non-negative, got -2.0
    >>> validate_norms([1.0, float("nan")], 1)
    Traceback (most recent call last):
    ...
    ValueError: norms must be finite, got nan
    >>> validate_norms([1.0, 2j], 1)
    Traceback (most recent call last):
    ...
    ValueError: norms must be an array of real numbers, got complex values: [1.0, 2j]
    """
    u, m_f, _ = _check_norms(norms, m)
    return u, m_f


def validate_probabilities(p: np.ndarray | Sequence[float], shape: tuple[int, ...]) -> np.ndarray:
    """Check that ``p`` has the given shape (that of the norms) and entries in :math:`[0, 1]`
    (a zero norm may get :math:`p_i = 0`); return it as floats
    (:func:`fedtheory.validation.probabilities`)."""
    return probabilities("p", p, shape=tuple(shape), allow_zero=True)


def _threshold_core(w: np.ndarray, m: float) -> tuple[Any, Any, Any, Any]:
    r"""Return ``(l, u_(l), S_l, risky)`` per row (the row shape ``w.shape[:-1]``).

    Only :math:`l > n - m` is admissible, so the :math:`T = \lfloor m\rfloor + 1` largest
    norms are the only ones that can be :math:`u_{(l)}`; when :math:`T \ll n` a partition
    (:math:`O(n)`) replaces the full sort, and the prefix sums start from the exact sum of
    the :math:`n - T` smaller norms (no cancellation). Long rows with a large budget
    (:data:`_SELECT_MIN_N`) bisect by selection instead, row by row
    (:func:`_threshold_select`). ``risky`` flags rows whose two decisive
    comparisons (at :math:`l` and :math:`l+1`) had a product in the subnormal range, where
    rounding is coarse. The caller guarantees that no sum or product overflows.
    """
    n = w.shape[-1]
    t = min(n, int(np.floor(m)) + 1)
    if 8 * t > n and n >= _SELECT_MIN_N:
        if w.ndim == 1:
            return _threshold_select(w, m)
        rows = w.shape[:-1]
        ell = np.empty(rows, dtype=np.intp)
        s_l, sum_l = np.empty(rows), np.empty(rows)
        risky = np.empty(rows, dtype=bool)
        for r in np.ndindex(rows):  # each row as alone (the same bits), O(n) each
            ell[r], s_l[r], sum_l[r], risky[r] = _threshold_select(w[r], m)
        return ell, s_l, sum_l, risky
    if 8 * t <= n:
        part = np.partition(w, n - t, axis=-1)
        low = part[..., : n - t].sum(axis=-1)
        s = np.sort(part[..., n - t :], axis=-1)
        csum = np.cumsum(s, axis=-1)
        csum += low[..., None]
        first = n - t + 1  # the l of s[..., 0]
    else:
        s = np.sort(w, axis=-1)
        csum = np.cumsum(s, axis=-1)
        first = 1
    # g(l) = (m + l - n) u_(l) - S_l is non-decreasing where m + l - n > 0, so the admissible
    # l (g(l) <= 0) form an interval that starts at l_min = n - ceil(m) + 1 (there
    # (m + l - n) u_(l) <= u_(l) <= S_l); bisect for its end, per row.
    k_lo = n - math.ceil(m) + 1 - first  # index of l_min in s (n - m would round for tiny m)
    size = s.shape[-1]
    slack = 1.0 + _THRESHOLD_RTOL
    if s.ndim == 1:  # one row: the same comparisons on Python floats (no per-step array calls)
        lo, hi = k_lo, size
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if (m + (mid + first - n)) * float(s[mid]) <= float(csum[mid]) * slack:
                lo = mid
            else:
                hi = mid
        s_l = float(s[lo])
        risky = 0.0 < s_l and (m + (lo + first - n)) * s_l < _TINY_PRODUCT
        if lo + 1 < size:
            s_nx = float(s[lo + 1])
            risky = risky or (0.0 < s_nx and (m + (lo + 1 + first - n)) * s_nx < _TINY_PRODUCT)
        # extend over ties with u_(l) (only rounding can stop the largest l inside a tie block)
        k = int(np.searchsorted(s, s_l, side="right")) - 1
        return k + first, s_l, float(csum[k]), risky
    rows = s.shape[:-1]
    lo = np.full(rows, k_lo, dtype=np.intp)
    hi = np.full(rows, size, dtype=np.intp)
    while True:
        active = hi - lo > 1
        if not np.any(active):
            break
        mid = np.where(active, (lo + hi) // 2, lo)
        coef = m + (mid + first - n)
        s_mid = np.take_along_axis(s, mid[..., None], axis=-1)[..., 0]
        c_mid = np.take_along_axis(csum, mid[..., None], axis=-1)[..., 0]
        ok = coef * s_mid <= c_mid * slack
        lo = np.where(active & ok, mid, lo)
        hi = np.where(active & ~ok, mid, hi)
    s_l = np.take_along_axis(s, lo[..., None], axis=-1)[..., 0]
    nx = np.minimum(lo + 1, size - 1)
    s_nx = np.take_along_axis(s, nx[..., None], axis=-1)[..., 0]
    risky = (((s_l > 0) & ((m + (lo + first - n)) * s_l < _TINY_PRODUCT))
             | ((lo + 1 < size) & (s_nx > 0) & ((m + (nx + first - n)) * s_nx < _TINY_PRODUCT)))
    k = np.sum(s <= s_l[..., None], axis=-1) - 1  # extend over ties, as above
    sum_l = np.take_along_axis(csum, k[..., None], axis=-1)[..., 0]
    return k + first, s_l, sum_l, risky


def _threshold_select(w: np.ndarray, m: float) -> tuple[int, float, float, bool]:
    r"""``(l, u_(l), S_l, risky)`` of one row by bisection over ranks, with selection in place
    of the sort: :math:`O(n)` expected.

    The same bisection as :func:`_threshold_core` (the admissible :math:`l` form an interval
    starting at :math:`l_{\min} = n - \lceil m\rceil + 1`; its end is wanted), on a copy of
    the row that is only *partitioned*: after ``partition`` at the rank being tested, the
    entries below it are the smaller norms (in some order) and those above the larger, so
    :math:`u_{(l)}` is read off and :math:`S_l` is the running sum plus the sum of the block
    just passed. Each step partitions and sums only the block between the current bounds,
    which halves: about :math:`2n` partition work and :math:`n` additions in all, against a
    full sort. :math:`S_l` is summed block by block (pairwise within a block) instead of
    left to right through the sorted row: the same number up to rounding, and as for the
    sort, the threshold test carries a relative slack of :data:`_THRESHOLD_RTOL` for it.
    Ties: the largest :math:`l` is extended over the norms equal to :math:`u_{(l)}`.
    """
    n = w.shape[-1]
    lo = n - math.ceil(m)  # index of l_min (rank l is index l - 1)
    buf = w.copy()
    buf.partition(lo)  # buf[lo] is u_(l_min)
    s_lo = float(buf[: lo + 1].sum())
    hi = n
    slack = 1.0 + _THRESHOLD_RTOL
    while hi - lo > 1:
        mid = (lo + hi) // 2
        buf[lo + 1 : hi].partition(mid - lo - 1)  # buf[mid] is u_(mid + 1)
        s_mid = s_lo + float(buf[lo + 1 : mid + 1].sum())
        if (m + (mid + 1 - n)) * float(buf[mid]) <= s_mid * slack:
            lo, s_lo = mid, s_mid
        else:
            hi = mid
    s_l = float(buf[lo])
    risky = 0.0 < s_l and (m + (lo + 1 - n)) * s_l < _TINY_PRODUCT
    if lo + 1 < n:
        s_nx = float(buf[lo + 1])  # u_(l+1): hi = lo + 1 was a partition point
        risky = risky or (0.0 < s_nx and (m + (lo + 2 - n)) * s_nx < _TINY_PRODUCT)
        if s_nx == s_l:  # extend over ties with u_(l), as the sort path does
            ties = int(np.count_nonzero(buf[lo + 1 :] == s_l))
            lo += ties
            s_lo += ties * s_l
    return lo + 1, s_l, s_lo, bool(risky)


def _threshold_scaled(u: np.ndarray, m: float,
                      umax: np.ndarray) -> tuple[Any, Any, Any, Any]:
    r"""Return ``(l, u_(l), S_l, shift)`` per row; ``u_(l)``, ``S_l`` in working units.

    The working units of a row are :math:`2^{\text{shift}}u`: ``shift`` is None when every row
    is used as given (the usual case), else an integer array with the row shape. A row is
    scaled down when its sums could overflow, and scaled up when its decisive comparisons
    underflowed, in both cases to put its maximum just below :math:`2^{1022}/n`. Multiplying by
    a power of two is exact, and floating-point sums, products and quotients commute with it
    unless they overflow or underflow, so ``l`` and the probabilities do not depend on the
    scaling wherever the unscaled computation was free of both.
    """
    n = u.shape[-1]
    e = np.frexp(umax)[1].astype(np.int64)  # umax < 2**e (e = 0 for a zero row)
    canon = _top_exponent(n) - e  # brings the row maximum into [2**(top-1), 2**top)
    shift = np.where(canon < 0, canon, 0)  # its sums could overflow: scale down
    scaled = bool(np.any(shift))
    w = np.ldexp(u, shift[..., None]) if scaled else u
    ell, s_l, sum_l, risky = _threshold_core(w, m)
    redo = np.asarray(risky) & (canon > shift)  # rounded in the subnormal range: scale up
    if np.any(redo):
        if u.ndim == 1:
            shift = canon
            ell, s_l, sum_l, _ = _threshold_core(np.ldexp(u, canon), m)
        else:
            rows = np.flatnonzero(redo)
            shift = np.where(redo, canon, shift)
            r_ell, r_sl, r_sum, _ = _threshold_core(np.ldexp(u[rows], canon[rows, None]), m)
            ell[rows], s_l[rows], sum_l[rows] = r_ell, r_sl, r_sum
        scaled = True
    return ell, s_l, sum_l, (shift if scaled else None)


def _threshold(u: np.ndarray, m: float) -> tuple[Any, Any, Any]:
    """``(l, u_(l), S_l)`` per row in the units of ``u`` (``S_l`` is inf where it overflows);
    for callers that need the threshold itself (:mod:`fedtheory.convex.ocs`)."""
    ell, s_l, sum_l, shift = _threshold_scaled(u, m, u.max(axis=-1))
    if shift is not None:
        s_l, sum_l = _ldexp(s_l, -shift), _ldexp(sum_l, -shift)
    return ell, s_l, sum_l


def _working_norms(u: np.ndarray, shift: np.ndarray | None) -> np.ndarray:
    """``u`` in the working units of :func:`_threshold_scaled`."""
    return u if shift is None else np.ldexp(u, np.asarray(shift)[..., None])


def _probabilities(w: np.ndarray, m: float, ell: Any, s_l: Any, sum_l: Any) -> np.ndarray:
    """Eq. (7) from the threshold, in the working units ``w`` of ``s_l`` and ``sum_l``."""
    n = w.shape[-1]
    coef = np.asarray(m + (np.asarray(ell) - n), dtype=float)[..., None]  # m + l - n, rounded once
    safe = np.where(sum_l > 0, sum_l, 1.0)[..., None]
    above = w > np.asarray(s_l)[..., None]
    # u / S_l <= 1 for the l smallest (no overflow even for subnormal sums; 0 / S_l = 0);
    # above them it may overflow, harmlessly: those get exactly 1
    with np.errstate(over="ignore"):
        p = w / safe
    p *= coef
    np.minimum(p, 1.0, out=p)  # now 0 <= p <= 1 (never NaN: coef > 0, S_l > 0)
    np.maximum(p, above, out=p)  # the n - l largest norms: exactly 1 (max(p, True) = 1)
    # a tight threshold, (m + l - n) u_(l) = S_l up to rounding (e.g. m at least the number of
    # non-zero norms, all equal): the block of ties at u_(l) has p = 1 exactly, not 1 - ulp
    tight = (np.asarray(s_l) > 0) & ((coef[..., 0] * s_l) * (1.0 + _THRESHOLD_RTOL) >= sum_l)
    if np.any(tight):
        top = w == np.asarray(s_l)[..., None]
        top &= np.asarray(tight)[..., None]
        np.copyto(p, 1.0, where=top)
    return p


def _frexp(x: Any) -> tuple[np.ndarray, np.ndarray]:
    """:func:`numpy.frexp` with int64 exponents (sums of exponents never wrap)."""
    f, e = np.frexp(x)
    return f, e.astype(np.int64)


def _ldexp(f: Any, e: Any) -> Any:
    r""":math:`f\,2^e`, rounded once: :math:`\pm\infty` beyond the float range, silently."""
    with np.errstate(over="ignore", under="ignore"):
        return np.ldexp(f, e)
