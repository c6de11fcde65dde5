r"""Tolerances for floating-point results that depend on the order of a summation.

One mathematical sum :math:`s = \sum_{k=1}^{n} t_k` (a matrix product, a dot product, a
reduction) is accumulated in different orders by different BLAS kernels (OpenBLAS picks one
per CPU: Prescott, Haswell, SkylakeX, Zen, ...), by different thread counts, block sizes and
array shapes (a block of one row versus all rows at once), and with or without fused
multiply-adds. Each order gives a correctly computed but different last bit; where the terms
cancel (an entry near zero) the *relative* difference is large. A comparison that is
bit-for-bit, or relative only (``atol=0``), then passes on one machine and fails on another.

The bound (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §3.1 and
§3.5): in *any* order,

.. math::

    |\mathrm{fl}(s) - s| \le \gamma_{n-1} \sum_k |t_k|, \qquad
    \gamma_m = \frac{m u}{1 - m u},\quad u = \varepsilon / 2,

(:math:`\gamma_n` for a dot product :math:`\sum_k x_k y_k` with :math:`t_k = x_k y_k`), so two
evaluations differ by at most :math:`\approx n\,\varepsilon \sum_k |t_k|`. The worst case is
attained only by adversarial data; rounding errors of a sum behave like a random walk and
grow like :math:`\sqrt n\, u`. These helpers therefore compare with

.. math::

    |a - b| \le \text{factor}\cdot\varepsilon\cdot\sum_k |t_k| \qquad\text{(elementwise)},

``factor = 64`` by default: above :math:`\sqrt n` for any :math:`n` up to 4096 terms, still
about :math:`10^{-14}` relative to the magnitude of the terms. An entry whose terms do not
cancel is thus checked to about 14 digits; an entry that is the small difference of large
terms is checked to the digits that the computation actually determines, on any machine.

When the inputs of the sum are themselves computed by BLAS (e.g. logits before a softmax),
their own rounding enters too: include it in ``terms_abs_sum`` or use a bound on the
terms' magnitude that dominates it (see the callers). Sums of non-negative terms (squared
norms, losses, probabilities) have :math:`\sum_k |t_k| = s`: pass the value itself.
Multi-step computations (recursions over rounds) have no single sum to bound entry by entry:
:func:`assert_close_normwise` compares them relative to the size of the whole result.

``tests/test_suite_hygiene.py`` rejects comparisons with ``atol=0`` and a tiny ``rtol``
unless they carry ``# bit-identical: <reason>`` or ``# relative: <reason>``;
``tests/test_blas_invariance.py`` checks these tolerances under other BLAS kernels and
thread counts.
"""

from __future__ import annotations

import numpy as np

__all__ = ["DEFAULT_FACTOR", "assert_close_normwise", "assert_close_sum", "sum_tolerance"]

#: Multiple of machine epsilon times the sum of absolute terms (see the module docstring).
DEFAULT_FACTOR = 64


def sum_tolerance(terms_abs_sum: np.ndarray | float, *, factor: float = DEFAULT_FACTOR,
                  dtype: np.dtype | type = np.float64) -> np.ndarray:
    r"""The absolute tolerance ``factor * eps(dtype) * terms_abs_sum`` (elementwise)."""
    return factor * float(np.finfo(dtype).eps) * np.asarray(terms_abs_sum, dtype=float)


def assert_close_sum(actual: np.ndarray, expected: np.ndarray,
                     terms_abs_sum: np.ndarray | float, *, factor: float = DEFAULT_FACTOR,
                     dtype: np.dtype | type | None = None, err_msg: str = "") -> None:
    r"""Assert ``|actual - expected| <= factor * eps * terms_abs_sum`` elementwise.

    ``actual`` and ``expected`` (broadcast together) are two evaluations of the same sums (in
    different orders); ``terms_abs_sum`` is, per entry, :math:`\sum_k |t_k|` over the terms
    of its sum (or an upper bound), broadcastable to their shape; ``eps`` is that of
    ``dtype`` (default: the result dtype of ``actual`` and ``expected``). NaNs must match;
    infinities must be equal.
    """
    a, e = _pair(actual, expected, err_msg)
    if dtype is None:
        dtype = np.result_type(a.dtype, e.dtype)
        if not np.issubdtype(dtype, np.floating):
            dtype = np.float64
    eps = float(np.finfo(dtype).eps)
    terms = np.broadcast_to(np.asarray(terms_abs_sum, dtype=float), a.shape)
    _assert_within(a, e, factor * eps * terms, f"{factor} * eps * sum|terms|", err_msg,
                   scale=eps * terms, unit="eps * sum|terms|")


def assert_close_normwise(actual: np.ndarray, expected: np.ndarray, rtol: float, *,
                          axis: int | None = None, err_msg: str = "") -> None:
    r"""Assert ``|actual - expected| <= rtol * max|expected|`` elementwise, the maximum taken
    over ``axis`` (over everything by default): a *norm-wise* relative comparison.

    For results of multi-step computations (recursions over rounds, trajectories) there is no
    single sum to bound entry by entry; their rounding errors are bounded relative to the size
    of the quantities involved (:math:`\|\Delta\|_\infty \le c\,\varepsilon\,\|x\|_\infty`).
    An entry much smaller than the largest one carries an error of the size of the largest
    (times eps), so a relative comparison alone (``atol=0``) is machine-dependent there; on
    the largest entries this is the relative comparison with ``rtol``, elsewhere it is looser.
    """
    a, e = _pair(actual, expected, err_msg)
    mag = np.abs(e.astype(float))
    top = np.max(mag, axis=axis, keepdims=True) if mag.ndim else mag
    _assert_within(a, e, rtol * top, f"rtol * max|expected|, rtol={rtol:g}", err_msg,
                   scale=top, unit="max|expected|")


def _pair(actual: np.ndarray, expected: np.ndarray, err_msg: str
          ) -> tuple[np.ndarray, np.ndarray]:
    """The two arrays broadcast together (as numpy.testing.assert_allclose does)."""
    a, e = np.asarray(actual), np.asarray(expected)
    try:
        return np.broadcast_arrays(a, e)
    except ValueError:
        raise AssertionError(f"shapes differ: actual {a.shape}, expected {e.shape}. {err_msg}"
                             ) from None


def _assert_within(a: np.ndarray, e: np.ndarray, tol: np.ndarray, rule: str, err_msg: str,
                   scale: np.ndarray, unit: str) -> None:
    """Raise if ``|a - e| > tol`` anywhere (NaNs must match, infinities be equal), naming the
    worst entry and its difference in units of ``scale``."""
    a64, e64 = a.astype(float), e.astype(float)
    tol = np.broadcast_to(tol, a.shape)
    scale = np.broadcast_to(scale, a.shape)
    with np.errstate(invalid="ignore"):
        err = np.abs(a64 - e64)
        ok = (err <= tol) | (np.isnan(a64) & np.isnan(e64)) | (np.isinf(a64) & (a64 == e64))
    if ok.all():
        return
    bad = ~ok
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(bad, np.nan_to_num(err / scale, nan=np.inf), -1.0)
    worst = np.unravel_index(int(np.argmax(ratio)), a.shape) if a.ndim else ()
    raise AssertionError(
        f"{int(bad.sum())} of {a.size} entries differ by more than {rule}. {err_msg}\n"
        f"worst at index {tuple(int(i) for i in worst)}: actual {float(a64[worst])!r}, expected "
        f"{float(e64[worst])!r}, |difference| {float(err[worst]):.3g}, tolerance "
        f"{float(tol[worst]):.3g} (difference = {float(ratio[worst]):.3g} {unit})"
    )
