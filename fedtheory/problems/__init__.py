"""Optimisation problems: heterogeneous quadratics, logistic regression on real data."""

from fedtheory.problems.base import (
    Capability,
    ExactLossGap,
    FusedLocalSteps,
    GradientsIntoBuffer,
    OwnLocalSteps,
    Problem,
    check_problem,
    declared_capabilities,
    validate_weights,
)
from fedtheory.problems.datasets import (
    FederatedData,
    dirichlet_label_split,
    federated_split,
    load_dataset,
    unbalance_clients,
)
from fedtheory.problems.logistic import LogisticProblem, make_logistic_problem
from fedtheory.problems.noise import GaussianNoise, NoiseModel, RelativeNoise
from fedtheory.problems.quadratic import QuadraticProblem
from fedtheory.problems.registry import PROBLEMS, get_problem
from fedtheory.problems.stack import ProblemStack

__all__ = [
    "PROBLEMS",
    "Capability",
    "ExactLossGap",
    "FederatedData",
    "FusedLocalSteps",
    "GaussianNoise",
    "GradientsIntoBuffer",
    "LogisticProblem",
    "NoiseModel",
    "OwnLocalSteps",
    "Problem",
    "ProblemStack",
    "check_problem",
    "QuadraticProblem",
    "RelativeNoise",
    "declared_capabilities",
    "dirichlet_label_split",
    "federated_split",
    "get_problem",
    "load_dataset",
    "make_logistic_problem",
    "unbalance_clients",
    "validate_weights",
]
