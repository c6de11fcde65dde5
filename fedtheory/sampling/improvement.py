r"""The improvement factor :math:`\alpha` and the relative improvement factor :math:`\gamma`
(seed 002, Definition 11 and Appendix B).

For one round, with :math:`u_i = \|\tilde U_i\|`,

.. math::

    \alpha = \frac{V^\star}{V_U},\qquad
    V^\star = \min_{0\le p\le 1,\ \sum p \le m} \sum_i \frac{1-p_i}{p_i} u_i^2,\qquad
    V_U = \frac{n-m}{m} \sum_i u_i^2 ,

the optimal variance over that of independent uniform sampling with :math:`p_i = m/n`, and

.. math:: \gamma = \frac{m}{\alpha (n - m) + m} \in \Big[\frac mn, 1\Big].

Appendix B bounds :math:`\alpha \le (\sum_i u_i)^2 / (n \sum_i u_i^2) \le 1`.

When :math:`V_U = 0` (:math:`m = n`, or all norms zero) the ratio is :math:`0/0`; then
:math:`V^\star = 0` as well, the method "performs as if all updates were communicated", and
we return :math:`\alpha = 0` (so :math:`\gamma = 1`), the seed's reading of :math:`\alpha = 0`.

Scale: :math:`\alpha`, :math:`\gamma` and the bound are invariant under :math:`u \mapsto
\lambda u`; they are computed from norms multiplied by a power of two per round (exact) and
from variances kept as mantissa and binary exponent, so that :math:`\sum_i u_i^2` never
overflows on the way (norms of ``1e200`` or ``1e308`` give the same :math:`\alpha` as norms of
1). :math:`V_U` itself scales like :math:`u^2` and is :math:`+\infty` only when it is beyond the
float range.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from fedtheory.sampling.ocs import _check_norms, _frexp, _ldexp, _optimal_variance_parts
from fedtheory.validation import positive_integer, real_array

__all__ = [
    "alpha_spread_study",
    "alpha_upper_bound",
    "gamma_from_alpha",
    "improvement_factor",
    "relative_improvement_factor",
    "uniform_variance",
]


def _out(x: np.ndarray, ndim: int) -> np.ndarray | float:
    return float(x) if ndim == 1 else x


def _unit_rows(u: np.ndarray, umax: np.ndarray) -> np.ndarray:
    r"""``u`` with each row multiplied by the power of two :math:`2^{-e}` that brings its
    maximum into :math:`[1/2, 1)` (exact; a zero row stays zero)."""
    return np.ldexp(u, -_frexp(umax)[1][..., None])


def _uniform_variance_parts(u: np.ndarray, m: float,
                            umax: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Mantissa and binary exponent of :math:`V_U = \frac{n-m}{m}\sum_i u_i^2` per row.

    With :math:`u = 2^e y`, :math:`\max_i y_i \in [1/2, 1)`: :math:`\sum_i y_i^2 \le n` cannot
    overflow, and :math:`V_U = \frac{n-m}{m}\big(\sum_i y_i^2\big) 4^e`.
    """
    n = u.shape[-1]
    y = _unit_rows(u, umax)
    qf, qe = _frexp(np.sum(y * y, axis=-1))
    nf, ne = math.frexp(n - m)
    mf, me = math.frexp(m)
    return nf / mf * qf, qe + (ne - me) + 2 * _frexp(umax)[1]


def uniform_variance(norms: np.ndarray | Sequence[float], m: float) -> np.ndarray | float:
    r"""Variance of independent uniform sampling :math:`p_i = m/n`:
    :math:`V_U = \frac{n-m}{m}\sum_i u_i^2`.

    :math:`+\infty` only when :math:`V_U` is beyond the float range (no intermediate
    :math:`u_i^2` overflows).

    >>> uniform_variance([1.0, 1.0, 1.0, 1.0], 2)
    4.0
    >>> uniform_variance([1e200, 1e200], 1), uniform_variance([1e200, 1e200], 2)
    (inf, 0.0)
    >>> uniform_variance([1e155, 0.0], 1.999)  # finite, although (1e155)**2 overflows
    5.0025012506247616e+306
    """
    u, m, umax = _check_norms(norms, m)
    return _out(_ldexp(*_uniform_variance_parts(u, m, umax)), u.ndim)


