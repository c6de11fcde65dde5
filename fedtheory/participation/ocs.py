r"""Optimal client sampling (OCS; seed 002, Algorithm 1) as a participation process that sees
the round.

Every client computes its update :math:`\Delta_i` of the round and sends its norm
:math:`u_i = w_i\|\Delta_i\|` (one float); the probabilities are the closed form (7) with
budget :math:`m` (:func:`fedtheory.sampling.ocs.optimal_probabilities`),

.. math:: p_i^t = \begin{cases}(m + l - n)\,u_i/\sum_{j\le l}u_{(j)}, & u_i \le u_{(l)},\\
    1, & u_i > u_{(l)},\end{cases}

client :math:`i` sends :math:`\Delta_i` independently with probability :math:`p_i^t`, and the
master aggregates :math:`G_t = \sum_{i\in S_t} \frac{w_i}{p_i^t}\Delta_i` (rule ``"fedavg_is"``,
which applies the selection's coefficients :math:`a_i = w_i/p_i^t`), unbiased for
:math:`\sum_i w_i\Delta_i`: a client with :math:`p_i^t = 0` has :math:`u_i = 0`, so
:math:`w_i\Delta_i = 0` and it loses nothing.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from fedtheory.participation.base import (
    RNGLike,
    RoundAwareProcess,
    RoundView,
    Selection,
    uniforms,
    validate_n,
)
from fedtheory.sampling.ocs import optimal_probabilities

__all__ = ["OCSParticipation", "independent_selection", "validate_budget"]


def validate_budget(m: Any, n: int, name: str = "m") -> float:
    """A budget :math:`0 < m \\le n` as a float, or ``ValueError`` naming it."""
    if isinstance(m, (bool, np.bool_)):
        raise ValueError(f"{name} must be a real number in (0, n={n}], got {m!r}")
    try:
        v = float(m)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number in (0, n={n}], got {m!r}") from None
    if not (np.isfinite(v) and 0 < v <= n):
        raise ValueError(f"{name} must be a real number in (0, n={n}], got {m!r}")
    return v


def independent_selection(p: np.ndarray, weights: np.ndarray, rng: RNGLike,
                          extra_floats: np.ndarray | None) -> Selection:
    r"""Independent sampling with probabilities ``p`` ``(R, n)``: client :math:`i` takes part
    iff :math:`V_i < p_i` (one uniform per client, row :math:`r` from replica :math:`r`'s
    generator), with coefficients :math:`w_i/p_i` (0 where :math:`p_i = 0`)."""
    R, n = p.shape
    mask = uniforms(rng, R, n) < p
    coef = np.zeros_like(p)
    np.divide(np.broadcast_to(weights, p.shape), p, out=coef, where=p > 0)
    return Selection(mask, coef, extra_floats)


class OCSParticipation(RoundAwareProcess, register=True):
    r"""Optimal client sampling with budget :math:`m` (expected participants), from this
    round's update norms.

    :attr:`stationary` is the nominal :math:`m/n`; the round's :math:`p_i^t` and the unbiased
    coefficients :math:`w_i/p_i^t` come with each selection. Bits: every client sends its norm
    (``extra_floats`` :math:`= n` per replica and round).

    >>> proc = OCSParticipation(4, 2)
    >>> proc.stationary.tolist()
    [0.5, 0.5, 0.5, 0.5]
    """

    name: ClassVar[str] = "ocs"
    sets_coefficients: ClassVar[bool] = True

    def __init__(self, n: int, m: float) -> None:
        self.n = validate_n(n)
        self.m = validate_budget(m, self.n)

    @property
    def stationary(self) -> np.ndarray:
        return np.full(self.n, self.m / self.n)

    def probabilities(self, view: RoundView) -> np.ndarray:
        """This round's :math:`p^t`, ``(R, n)``."""
        return optimal_probabilities(view.weighted_norms(), self.m)

    def _select(self, state: dict[str, Any], rng: RNGLike, view: RoundView) -> Selection:
        p = np.asarray(self.probabilities(view), dtype=float).reshape(view.replicas, self.n)
        return independent_selection(p, view.weights, rng,
                                     np.full(view.replicas, float(self.n)))
