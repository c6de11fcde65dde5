"""Sampling designs, exact moments of importance-sampled estimators, and OCS / AOCS."""

from fedtheory.sampling.ocs import ocs_threshold, optimal_probabilities

__all__ = ["ocs_threshold", "optimal_probabilities"]
