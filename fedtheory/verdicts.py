"""The rules that turn a claim's check outcomes into its verdict and its tightness, once.

They are written over plain values (no numpy, no sympy), so that the claim machinery
(:func:`fedtheory.claims.core.combine`, :func:`fedtheory.claims.core.tightness`) and the
reading of a report (:func:`fedtheory.schema.derived`, which must not import sympy to start
fast) apply the same rules:

* a neutral outcome (a figure) that did not raise counts for nothing;
* ``refuted`` > ``error`` > ``inconclusive`` > ``confirmed``: a failed check refutes the claim
  even when another check raised (the first failed check gives the counterexample);
* no counted check: ``inconclusive``;
* a bound's tightness is its checks' largest measured/stated ratio (the first of equals).

>>> verdict_of([(True, False, False), (None, False, True)])
('confirmed', None)
>>> verdict_of([(None, True, False), (False, False, False)])
('refuted', 1)
>>> verdict_of([(None, True, False), (True, False, False)])
('error', None)
>>> verdict_of([(None, False, True)])
('inconclusive', None)
>>> tightest([None, 0.5, 0.9, 0.9])
2
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["tightest", "verdict_of"]


def verdict_of(outcomes: Sequence[tuple[bool | None, bool, bool]]) -> tuple[str, int | None]:
    """The verdict (its value) of checks given as ``(passed, raised, neutral)``, and the index
    of the check whose counterexample it carries (the first failed one), if refuted."""
    counted = [k for k, (_, raised, neutral) in enumerate(outcomes) if raised or not neutral]
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


def tightest(ratios: Sequence[float | None]) -> int | None:
    """The index of the largest ratio (the first of equals), or None when none is given."""
    rated = [k for k, r in enumerate(ratios) if r is not None]
    if not rated:
        return None
    return max(rated, key=lambda k: ratios[k])  # type: ignore[arg-type, return-value]
