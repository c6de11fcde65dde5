r"""Confidence intervals and the verdict logic of Monte Carlo checks.

Every statistical check states its per-check false-alarm level :math:`\alpha` (default
:data:`DEFAULT_ALPHA` :math:`= 10^{-6}`): the probability that the check reports a failure
although the statement is true. Intervals use the central limit theorem on the replica mean,

.. math::

    \bar X \pm z_{\alpha}\, \hat s / \sqrt{N},

with :math:`z_\alpha` the one-sided (bounds) or two-sided (identities) normal quantile and
Bonferroni's correction over the components of a vector quantity. Bounds are checked
one-sided, identities two-sided:

* an upper bound :math:`\mathbb E X \le B` is refuted when the lower confidence limit exceeds
  :math:`B`;
* an identity :math:`\mathbb E X = T` is refuted when :math:`T` lies outside the two-sided
  interval (plus a floating-point allowance ``atol + rtol |T|``, documented per check);
* a qualitative comparison "A is smaller than B" is confirmed when the upper limit of the
  paired difference is below 0, refuted when its lower limit is above 0, and inconclusive
  otherwise (:func:`check_less`, normal quantiles: many replicas);
* an experiment's comparison over few paired seeds (:func:`compare_paired`, Student's
  :math:`t`) says which hypothesis it tests: "A is better than B" (one-sided), "A is not worse
  than B by more than a margin" (non-inferiority) or "A and B are equal within a margin"
  (equivalence, two one-sided tests), with the margin stated by the claim; a difference it
  cannot resolve is ``inconclusive``, never a confirmation, and every comparison reports the
  smallest effect its run could detect;
* an upper bound on probabilities :math:`P_j \le B_j` (one per round, say) is refuted where
  the exact one-sided Clopper--Pearson lower limit of the observed frequency exceeds
  :math:`B_j`, at level :math:`\alpha` split over the :math:`j` (Bonferroni).

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> x = rng.normal(1.0, 1.0, size=10_000)
>>> ev = check_identity(x, 1.0)
>>> ev.passed
True
>>> check_upper_bound(x, 0.5).passed
False
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as _st

from fedtheory.claims.core import Evidence

__all__ = [
    "DEFAULT_ALPHA",
    "MeanInterval",
    "check_close",
    "check_identity",
    "check_less",
    "check_lower_bound",
    "check_proportion_upper_bound",
    "check_upper_bound",
    "clopper_pearson",
    "compare_paired",
    "detectable_effect",
    "mean_interval",
    "z_quantile",
]

#: Default per-check false-alarm level.
DEFAULT_ALPHA = 1e-6

#: Fewer replicas than this and a Monte Carlo check reports "inconclusive".
MIN_REPLICAS = 30


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
    return float(_st.norm.isf(tail))


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
    """Interval for ``E[samples]`` along axis 0 (replicas), at false-alarm level ``alpha``.

    For ``sided="one"`` both limits are one-sided limits at level ``alpha`` (use the one that
    matters). Vector quantities get Bonferroni's correction over their components.
    """
    x = np.asarray(samples, dtype=float)
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


def _scalar(a: np.ndarray) -> Any:
    a = np.asarray(a)
    return a.item() if a.size == 1 else a


def _counterexample(given: dict[str, Any] | None, found: dict[str, Any]) -> dict[str, Any]:
    """A failed check's counterexample: the caller's inputs, then what the check measured."""
    return {**(given or {}), **found}


def _too_few(ci: MeanInterval, reference: np.ndarray) -> Evidence:
    """The inconclusive outcome of a Monte Carlo check with under :data:`MIN_REPLICAS`."""
    return Evidence(None, _scalar(ci.mean), _scalar(reference), "too few replicas",
                    alpha=ci.alpha)


def _interval_evidence(ok: bool, ci: MeanInterval, reference: np.ndarray, detail: str,
                       counterexample: dict[str, Any] | None,
                       found: dict[str, Any]) -> Evidence:
    """The outcome of a Monte Carlo check decided on ``ci``; ``found`` joins the counterexample
    when it failed."""
    return Evidence(
        ok, _scalar(ci.mean), _scalar(reference), detail, tolerance=float(ci.z), alpha=ci.alpha,
        counterexample=None if ok else _counterexample(counterexample, found),
        data={"stderr": _scalar(ci.stderr), "replicas": ci.replicas},
    )


def check_identity(
    samples: np.ndarray,
    theory: Any,
    alpha: float = DEFAULT_ALPHA,
    rtol: float = 1e-9,
    atol: float = 1e-12,
    counterexample: dict[str, Any] | None = None,
    what: str = "E[X]",
) -> Evidence:
    """Two-sided check of ``E[samples] == theory`` (componentwise, Bonferroni-corrected)."""
    theory = np.asarray(theory, dtype=float)
    ci = mean_interval(samples, alpha, "two")
    if ci.replicas < MIN_REPLICAS:
        return _too_few(ci, theory)
    allowance = atol + rtol * np.abs(theory)
    dev = np.abs(ci.mean - theory)
    ok = bool(np.all(dev <= ci.z * ci.stderr + allowance))
    zmax = float(np.max(dev / np.maximum(ci.stderr, 1e-300)))
    detail = (
        f"{what}: mean {_fmt(ci.mean)} vs theory {_fmt(theory)}; max |z| = {zmax:.2f} "
        f"(threshold {ci.z:.2f}, two-sided, alpha={alpha:g}, {ci.replicas} replicas)"
    )
    return _interval_evidence(ok, ci, theory, detail, counterexample,
                              {"measured_mean": ci.mean, "stderr": ci.stderr, "theory": theory})


def check_upper_bound(
    samples: np.ndarray,
    bound: Any,
    alpha: float = DEFAULT_ALPHA,
    atol: float = 1e-12,
    counterexample: dict[str, Any] | None = None,
    what: str = "E[X]",
) -> Evidence:
    """One-sided check of ``E[samples] <= bound``: refuted when the lower limit exceeds it."""
    bound = np.asarray(bound, dtype=float)
    ci = mean_interval(samples, alpha, "one")
    if ci.replicas < MIN_REPLICAS:
        return _too_few(ci, bound)
    ok = bool(np.all(ci.lower <= bound + atol))
    detail = (
        f"{what}: mean {_fmt(ci.mean)}, lower limit {_fmt(ci.lower)} vs bound {_fmt(bound)} "
        f"(one-sided, alpha={alpha:g}, {ci.replicas} replicas); "
        f"slack bound - mean = {_fmt(bound - ci.mean)}"
    )
    return _interval_evidence(ok, ci, bound, detail, counterexample,
                              {"measured_mean": ci.mean, "lower_limit": ci.lower, "bound": bound})


def check_lower_bound(
    samples: np.ndarray,
    bound: Any,
    alpha: float = DEFAULT_ALPHA,
    atol: float = 1e-12,
    counterexample: dict[str, Any] | None = None,
    what: str = "E[X]",
) -> Evidence:
    """One-sided check of ``E[samples] >= bound``: refuted when the upper limit is below it
    (the mirror image of :func:`check_upper_bound`; a counterexample reports the measured mean,
    its upper limit and the bound, with their own signs)."""
    bound = np.asarray(bound, dtype=float)
    ci = mean_interval(samples, alpha, "one")
    if ci.replicas < MIN_REPLICAS:
        return _too_few(ci, bound)
    ok = bool(np.all(ci.upper >= bound - atol))
    detail = (
        f"{what}: mean {_fmt(ci.mean)}, upper limit {_fmt(ci.upper)} vs lower bound "
        f"{_fmt(bound)} (one-sided, alpha={alpha:g}, {ci.replicas} replicas)"
    )
    return _interval_evidence(ok, ci, bound, detail, counterexample,
                              {"measured_mean": ci.mean, "upper_limit": ci.upper, "bound": bound})


def check_less(
    a: np.ndarray,
    b: np.ndarray,
    alpha: float = DEFAULT_ALPHA,
    counterexample: dict[str, Any] | None = None,
    what: str = "E[A - B]",
) -> Evidence:
    """Paired comparison "E[a] < E[b]": confirmed, refuted or inconclusive (see module doc)."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    ci = mean_interval(d, alpha, "two")
    upper, lower = np.max(ci.upper), np.min(ci.lower)
    if upper < 0:
        passed: bool | None = True
    elif lower > 0:
        passed = False
    else:
        passed = None
    detail = (
        f"{what}: mean difference {_fmt(ci.mean)}, interval [{_fmt(ci.lower)}, {_fmt(ci.upper)}] "
        f"(two-sided, alpha={alpha:g}, {ci.replicas} paired replicas)"
    )
    ce = None
    if passed is False:
        ce = _counterexample(counterexample, {"mean_difference": ci.mean, "lower_limit": ci.lower})
    return Evidence(passed, _scalar(ci.mean), "< 0", detail, tolerance=float(ci.z), alpha=alpha,
                    counterexample=ce)


