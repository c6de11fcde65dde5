"""Sympy helpers for the symbolic derivations."""

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

__all__ = [
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
