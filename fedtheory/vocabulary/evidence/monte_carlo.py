"""Monte Carlo evidence: a simulation judged at a stated false-alarm level."""

from fedtheory.vocabulary.evidence import EvidenceKind

KIND = EvidenceKind(
    name="monte_carlo", order=40, words="monte carlo",
    establishes="a Monte Carlo test at the stated level",
    description="a simulation judged at a stated false-alarm level",
    sampled=True,
)