#: The hypotheses :func:`compare_paired` tests.
COMPARISONS = ("better", "not worse", "equivalent")

#: The power at which :func:`compare_paired` reports the smallest detectable effect.
DEFAULT_POWER = 0.8


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
    return float((_st.t.isf(alpha, df) + _st.t.ppf(power, df)) * stderr)


def compare_paired(
    a: Any,
    b: Any,
    hypothesis: str,
    margin: float,
    alpha: float = DEFAULT_ALPHA,
    higher_is_better: bool = True,
    power: float = DEFAULT_POWER,
    counterexample: dict[str, Any] | None = None,
    what: str = "A - B",
) -> Evidence:
    r"""Decide "A is better than B", "A is not worse than B" or "A and B are equivalent" from
    paired per-seed values ``a`` and ``b`` (common random numbers), with Student's :math:`t`.

    The gain :math:`d_r = a_r - b_r` (or :math:`b_r - a_r` when lower is better) has one-sided
    limits :math:`\bar d \mp t_{1-\alpha, n-1}\,s/\sqrt n`, each at level ``alpha``:

    * ``"better"`` (one-sided superiority): confirmed when the lower limit is above 0;
      refuted when the upper limit is below ``margin``, the smallest advantage the claim
      calls an improvement (B is better, or A's advantage is shown to be smaller than the
      margin); otherwise inconclusive;
    * ``"not worse"`` (non-inferiority): confirmed when the lower limit is above
      :math:`-` ``margin``; refuted when the upper limit is below :math:`-` ``margin``;
    * ``"equivalent"`` (TOST): confirmed when both limits lie inside
      :math:`(-\text{margin}, \text{margin})`; refuted when one lies wholly outside.

    An undecided comparison is ``inconclusive`` (``passed`` None), never confirmed. Each
    outcome reports the mean gain, its interval, the margin, the level and the smallest
    effect the run could detect at ``power`` (:func:`detectable_effect`). The false-alarm
    level of a confirmation and of a refutation is ``alpha`` each (a TOST's two tests share
    it: each at ``alpha``, the intersection-union test has level ``alpha``).

    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> base = rng.normal(size=20)
    >>> compare_paired(base + 1.0 + 0.1 * rng.normal(size=20), base, "better", 0.5,
    ...                alpha=0.01).passed
    True
    >>> compare_paired(base + 0.01 * rng.normal(size=20), base, "better", 0.5,
    ...                alpha=0.01).passed   # shown to gain less than the margin
    False
    >>> compare_paired(base + 0.01 * rng.normal(size=20), base, "equivalent", 0.5,
    ...                alpha=0.01).passed
    True
    >>> compare_paired(base + rng.normal(size=20), base, "equivalent", 0.05,
    ...                alpha=0.01).passed is None   # too noisy to tell
    True
    """
    if hypothesis not in COMPARISONS:
        raise ValueError(f"hypothesis must be one of {COMPARISONS}, got {hypothesis!r}")
    if not (isinstance(margin, (int, float, np.floating)) and np.isfinite(margin)
            and margin >= 0):
        raise ValueError(f"margin must be a finite number >= 0, got {margin!r}")
    if hypothesis == "equivalent" and margin == 0:
        raise ValueError("an equivalence test needs margin > 0, got 0")
    if not 0.0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha}")
    a_arr, b_arr = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
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
    tq = float(_st.t.isf(alpha, n - 1))
    lower, upper = mean - tq * se, mean + tq * se
    mde = detectable_effect(se, n, alpha, power)
    if hypothesis == "better":
        passed: bool | None = True if lower > 0 else False if upper < margin else None
        wanted = "gain > 0"
        why = {True: "significantly better",
               False: ("significantly worse" if upper < 0 else
                       f"advantage shown to be below the margin {margin:g}"),
               None: "not resolved"}[passed]
    elif hypothesis == "not worse":
        passed = True if lower > -margin else False if upper < -margin else None
        wanted = f"gain > -{margin:g}"
        why = {True: f"not worse by more than {margin:g}",
               False: f"worse by more than {margin:g}", None: "not resolved"}[passed]
    else:
        passed = (True if (lower > -margin and upper < margin)
                  else False if (lower > margin or upper < -margin) else None)
        wanted = f"|gain| < {margin:g}"
        why = {True: f"equivalent within {margin:g}", False: f"differ by more than {margin:g}",
               None: "not resolved"}[passed]
    test = {"better": "one-sided paired t-test", "not worse": "paired non-inferiority t-test",
            "equivalent": "paired TOST (two one-sided t-tests)"}[hypothesis]
    detail = (f"{what}: {hypothesis} (margin {margin:g}): mean gain {mean:.4g}, one-sided "
              f"limits [{lower:.4g}, {upper:.4g}] ({test}, alpha={alpha:g} each side, {n} "
              f"paired seeds): {why}; smallest detectable effect {mde:.3g} at power "
              f"{power:g}")
    record = {"what": what, "test": test, "hypothesis": hypothesis, "margin": float(margin),
              "mean_gain": mean, "lower": lower, "upper": upper, "stderr": se, "pairs": n,
              "alpha": alpha, "detectable_effect": mde, "power": power,
              "higher_is_better": higher_is_better, "outcome": why}
    ce = None
    if passed is False:
        ce = _counterexample(counterexample, {k: record[k] for k in (
            "hypothesis", "margin", "mean_gain", "lower", "upper", "pairs", "outcome")})
    return Evidence(passed, mean, wanted, detail, tolerance=tq, alpha=alpha,
                    counterexample=ce, data=record, tests=[record])


