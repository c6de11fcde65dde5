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

from fedtheory.sampling.ocs_solver import (
    _check_norms,
    _frexp,
    _ldexp,
    _probabilities,
    _threshold_scaled,
    _top_exponent,
    _working_norms,
    validate_norms,
    validate_probabilities,
)

__all__ = [
    "closed_form_as_printed",
    "independent_sampling_variance",
    "ocs_threshold",
    "optimal_probabilities",
    "optimal_variance",
    "validate_norms",
    "validate_probabilities",
]

#: :func:`closed_form_as_printed` evaluates float norms below this in exact arithmetic: with
#: them, products and quotients may round in the subnormal range.
_TINY_FLOAT_NORM = 2.0**-960


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
