"""What a claim is, what it can come out as, and how its run is sized: the words of a verdict."""

from __future__ import annotations

import enum

__all__ = [
    "BOUND_KINDS", "CHECK_GRADES", "CLAIM_KINDS", "CONFIRMED", "GRADES", "LOW_POWER",
    "NOT_TESTABLE", "PRESETS", "VERDICTS", "ClaimKind", "Verdict",
]


class ClaimKind(str, enum.Enum):
    """What sort of mathematical statement a claim is."""

    IDENTITY = "identity"
    UPPER_BOUND = "upper bound"
    LOWER_BOUND = "lower bound"
    CLOSED_FORM = "closed form"
    QUALITATIVE = "qualitative"


class Verdict(str, enum.Enum):
    """The outcome of verifying a claim."""

    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    INCONCLUSIVE = "inconclusive"
    ERROR = "error"


#: The values of :class:`ClaimKind` (a report entry's ``kind``).
CLAIM_KINDS: tuple[str, ...] = tuple(k.value for k in ClaimKind)
#: The claim kinds whose checks report a tightness ratio.
BOUND_KINDS: tuple[str, ...] = (ClaimKind.UPPER_BOUND.value, ClaimKind.LOWER_BOUND.value)
#: The values of :class:`Verdict` (a report entry's ``verdict``, the keys of its ``summary``).
VERDICTS: tuple[str, ...] = tuple(v.value for v in Verdict)

#: The size presets of a run.
PRESETS = ("quick", "full")

#: A confirmation that could have detected a violation of the size that matters.
CONFIRMED = "confirmed"
#: A confirmation that could not have (low power): reported, never counted as ``confirmed``.
LOW_POWER = "consistent (low power)"
#: A check that cannot discriminate on this set-up: neither a refutation nor a confirmation.
NOT_TESTABLE = "not testable"
#: The grades a check may carry (its ``grade``; None: ungraded, a plain outcome).
CHECK_GRADES = (CONFIRMED, LOW_POWER, NOT_TESTABLE)
#: The grades a claim's verdict may carry (``confirmed`` and ``consistent (low power)`` for a
#: confirmed claim, ``not testable`` for an inconclusive one whose deciding checks all are).
GRADES = CHECK_GRADES
