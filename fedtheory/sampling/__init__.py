"""Sampling designs, exact moments of importance-sampled estimators, and OCS / AOCS."""

from fedtheory.sampling.aocs import AOCSResult, aocs_iteration_study, aocs_probabilities
from fedtheory.sampling.designs import (
    DESIGN_CLASSES,
    ExplicitSampling,
    IndependentSampling,
    SamplingDesign,
    UniformWithoutReplacement,
)
from fedtheory.sampling.improvement import (
    alpha_spread_study,
    alpha_upper_bound,
    gamma_from_alpha,
    improvement_factor,
    relative_improvement_factor,
    uniform_variance,
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
from fedtheory.sampling.ocs import (
    closed_form_as_printed,
    independent_sampling_variance,
    ocs_threshold,
    optimal_probabilities,
    optimal_variance,
    validate_norms,
)

__all__ = [
    "AOCSResult",
    "aocs_iteration_study",
    "aocs_probabilities",
    "alpha_spread_study",
    "alpha_upper_bound",
    "closed_form_as_printed",
    "gamma_from_alpha",
    "improvement_factor",
    "independent_sampling_variance",
    "optimal_variance",
    "relative_improvement_factor",
    "uniform_variance",
    "validate_norms",
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
