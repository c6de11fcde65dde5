r"""FL-FDMS friend discovery (seed 004, Section 5): the bounds, their constants and estimators.

The seed's quantities, as functions of the problem's constants:

- Lemma 2: :math:`P(\phi_t(k)\notin\mathcal B_k) \le 2K e^{-\beta\delta_{\min}^2 t/2}`
  (:func:`lemma2_bound`); the Hoeffding + union derivation gives
  :math:`(K-1)e^{-\beta\delta_{\min}^2 t/2}` when :math:`\delta_{\min} > 0` and the dropout
  process is independent of the updates (:func:`hoeffding_union_bound`);
- eq. (16): :math:`\mathbb E\|e_t\|^2 \le \alpha^2(\sigma_F^2 + 2Ke^{-\beta\delta_{\min}^2 t/2}
  (\sigma_P^2-\sigma_F^2))` (:func:`eq16_bound`);
- eq. (17): :math:`\Psi \le \Psi^* + 2K\bar\Psi\frac{1-e^{-\beta\delta_{\min}^2T/2}}
  {T(1-e^{-\beta\delta_{\min}^2/2})}` with :math:`\Psi = \frac{\kappa}{T}\sum_{t<T}
  \mathbb E\|e_t\|^2`, :math:`\kappa = \frac{1+3\eta\eta_LLE}{cE^2}`, :math:`\Psi^* =
  \kappa\alpha^2\sigma_F^2`, :math:`\bar\Psi = \kappa\alpha^2\sigma_P^2` (:func:`psi_bound`);
- Theorem 2: :math:`\Theta_t` (:func:`~fedtheory.sampling.friend_selection.complexity_threshold`)
  and the union bound on eliminating a friend in round :math:`t`, :math:`2K^2B_{\max}
  e^{-\beta t(\Theta_t-\delta_f)^2/2}` (:func:`elimination_union_bound`; :math:`p/T` for the
  theorem's :math:`\Theta_t`, so :math:`p` over :math:`T` rounds).

Constants of an instance: friendship (Definition 1) from :math:`\sigma^2_{i,j}`, the gaps
:math:`\delta_k, \delta_{\min}, \delta_f`, :math:`B_{\max}` from the mean scores
:math:`\mu^{k,i}` (:func:`gap_constants`, exact or with intervals: :func:`gap_interval`),
:math:`\mu` estimated by Monte Carlo (:func:`estimate_similarity_means`), the realised
:math:`\beta` and :math:`\alpha` of a dropout mask (:func:`realised_beta`,
:func:`realised_alpha`). The checks' binomial intervals are
:func:`fedtheory.stats.clopper_pearson` and
:func:`fedtheory.claimkit.checks.check_proportion_upper_bound`.

Conventions: a client with no friend or no non-friend has :math:`\delta_k = +\infty` (no
non-friend can be chosen instead of a friend); rounds are :math:`t = 0, 1, \dots` and
:math:`N^{i,j}_t` counts the co-active rounds :math:`0..t`; :math:`\beta` is
:math:`\min_{t\ge1,\,i\ne j} N^{i,j}_t/t`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats as _st

from fedtheory.participation.dropout import realised_beta as dropout_realised_beta
from fedtheory.sampling.friend_selection import complexity_threshold, similarity_matrix

__all__ = [
    "complexity_threshold",
    "elimination_union_bound",
    "eq16_bound",
    "eq16_from_probability",
    "estimate_similarity_means",
    "friendship",
    "gap_constants",
    "gap_interval",
    "hoeffding_union_bound",
    "lemma2_bound",
    "psi_bound",
    "psi_from_errors",
    "realised_alpha",
    "realised_beta",
]


def _rate(beta: float, delta: float) -> float:
    if not 0.0 < beta <= 1.0:
        raise ValueError(f"beta must be in (0, 1], got {beta!r}")
    if not np.isfinite(delta):
        raise ValueError(f"delta_min must be finite, got {delta!r}")
    return beta * delta**2 / 2.0


def lemma2_bound(t: Any, K: int, beta: float, delta_min: float) -> np.ndarray:
    r"""Lemma 2's right-hand side :math:`2K\exp(-\beta\delta_{\min}^2 t/2)` (not clipped at 1).

    >>> float(lemma2_bound(0, 5, 1.0, 0.3))
    10.0
    """
    if K < 1:
        raise ValueError(f"K must be >= 1, got {K!r}")
    return 2.0 * K * np.exp(-_rate(beta, delta_min) * np.asarray(t, dtype=float))


def hoeffding_union_bound(t: Any, K: int, beta: float, delta_min: float) -> np.ndarray:
    r"""What the Hoeffding + union argument gives for :math:`\delta_{\min} > 0`:
    :math:`(K-1)e^{-\beta\delta_{\min}^2 t/2}` (one friend low by :math:`\delta/2`, or one of at
    most :math:`K-2` non-friends high by :math:`\delta/2`; each mean has
    :math:`N \ge \beta t` scores in :math:`[0, 1]`)."""
    if not delta_min > 0:
        raise ValueError(f"delta_min must be > 0 for the Hoeffding argument, got {delta_min!r}")
    return (K - 1) * np.exp(-_rate(beta, delta_min) * np.asarray(t, dtype=float))


def eq16_from_probability(alpha: float, sigma_F2: float, sigma_P2: float, p_nf: Any) -> Any:
    r""":math:`\alpha^2(\sigma_F^2 + P_{nf}(\sigma_P^2-\sigma_F^2))`: eq. (16) with the
    non-friend probability :math:`P_{nf}` in place of Lemma 2's bound."""
    return alpha**2 * (sigma_F2 + p_nf * (sigma_P2 - sigma_F2))


