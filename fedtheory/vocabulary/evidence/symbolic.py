"""Symbolic evidence: a sympy derivation from the statement's ingredients."""

from fedtheory.vocabulary.evidence import EvidenceKind

KIND = EvidenceKind(
    name="symbolic", order=10, words="symbolic",
    establishes="symbolic computation (sympy)",
    description="a sympy derivation from the statement's ingredients",
    exact_values=True,
)
