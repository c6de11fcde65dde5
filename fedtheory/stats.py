r"""Confidence intervals and statistical tests, as records: the statistics of Monte Carlo checks.

This module computes; it does not judge. Its functions return intervals and test records
(:class:`MeanInterval`, :class:`PairedTTest`, :class:`ProportionLimits`); the step from a
record to a claim's outcome (``passed`` True, False or None, an
:class:`~fedtheory.claimkit.evidence.Evidence` with its counterexample) happens in
:mod:`fedtheory.claimkit.checks`, and combination of several outcomes in
:func:`fedtheory.claims.all_of`.

Every statistical test states its false-alarm level :math:`\alpha` (default
:data:`DEFAULT_ALPHA` :math:`= 10^{-6}`). Intervals use the central limit theorem on the
replica mean,

.. math::

    \bar X \pm z_{\alpha}\, \hat s / \sqrt{N},

with :math:`z_\alpha` the one-sided (bounds) or two-sided (identities) normal quantile and
Bonferroni's correction over the components of a vector quantity; paired comparisons over few
seeds use Student's :math:`t` (:func:`paired_t_test`); proportions use exact one-sided
Clopper--Pearson limits (:func:`clopper_pearson`, :func:`proportion_limits`).

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> ci = mean_interval(rng.normal(1.0, 1.0, size=10_000), alpha=1e-6)
>>> bool(ci.lower < 1.0 < ci.upper), ci.replicas
(True, 10000)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

# scipy.special's quantile functions, not scipy.stats (whose import costs about a second of every
# start-up): ndtri, stdtrit, betaincinv and betainccinv are what scipy.stats's norm, t and beta
# call (same values bit for bit; tests/test_stats.py holds them to scipy.stats)
from scipy import special as _sc

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_POWER",
    "MIN_REPLICAS",
    "MeanInterval",
    "PairedTTest",
    "ProportionLimits",
    "clopper_pearson",
    "detectable_effect",
    "mean_interval",
    "paired_t_test",
    "proportion_limits",
    "z_quantile",
]

#: Default per-check false-alarm level.
DEFAULT_ALPHA = 1e-6

#: Fewer replicas than this and a Monte Carlo check reports "inconclusive".
MIN_REPLICAS = 30

#: The power at which a paired comparison reports the smallest detectable effect.
DEFAULT_POWER = 0.8


def _real(name: str, value: Any) -> np.ndarray:
    """``value`` as a float array, or a ``ValueError`` naming ``name``: complex values (whose
    imaginary part a cast would drop silently) and non-numbers are refused. (Foundations
    import no other fedtheory module: :func:`fedtheory.validation.real_array` in small.)"""
    a = value if isinstance(value, np.ndarray) else None
    try:
        if a is None:
            a = np.asarray(value)
        if a.dtype.kind in "cUSVMm":
            raise TypeError(a.dtype)
        return np.asarray(a, dtype=float)
    except (TypeError, ValueError):
        text = repr(value)
        text = text if len(text) <= 200 else text[:197] + "..."
        raise ValueError(f"{name} must be an array of real numbers, got {text}") from None


def _counts(name: str, value: Any, low: int) -> np.ndarray:
    """Whole numbers >= ``low`` as floats, or a ``ValueError`` naming ``name``."""
    a = _real(name, value)
    bad = ~np.isfinite(a) | (a < low) | (a != np.round(a))
    if bad.any():
        raise ValueError(f"{name} must be whole numbers >= {low}, got "
                         f"{float(a[bad].ravel()[0])!r}")
    return a


def z_quantile(alpha: float, sided: str = "two", components: int = 1) -> float:
    r"""Normal quantile for a false-alarm level ``alpha`` over ``components`` comparisons.

    .. math:: z = \Phi^{-1}\!\left(1 - \frac{\alpha}{s\,k}\right),\quad s\in\{1, 2\}.

    >>> round(z_quantile(0.05, "two"), 3)
    1.96
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if sided not in ("two", "one"):
        raise ValueError(f"sided must be 'two' or 'one', got {sided!r}")
    if components < 1:
        raise ValueError(f"components must be >= 1, got {components}")
    tail = alpha / components / (2.0 if sided == "two" else 1.0)
    return float(-_sc.ndtri(tail))


