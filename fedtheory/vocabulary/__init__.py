"""The vocabulary: every closed list of words a claim, a report and a page share, once.

Verdicts, grades, claim kinds and presets (:mod:`.verdicts`); the kinds of evidence, one file
each (:mod:`.evidence`); erratum kinds, mutant kinds, power outcomes, reading and origin kinds,
certificate statuses (:mod:`.statements`); the fields of a claim's result
(:mod:`.record`). A foundation below every other module of fedtheory: it imports none of
them, so the schema reads a report without the claim machinery, and the claims, the schema,
the command line and the pages cannot disagree on a word.
"""

from fedtheory.vocabulary.evidence import (
    CHECK_KINDS,
    EVIDENCE_KINDS,
    EvidenceKind,
    kind_words,
    kinds_where,
)
from fedtheory.vocabulary.statements import (
    CERTIFIED_STATUSES,
    ERRATUM_KINDS,
    ERRATUM_MEANING,
    MUTANT_KINDS,
    ORIGIN_KINDS,
    POWER_OUTCOMES,
    READING_KINDS,
    STRONGER_DIRECTIONS,
)
from fedtheory.vocabulary.verdicts import (
    BOUND_KINDS,
    CHECK_GRADES,
    CLAIM_KINDS,
    CONFIRMED,
    GRADES,
    LOW_POWER,
    NOT_TESTABLE,
    PRESETS,
    VERDICTS,
    ClaimKind,
    Verdict,
)

__all__ = [
    "BOUND_KINDS", "CERTIFIED_STATUSES", "CHECK_GRADES", "CHECK_KINDS", "CLAIM_KINDS",
    "CONFIRMED", "ERRATUM_KINDS", "ERRATUM_MEANING", "EVIDENCE_KINDS", "GRADES", "LOW_POWER",
    "MUTANT_KINDS", "NOT_TESTABLE", "ORIGIN_KINDS", "POWER_OUTCOMES", "PRESETS",
    "READING_KINDS", "STRONGER_DIRECTIONS", "VERDICTS", "ClaimKind", "EvidenceKind", "Verdict",
    "kind_words", "kinds_where",
]
