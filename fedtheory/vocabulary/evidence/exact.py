"""Exact evidence: rational arithmetic, an enumeration of every case or an exact chain."""

from fedtheory.vocabulary.evidence import EvidenceKind

KIND = EvidenceKind(
    name="exact", order=20, words="exact",
    establishes="exact rational arithmetic",
    description="exact (rational) arithmetic, enumeration of every case or an exact chain",
    exact_values=True,
)
