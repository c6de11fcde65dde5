r"""What "A beats B" means on a set-up: better by the margin, below it, a tie, or not testable.

:func:`fedtheory.claimkit.checks.compare_paired` (hypothesis ``"better"``) confirms when the
lower limit of A's gain is above 0 and refutes when the upper limit is below the margin. A
referee reads four outcomes, and this module names them (:func:`graded_better`):

* **better by the margin**: the lower limit is above the margin (``confirmed``);
* **better, below the margin**: the lower limit is above 0 but not above the margin (a pass
  graded ``consistent (low power)``: significant, yet not shown to be the advantage the claim
  calls an improvement);
* **tie**: the upper limit is below the margin and the interval includes 0 (refutes "better"
  only where the set-up has room for the gain, worded as a tie, never "worse");
  **significantly worse**: the upper limit is below 0;
* **not testable**: the set-up leaves no room for the gain. Its **headroom**, how far the best
  reference (Full participation, say) is from B, is below the margin: no method could beat B
  by the margin here (:meth:`~fedtheory.claimkit.evidence.Evidence.not_testable`), unless A is
  significantly better anyway (then ``better, below the margin``).

Every outcome reports the headroom beside the gain.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> b = rng.normal(size=30)
>>> from fedtheory.claimkit.checks import compare_paired
>>> tie = compare_paired(b + 0.001 * rng.normal(size=30), b, "better", 0.5, alpha=0.01)
>>> graded_better(tie, 0.5, headroom=2.0).data["verdict_text"]
'tie'
>>> graded_better(tie, 0.5, headroom=0.1).grade
'not testable'
>>> small = compare_paired(b + 0.2 + 0.01 * rng.normal(size=30), b, "better", 0.5, alpha=0.01)
>>> ev = graded_better(small, 0.5, headroom=2.0)
>>> ev.passed, ev.grade, ev.data["verdict_text"]
(True, 'consistent (low power)', 'better, below the margin')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from fedtheory.claimkit import checks
from fedtheory.claimkit.evidence import Evidence
from fedtheory.verdicts import LOW_POWER

__all__ = ["OUTCOMES", "best_reference", "better_outcome", "graded_better", "graded_compare",
           "spread"]

#: The outcomes of "A beats B", as a referee words them.
OUTCOMES = ("better by the margin", "better, below the margin", "not resolved", "tie",
            "significantly worse", "not testable")


def better_outcome(lower: float, upper: float, margin: float,
                   headroom: float | None = None, declared: bool = False) -> str:
    """The outcome (:data:`OUTCOMES`) of a one-sided "better" comparison with limits
    ``[lower, upper]`` on A's gain, the claim's ``margin`` and the set-up's ``headroom``;
    ``declared``: the set-up card says the comparison cannot discriminate here (then, as
    without headroom, only a significant difference decides).

    >>> better_outcome(0.6, 0.9, 0.5), better_outcome(0.1, 0.9, 0.5), better_outcome(-0.1, 0.2, 0.5)
    ('better by the margin', 'better, below the margin', 'tie')
    >>> better_outcome(-0.1, 0.2, 0.5, headroom=0.3), better_outcome(-0.9, -0.2, 0.5)
    ('not testable', 'significantly worse')
    >>> better_outcome(-0.1, 0.2, 0.5, headroom=2.0, declared=True)
    'not testable'

    """
    if lower > margin:
        return "better by the margin"
    if lower > 0:
        return "better, below the margin"
    if upper < 0:
        return "significantly worse"
    if declared or (headroom is not None and headroom < margin):
        return "not testable"
    if upper < margin:
        return "tie"
    return "not resolved"


def graded_better(ev: Evidence, margin: float, headroom: float | None = None,
                  reference: str = "the best reference", declared: str | None = None
                  ) -> Evidence:
    """Re-grade the evidence of :func:`~fedtheory.claimkit.checks.compare_paired` (``"better"``,
    one test record) by :func:`better_outcome`; the headroom (``reference``'s advantage over
    B on this set-up, in the gain's units), when given, is reported beside the gain;
    ``declared``: why the set-up card says this comparison cannot discriminate, if it does."""
    if len(ev.tests) != 1 or ev.tests[0].get("hypothesis") != "better":
        raise ValueError("graded_better needs the evidence of one compare_paired 'better' test")
    rec = dict(ev.tests[0])
    outcome = better_outcome(rec["lower"], rec["upper"], margin, headroom, bool(declared))
    rec.update(outcome=outcome, headroom=headroom)
    room = ("" if headroom is None else
            f"; headroom: {reference} beats B by {headroom:.4g} on this set-up (margin "
            f"{margin:g})")
    detail = f"{ev.detail}; outcome: {outcome}{room}"
    data = {**ev.data, "verdict_text": outcome, "headroom": headroom, "outcome": outcome}
    if outcome == "not testable":
        why = (f"declared on the set-up card: {declared}" if declared and not (
            headroom is not None and headroom < margin) else
            f"no headroom: {reference} beats B by only {headroom:.4g} < margin {margin:g}")
        return Evidence.not_testable(ev.measured, ev.theoretical, detail, why, data=data,
                                     tests=[rec])
    out = Evidence(ev.passed, ev.measured, ev.theoretical, detail, tolerance=ev.tolerance,
                   alpha=ev.alpha, counterexample=ev.counterexample, data=data, tests=[rec],
                   undecided=ev.undecided,
                   grade=LOW_POWER if outcome == "better, below the margin" else None)
    if out.counterexample is not None:
        out.counterexample = {**out.counterexample, "outcome": outcome, "headroom": headroom}
    return out


def spread(values: dict[str, Any]) -> float:
    """How far apart the methods' scores are (the largest minus the smallest): the room a
    comparison among them has on this set-up.

    >>> spread({"a": 1.0, "b": 1.25, "c": 0.75})
    0.5
    """
    v = [float(x) for x in values.values()]
    return max(v) - min(v)


def best_reference(scores: Mapping[str, Any], b: str, higher_is_better: bool = True
                   ) -> tuple[str, float]:
    """The best reference of a set-up and its headroom over ``b``: among ``scores`` (each
    method's per-seed values, or one value; ``b`` included), the method with the best mean and
    how far its mean is from ``b``'s, in the units of A's gain (``b``'s mean minus the best's
    when lower is better); 0 when ``b`` is itself the best.

    >>> best_reference({"full": [1.0, 1.5], "uniform": [0.5, 1.0], "ocs": [0.9, 0.9]}, "uniform")
    ('full', 0.5)
    >>> best_reference({"a": 2.0, "b": 1.0}, "b", higher_is_better=False)
    ('b', 0.0)
    """
    if b not in scores:
        raise ValueError(f"the scores must include B ({b!r}), got {sorted(scores)}")
    sign = 1.0 if higher_is_better else -1.0
    means = {k: sign * float(np.mean(np.asarray(v, dtype=float))) for k, v in scores.items()}
    best = max(means, key=means.__getitem__)
    return best, float(means[best] - means[b])


def graded_compare(a: Any, b: Any, margin: float, alpha: float, *, headroom: float | None,
                   reference: str, higher_is_better: bool = True, what: str = "A - B",
                   counterexample: dict[str, Any] | None = None,
                   declared: str | None = None) -> Evidence:
    """"A beats B" from paired per-seed values: the one-sided paired t-test of
    :func:`~fedtheory.claimkit.checks.compare_paired` (``"better"``, limits each at level
    ``alpha``) graded by :func:`graded_better` (the outcome and the set-up's ``headroom``, that
    of ``reference`` over B, in the detail, the data and the test record).

    >>> base = np.random.default_rng(0).normal(size=40)
    >>> ev = graded_compare(base + 1.0, base, 0.5, 1e-6, headroom=1.5, reference="Full")
    >>> ev.passed, ev.data["outcome"], ev.data["headroom"]
    (True, 'better by the margin', 1.5)
    >>> tie = graded_compare(base + 0.001 * np.random.default_rng(1).normal(size=40), base, 0.5,
    ...                      1e-6, headroom=1.5, reference="Full")
    >>> tie.passed, tie.data["outcome"]
    (False, 'tie')
    """
    ev = checks.compare_paired(a, b, "better", margin, alpha=alpha,
                               higher_is_better=higher_is_better, what=what,
                               counterexample=counterexample)
    return graded_better(ev, margin, headroom=headroom, reference=reference, declared=declared)
