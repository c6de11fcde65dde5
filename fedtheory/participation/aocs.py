r"""Approximate optimal client sampling (AOCS; seed 002, Algorithm 2) as a participation
process that sees the round.

As :mod:`fedtheory.participation.ocs`, but the probabilities come from Algorithm 2 with
:math:`j_{\max}` iterations (:func:`fedtheory.sampling.aocs.aocs_probabilities`), which needs
only secure sums at the master: :math:`p_i = \min\{c\,u_i, 1\}` rescaled until
:math:`\sum_i p_i = m` or :math:`j_{\max}` iterations ran. The estimator
:math:`\sum_{i\in S}\frac{w_i}{p_i}\Delta_i` stays unbiased whatever :math:`j_{\max}` (the
probabilities are only less than optimal). Bits: every client sends its norm and, in each
iteration executed, :math:`t_i` (two floats): ``extra_floats`` :math:`= n + 2nJ` per replica.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from fedtheory.participation.base import (
    RNGLike,
    RoundAwareProcess,
    RoundView,
    Selection,
    validate_n,
)
from fedtheory.participation.ocs import independent_selection, validate_budget
from fedtheory.sampling.aocs import aocs_probabilities
from fedtheory.validation import nonnegative_integer

__all__ = ["AOCSParticipation"]


class AOCSParticipation(RoundAwareProcess, register=True):
    r"""AOCS with budget :math:`m` and :math:`j_{\max}` iterations (the seed uses 4).

    >>> AOCSParticipation(4, 2, j_max=4).stationary.tolist()
    [0.5, 0.5, 0.5, 0.5]
    """

    name: ClassVar[str] = "aocs"
    sets_coefficients: ClassVar[bool] = True

    def __init__(self, n: int, m: float, j_max: int = 4) -> None:
        self.n = validate_n(n)
        self.m = validate_budget(m, self.n)
        nonnegative_integer("j_max", j_max)
        self.j_max = int(j_max)

    @property
    def stationary(self) -> np.ndarray:
        return np.full(self.n, self.m / self.n)

    def _select(self, state: dict[str, Any], rng: RNGLike, view: RoundView) -> Selection:
        res = aocs_probabilities(view.weighted_norms(), self.m, self.j_max)
        p = np.asarray(res.p, dtype=float).reshape(view.replicas, self.n)
        its = np.broadcast_to(np.asarray(res.iterations, dtype=float), (view.replicas,))
        state["iterations"] = its.astype(np.int64)
        return independent_selection(p, view.weights, rng, self.n * (1.0 + 2.0 * its))
