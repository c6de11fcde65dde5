"""Convex cross-checks (cvxpy, Clarabel by default) that return certificates."""

from fedtheory.convex.eso import (
    ESOResult,
    ESOSolverError,
    eso_gap_matrix,
    eso_min_eigenvalue,
    smallest_eso,
)
from fedtheory.convex.ocs import (
    KKTCertificate,
    OCSConvexSolution,
    budget_dual_bound,
    dual_function,
    kkt_certificate,
    solve_ocs_convex,
)

__all__ = ["ESOResult", "ESOSolverError", "eso_gap_matrix", "eso_min_eigenvalue", "smallest_eso"]
__all__ += ["KKTCertificate", "OCSConvexSolution", "budget_dual_bound", "dual_function",
            "kkt_certificate", "solve_ocs_convex"]
