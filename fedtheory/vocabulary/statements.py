"""The words of a claim's declaration and of what is run against it: errata, mutants,
readings, where a claim came from, a certificate's status."""

from __future__ import annotations

__all__ = ["CERTIFIED_STATUSES", "ERRATUM_KINDS", "ERRATUM_MEANING", "MUTANT_KINDS",
           "ORIGIN_KINDS", "POWER_OUTCOMES", "READING_KINDS", "STRONGER_DIRECTIONS"]

#: What each kind of erratum means (an erratum's ``kind``: :class:`fedtheory.claims.Erratum`).
ERRATUM_MEANING: dict[str, str] = {
    "typo": "a misprint: the intended statement, evident from its context, holds",
    "wrong constant": "the form of the statement is right, a constant or factor is not",
    "proof gap": "a step of the proof does not follow, and the statement fails where it is used",
    "omitted hypothesis": "the statement holds once a hypothesis is added, which the document "
                          "relies on but does not state",
    "false statement": "the statement fails on an instance meeting every stated assumption",
    "not reproduced": "an experiment whose outcome differs under a set-up as faithful to the "
                      "document as this machine allows",
}
#: The kinds of erratum, in order.
ERRATUM_KINDS: tuple[str, ...] = tuple(ERRATUM_MEANING)

#: What a ``--power`` mutant changes of the stated side: a constant, a factor, the step
#: condition.
MUTANT_KINDS = ("constant", "factor", "step")
#: Which way a stated constant is stronger (``Stated(stronger=...)``).
STRONGER_DIRECTIONS = ("smaller", "larger")
#: What became of a mutant (a power entry's ``outcome``).
POWER_OUTCOMES = ("caught", "still true", "missed", "error")

#: A declared reading's kind: a way to read the statement, or a setting of it.
READING_KINDS = ("reading", "setting")
#: Where a claim was defined (a report entry's ``origin.kind``).
ORIGIN_KINDS = ("built in", "entry point", "file")
#: The status of a ``verify --certify`` certificate.
CERTIFIED_STATUSES = ("exact", "sandwich", "upper bound only", "lower bound only",
                      "unverified", "out of scope", "error")
