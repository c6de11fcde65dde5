"""Convex cross-checks (cvxpy, Clarabel by default) that return certificates."""

from fedtheory.convex.eso import (
    ESOResult,
    ESOSolverError,
    eso_gap_matrix,
    eso_min_eigenvalue,
    smallest_eso,
)

__all__ = ["ESOResult", "ESOSolverError", "eso_gap_matrix", "eso_min_eigenvalue", "smallest_eso"]