def eq16_bound(t: Any, alpha: float, sigma_F2: float, sigma_P2: float, K: int, beta: float,
               delta_min: float) -> np.ndarray:
    r"""Eq. (16): :math:`\alpha^2\big(\sigma_F^2 + 2Ke^{-\beta\delta_{\min}^2t/2}
    (\sigma_P^2-\sigma_F^2)\big)`."""
    return eq16_from_probability(alpha, sigma_F2, sigma_P2, lemma2_bound(t, K, beta, delta_min))


def psi_from_errors(e2: Any, kappa: float = 1.0) -> float:
    r""":math:`\Psi = \frac{\kappa}{T}\sum_{t=0}^{T-1}\mathbb E\|e_t\|^2` (eq. 8) from the
    per-round mean squared errors ``e2`` (length :math:`T`)."""
    e = np.asarray(e2, dtype=float)
    if e.ndim != 1 or e.size == 0:
        raise ValueError(f"e2 must be a non-empty 1-d array, got shape {e.shape}")
    return kappa * float(e.mean())


def psi_bound(T: int, K: int, beta: float, delta_min: float, psi_star: float,
              psi_bar: float) -> float:
    r"""Eq. (17): :math:`\Psi^* + 2K\bar\Psi\frac{1-e^{-aT}}{T(1-e^{-a})}`,
    :math:`a = \beta\delta_{\min}^2/2` (the limit :math:`2K\bar\Psi` when :math:`a = 0`).

    >>> round(psi_bound(1, 3, 1.0, 0.5, 0.1, 1.0), 12)  # T = 1: the sum is 1
    6.1
    """
    if T < 1:
        raise ValueError(f"T must be >= 1, got {T!r}")
    a = _rate(beta, delta_min)
    s = float(T) if a == 0 else -np.expm1(-a * T) / -np.expm1(-a)
    return float(psi_star + 2.0 * K * psi_bar * s / T)


