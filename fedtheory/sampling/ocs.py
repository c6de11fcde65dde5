r"""Optimal Client Sampling (seed 002, eq. (6), eq. (7) and Lemma 20).

Given the norms :math:`u_i = \|\tilde U_i\| = w_i\|\mathbf U_i\|` of the weighted client updates
and a budget :math:`m` on the expected number of participants, independent sampling with
probabilities :math:`p_i` has aggregation variance (eq. (6))

.. math::

    V(p) = \sum_{i=1}^n \frac{1-p_i}{p_i}\,u_i^2 ,

and the optimal client sampling solves

.. math::

    \min_{p}\ V(p) \quad\text{s.t.}\quad 0 \le p_i \le 1,\ \ \sum_i p_i \le m .

With :math:`u_{(1)} \le \dots \le u_{(n)}` sorted increasingly (the main text's "j-th smallest")
and :math:`l` the largest integer with

.. math::

    0 < m + l - n \quad\text{and}\quad (m + l - n)\, u_{(l)} \le \sum_{j\le l} u_{(j)}

(the seed's :math:`0 < m+l-n \le \sum_{j \le l} u_{(j)}/u_{(l)}`, multiplied out so that it
also reads for zero norms), the solution is

.. math::

    p_i = \begin{cases} (m + l - n)\, u_i / \sum_{j \le l} u_{(j)}, & u_i \le u_{(l)},\\
    1, & u_i > u_{(l)} .\end{cases}

Degenerate inputs get the mathematically right answer: a zero norm contributes no variance,
so it gets :math:`p_i = 0` (never NaN, also when :math:`\sum_{j\le l}u_{(j)} = 0`); when
:math:`m` is at least the number of non-zero norms, every non-zero norm gets :math:`p_i = 1`;
ties never straddle the threshold (at a tie :math:`u_{(l)} = u_{(l+1)}` the condition holds at
:math:`l+1` too, so the largest :math:`l` ends a block of ties).

Scale: the probabilities are invariant under :math:`u \mapsto \lambda u`, and the code keeps
them so in floating point. A row whose prefix sums could overflow (:math:`n \max_i u_i \ge
2^{1022}`), or whose decisive threshold comparisons would be rounded in the subnormal range, is
first multiplied by a power of two :math:`2^k` chosen from its largest norm. That is exact, and
elsewhere floating-point arithmetic commutes with it, so the result is bitwise the same as for
the unscaled row whenever the latter neither overflows nor underflows: huge norms
(``1e308``), mixtures of huge and tiny ones and subnormal ones get the right answer, and
:math:`2^k u` gets the same probabilities as :math:`u` wherever :math:`2^k u` is exact. The
variances (which scale like :math:`u^2`) are assembled from mantissas and binary exponents
(:func:`numpy.frexp`), so that no intermediate step overflows or underflows: they are
:math:`+\infty` only when the true value is beyond the float range.

The appendix (Lemma 20) prints the same formula with :math:`u_{(j)}` the *j-th largest*;
:func:`closed_form_as_printed` implements both readings literally (claim ``ocs.closed_form``
checks them against cvxpy).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory.validation import probabilities, real_array

__all__ = [
    "closed_form_as_printed",
    "independent_sampling_variance",
    "ocs_threshold",
    "optimal_probabilities",
    "optimal_variance",
    "validate_norms",
    "validate_probabilities",
]

#: Relative slack in the threshold test :math:`(m+l-n)u_{(l)} \le S_l`: a few thousand ulps, so
#: that rounding in the prefix sums never splits a block of equal norms.
_THRESHOLD_RTOL = 1e-12

#: Working units: a row is rescaled when :math:`n \max_i u_i` could reach :math:`2^{1022}`, so
#: that every prefix sum, every product :math:`(m+l-n)u_{(l)} \le n \max_i u_i` and the slack
#: :math:`S_l(1 + \text{rtol})` stay a factor 2 below the overflow threshold :math:`2^{1024}`.
_TOP_EXPONENT = 1022

#: :func:`closed_form_as_printed` evaluates float norms below this in exact arithmetic: with
#: them, products and quotients may round in the subnormal range.
_TINY_FLOAT_NORM = 2.0**-960

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


def ocs_threshold(norms: np.ndarray | Sequence[float], m: float) -> np.ndarray | int:
    """The integer :math:`l` of eq. (7): how many of the smallest norms get :math:`p < 1`.

    Scale-invariant, like the probabilities (see the module docstring).

    >>> ocs_threshold([1.0, 1.0, 10.0], 2)
    2
    >>> ocs_threshold([1e308, 1e308, 1.5e308], 2)
    3
    """
    u, m, umax = _check_norms(norms, m)
    ell, _, _, _ = _threshold_scaled(u, m, umax)
    return int(ell) if u.ndim == 1 else ell


def optimal_probabilities(norms: np.ndarray | Sequence[float], m: float) -> np.ndarray:
    r"""Optimal independent-sampling probabilities of eq. (7), exact; :math:`O(n \log n)`
    (:math:`O(n)` expected for long rows: a partition or a selection replaces the sort).

    .. math::

        p_i = \min\Big\{1,\ (m + l - n)\,\frac{u_i}{\sum_{j\le l} u_{(j)}}\Big\}

    with :math:`l` as in the module docstring (:math:`p_i = 1` exactly for the :math:`n-l`
    largest norms, :math:`p_i = 0` for zero norms). Invariant under :math:`u \mapsto
    \lambda u`, also in floating point at the ends of the range (see the module docstring).

    Parameters
    ----------
    norms:
        Norms :math:`u_i = \|\tilde U_i\| \ge 0`, shape ``(n,)``, or ``(rounds, n)`` for many
        rounds at once (each row solved independently).
    m:
        Budget on the expected number of participants, :math:`0 < m \le n` (may be
        fractional).

    Returns
    -------
    numpy.ndarray
        Probabilities with the shape of ``norms``, in :math:`[0, 1]`, summing to
        :math:`\min(m, \#\{u_i > 0\})` per row.

    Examples
    --------
    >>> optimal_probabilities([1.0, 1.0, 2.0], 1.5)
    array([0.375, 0.375, 0.75 ])
    >>> optimal_probabilities([1.0, 1.0, 10.0], 2)
    array([0.5, 0.5, 1. ])
    >>> optimal_probabilities([0.0, 3.0, 1.0], 2)
    array([0., 1., 1.])
    >>> optimal_probabilities([[0.0, 0.0], [1.0, 3.0]], 1)
    array([[0.  , 0.  ],
           [0.25, 0.75]])

    Huge, tiny and subnormal norms (whose sums overflow or lose bits) give the same answer as
    moderate ones:

    >>> optimal_probabilities([1e308, 1e308], 1)
    array([0.5, 0.5])
    >>> optimal_probabilities([5e-324, 5e-324], 1)
    array([0.5, 0.5])
    >>> optimal_probabilities([1e308, 1e-300, 2e-300], 2)
    array([1.        , 0.33333333, 0.66666667])
    >>> optimal_probabilities([[0.5e308, 1.5e308], [1e-310, 3e-310]], 1)
    array([[0.25, 0.75],
           [0.25, 0.75]])
    """
    u, m, umax = _check_norms(norms, m)
    ell, s_l, sum_l, shift = _threshold_scaled(u, m, umax)
    return _probabilities(_working_norms(u, shift), m, ell, s_l, sum_l)


def _frexp(x: Any) -> tuple[np.ndarray, np.ndarray]:
    """:func:`numpy.frexp` with int64 exponents (sums of exponents never wrap)."""
    f, e = np.frexp(x)
    return f, e.astype(np.int64)


def _ldexp(f: Any, e: Any) -> Any:
    r""":math:`f\,2^e`, rounded once: :math:`\pm\infty` beyond the float range, silently."""
    with np.errstate(over="ignore", under="ignore"):
        return np.ldexp(f, e)


def independent_sampling_variance(
    norms: np.ndarray | Sequence[float], p: np.ndarray | Sequence[float]
) -> np.ndarray | float:
    r"""The aggregation variance of independent sampling, eq. (6) of seed 002.

    .. math:: V(p) = \sum_i \frac{1 - p_i}{p_i}\, u_i^2

    with :math:`u_i = w_i\|\mathbf U_i\|`. A zero norm contributes 0 whatever :math:`p_i`
    (its update is zero); a non-zero norm with :math:`p_i = 0` gives :math:`+\infty` (the
    estimator is then biased: that client is never heard). Each term is assembled from
    mantissas and binary exponents, :math:`u_i = f_i 2^{e_i}`, :math:`p_i = g_i 2^{k_i}`,

    .. math:: \frac{1 - p_i}{p_i}\,u_i^2 = \frac{(1 - p_i) f_i^2}{g_i}\; 2^{2e_i - k_i},

    so that :math:`u_i^2` or :math:`u_i/p_i` never overflows on the way: the result is
    :math:`+\infty` only when :math:`V(p)` is beyond the float range.

    >>> independent_sampling_variance([1.0, 2.0], [0.5, 1.0])
    1.0
    >>> independent_sampling_variance([0.0, 2.0], [0.0, 1.0])
    0.0
    >>> independent_sampling_variance([1e200, 1e200], [1.0, 1.0])
    0.0
    >>> independent_sampling_variance([1e-15], [5e-324])  # u / p alone would overflow
    2.0240225330731064e+293
    """
    u, _ = validate_norms(norms, 1.0)
    q = validate_probabilities(p, u.shape)
    uf, ue = _frexp(u)
    qf, qe = _frexp(q)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        mant = (1.0 - q) * uf * uf / qf  # in [0, 2); +inf where q = 0 < u
        terms = np.where(u > 0, _ldexp(mant, 2 * ue - qe), 0.0)
        out = terms.sum(axis=-1)
    return float(out) if u.ndim == 1 else out


def _optimal_variance_parts(u: np.ndarray, m: float,
                            umax: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Mantissa and binary exponent of :math:`V^\star` per row: :math:`V^\star = f\,2^e`.

    .. math:: V^\star = \frac{S_l}{c}\,W,\qquad W = \sum_i u_i (1 - p_i),\qquad c = m + l - n,

    with :math:`p` the optimal probabilities (:math:`u_i/p_i = S_l/c` for the :math:`l`
    smallest norms, :math:`1 - p_i = 0` for the others), evaluated in the working units of
    :func:`_threshold_scaled` and assembled from mantissas and exponents.
    """
    ell, s_l, sum_l, shift = _threshold_scaled(u, m, umax)
    w = _working_norms(u, shift)
    p = _probabilities(w, m, ell, s_l, sum_l)
    np.subtract(1.0, p, out=p)
    # W = sum_i u_i (1 - p_i) with each row's maximum brought into [1/2, 1) (exact): the
    # products cannot fall into the subnormal range however small the norms are
    eu = _frexp(umax)[1]
    p *= np.ldexp(u, -eu[..., None])
    sf, se = _frexp(sum_l)
    wf, we = _frexp(p.sum(axis=-1))  # sum of n terms <= 1: no overflow
    cf, ce = _frexp(m + (np.asarray(ell) - u.shape[-1]))
    exp = se + we + eu - ce
    if shift is not None:
        exp = exp - shift  # S_l in working units: 2**shift too large; W in units of u
    return sf * wf / cf, exp


