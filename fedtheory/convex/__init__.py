"""Convex cross-checks (cvxpy, Clarabel by default) that return certificates."""
