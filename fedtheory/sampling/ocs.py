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

The appendix (Lemma 20) prints the same formula with :math:`u_{(j)}` the *j-th largest*;
:func:`closed_form_as_printed` implements both readings literally (claim ``ocs.closed_form``
checks them against cvxpy).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

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
    """
    try:
        u = np.asarray(norms, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"norms must be an array of real numbers, got {norms!r}") from None
    if u.ndim not in (1, 2):
        raise ValueError(f"norms must be 1-D (n,) or 2-D (rounds, n), got shape {u.shape}")
    if u.size == 0:
        raise ValueError(f"norms must be non-empty, got shape {u.shape}")
    bad = ~np.isfinite(u)
    if bad.any():
        raise ValueError(f"norms must be finite, got {float(u[bad].ravel()[0])!r}")
    if (u < 0).any():
        raise ValueError(f"norms must be non-negative, got {float(u[u < 0].ravel()[0])!r}")
    n = u.shape[-1]
    if isinstance(m, (bool, np.bool_)):
        raise ValueError(f"m must be a real number, got {m!r}")
    try:
        m_f = float(m)
    except (TypeError, ValueError):
        raise ValueError(f"m must be a real number, got {m!r}") from None
    if not np.isfinite(m_f) or m_f <= 0 or m_f > n:
        raise ValueError(f"m must satisfy 0 < m <= n = {n}, got {m!r}")
    return u, m_f


def validate_probabilities(p: np.ndarray | Sequence[float], shape: tuple[int, ...]) -> np.ndarray:
    """Check that ``p`` has the given shape and entries in :math:`[0, 1]`; return it as floats."""
    try:
        q = np.asarray(p, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"p must be an array of real numbers, got {p!r}") from None
    if q.shape != tuple(shape):
        raise ValueError(f"p must have shape {tuple(shape)} (that of norms), got {q.shape}")
    bad = ~np.isfinite(q) | (q < 0) | (q > 1)
    if bad.any():
        raise ValueError(f"p must be in [0, 1], got {float(q[bad].ravel()[0])!r}")
    return q


def _threshold(u: np.ndarray, m: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Return ``(l, u_(l), S_l)`` per row (arrays with the row shape ``u.shape[:-1]``).

    Only :math:`l > n - m` is admissible, so the :math:`T = \lfloor m\rfloor + 1` largest
    norms are the only ones that can be :math:`u_{(l)}`; when :math:`T \ll n` a partition
    (:math:`O(n)`) replaces the full sort, and the prefix sums start from the exact sum of
    the :math:`n - T` smaller norms (no cancellation).
    """
    n = u.shape[-1]
    t = min(n, int(np.floor(m)) + 1)
    if 8 * t <= n:
        part = np.partition(u, n - t, axis=-1)
        low = part[..., : n - t].sum(axis=-1)
        s = np.sort(part[..., n - t :], axis=-1)
        csum = np.cumsum(s, axis=-1)
        csum += low[..., None]
        first = n - t + 1  # the l of s[..., 0]
    else:
        s = np.sort(u, axis=-1)
        csum = np.cumsum(s, axis=-1)
        first = 1
    # g(l) = (m + l - n) u_(l) - S_l is non-decreasing where m + l - n > 0, so the admissible
    # l (g(l) <= 0) form an interval that starts at l_min = n - ceil(m) + 1 (there
    # (m + l - n) u_(l) <= u_(l) <= S_l); bisect for its end, per row.
    k_lo = int(np.floor(n - m)) + 1 - first  # index of l_min in s
    rows = s.shape[:-1]
    lo = np.full(rows, k_lo, dtype=np.intp)
    hi = np.full(rows, s.shape[-1], dtype=np.intp)
    while True:
        active = hi - lo > 1
        if not np.any(active):
            break
        mid = np.where(active, (lo + hi) // 2, lo)
        coef = m + (mid + first) - n
        s_mid = np.take_along_axis(s, mid[..., None], axis=-1)[..., 0]
        c_mid = np.take_along_axis(csum, mid[..., None], axis=-1)[..., 0]
        ok = coef * s_mid <= c_mid * (1.0 + _THRESHOLD_RTOL)
        lo = np.where(active & ok, mid, lo)
        hi = np.where(active & ~ok, mid, hi)
    s_l = np.take_along_axis(s, lo[..., None], axis=-1)[..., 0]
    # extend over ties with u_(l) (only rounding can stop the largest l inside a tie block)
    if s.ndim == 1:
        k = np.searchsorted(s, s_l, side="right") - 1
    else:
        k = np.sum(s <= s_l[..., None], axis=-1) - 1
    sum_l = np.take_along_axis(csum, np.asarray(k)[..., None], axis=-1)[..., 0]
    return k + first, s_l, sum_l


def ocs_threshold(norms: np.ndarray | Sequence[float], m: float) -> np.ndarray | int:
    """The integer :math:`l` of eq. (7): how many of the smallest norms get :math:`p < 1`.

    >>> ocs_threshold([1.0, 1.0, 10.0], 2)
    2
    """
    u, m = validate_norms(norms, m)
    ell, _, _ = _threshold(u, m)
    return int(ell) if u.ndim == 1 else ell


def optimal_probabilities(norms: np.ndarray | Sequence[float], m: float) -> np.ndarray:
    r"""Optimal independent-sampling probabilities of eq. (7), exact, :math:`O(n \log n)`.

    .. math::

        p_i = \min\Big\{1,\ (m + l - n)\,\frac{u_i}{\sum_{j\le l} u_{(j)}}\Big\}

    with :math:`l` as in the module docstring (:math:`p_i = 1` exactly for the :math:`n-l`
    largest norms, :math:`p_i = 0` for zero norms).

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
    """
    u, m = validate_norms(norms, m)
    ell, s_l, sum_l = _threshold(u, m)
    n = u.shape[-1]
    coef = (m + ell - n)[..., None]
    safe = np.where(sum_l > 0, sum_l, 1.0)[..., None]
    # u / S_l <= 1 for the l smallest: no overflow even for subnormal sums; 0 / S_l = 0
    below = u <= s_l[..., None]
    return np.where(below, np.minimum(coef * (np.where(below, u, 0.0) / safe), 1.0), 1.0)


def independent_sampling_variance(
    norms: np.ndarray | Sequence[float], p: np.ndarray | Sequence[float]
) -> np.ndarray | float:
    r"""The aggregation variance of independent sampling, eq. (6) of seed 002.

    .. math:: V(p) = \sum_i \frac{1 - p_i}{p_i}\, u_i^2

    with :math:`u_i = w_i\|\mathbf U_i\|`. A zero norm contributes 0 whatever :math:`p_i`
    (its update is zero); a non-zero norm with :math:`p_i = 0` gives :math:`+\infty` (the
    estimator is then biased: that client is never heard).

    >>> independent_sampling_variance([1.0, 2.0], [0.5, 1.0])
    1.0
    >>> independent_sampling_variance([0.0, 2.0], [0.0, 1.0])
    0.0
    """
    u, _ = validate_norms(norms, 1.0)
    q = validate_probabilities(p, u.shape)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # ((1 - q) u) (u / q): u / q stays finite where (1 - q) / q would overflow (tiny q)
        terms = np.where(u > 0, ((1.0 - q) * u) * (u / q), 0.0)
    out = terms.sum(axis=-1)
    return float(out) if u.ndim == 1 else out


def optimal_variance(norms: np.ndarray | Sequence[float], m: float) -> np.ndarray | float:
    r"""The optimum of the sampling problem, in the form derived in Appendix B of seed 002.

    .. math::

        V^\star = \frac{1}{m - (n - l)}\Big(\sum_{i\le l} u_{(i)}\Big)^2
        - \sum_{i\le l} u_{(i)}^2

    (:math:`u_{(i)}` sorted increasingly, :math:`l` as in eq. (7); 0 when the :math:`l`
    smallest norms are all zero), evaluated as the equal sum of non-negative terms
    :math:`\sum_{i\le l} u_{(i)}\,(t - u_{(i)})`, :math:`t = \sum_{j\le l}u_{(j)}/(m+l-n)`,
    which avoids cancellation.

    >>> optimal_variance([1.0, 1.0, 10.0], 2)
    2.0
    >>> optimal_variance([3.0, 0.0, 0.0], 1)
    0.0
    """
    u, m = validate_norms(norms, m)
    ell, s_l, sum_l = _threshold(u, m)
    n = u.shape[-1]
    # the same value as sum_{i<=l} u_(i) (t - u_(i)), t = S_l/(m+l-n) >= u_(l): a sum of
    # non-negative terms, free of the cancellation S_l^2/(m+l-n) - Q_l suffers when one
    # norm dominates
    t = (sum_l / (m + ell - n))[..., None]
    v = np.where(u <= s_l[..., None], u, 0.0)
    val = np.sum(v * np.maximum(t - v, 0.0), axis=-1)
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
    The result is *not* checked for feasibility: that is what the claims test.

    Returns
    -------
    (p, l)
        The printed probabilities (a list, same number type) and the integer :math:`l`.

    >>> closed_form_as_printed([1, 1, 10], 2, "smallest")
    ([0.5, 0.5, 1], 2)
    >>> from fractions import Fraction
    >>> closed_form_as_printed([Fraction(1), Fraction(2)], 2, "largest")
    ([Fraction(2, 3), Fraction(4, 3)], 2)
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
    srt = sorted(values, reverse=(ordering == "largest"))
    ell = None
    for cand in range(1, n + 1):
        total = sum(srt[:cand][1:], srt[0])
        if 0 < m + cand - n and m + cand - n <= total / srt[cand - 1]:
            ell = cand
    if ell is None:  # cannot happen for positive norms (l = n - ceil(m) + 1 qualifies)
        raise ValueError(f"no admissible l for norms={values!r}, m={m!r}")
    total_l = sum(srt[:ell][1:], srt[0])
    p: list[Any] = []
    for v in values:
        in_a = ell < n and v >= srt[ell]
        p.append(1 if in_a else (m + ell - n) * v / total_l)
    return p, ell
