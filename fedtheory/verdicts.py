"""The rules that turn a claim's check outcomes into its verdict, its grade and its tightness,
once.

They are written over plain values (no numpy, no sympy), so that the claim machinery
(:func:`fedtheory.claimkit.core.combine`, :func:`fedtheory.claimkit.core.tightness`) and the
reading of a report (:func:`fedtheory.schema.derived`, which must not import sympy to start
fast) apply the same rules:

* a neutral outcome (a figure) that did not raise counts for nothing;
* a check that cannot discriminate (:data:`NOT_TESTABLE`: declared so on the set-up card, or
  shown so by the run, every method within the margin of the best) counts for nothing either:
  never a refutation, never a confirmation; it is counted apart (:func:`grade_of`);
* ``refuted`` > ``error`` > ``inconclusive`` > ``confirmed``: a failed check refutes the claim
  even when another check raised (the first failed check gives the counterexample);
* no counted check: ``inconclusive``;
* a bound's tightness is its checks' largest measured/stated ratio (the first of equals).

A confirmation has a grade (:func:`grade_of`): ``confirmed`` when every passing check could
have detected a violation of the size that matters, ``consistent (low power)`` when one of
them could not (its detectable effect exceeds the claim's margin, identical outputs taken as
an equivalence, a constant it could refute only far from the stated one). A claim whose every
deciding check is not testable is ``inconclusive`` with the grade ``not testable``.

>>> verdict_of([(True, False, False), (None, False, True)])
('confirmed', None)
>>> verdict_of([(None, True, False), (False, False, False)])
('refuted', 1)
>>> verdict_of([(None, True, False), (True, False, False)])
('error', None)
>>> verdict_of([(None, False, True)])
('inconclusive', None)
>>> verdict_of([(True, False, False), (None, False, False, NOT_TESTABLE)])
('confirmed', None)
>>> grade_of([(True, False, False, LOW_POWER), (True, False, False)])
'consistent (low power)'
>>> grade_of([(None, False, False, NOT_TESTABLE), (None, False, True)])
'not testable'
>>> tightest([None, 0.5, 0.9, 0.9])
2
"""

from __future__ import annotations

from collections.abc import Sequence

from fedtheory.vocabulary.verdicts import CHECK_GRADES, CONFIRMED, GRADES, LOW_POWER, NOT_TESTABLE

__all__ = ["CHECK_GRADES", "CONFIRMED", "GRADES", "LOW_POWER", "NOT_TESTABLE", "grade_of",
           "tightest", "verdict_of"]

# The grades (a check's and a verdict's): the vocabulary's (fedtheory.vocabulary.verdicts).

#: One check's outcome: ``(passed, raised, neutral)`` or ``(passed, raised, neutral, grade)``.
Outcome = tuple


def _grade(outcome: Outcome) -> str | None:
    if len(outcome) > 3 and outcome[3] is not None:
        if outcome[3] not in CHECK_GRADES:
            raise ValueError(f"grade must be one of {CHECK_GRADES} or None, got {outcome[3]!r}")
        return str(outcome[3])
    return None


def _untestable(outcome: Outcome) -> bool:
    """A not-testable check that did not raise (and decided nothing)."""
    return _grade(outcome) == NOT_TESTABLE and not outcome[1] and outcome[0] is None


def verdict_of(outcomes: Sequence[Outcome]) -> tuple[str, int | None]:
    """The verdict (its value) of checks given as ``(passed, raised, neutral[, grade])``, and
    the index of the check whose counterexample it carries (the first failed one), if
    refuted. A not-testable check counts for nothing, like a figure."""
    counted = [k for k, o in enumerate(outcomes)
               if (o[1] or not o[2]) and not _untestable(o)]
    if not counted:
        return "inconclusive", None
    failed = [k for k in counted if outcomes[k][0] is False]
    if failed:
        return "refuted", failed[0]
    if any(outcomes[k][1] for k in counted):
        return "error", None
    if any(outcomes[k][0] is None for k in counted):
        return "inconclusive", None
    return "confirmed", None


def grade_of(outcomes: Sequence[Outcome]) -> str | None:
    """The grade of the verdict :func:`verdict_of` gives: for ``confirmed``, ``consistent (low
    power)`` when a deciding check is graded so, else ``confirmed``; for ``inconclusive``,
    ``not testable`` when no check counted and some check is not testable; None otherwise."""
    verdict, _ = verdict_of(outcomes)
    if verdict == "confirmed":
        low = any(_grade(o) == LOW_POWER for o in outcomes if o[0] is True)
        return LOW_POWER if low else CONFIRMED
    if verdict == "inconclusive" and any(_untestable(o) for o in outcomes):
        counted = [o for o in outcomes if (o[1] or not o[2]) and not _untestable(o)]
        return NOT_TESTABLE if not counted else None
    return None


def tightest(ratios: Sequence[float | None]) -> int | None:
    """The index of the largest ratio (the first of equals), or None when none is given."""
    rated = [k for k, r in enumerate(ratios) if r is not None]
    if not rated:
        return None
    return max(rated, key=lambda k: ratios[k])  # type: ignore[arg-type, return-value]