@dataclass(frozen=True)
class MeanInterval:
    """A confidence interval for the mean of i.i.d. replicas (componentwise for vectors)."""

    mean: np.ndarray
    stderr: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    replicas: int
    alpha: float
    z: float


def mean_interval(
    samples: np.ndarray, alpha: float = DEFAULT_ALPHA, sided: str = "two"
) -> MeanInterval:
    r"""Interval for ``E[samples]`` along axis 0 (replicas), at false-alarm level ``alpha``:

    .. math:: \bar X \pm z_{\alpha}\, \hat s / \sqrt{N}.

    For ``sided="one"`` both limits are one-sided limits at level ``alpha`` (use the one that
    matters). Vector quantities get Bonferroni's correction over their components. One
    replica gives an infinite standard error (no information on the spread).

    >>> ci = mean_interval(np.array([1.0, 3.0]), alpha=0.05)
    >>> float(ci.mean), float(ci.stderr)
    (2.0, 1.0)
    """
    x = _real("samples", samples)
    if x.ndim == 0 or x.shape[0] == 0:
        raise ValueError(f"samples must have at least one replica on axis 0, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("samples contain NaN or infinite values")
    n = x.shape[0]
    k = int(np.prod(x.shape[1:])) if x.ndim > 1 else 1
    z = z_quantile(alpha, sided, k)
    mean = x.mean(axis=0)
    se = x.std(axis=0, ddof=1) / np.sqrt(n) if n > 1 else np.full_like(mean, np.inf)
    return MeanInterval(mean, se, mean - z * se, mean + z * se, n, alpha, z)


def detectable_effect(stderr: float, n: int, alpha: float, power: float = DEFAULT_POWER
                      ) -> float:
    r"""The smallest true mean difference a one-sided paired :math:`t`-test at level
    ``alpha`` detects with probability ``power``, given the standard error of the mean
    difference over ``n`` pairs:

    .. math:: \delta_{\min} = \left(t_{1-\alpha,\,n-1} + t_{\text{power},\,n-1}\right)
              \frac{s}{\sqrt n}.

    >>> round(detectable_effect(1.0, 10, 0.05), 2)
    2.72
    """
    if n < 2:
        raise ValueError(f"n must be at least 2 pairs, got {n}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be in (0, 1), got {power}")
    df = n - 1
    return float((-_sc.stdtrit(df, alpha) + _sc.stdtrit(df, power)) * stderr)


@dataclass(frozen=True)
class PairedTTest:
    r"""One-sided Student :math:`t` limits of the mean gain :math:`d_r = a_r - b_r` (or
    :math:`b_r - a_r` when lower is better) over ``pairs`` paired seeds, each limit at level
    ``alpha``: :math:`\bar d \mp t_{1-\alpha, n-1}\, s/\sqrt n`."""

    mean: float
    stderr: float
    t: float
    lower: float
    upper: float
    pairs: int
    alpha: float
    power: float
    #: :func:`detectable_effect` at ``power``.
    detectable_effect: float
    higher_is_better: bool


def paired_t_test(a: Any, b: Any, alpha: float = DEFAULT_ALPHA, higher_is_better: bool = True,
                  power: float = DEFAULT_POWER, what: str = "A - B") -> PairedTTest:
    r"""The paired :math:`t` limits of the gain of ``a`` over ``b`` (per-seed values, common
    random numbers):

    .. math:: \bar d \mp t_{1-\alpha,\,n-1}\,\frac{s_d}{\sqrt n},\qquad
              d_r = \pm (a_r - b_r).

    >>> r = paired_t_test([1.0, 2.0, 3.0], [0.0, 1.0, 1.0], alpha=0.05)
    >>> round(r.mean, 4), r.pairs
    (1.3333, 3)
    >>> paired_t_test([1.0, 1.0], [1.0, 1.0], alpha=0.05).stderr   # no spread: exact limits
    0.0
    """
    if not 0.0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha}")
    a_arr, b_arr = _real("a", a), _real("b", b)
    if a_arr.ndim != 1 or a_arr.shape != b_arr.shape:
        raise ValueError(f"a and b must be 1-d arrays of the same length (paired seeds), got "
                         f"shapes {a_arr.shape} and {b_arr.shape}")
    n = a_arr.size
    if n < 2:
        raise ValueError(f"a paired comparison needs at least 2 pairs, got {n}")
    if not (np.all(np.isfinite(a_arr)) and np.all(np.isfinite(b_arr))):
        raise ValueError(f"{what}: a and b must be finite (a diverged run is a finding: score "
                         "it, e.g. as the worst value, before comparing)")
    gain = (a_arr - b_arr) if higher_is_better else (b_arr - a_arr)
    mean = float(gain.mean())
    se = float(gain.std(ddof=1) / np.sqrt(n))
    tq = float(-_sc.stdtrit(n - 1, alpha))
    return PairedTTest(mean, se, tq, mean - tq * se, mean + tq * se, n, alpha, power,
                       detectable_effect(se, n, alpha, power), higher_is_better)