def optimal_variance(norms: np.ndarray | Sequence[float], m: float) -> np.ndarray | float:
    r"""The optimum of the sampling problem, in the form derived in Appendix B of seed 002.

    .. math::

        V^\star = \frac{1}{m - (n - l)}\Big(\sum_{i\le l} u_{(i)}\Big)^2
        - \sum_{i\le l} u_{(i)}^2

    (:math:`u_{(i)}` sorted increasingly, :math:`l` as in eq. (7); 0 when the :math:`l`
    smallest norms are all zero), evaluated as the equal sum of non-negative terms

    .. math::

        V^\star = \sum_{i \le l} u_{(i)}\,(t - u_{(i)}) = t \sum_i u_i\,(1 - p_i),\qquad
        t = \frac{\sum_{j\le l}u_{(j)}}{m+l-n},

    with :math:`p` the optimal probabilities of eq. (7) (:math:`p_i = u_i / t` for the
    :math:`l` smallest, 1 for the others), which avoids cancellation. :math:`t` and the sum are
    formed in the scale-safe working units of :func:`optimal_probabilities` and multiplied
    through mantissas and binary exponents: the result is :math:`+\infty` only when
    :math:`V^\star` is beyond the float range.

    >>> optimal_variance([1.0, 1.0, 10.0], 2)
    2.0
    >>> optimal_variance([3.0, 0.0, 0.0], 1)
    0.0
    >>> optimal_variance([1e308, 1e308], 2), optimal_variance([1e200, 1e200], 1)
    (0.0, inf)
    >>> optimal_variance([1e-160, 1e-160, 2e-160], 1.5) == optimal_variance([1, 1, 2], 1.5) * 1e-320
    True
    """
    u, m, umax = _check_norms(norms, m)
    val = _ldexp(*_optimal_variance_parts(u, m, umax))
    return float(val) if u.ndim == 1 else val


