r"""Independent (Bernoulli, "Poisson") sampling: client :math:`i` joins with probability
:math:`p_i`, independently of the others; the round law of
:class:`~fedtheory.participation.BernoulliParticipation`.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory.sampling.base import SamplingDesign, _as_fraction
from fedtheory.validation import probabilities

__all__ = ["IndependentSampling"]


class IndependentSampling(SamplingDesign):
    r"""Independent (Bernoulli) participation: client :math:`i` joins with probability :math:`p_i`.

    .. math:: \Pr(S) = \prod_{i \in S} p_i \prod_{i \notin S} (1 - p_i),
              \qquad \mathbf P = p p^\top + \mathrm{Diag}(p \circ (1 - p)).

    Parameters
    ----------
    p:
        Participation probabilities, shape ``(n,)``, each in :math:`(0, 1]`.

    Examples
    --------
    >>> d = IndependentSampling([0.5, 1.0])
    >>> d.P
    array([[0.5, 0.5],
           [0.5, 1. ]])
    """

    def __init__(self, p: Sequence[float] | np.ndarray) -> None:
        arr = probabilities("p", p)
        self._p = arr
        self._p_in = list(p) if not isinstance(p, np.ndarray) else list(arr)

    @property
    def n(self) -> int:
        return int(self._p.size)

    def _marginals(self) -> np.ndarray:
        return self._p.copy()

    def _pairs(self) -> np.ndarray:
        P = np.outer(self._p, self._p)
        np.fill_diagonal(P, self._p)
        return P

    def _marginals_exact(self) -> list[Fraction]:
        return [_as_fraction(x) for x in self._p_in]

    def _pairs_exact(self) -> list[list[Fraction]]:
        q = self._marginals_exact()
        return [[q[i] if i == j else q[i] * q[j] for j in range(self.n)] for i in range(self.n)]

    def _sample(self, rng: np.random.Generator, replicas: int) -> np.ndarray:
        # U < p_i has probability p_i; p_i = 1 always joins since U lies in [0, 1)
        return rng.random((replicas, self.n)) < self._p

    def _sample_into(self, rng: np.random.Generator, out: np.ndarray) -> None:
        rng.random(out=out)
        np.less(out, self._p, out=out)  # 1.0 where U < p_i, else 0.0

    def _count(self) -> int:
        return 2 ** int(np.sum(self._p < 1))

    def _enumerate(self, exact: bool) -> tuple[np.ndarray, np.ndarray]:
        n = self.n
        free = np.flatnonzero(self._p < 1)  # clients with p_i = 1 are always in
        k = len(free)
        bits = ((np.arange(2**k)[:, None] >> np.arange(k)[None, :]) & 1).astype(bool)
        masks = np.ones((2**k, n), dtype=bool)
        masks[:, free] = bits
        if exact:
            q = self._marginals_exact()
            probs = np.empty(2**k, dtype=object)
            for r in range(2**k):
                val = Fraction(1)
                for c, j in enumerate(free):
                    val *= q[j] if bits[r, c] else 1 - q[j]
                probs[r] = val
            return masks, probs
        pf = self._p[free]
        probs = np.prod(np.where(bits, pf, 1.0 - pf), axis=1)
        return masks, probs

    def describe(self) -> dict[str, Any]:
        return {"design": "independent", "p": [str(x) for x in self.p_exact]}

    def _repr_args(self) -> str:
        return f"p={np.array2string(self._p, precision=4, separator=', ')}"
