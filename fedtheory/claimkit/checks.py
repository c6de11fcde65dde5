r"""The statistics-to-verdict step of Monte Carlo and numerical checks: records to Evidence.

:mod:`fedtheory.stats` computes intervals and tests (records); the functions here decide what
they say about a statement and return the check's :class:`~fedtheory.claimkit.evidence.Evidence`
(``passed`` True, False or None, the counterexample of a failure, the level, the tightness).
Combining several of them is :func:`fedtheory.claimkit.evidence.all_of` (levels add up).

Bounds are checked one-sided, identities two-sided:

* an upper bound :math:`\mathbb E X \le B` is refuted when the lower confidence limit exceeds
  :math:`B`, a lower bound when the upper limit is below it: :func:`check_bound`, the one bound
  check, on Monte Carlo samples or exact values, with the tightness (the largest
  measured/stated, at its instance) filled in; :func:`check_upper_bound` and
  :func:`check_lower_bound` are the same check without the tightness;
* an identity :math:`\mathbb E X = T` is refuted when :math:`T` lies outside the two-sided
  interval (plus a floating-point allowance ``atol + rtol |T|``, documented per check:
  :func:`check_identity`);
* with fewer than :data:`fedtheory.stats.MIN_REPLICAS` replicas a Monte Carlo check is
  inconclusive;
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
  :math:`B_j`, at level :math:`\alpha` split over the :math:`j` (Bonferroni:
  :func:`check_proportion_upper_bound`);
* :func:`check_close` is the deterministic comparison of floating-point values.

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

from collections.abc import Sequence
from typing import Any

import numpy as np

from fedtheory.claimkit.evidence import Evidence
from fedtheory.claimkit.exact_bound import exact_bound_evidence, is_exact
from fedtheory.stats import (
    DEFAULT_ALPHA,
    DEFAULT_POWER,
    MIN_REPLICAS,
    MeanInterval,
    mean_interval,
    paired_t_test,
    proportion_limits,
)
from fedtheory.validation import nonnegative_real, real_array

__all__ = [
    "COMPARISONS",
    "SIDES",
    "check_bound",
    "check_close",
    "check_identity",
    "check_less",
    "check_lower_bound",
    "check_proportion_upper_bound",
    "check_upper_bound",
    "compare_paired",
]


def _stated(name: str, value: Any, trivial: int = 0) -> np.ndarray:
    r"""A stated (or measured) value as a float array, or a ``ValueError`` naming ``name``: a
    NaN, complex or non-numeric value is no statement, and judging it would turn a broken
    computation into a verdict (a NaN bound would refute). Infinities are refused too, except
    the one of sign ``trivial`` (an upper bound of :math:`+\infty` holds, a lower bound of
    :math:`-\infty` holds).

    >>> _stated("bound", [1.0, float("inf")], trivial=1).tolist()
    [1.0, inf]
    >>> _stated("bound", float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: bound must be a number (not NaN), got nan
    """
    a = real_array(name, value)
    if np.isnan(a).any():
        raise ValueError(f"{name} must be a number (not NaN), got {_fmt_bad(a, np.isnan(a))}")
    bad = np.isinf(a) & (np.sign(a) != trivial)
    if bad.any():
        raise ValueError(f"{name} must be finite, got {_fmt_bad(a, bad)}")
    return a


def _fmt_bad(a: np.ndarray, bad: np.ndarray) -> str:
    """The first bad entry of ``a`` and where it is, for a message."""
    first = float(a[bad].ravel()[0])
    if a.ndim == 0:
        return repr(first)
    return f"{first!r} at index {tuple(int(i) for i in np.argwhere(bad)[0])}"


def _tolerances(**named: Any) -> None:
    """Every tolerance a finite number >= 0, or a ``ValueError`` naming it (a NaN ``atol``
    would refute)."""
    for name, value in named.items():
        nonnegative_real(name, value)


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
    """Two-sided check of ``E[samples] == theory`` (componentwise, Bonferroni-corrected).

    A NaN or infinite ``theory``, or a negative or NaN tolerance, is a ``ValueError`` naming
    it (an error of the check, never a refutation):

    >>> check_identity(np.ones(40), float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: theory must be a number (not NaN), got nan
    """
    theory = _stated("theory", theory)
    _tolerances(rtol=rtol, atol=atol)
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


#: The two sides a bound check knows.
SIDES = ("upper", "lower")


def check_bound(
    quantity: Any,
    stated: Any,
    side: str = "upper",
    instances: dict[str, Any] | Sequence[dict[str, Any]] | None = None,
    alpha: float = DEFAULT_ALPHA,
    atol: float = 1e-12,
    counterexample: dict[str, Any] | None = None,
    what: str = "E[X]",
) -> Evidence:
    r"""The one bound check: ``quantity <= stated`` (``side="upper"``) or ``>= stated``
    (``side="lower"``), componentwise, with its tightness filled in.

    ``quantity`` is either

    * **Monte Carlo samples** (floats, replicas on axis 0, one column per instance): the
      statement is about :math:`\mathbb E X_j`; an upper bound is refuted when the one-sided
      lower confidence limit :math:`\bar X_j - z_{\alpha/k}\,\hat s_j/\sqrt N` exceeds
      :math:`B_j + \text{atol}` for some :math:`j` (Bonferroni over the :math:`k` columns), a
      lower bound when the upper limit is below :math:`B_j - \text{atol}`; with fewer than
      :data:`fedtheory.stats.MIN_REPLICAS` replicas the check is inconclusive;
    * or **exact values** (a ``Fraction``, a sympy number, or an array of them; the stated
      side's floats are then read as the exact binary rationals they are): compared exactly,
      refuted when :math:`Q_j > B_j` (upper) or :math:`Q_j < B_j` (lower) for some :math:`j`.

    ``ratio`` is the tightness :math:`\max_j Q_j / B_j` (upper; :math:`\max_j B_j / Q_j` for a
    lower bound), with the sample mean for :math:`Q_j` under Monte Carlo; 1 means attained.
    A zero denominator gives 1 when the numerator is 0 too (attained) and :math:`\pm\infty`
    by the numerator's sign otherwise. ``instance`` is where the maximum is reached:
    ``instances`` (one dict for a scalar statement, or one per column), or ``{"index": j}``
    without them. A refuted check's ``counterexample`` is the caller's ``counterexample``,
    then that instance, then what was measured (the worst column for an exact check).

    A bound of :math:`+\infty` (upper) or :math:`-\infty` (lower) holds; a NaN, the other
    infinity, a non-number or an unknown ``side`` is a ``ValueError`` naming it, before any
    work, never a refutation.

    >>> import numpy as np
    >>> from fractions import Fraction
    >>> ev = check_bound(np.zeros(40), 0.0)           # zero bound, attained
    >>> ev.passed, ev.ratio, ev.instance
    (True, 1.0, {})
    >>> ev = check_bound(np.ones(40), float("inf"))   # infinite bound: holds, never tight
    >>> ev.passed, ev.ratio
    (True, 0.0)
    >>> check_bound(np.ones(40), float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: bound must be a number (not NaN), got nan
    >>> ev = check_bound([Fraction(1, 2), Fraction(3, 2)], [1, 1],
    ...                  instances=[{"n": 2}, {"n": 3}])   # exact, violated at n = 3
    >>> ev.passed, ev.ratio, ev.instance
    (False, 1.5, {'n': 3})
    >>> ev.counterexample
    {'n': 3, 'measured': 3/2, 'bound': 1}
    >>> check_bound(Fraction(1, 3), 0, side="lower").ratio   # 0 / (1/3)
    0.0
    """
    return _bound_check(quantity, stated, side, instances, is_exact(quantity), alpha, atol,
                        counterexample, what)


def _bound_check(quantity: Any, stated: Any, side: str,
                 instances: dict[str, Any] | Sequence[dict[str, Any]] | None, exact: bool,
                 alpha: float, atol: float, counterexample: dict[str, Any] | None,
                 what: str) -> Evidence:
    """:func:`check_bound` with the kind of ``quantity`` decided (``exact``)."""
    if side not in SIDES:
        raise ValueError(f"side must be one of {SIDES}, got {side!r}")
    trivial = 1 if side == "upper" else -1
    if exact:
        return exact_bound_evidence(quantity, stated, side, trivial,
                                    lambda k, size: _instance_at(instances, k, size),
                                    counterexample, what)
    bound = _stated("bound", stated, trivial=trivial)
    _tolerances(atol=atol)
    ci = mean_interval(quantity, alpha, "one")
    ratio, instance = _tightest(ci.mean, bound, side, instances)
    if ci.replicas < MIN_REPLICAS:
        ev = _too_few(ci, bound)
    elif side == "upper":
        ok = bool(np.all(ci.lower <= bound + atol))
        detail = (
            f"{what}: mean {_fmt(ci.mean)}, lower limit {_fmt(ci.lower)} vs bound {_fmt(bound)} "
            f"(one-sided, alpha={alpha:g}, {ci.replicas} replicas); "
            f"slack bound - mean = {_fmt(bound - ci.mean)}"
        )
        ev = _interval_evidence(ok, ci, bound, detail, counterexample, {
            "measured_mean": ci.mean, "lower_limit": ci.lower, "bound": bound})
    else:
        ok = bool(np.all(ci.upper >= bound - atol))
        detail = (
            f"{what}: mean {_fmt(ci.mean)}, upper limit {_fmt(ci.upper)} vs lower bound "
            f"{_fmt(bound)} (one-sided, alpha={alpha:g}, {ci.replicas} replicas)"
        )
        ev = _interval_evidence(ok, ci, bound, detail, counterexample, {
            "measured_mean": ci.mean, "upper_limit": ci.upper, "bound": bound})
    ev.ratio, ev.instance = ratio, instance
    return ev


def _ratios(measured: np.ndarray, stated: np.ndarray, side: str) -> np.ndarray:
    """measured/stated (upper) or stated/measured (lower) as floats, elementwise, with the
    zero-denominator conventions of :func:`check_bound`."""
    num, den = (measured, stated) if side == "upper" else (stated, measured)
    num, den = np.broadcast_arrays(np.asarray(num, dtype=float), np.asarray(den, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore"):
        plain = num / den
        zero = np.where(num == 0, 1.0, np.sign(num) * np.inf)
    return np.where(den == 0, zero, plain)


def _instance_at(instances: dict[str, Any] | Sequence[dict[str, Any]] | None, k: int,
                 size: int) -> dict[str, Any]:
    """The instance of column ``k`` (of ``size``): the caller's, or ``{"index": k}``."""
    if instances is None:
        return {} if size == 1 else {"index": k}
    if isinstance(instances, dict):
        return instances
    if len(instances) != size:
        raise ValueError(f"instances must be one dict or one per column ({size}), got "
                         f"{len(instances)}")
    return instances[k]


def _tightest(measured: Any, stated: np.ndarray, side: str,
              instances: dict[str, Any] | Sequence[dict[str, Any]] | None
              ) -> tuple[float, dict[str, Any]]:
    """The largest ratio of a bound check and the instance where it is reached."""
    r = _ratios(measured, stated, side)
    k = int(np.argmax(r)) if r.size > 1 else 0
    return float(r.ravel()[k]), _instance_at(instances, k, r.size)


def check_upper_bound(
    samples: np.ndarray,
    bound: Any,
    alpha: float = DEFAULT_ALPHA,
    atol: float = 1e-12,
    counterexample: dict[str, Any] | None = None,
    what: str = "E[X]",
) -> Evidence:
    r"""One-sided check of ``E[samples] <= bound``: refuted when the lower limit exceeds it
    (:func:`check_bound` without the tightness; ``ratio`` and ``instance`` stay None).

    A bound of :math:`+\infty` holds; a NaN or :math:`-\infty` bound (or a NaN ``atol``) is
    a ``ValueError`` naming it, never a refutation:

    >>> check_upper_bound(np.ones(40), float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: bound must be a number (not NaN), got nan
    >>> check_upper_bound(np.ones(40), float("inf")).passed
    True
    """
    return _plain(_bound_check(samples, bound, "upper", None, False, alpha, atol, counterexample,
                               what))


def check_lower_bound(
    samples: np.ndarray,
    bound: Any,
    alpha: float = DEFAULT_ALPHA,
    atol: float = 1e-12,
    counterexample: dict[str, Any] | None = None,
    what: str = "E[X]",
) -> Evidence:
    r"""One-sided check of ``E[samples] >= bound``: refuted when the upper limit is below it
    (the mirror image of :func:`check_upper_bound`; a counterexample reports the measured mean,
    its upper limit and the bound, with their own signs). A bound of :math:`-\infty` holds; a
    NaN or :math:`+\infty` one is a ``ValueError`` naming it."""
    return _plain(_bound_check(samples, bound, "lower", None, False, alpha, atol, counterexample,
                               what))


def _plain(ev: Evidence) -> Evidence:
    """A bound check's Evidence without its tightness (the plain checks' output)."""
    ev.ratio = ev.instance = None
    return ev


def check_less(
    a: np.ndarray,
    b: np.ndarray,
    alpha: float = DEFAULT_ALPHA,
    counterexample: dict[str, Any] | None = None,
    what: str = "E[A - B]",
) -> Evidence:
    """Paired comparison "E[a] < E[b]": confirmed, refuted or inconclusive (see module doc).
    ``a`` and ``b`` must be finite paired samples of one shape (a ``ValueError`` naming them)."""
    a_arr, b_arr = _stated("a", a), _stated("b", b)
    if a_arr.shape != b_arr.shape or a_arr.ndim == 0:
        raise ValueError(f"a and b must be paired samples of one shape (replicas first), got "
                         f"shapes {a_arr.shape} and {b_arr.shape}")
    d = a_arr - b_arr
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
    effect the run could detect at ``power`` (:func:`fedtheory.stats.detectable_effect`). The
    false-alarm level of a confirmation and of a refutation is ``alpha`` each (a TOST's two
    tests share it: each at ``alpha``, the intersection-union test has level ``alpha``).

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
    r = paired_t_test(a, b, alpha, higher_is_better, power, what)
    mean, se, tq, lower, upper = r.mean, r.stderr, r.t, r.lower, r.upper
    n, mde = r.pairs, r.detectable_effect
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
    """Deterministic check ``|measured - theory| <= atol + rtol |theory|`` (elementwise).

    ``measured`` and ``theory`` must be finite (NaN or infinite values, from an overflow or a
    broken computation, are a ``ValueError`` naming them, never a refutation):

    >>> check_close([1.0, float("inf")], [1.0, 2.0])
    Traceback (most recent call last):
    ...
    ValueError: measured must be finite, got inf at index (1,)
    """
    m = _stated("measured", measured)
    t = _stated("theory", theory)
    _tolerances(rtol=rtol, atol=atol)
    if m.shape != t.shape:
        raise ValueError(f"measured shape {m.shape} differs from theory shape {t.shape}")
    err = np.abs(m - t)
    ok = bool(np.all(err <= atol + rtol * np.abs(t)))
    rel = float(np.max(err / np.maximum(np.abs(t), atol))) if err.size else 0.0
    detail = f"{what}: max abs error {float(np.max(err, initial=0.0)):.3g}, max rel error {rel:.3g}"
    ce = None if ok else _counterexample(counterexample, {"measured": m, "theory": t})
    return Evidence(ok, _scalar(m), _scalar(t), detail, tolerance=rtol, counterexample=ce)


def check_proportion_upper_bound(hits: Any, n: Any, bound: Any, alpha: float = DEFAULT_ALPHA,
                                 what: str = "P", instance: dict[str, Any] | None = None
                                 ) -> Evidence:
    r"""Probabilities :math:`P_j \le B_j` from ``hits`` successes in ``n`` trials each: refuted
    where the Clopper--Pearson lower limit (level ``alpha`` split over the :math:`j`) exceeds
    :math:`B_j`. Reports the tightness, the largest frequency / bound, and where it is.

    >>> check_proportion_upper_bound([5, 40], [100, 100], [0.1, 0.1], 1e-3).passed
    False
    """
    instance = dict(instance or {})
    hits, n = _counts(hits, n)
    bound = _stated("bound", bound, trivial=1)
    lim = proportion_limits(hits, n, bound, alpha)
    n, bound, lo, rate, ratio = lim.trials, lim.bound, lim.lower, lim.rate, lim.ratio
    j = lim.tightest
    bad = lim.exceeded
    detail = (f"{what}: largest measured/bound {ratio[j]:.3g} at index {j} (measured "
              f"{rate[j]:.4g}, Clopper-Pearson lower {lo[j]:.4g}, bound {bound[j]:.4g}); "
              f"{int(bad.sum())} of {lim.hits.size} with lower limit > bound "
              f"(one-sided, alpha={alpha:g} over all of them)")
    ce = None
    if bad.any():
        k = int(np.argmax(np.where(bad, lo - bound, -np.inf)))
        ce = {**instance, "index": k, "measured": float(rate[k]), "lower_limit": float(lo[k]),
              "bound": float(bound[k]), "trials": int(n[k])}
    return Evidence(not bool(bad.any()), float(rate[j]), float(bound[j]), detail, alpha=alpha,
                    counterexample=ce, ratio=float(ratio[j]), instance={**instance, "index": j})


def _counts(hits: Any, n: Any) -> tuple[np.ndarray, np.ndarray]:
    r"""``hits`` successes in ``n`` trials as arrays of whole numbers :math:`0 \le k \le n`,
    :math:`n \ge 1`, of one shape (or one broadcast to the other), or a ``ValueError`` naming
    the argument."""
    k, t = _stated("hits", hits), _stated("n", n)
    for name, a, low in (("hits", k, 0), ("n", t, 0)):
        bad = (a != np.round(a)) | (a < low)
        if bad.any():
            raise ValueError(f"{name} must be whole numbers >= {low}, got {_fmt_bad(a, bad)}")
    try:
        k, t = np.broadcast_arrays(k, t)
    except ValueError:
        raise ValueError(f"hits and n must have one shape, got {k.shape} and {t.shape}") from None
    if (k > t).any():
        raise ValueError(f"hits must be at most n (need 0 <= k <= n), got {_fmt_bad(k, k > t)} "
                         f"(n = {float(t[k > t].ravel()[0])!r})")
    return k, t


def _fmt(x: Any) -> str:
    a = np.asarray(x, dtype=float)
    if a.size == 1:
        return f"{a.item():.6g}"
    if a.size <= 6:
        return "[" + ", ".join(f"{v:.4g}" for v in a.ravel()) + "]"
    return f"array{a.shape} (max {np.max(a):.4g}, min {np.min(a):.4g})"
