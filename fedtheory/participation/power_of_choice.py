r"""Power-of-choice client selection (Cho, Wang, Joshi 2020): a process that sees the round.

Each round the master draws a candidate set :math:`\mathcal C` of :math:`d` distinct clients,
client :math:`i` with probability proportional to :math:`q_i` (its data fraction; by default
the objective weights :math:`w_i`), sequentially without replacement; the candidates send
their current local losses :math:`f_i(x_t)` (one float each) and the :math:`m` candidates with
the largest losses take part (ties: the lower client index). The selection is biased towards
high-loss clients by design: it is aggregated by the rule as given (e.g. ``"fedavg"``, the
paper's average of the selected updates); it carries no unbiased coefficients.

Drawing without replacement in proportion to :math:`q` is done with Efraimidis and Spirakis'
keys :math:`k_i = V_i^{1/q_i}` (the :math:`d` largest), one uniform per client.
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
from fedtheory.validation import integer_in, probabilities

__all__ = ["PowerOfChoice"]


class PowerOfChoice(RoundAwareProcess, register=True):
    r"""Power-of-choice: ``candidates`` (:math:`d`) drawn :math:`\propto q`, the ``m`` with the
    largest local losses take part.

    :attr:`stationary` is the nominal :math:`m/n` (the true marginal depends on the losses).

    >>> PowerOfChoice(6, candidates=4, m=2).stationary.round(4).tolist()
    [0.3333, 0.3333, 0.3333, 0.3333, 0.3333, 0.3333]
    """

    name: ClassVar[str] = "power_of_choice"

    def __init__(self, n: int, candidates: int, m: int, q: Any = None) -> None:
        self.n = validate_n(n)
        for label, v in (("candidates", candidates), ("m", m)):
            integer_in(label, v, 1, self.n, f"an integer in [1, n={self.n}]")
        if m > candidates:
            raise ValueError(f"m must be at most candidates={candidates}, got {m!r}")
        self.candidates, self.m = int(candidates), int(m)
        self.q = None if q is None else probabilities("q", q, self.n)

    @property
    def stationary(self) -> np.ndarray:
        return np.full(self.n, self.m / self.n)

    def _select(self, state: dict[str, Any], rng: RNGLike, view: RoundView) -> Selection:
        R, n = view.replicas, self.n
        q = np.asarray(view.weights if self.q is None else self.q, dtype=float)
        v = uniforms(rng, R, n)
        # log of the key V^(1/q): the d largest; clients with q = 0 are never candidates
        with np.errstate(divide="ignore"):
            keys = np.where(q > 0, np.log(v) / np.where(q > 0, q, 1.0), -np.inf)
        order = np.argsort(-keys, axis=1, kind="stable")[:, : self.candidates]
        cand = np.zeros((R, n), dtype=bool)
        np.put_along_axis(cand, order, True, axis=1)
        loss = np.where(cand, view.losses(), -np.inf)
        top = np.argsort(-loss, axis=1, kind="stable")[:, : self.m]
        mask = np.zeros((R, n), dtype=bool)
        np.put_along_axis(mask, top, True, axis=1)
        return Selection(mask, None, np.full(R, float(self.candidates)))