def check_close(
    measured: Any,
    theory: Any,
    rtol: float = 1e-9,
    atol: float = 1e-12,
    counterexample: dict[str, Any] | None = None,
    what: str = "value",
) -> Evidence:
    """Deterministic check ``|measured - theory| <= atol + rtol |theory|`` (elementwise)."""
    m = np.asarray(measured, dtype=float)
    t = np.asarray(theory, dtype=float)
    if m.shape != t.shape:
        raise ValueError(f"measured shape {m.shape} differs from theory shape {t.shape}")
    err = np.abs(m - t)
    ok = bool(np.all(err <= atol + rtol * np.abs(t)))
    rel = float(np.max(err / np.maximum(np.abs(t), atol))) if err.size else 0.0
    detail = f"{what}: max abs error {float(np.max(err, initial=0.0)):.3g}, max rel error {rel:.3g}"
    ce = None if ok else _counterexample(counterexample, {"measured": m, "theory": t})
    return Evidence(ok, _scalar(m), _scalar(t), detail, tolerance=rtol, counterexample=ce)


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
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    if np.any(k < 0) or np.any(k > n):
        raise ValueError(f"need 0 <= k <= n, got k={k!r}, n={n!r}")
    with np.errstate(invalid="ignore", divide="ignore"):
        if side == "lower":
            v = _st.beta.ppf(alpha, k, n - k + 1)
            return np.where(k == 0, 0.0, v)
        v = _st.beta.isf(alpha, k + 1, n - k)
        return np.where(k == n, 1.0, v)


