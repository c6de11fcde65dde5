"""A figure: a picture, neutral (it shows, it does not test)."""

from fedtheory.vocabulary.evidence import EvidenceKind

KIND = EvidenceKind(
    name="figure", order=50, words="figure",
    establishes="a figure",
    description="a picture (neutral: it shows, it does not test)",
    shows=True,
)
