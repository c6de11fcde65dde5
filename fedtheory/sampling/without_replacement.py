r"""Uniform sampling without replacement: :math:`b` of :math:`n` clients, every
:math:`b`-subset equally likely (":math:`b`-nice" sampling); the round law of
:class:`~fedtheory.participation.UniformParticipation`.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory.sampling.base import SamplingDesign
from fedtheory.sampling.shuffle import _partial_shuffle
from fedtheory.validation import integer_in, positive_integer

__all__ = ["UniformWithoutReplacement"]


class UniformWithoutReplacement(SamplingDesign):
    r"""Exactly :math:`b` of :math:`n` clients, every :math:`b`-subset equally likely.

    By counting subsets, :math:`p_i = \binom{n-1}{b-1} / \binom{n}{b} = b/n` and, for
    :math:`i \ne j`, :math:`\mathbf P_{ij} = \binom{n-2}{b-2} / \binom{n}{b} = b(b-1)/(n(n-1))`.

    Parameters
    ----------
    n:
        Number of clients, :math:`n \ge 1`.
    b:
        Number sampled, :math:`1 \le b \le n` (:math:`b = n` is full participation).

    Examples
    --------
    >>> UniformWithoutReplacement(3, 1).P
    array([[0.33333333, 0.        , 0.        ],
           [0.        , 0.33333333, 0.        ],
           [0.        , 0.        , 0.33333333]])
    """

    def __init__(self, n: int, b: int) -> None:
        positive_integer("n", n)
        integer_in("b", b, 1, n, f"an integer in [1, n] = [1, {n}]")
        self._n = int(n)
        self.b = int(b)

    @property
    def n(self) -> int:
        return self._n

    def _marginals(self) -> np.ndarray:
        return np.full(self._n, self.b / self._n)

    def _pair_offdiag_exact(self) -> Fraction:
        n, b = self._n, self.b
        if n == 1:
            return Fraction(0)
        return Fraction(math.comb(n - 2, b - 2) if b >= 2 else 0, math.comb(n, b))

    def _pairs(self) -> np.ndarray:
        P = np.full((self._n, self._n), float(self._pair_offdiag_exact()))
        np.fill_diagonal(P, self.b / self._n)
        return P

    def _marginals_exact(self) -> list[Fraction]:
        return [Fraction(math.comb(self._n - 1, self.b - 1), math.comb(self._n, self.b))] * self._n

    def _pairs_exact(self) -> list[list[Fraction]]:
        q = self._marginals_exact()[0]
        r = self._pair_offdiag_exact()
        return [[q if i == j else r for j in range(self._n)] for i in range(self._n)]

    def _subsets_into(self, rng: np.random.Generator, out: np.ndarray) -> None:
        r"""Write one uniformly random :math:`b`-subset per row of ``out`` as 0/1 (any dtype).

        A partial Fisher--Yates shuffle, vectorised over rows: with :math:`k = \min(b, n-b)`,
        step :math:`j < k` swaps position :math:`j` with a uniform position in
        :math:`\{j, \dots, n-1\}` of every row at once, so the first :math:`k` positions are a
        uniformly random :math:`k`-subset (the sampled clients, or for :math:`b > n/2` the
        left-out ones). Row :math:`r` uses the uniforms :math:`u_{r,0..k-1}`, drawn row by
        row, so the subsets do not depend on how the rows are chunked. The position is
        :math:`j + \lfloor u (n-j) \rfloor` (clipped to :math:`n-1` against rounding); its
        departure from exact uniformity is of order :math:`n 2^{-53}`. It draws :math:`k`
        uniforms per row instead of the :math:`n` of thresholding at an order statistic.
        The shuffle itself is :func:`_partial_shuffle`.
        """
        rows, n = out.shape
        k = min(self.b, n - self.b)
        take = self.b <= n - self.b
        out.fill(0 if take else 1)
        if k == 0 or rows == 0:
            return
        chosen = _partial_shuffle(rng.random((rows, k)), n)
        out.reshape(-1)[chosen.reshape(-1)] = 1 if take else 0

    def _sample(self, rng: np.random.Generator, replicas: int) -> np.ndarray:
        out = np.empty((replicas, self._n), dtype=bool)
        self._subsets_into(rng, out)
        return out

    def _sample_into(self, rng: np.random.Generator, out: np.ndarray) -> None:
        self._subsets_into(rng, out)

    def _count(self) -> int:
        return math.comb(self._n, self.b)

    def _enumerate(self, exact: bool) -> tuple[np.ndarray, np.ndarray]:
        combos = list(itertools.combinations(range(self._n), self.b))
        masks = np.zeros((len(combos), self._n), dtype=bool)
        masks[np.repeat(np.arange(len(combos)), self.b), np.asarray(combos).ravel()] = True
        if exact:
            probs = np.empty(len(combos), dtype=object)
            probs[:] = [Fraction(1, len(combos))] * len(combos)
        else:
            probs = np.full(len(combos), 1.0 / len(combos))
        return masks, probs

    def describe(self) -> dict[str, Any]:
        return {"design": "uniform without replacement", "n": self.n, "b": self.b}

    def _repr_args(self) -> str:
        return f"n={self._n}, b={self.b}"