def clopper_pearson(k: Any, n: Any, alpha: float, side: str) -> np.ndarray:
    r"""One-sided Clopper--Pearson limit at level ``alpha`` for a binomial proportion (exact:
    :math:`P(\mathrm{Bin}(n, \text{limit}) \ge k) = \alpha` for the lower one):
    ``side="lower"``: :math:`\mathrm{Beta}^{-1}(\alpha; k, n-k+1)` (0 at :math:`k = 0`);
    ``side="upper"``: :math:`\mathrm{Beta}^{-1}(1-\alpha; k+1, n-k)` (1 at :math:`k = n`).

    >>> round(float(clopper_pearson(0, 100, 0.05, "upper")), 4)
    0.0295
    """
    if side not in ("lower", "upper"):
        raise ValueError(f"side must be 'lower' or 'upper', got {side!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    k, n = _counts("k", k, 0), _counts("n", n, 0)
    if np.any(k < 0) or np.any(k > n):
        raise ValueError(f"need 0 <= k <= n, got k={k!r}, n={n!r}")
    with np.errstate(invalid="ignore", divide="ignore"):
        if side == "lower":
            v = _sc.betaincinv(k, n - k + 1, alpha)
            return np.where(k == 0, 0.0, v)
        v = _sc.betainccinv(k + 1, n - k, alpha)
        return np.where(k == n, 1.0, v)


@dataclass(frozen=True)
class ProportionLimits:
    r"""Observed frequencies :math:`\hat P_j = k_j / n_j` beside bounds :math:`B_j`, with their
    one-sided Clopper--Pearson lower limits at level ``alpha`` split over the :math:`j`
    (Bonferroni), and the ratios :math:`\hat P_j / B_j`."""

    hits: np.ndarray
    trials: np.ndarray
    bound: np.ndarray
    rate: np.ndarray
    lower: np.ndarray
    ratio: np.ndarray
    alpha: float

    @property
    def exceeded(self) -> np.ndarray:
        """Where the lower limit exceeds the bound (boolean per :math:`j`)."""
        return self.lower > self.bound

    @property
    def tightest(self) -> int:
        """The index of the largest ratio measured/bound (the first of equals)."""
        return int(np.argmax(self.ratio))


def proportion_limits(hits: Any, n: Any, bound: Any, alpha: float = DEFAULT_ALPHA
                      ) -> ProportionLimits:
    r"""Clopper--Pearson lower limits of the frequencies ``hits / n`` beside ``bound``, at
    level ``alpha`` over all of them:

    .. math:: \underline P_j = \mathrm{Beta}^{-1}\!\left(\tfrac{\alpha}{J}; k_j,
              n_j - k_j + 1\right).

    A zero bound has ratio 0 when nothing was observed and infinity otherwise.

    >>> r = proportion_limits([5, 40], [100, 100], [0.1, 0.1], 1e-3)
    >>> r.exceeded.tolist(), r.tightest
    ([False, True], 1)
    """
    hits, n = np.atleast_1d(_counts("hits", hits, 0)), np.atleast_1d(_counts("n", n, 0))
    bound = np.atleast_1d(_real("bound", bound))
    if np.isnan(bound).any():
        raise ValueError(f"bound must be numbers (not NaN), got {bound.tolist()!r}"[:300])
    lo = clopper_pearson(hits, n, alpha / max(hits.size, 1), "lower")
    rate = hits / np.maximum(n, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(bound > 0, rate / bound, np.where(rate > 0, np.inf, 0.0))
    return ProportionLimits(hits, n, bound, rate, lo, ratio, alpha)
