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
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fedtheory.sampling.ocs import optimal_variance, validate_norms

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


def uniform_variance(norms: np.ndarray | Sequence[float], m: float) -> np.ndarray | float:
    r"""Variance of independent uniform sampling :math:`p_i = m/n`:
    :math:`V_U = \frac{n-m}{m}\sum_i u_i^2`.

    >>> uniform_variance([1.0, 1.0, 1.0, 1.0], 2)
    4.0
    """
    u, m = validate_norms(norms, m)
    n = u.shape[-1]
    return _out((n - m) / m * np.sum(u**2, axis=-1), u.ndim)


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
    """
    u, m = validate_norms(norms, m)
    v_opt = np.asarray(optimal_variance(u, m))
    v_uni = np.asarray(uniform_variance(u, m))
    safe = np.where(v_uni > 0, v_uni, 1.0)
    alpha = np.where(v_uni > 0, v_opt / safe, 0.0)
    return _out(np.clip(alpha, 0.0, 1.0), u.ndim)


def alpha_upper_bound(norms: np.ndarray | Sequence[float]) -> np.ndarray | float:
    r"""Appendix B's bound :math:`(\sum_i u_i)^2 / (n \sum_i u_i^2) \in [1/n, 1]`.

    All-zero norms give 0 (then :math:`\alpha = 0` too).

    >>> round(alpha_upper_bound([1.0, 1.0, 2.0]), 4)
    0.8889
    """
    u, _ = validate_norms(norms, 1.0)
    n = u.shape[-1]
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
    a = np.asarray(alpha, dtype=float)
    if not np.all(np.isfinite(a)) or np.any((a < 0) | (a > 1)):
        raise ValueError(f"alpha must be in [0, 1], got {alpha!r}")
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
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
    u, m = validate_norms(norms, m)
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
