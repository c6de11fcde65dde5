"""Optimisation problems: heterogeneous quadratics, logistic regression on real data."""

from fedtheory.problems.base import Problem, validate_weights
from fedtheory.problems.noise import GaussianNoise, NoiseModel, RelativeNoise
from fedtheory.problems.quadratic import QuadraticProblem

__all__ = [
    "GaussianNoise",
    "NoiseModel",
    "Problem",
    "QuadraticProblem",
    "RelativeNoise",
    "validate_weights",
]