def closed_form_as_printed(
    norms: Sequence[Any], m: Any, ordering: str = "smallest"
) -> tuple[list[Any], int]:
    r"""Eq. (7) / (33) of seed 002 exactly as printed, for small positive inputs.

    A literal, loop-based transcription (no safeguards), generic in the number type so that
    it runs on floats, :class:`fractions.Fraction` or sympy ``Rational`` s:

    * :math:`u_{(j)}` is the j-th smallest norm (``ordering="smallest"``, main text, eq. (7))
      or the j-th largest (``ordering="largest"``, Appendix B, Lemma 20);
    * :math:`l` is the largest integer with
      :math:`0 < m + l - n \le \sum_{i\le l} u_{(i)} / u_{(l)}`;
    * :math:`A = \{i : u_i \ge u_{(l+1)}\}` (empty when :math:`l = n`);
    * :math:`p_i = 1` for :math:`i \in A`, else :math:`(m+l-n)\,u_i/\sum_{j\le l}u_{(j)}`.

    The printed inequality divides by :math:`u_{(l)}`, so every norm must be positive.
    The result is *not* checked for feasibility: that is what the claims test. Float norms so
    large that their sums could overflow (:math:`n\max_i u_i \ge 2^{1022}`), or so small that
    products with them round in the subnormal range (below :math:`2^{-960}`), are evaluated in
    exact rational arithmetic and the probabilities rounded back to floats, so that they get
    the printed formula's value rather than an overflow or underflow artefact.

    Returns
    -------
    (p, l)
        The printed probabilities (a list, same number type) and the integer :math:`l`.

    >>> closed_form_as_printed([1, 1, 10], 2, "smallest")
    ([0.5, 0.5, 1], 2)
    >>> from fractions import Fraction
    >>> closed_form_as_printed([Fraction(1), Fraction(2)], 2, "largest")
    ([Fraction(2, 3), Fraction(4, 3)], 2)
    >>> closed_form_as_printed([1e308, 1e308], 1)
    ([0.5, 0.5], 2)
    >>> closed_form_as_printed([5e-324, 1e-323, 1.5e-323], 1.5)
    ([0.25, 0.5, 0.75], 3)
    """
    if ordering not in ("smallest", "largest"):
        raise ValueError(f"ordering must be 'smallest' or 'largest', got {ordering!r}")
    values = list(norms)
    n = len(values)
    if n == 0:
        raise ValueError("norms must be non-empty, got []")
    for v in values:
        if not v > 0:
            raise ValueError(f"norms must be positive (the printed formula divides by them), "
                             f"got {v!r}")
    if not (0 < m <= n):
        raise ValueError(f"m must satisfy 0 < m <= n = {n}, got {m!r}")
    if (all(isinstance(v, (float, np.floating)) for v in values)
            and (math.frexp(float(max(values)))[1] > _top_exponent(n)
                 or float(min(values)) < _TINY_FLOAT_NORM)):
        p_exact, ell = closed_form_as_printed([Fraction(float(v)) for v in values],
                                              Fraction(float(m)), ordering)
        return [x if isinstance(x, int) else float(x) for x in p_exact], ell
    srt = sorted(values, reverse=(ordering == "largest"))
    ell = None
    for cand in range(1, n + 1):
        total = sum(srt[:cand][1:], srt[0])
        coef = m + (cand - n)  # m + l - n (the integer part first: a tiny m is kept)
        if 0 < coef and coef <= total / srt[cand - 1]:
            ell = cand
    if ell is None:  # cannot happen for positive norms (l = n - ceil(m) + 1 qualifies)
        raise ValueError(f"no admissible l for norms={values!r}, m={m!r}")
    total_l = sum(srt[:ell][1:], srt[0])
    p: list[Any] = []
    for v in values:
        in_a = ell < n and v >= srt[ell]
        p.append(1 if in_a else (m + (ell - n)) * v / total_l)
    return p, ell