def check_proportion_upper_bound(hits: Any, n: Any, bound: Any, alpha: float = DEFAULT_ALPHA,
                                 what: str = "P", instance: dict[str, Any] | None = None
                                 ) -> Evidence:
    r"""Probabilities :math:`P_j \le B_j` from ``hits`` successes in ``n`` trials each: refuted
    where the Clopper--Pearson lower limit (level ``alpha`` split over the :math:`j`) exceeds
    :math:`B_j`. Reports the tightness, the largest frequency / bound, and where it is.

    >>> check_proportion_upper_bound([5, 40], [100, 100], [0.1, 0.1], 1e-3).passed
    False
    """
    hits, n, bound = (np.atleast_1d(np.asarray(v, dtype=float)) for v in (hits, n, bound))
    instance = dict(instance or {})
    lo = clopper_pearson(hits, n, alpha / max(hits.size, 1), "lower")
    rate = hits / np.maximum(n, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(bound > 0, rate / bound, np.where(rate > 0, np.inf, 0.0))
    j = int(np.argmax(ratio))
    bad = lo > bound
    detail = (f"{what}: largest measured/bound {ratio[j]:.3g} at index {j} (measured "
              f"{rate[j]:.4g}, Clopper-Pearson lower {lo[j]:.4g}, bound {bound[j]:.4g}); "
              f"{int(bad.sum())} of {hits.size} with lower limit > bound "
              f"(one-sided, alpha={alpha:g} over all of them)")
    ce = None
    if bad.any():
        k = int(np.argmax(np.where(bad, lo - bound, -np.inf)))
        ce = {**instance, "index": k, "measured": float(rate[k]), "lower_limit": float(lo[k]),
              "bound": float(bound[k]), "trials": int(n[k])}
    return Evidence(not bool(bad.any()), float(rate[j]), float(bound[j]), detail, alpha=alpha,
                    counterexample=ce, ratio=float(ratio[j]), instance={**instance, "index": j})


def _fmt(x: Any) -> str:
    a = np.asarray(x, dtype=float)
    if a.size == 1:
        return f"{a.item():.6g}"
    if a.size <= 6:
        return "[" + ", ".join(f"{v:.4g}" for v in a.ravel()) + "]"
    return f"array{a.shape} (max {np.max(a):.4g}, min {np.min(a):.4g})"
