r"""Optimal Client Sampling (seed 002, eq. (7) and Lemma 20).

Given the norms :math:`u_i = \|\tilde U_i\|` of the (weighted) client updates and a budget
:math:`m` on the expected number of participants, the independent sampling that minimises the
aggregation variance solves

.. math::

    \min_{p}\ \sum_{i=1}^n \frac{1-p_i}{p_i}\,u_i^2
    \quad\text{s.t.}\quad 0 \le p_i \le 1,\ \ \sum_i p_i \le m,

whose solution is, with :math:`u_{(1)} \le \dots \le u_{(n)}` sorted increasingly and
:math:`l` the largest integer with :math:`0 < m + l - n \le \sum_{i\le l} u_{(i)} / u_{(l)}`,

.. math::

    p_i = \begin{cases} (m + l - n)\, u_i / \sum_{j \le l} u_{(j)}, & u_i \le u_{(l)}
    \text{ (the } l \text{ smallest)},\\ 1, & \text{otherwise.}\end{cases}

Degenerate inputs get the mathematically right answer: a zero norm contributes no variance,
so it gets :math:`p_i = 0` whenever the :math:`l` smallest norms are all zero (never NaN);
when :math:`m` is at least the number of non-zero norms, every non-zero norm gets
:math:`p_i = 1`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ocs_threshold", "optimal_probabilities", "validate_norms"]


def validate_norms(norms: np.ndarray | list[float], m: float) -> tuple[np.ndarray, float]:
    """Check ``norms`` (shape ``(n,)`` or ``(rounds, n)``) and ``m``; return them as arrays.

    Raises ``ValueError`` naming the argument and the bad value.
    """
    u = np.asarray(norms, dtype=float)
    if u.ndim not in (1, 2):
        raise ValueError(f"norms must be 1-D (n,) or 2-D (rounds, n), got shape {u.shape}")
    if u.size == 0 or u.shape[-1] == 0:
        raise ValueError(f"norms must be non-empty, got shape {u.shape}")
    bad = ~np.isfinite(u)
    if bad.any():
        raise ValueError(f"norms must be finite, got {u[bad].ravel()[0]!r}")
    if (u < 0).any():
        raise ValueError(f"norms must be non-negative, got {u[u < 0].ravel()[0]!r}")
    n = u.shape[-1]
    try:
        m = float(m)
    except (TypeError, ValueError):
        raise ValueError(f"m must be a real number, got {m!r}") from None
    if not np.isfinite(m) or m <= 0 or m > n:
        raise ValueError(f"m must satisfy 0 < m <= n = {n}, got {m!r}")
    return u, m


def _sorted_threshold(u: np.ndarray, m: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sort rows increasingly; return (sorted, prefix sums, l per row)."""
    n = u.shape[-1]
    s = np.sort(u, axis=-1)
    csum = np.cumsum(s, axis=-1)
    ls = np.arange(1, n + 1, dtype=float)
    coef = m + ls - n  # m + l - n for l = 1..n
    # condition (m + l - n) u_(l) <= S_l, written without division (u_(l) may be 0)
    ok = (coef > 0) & (coef * s <= csum * (1.0 + 1e-12))
    # l = largest index satisfying the condition (it holds at l = n - ceil(m) + 1 at least)
    last = n - np.argmax(ok[..., ::-1], axis=-1)
    return s, csum, last


def ocs_threshold(norms: np.ndarray | list[float], m: float) -> np.ndarray | int:
    """The integer :math:`l` of eq. (7): how many of the smallest norms are sampled with p < 1."""
    u, m = validate_norms(norms, m)
    _, _, last = _sorted_threshold(u, m)
    return int(last) if u.ndim == 1 else last


def optimal_probabilities(norms: np.ndarray | list[float], m: float) -> np.ndarray:
    r"""Optimal independent-sampling probabilities of eq. (7), exact, :math:`O(n \log n)`.

    Parameters
    ----------
    norms:
        Norms :math:`\|\tilde U_i\| \ge 0`, shape ``(n,)``, or ``(rounds, n)`` for many rounds.
    m:
        Budget on the expected number of participants, :math:`0 < m \le n` (may be
        fractional).

    Returns
    -------
    numpy.ndarray
        Probabilities with the shape of ``norms``, in :math:`[0, 1]`, summing to at most
        :math:`m`.

    Examples
    --------
    >>> optimal_probabilities([1.0, 1.0, 2.0], 1.5)
    array([0.375, 0.375, 0.75 ])
    >>> optimal_probabilities([0.0, 3.0, 1.0], 2)
    array([0., 1., 1.])
    """
    u, m = validate_norms(norms, m)
    s, csum, last = _sorted_threshold(u, m)
    n = u.shape[-1]
    idx = (last - 1)[..., None]
    s_l = np.take_along_axis(s, idx, axis=-1)  # u_(l)
    sum_l = np.take_along_axis(csum, idx, axis=-1)  # sum of the l smallest
    coef = m + last[..., None] - n
    with np.errstate(invalid="ignore", divide="ignore"):
        scaled = np.where(sum_l > 0, coef * u / np.where(sum_l > 0, sum_l, 1.0), 0.0)
    # the l smallest are those <= u_(l) (no tie straddles the threshold, see module doc)
    p = np.where(u <= s_l, np.minimum(scaled, 1.0), 1.0)
    return p
