"""Sympy helpers for the symbolic derivations."""

from fedtheory.symbolic.enumeration import (
    all_masks,
    exact_expectation,
    fractions,
    mask_probabilities,
)
from fedtheory.symbolic.indicators import (
    derive_estimator_moments,
    design_moments,
    expectation,
    independent_moments,
    indicator_symbols,
    pairwise_moments,
    sign_expectation,
    sign_symbols,
    symbolic_pair_matrix,
    uniform_without_replacement_moments,
    vector_symbols,
)
from fedtheory.symbolic.kkt import (
    KKTPoint,
    OCSKKTDerivation,
    derive_ocs_kkt,
    derive_optimal_value,
    kkt_points_exact,
    to_rational,
)

__all__ = [
    "all_masks",
    "exact_expectation",
    "fractions",
    "mask_probabilities",
    "KKTPoint",
    "OCSKKTDerivation",
    "derive_ocs_kkt",
    "derive_optimal_value",
    "kkt_points_exact",
    "to_rational",
    "derive_estimator_moments",
    "design_moments",
    "expectation",
    "independent_moments",
    "indicator_symbols",
    "pairwise_moments",
    "sign_expectation",
    "sign_symbols",
    "symbolic_pair_matrix",
    "uniform_without_replacement_moments",
    "vector_symbols",
]
