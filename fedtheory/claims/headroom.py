r"""What "A beats B" means on a set-up: better by the margin, below it, a tie, or not testable.

:func:`fedtheory.claims.checks.compare_paired` (hypothesis ``"better"``) confirms when the
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
  by the margin here (:meth:`~fedtheory.claims.evidence.Evidence.not_testable`), unless A is
  significantly better anyway (then ``better, below the margin``).

Every outcome reports the headroom beside the gain.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> b = rng.normal(size=30)
>>> from fedtheory.claims.checks import compare_paired
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

from typing import Any

from fedtheory.claims.evidence import Evidence
from fedtheory.verdicts import LOW_POWER

__all__ = ["OUTCOMES", "better_outcome", "graded_better", "spread"]

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
    """Re-grade the evidence of :func:`~fedtheory.claims.checks.compare_paired` (``"better"``,
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
