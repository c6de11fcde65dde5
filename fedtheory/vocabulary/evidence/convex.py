"""Convex evidence: a convex program solved (cvxpy), its status recorded."""

from fedtheory.vocabulary.evidence import EvidenceKind

KIND = EvidenceKind(
    name="convex", order=30, words="convex",
    establishes="a convex program solved to certified optimality",
    description="a convex program solved (cvxpy), its status recorded: a check of this kind "
                "that solves none is an error (fedtheory.solver_log)",
    solves=True,
)