def improvement_factor(norms: np.ndarray | Sequence[float], m: float) -> np.ndarray | float:
    r"""The improvement factor :math:`\alpha = V^\star / V_U \in [0, 1]` (Definition 11).

    Vectorised over rounds (``norms`` of shape ``(rounds, n)``). :math:`\alpha = 0` when at
    most :math:`m` norms are non-zero, and by convention when :math:`V_U = 0` (see the
    module docstring).

    >>> improvement_factor([1.0, 1.0, 1.0, 1.0], 2)
    1.0
    >>> improvement_factor([0.0, 0.0, 5.0, 1.0], 2)
    0.0
    >>> round(improvement_factor([1.0, 1.0, 10.0], 2), 6)
    0.039216
    >>> round(improvement_factor([1e300, 1e300, 1e301], 2), 6)  # both variances overflow
    0.039216
    """
    u, m, umax = _check_norms(norms, m)
    # the ratio of mantissas times 2**(difference of exponents): neither variance is formed
    opt_f, opt_e = _optimal_variance_parts(u, m, umax)
    uni_f, uni_e = _uniform_variance_parts(u, m, umax)
    safe = np.where(uni_f > 0, uni_f, 1.0)
    alpha = np.where(uni_f > 0, _ldexp(opt_f / safe, opt_e - uni_e), 0.0)
    return _out(np.clip(alpha, 0.0, 1.0), u.ndim)


def alpha_upper_bound(norms: np.ndarray | Sequence[float]) -> np.ndarray | float:
    r"""Appendix B's bound :math:`(\sum_i u_i)^2 / (n \sum_i u_i^2) \in [1/n, 1]`.

    All-zero norms give 0 (then :math:`\alpha = 0` too).

    >>> round(alpha_upper_bound([1.0, 1.0, 2.0]), 4)
    0.8889
    >>> round(alpha_upper_bound([1e300, 1e300, 2e300]), 4)
    0.8889
    """
    u, _, umax = _check_norms(norms, 1.0)
    n = u.shape[-1]
    u = _unit_rows(u, umax)  # scale-invariant: row maximum in [1/2, 1), sums <= n
    sq = np.sum(u**2, axis=-1)
    safe = np.where(sq > 0, sq, 1.0)
    return _out(np.where(sq > 0, np.sum(u, axis=-1) ** 2 / (n * safe), 0.0), u.ndim)


def gamma_from_alpha(alpha: np.ndarray | float, n: int, m: float) -> np.ndarray | float:
    r"""The relative improvement factor :math:`\gamma = m / (\alpha(n - m) + m)`, eq. (16).

    >>> gamma_from_alpha(1.0, 10, 2)
    0.2
    >>> gamma_from_alpha(0.0, 10, 2)
    1.0
    """
    a = real_array("alpha", alpha)
    if not np.all(np.isfinite(a)) or np.any((a < 0) | (a > 1)):
        raise ValueError(f"alpha must be in [0, 1], got {alpha!r}")
    positive_integer("n", n)
    if not (np.isfinite(m) and 0 < m <= n):
        raise ValueError(f"m must satisfy 0 < m <= n = {n}, got {m!r}")
    g = m / (a * (n - m) + m)
    return float(g) if g.ndim == 0 else g


def relative_improvement_factor(
    norms: np.ndarray | Sequence[float], m: float
) -> np.ndarray | float:
    r""":math:`\gamma` of eq. (16) computed from the norms of one round (or many rounds).

    >>> relative_improvement_factor([1.0, 1.0, 1.0, 1.0], 2)
    0.5
    """
    u, m, _ = _check_norms(norms, m)
    return gamma_from_alpha(improvement_factor(u, m), u.shape[-1], m)


def alpha_spread_study(
    rng: np.random.Generator, n: int, ms: Sequence[float], sigmas: Sequence[float], rounds: int
) -> dict[str, np.ndarray]:
    r"""The improvement factor against the spread of the norms.

    For each :math:`m` and log-normal spread :math:`\sigma` (norms :math:`e^{\sigma Z_i}`),
    ``rounds`` rounds of ``n`` norms give the mean of :math:`\alpha`, of Appendix B's bound
    :math:`(\sum u)^2/(n\sum u^2)`, of :math:`\gamma`, the largest ratio
    :math:`\alpha / \text{bound}`, and the fraction of rounds with truncation
    (:math:`l < n`).

    Returns
    -------
    dict
        Arrays of shape ``(len(ms), len(sigmas))``: ``alpha``, ``bound``, ``gamma``,
        ``max_ratio``, ``truncated``; and ``ms``, ``sigmas``.
    """
    from fedtheory.sampling.ocs import ocs_threshold

    shape = (len(ms), len(sigmas))
    res = {k: np.zeros(shape) for k in ("alpha", "bound", "gamma", "max_ratio", "truncated")}
    for a, m in enumerate(ms):
        for b, sigma in enumerate(sigmas):
            u = np.exp(sigma * rng.standard_normal((rounds, n)))
            alpha = np.asarray(improvement_factor(u, m))
            bound = np.asarray(alpha_upper_bound(u))
            res["alpha"][a, b] = alpha.mean()
            res["bound"][a, b] = bound.mean()
            res["gamma"][a, b] = np.mean(gamma_from_alpha(alpha, n, m))
            res["max_ratio"][a, b] = np.max(alpha / bound)
            res["truncated"][a, b] = np.mean(np.asarray(ocs_threshold(u, m)) < n)
    res["ms"] = np.asarray(ms, dtype=float)
    res["sigmas"] = np.asarray(sigmas, dtype=float)
    return res
