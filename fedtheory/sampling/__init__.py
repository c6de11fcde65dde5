"""Sampling designs, exact moments of importance-sampled estimators, and OCS / AOCS."""

from fedtheory.sampling.designs import (
    DESIGN_CLASSES,
    ExplicitSampling,
    IndependentSampling,
    SamplingDesign,
    UniformWithoutReplacement,
)
from fedtheory.sampling.moments import (
    bound_coefficients,
    enumerate_moments,
    eso_bound,
    estimator_mean,
    estimator_variance,
    importance_vectors,
    sample_estimator,
    variance_formula,
)
from fedtheory.sampling.ocs import ocs_threshold, optimal_probabilities

__all__ = [
    "DESIGN_CLASSES",
    "ExplicitSampling",
    "IndependentSampling",
    "SamplingDesign",
    "UniformWithoutReplacement",
    "bound_coefficients",
    "enumerate_moments",
    "eso_bound",
    "estimator_mean",
    "estimator_variance",
    "importance_vectors",
    "ocs_threshold",
    "optimal_probabilities",
    "sample_estimator",
    "variance_formula",
]