def elimination_union_bound(theta: Any, t: Any, *, beta: float, K: int, max_friends: int,
                            delta_f: float) -> np.ndarray:
    r"""The union bound of Theorem 2's argument in round :math:`t`:
    :math:`2K^2B_{\max}\,e^{-\beta t(\Theta_t-\delta_f)^2/2}` (clients, friends, leaders,
    two tails), :math:`p/T` when :math:`\Theta_t` is the theorem's, so :math:`p` over the
    :math:`T` rounds. Rounds with :math:`\Theta_t \le \delta_f` get :math:`\infty`."""
    th = np.asarray(theta, dtype=float) - delta_f
    tt = np.asarray(t, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        v = 2.0 * K**2 * max_friends * np.exp(-beta * tt * th**2 / 2.0)
    return np.where(th > 0, v, np.inf)


# ------------------------------------------------------------------ constants of an instance


def friendship(sigma2: Any, sigma_F2: float) -> np.ndarray:
    r"""Definition 1: :math:`i \ne j` are friends iff :math:`\sigma^2_{i,j} \le \sigma_F^2`.
    ``sigma2`` is ``(n, n)``; returns a bool ``(n, n)`` with a ``False`` diagonal."""
    s = np.asarray(sigma2, dtype=float)
    if s.ndim != 2 or s.shape[0] != s.shape[1]:
        raise ValueError(f"sigma2 must be square, got shape {s.shape}")
    return (s <= sigma_F2) & ~np.eye(s.shape[0], dtype=bool)


def gap_constants(mu: Any, friends: Any) -> dict[str, Any]:
    r"""The gaps of Section 5.2 and Theorem 2 from the mean scores ``mu`` (``(n, n)``):

    .. math:: \delta_k = \min_{i\in\mathcal B_k}\mu^{k,i} - \max_{i\notin\mathcal B_k,\,i\ne k}
        \mu^{k,i},\quad \delta_{\min} = \min_k\delta_k,\quad
        \delta_f = \max_k\Big(\max_{\mathcal B_k}\mu^{k,i} - \min_{\mathcal B_k}\mu^{k,i}\Big),

    with :math:`\delta_k = +\infty` where :math:`\mathcal B_k` or its complement is empty, and
    :math:`B_{\max} = \max_k |\mathcal B_k|`. Returns ``{"delta_k", "delta_min", "delta_f",
    "B_max"}``.

    >>> mu = np.array([[1.0, 0.9, 0.2], [0.9, 1.0, 0.3], [0.2, 0.3, 1.0]])
    >>> fr = np.array([[False, True, False], [True, False, False], [False, False, False]])
    >>> c = gap_constants(mu, fr)
    >>> c["delta_k"].round(6).tolist(), round(c["delta_min"], 6), c["delta_f"], c["B_max"]
    ([0.7, 0.6, inf], 0.6, 0.0, 1)
    """
    m = np.asarray(mu, dtype=float)
    f = np.asarray(friends, dtype=bool)
    n = m.shape[0]
    if m.shape != (n, n) or f.shape != (n, n):
        raise ValueError(f"mu and friends must be (n, n), got {m.shape} and {f.shape}")
    other = ~f & ~np.eye(n, dtype=bool)
    fmin = np.min(np.where(f, m, np.inf), axis=1)
    fmax = np.max(np.where(f, m, -np.inf), axis=1)
    omax = np.max(np.where(other, m, -np.inf), axis=1)
    has = f.any(axis=1) & other.any(axis=1)
    delta_k = np.where(has, fmin - omax, np.inf)
    spread = np.where(f.any(axis=1), fmax - fmin, 0.0)
    return {"delta_k": delta_k, "delta_min": float(np.min(delta_k)),
            "delta_f": float(np.max(spread)), "B_max": int(f.sum(axis=1).max())}


def gap_interval(mu_lo: Any, mu_hi: Any, friends: Any) -> dict[str, tuple[float, float]]:
    r"""Intervals for :math:`\delta_{\min}` and :math:`\delta_f` from simultaneous intervals
    ``[mu_lo, mu_hi]`` on every :math:`\mu^{k,i}` (both are monotone in each :math:`\mu`, so the
    extremes are attained at the interval ends)."""
    lo, hi = np.asarray(mu_lo, float), np.asarray(mu_hi, float)
    f = np.asarray(friends, dtype=bool)
    n = lo.shape[0]
    other = ~f & ~np.eye(n, dtype=bool)
    has = f.any(axis=1) & other.any(axis=1)
    dk_lo = np.where(has, np.min(np.where(f, lo, np.inf), 1) - np.max(np.where(other, hi, -np.inf),
                                                                        1), np.inf)
    dk_hi = np.where(has, np.min(np.where(f, hi, np.inf), 1) - np.max(np.where(other, lo, -np.inf),
                                                                        1), np.inf)
    sp_hi = np.where(f.any(1), np.max(np.where(f, hi, -np.inf), 1)
                     - np.min(np.where(f, lo, np.inf), 1), 0.0)
    sp_lo = np.where(f.any(1), np.maximum(np.max(np.where(f, lo, -np.inf), 1)
                                          - np.min(np.where(f, hi, np.inf), 1), 0.0), 0.0)
    return {"delta_min": (float(dk_lo.min()), float(dk_hi.min())),
            "delta_f": (float(sp_lo.max()), float(sp_hi.max()))}


def estimate_similarity_means(sample: Callable[[np.random.Generator, int], np.ndarray],
                              draws: int, rng: np.random.Generator, alpha: float = 1e-6,
                              kind: str = "cosine") -> dict[str, np.ndarray]:
    r"""Monte Carlo estimate of :math:`\mu^{i,j} = \mathbb E\,r(\Delta^i, \Delta^j)` from
    ``draws`` independent rounds ``sample(rng, draws) -> (draws, n, d)``, with simultaneous
    two-sided intervals at level ``alpha`` (normal, Bonferroni over the pairs; for scores in
    :math:`[0, 1]` the Hoeffding half-width :math:`\sqrt{\ln(2m/\alpha)/(2M)}` is also given
    and the wider one is used). Returns ``{"mean", "lower", "upper"}`` (``(n, n)``)."""
    u = np.asarray(sample(rng, draws), dtype=float)
    M, n, _ = u.shape
    s = similarity_matrix(u, np.ones((M, n), dtype=bool), kind)
    mean, se = s.mean(axis=0), s.std(axis=0, ddof=1) / np.sqrt(M)
    pairs = max(n * (n - 1) // 2, 1)
    z = float(_st.norm.isf(alpha / (2 * pairs)))
    hw = z * se
    if kind == "cosine":
        hw = np.maximum(hw, np.sqrt(np.log(2 * pairs / alpha) / (2 * M)))
    return {"mean": mean, "lower": mean - hw, "upper": mean + hw}


def realised_beta(mask: Any) -> float:
    r""":math:`\beta = \min_{t\ge 1,\ i\ne j} N^{i,j}_t / t` of a participation mask ``(T, n)``
    or ``(R, T, n)`` (minimum over replicas too), :math:`N^{i,j}_t` = co-active rounds
    :math:`0..t`: rounds are indexed from 0 as in the seed's :math:`e_0, \dots, e_{T-1}`, so a
    client may miss round 0 without forcing :math:`\beta = 0`
    (:func:`fedtheory.participation.dropout.realised_beta` with ``first_round=0``; 1.0 for
    :math:`T = 1`).

    >>> realised_beta(np.array([[True, True], [False, True], [False, True]]))
    0.5
    """
    m = np.asarray(mask, dtype=bool)
    if m.ndim == 2:
        m = m[None]
    return float(dropout_realised_beta(np.moveaxis(m, -2, 0), first_round=0).min())


def realised_alpha(mask: Any) -> float:
    r"""The largest dropout ratio :math:`\max_t (K - S_t)/K` of a mask ``(..., T, n)``."""
    m = np.asarray(mask, dtype=bool)
    return float(np.max(1.0 - m.mean(axis=-1)))
