r"""An explicit distribution over a list of subsets (small :math:`n`):
:math:`\mathbf P = M^\top \mathrm{Diag}(\pi) M` for the 0/1 matrix :math:`M` of subsets and
their probabilities :math:`\pi`.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory.sampling.base import SamplingDesign, _as_fraction
from fedtheory.validation import positive_integer

__all__ = ["PROB_SUM_TOL", "ExplicitSampling"]

#: Tolerance on the sum of the probabilities of an :class:`ExplicitSampling`.
PROB_SUM_TOL = 1e-9

class ExplicitSampling(SamplingDesign):
    r"""An explicit distribution over subsets: :math:`\Pr(S = S_k) = \pi_k`.

    .. math:: p = M^\top \pi, \qquad \mathbf P = M^\top \mathrm{Diag}(\pi)\, M,

    with :math:`M \in \{0,1\}^{k \times n}` the indicator rows of the subsets.

    Parameters
    ----------
    subsets:
        Either a list of index tuples (``[(0, 2), (1,), ()]``; then ``n`` is required unless it
        is ``1 + `` the largest index) or a boolean array of shape ``(k, n)``.
    probs:
        Probabilities :math:`\pi_k \ge 0`, shape ``(k,)``, summing to 1 (within
        :data:`PROB_SUM_TOL`). Exact values (``fractions.Fraction``, integers) are kept for
        :attr:`p_exact` / :attr:`P_exact`; if their exact sum is not 1 (floats such as 0.1), the
        exact probabilities are normalised by it.
    n:
        Number of clients, when ``subsets`` is a list of tuples.

    Repeated subsets are merged (their probabilities added). Clients that appear in no subset of
    positive probability have :math:`p_i = 0`; such a design is not *proper*.

    Examples
    --------
    >>> d = ExplicitSampling([(), (0, 1)], [0.5, 0.5])
    >>> d.p, float(d.P[0, 1])
    (array([0.5, 0.5]), 0.5)
    """

    def __init__(
        self,
        subsets: Sequence[Sequence[int]] | np.ndarray,
        probs: Sequence[Any] | np.ndarray,
        n: int | None = None,
    ) -> None:
        masks = self._parse_subsets(subsets, n)
        probs_in = list(np.asarray(probs, dtype=object).ravel()) if not np.isscalar(probs) else []
        if np.ndim(probs) != 1 or len(probs_in) != masks.shape[0]:
            raise ValueError(
                f"probs must have shape ({masks.shape[0]},) (one per subset), "
                f"got shape {np.shape(probs)}"
            )
        try:
            pf = np.asarray([float(x) for x in probs_in], dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"probs must be real numbers, got {probs!r}") from None
        if not np.all(np.isfinite(pf)):
            raise ValueError(f"probs must be finite, got {pf.tolist()!r}")
        if np.any(pf < 0):
            raise ValueError(f"probs must be non-negative, got {float(pf[pf < 0][0])!r}")
        if abs(pf.sum() - 1.0) > PROB_SUM_TOL:
            raise ValueError(f"probs must sum to 1, got sum {float(pf.sum())!r}")
        exact = [_as_fraction(x) for x in probs_in]
        total = sum(exact, Fraction(0))
        if total != 1:
            exact = [x / total for x in exact]
        # merge duplicates, drop zero-probability subsets
        merged: dict[bytes, list[Any]] = {}
        for row, q, qe in zip(masks, pf, exact, strict=True):
            if qe == 0:
                continue
            key = row.tobytes()
            if key in merged:
                merged[key][1] += q
                merged[key][2] += qe
            else:
                merged[key] = [row.copy(), q, qe]
        items = list(merged.values())
        self._masks = np.array([it[0] for it in items], dtype=bool).reshape(len(items), -1)
        self._probs = np.array([it[1] for it in items], dtype=float)
        self._probs /= self._probs.sum()
        self._probs_exact = [it[2] for it in items]
        self._n = int(masks.shape[1])

    @staticmethod
    def _parse_subsets(subsets: Any, n: int | None) -> np.ndarray:
        if isinstance(subsets, np.ndarray) and subsets.dtype == bool:
            if subsets.ndim != 2 or subsets.shape[0] == 0 or subsets.shape[1] == 0:
                raise ValueError(
                    f"subsets as a boolean array must have shape (k, n) with k, n >= 1, "
                    f"got shape {subsets.shape}"
                )
            if n is not None and n != subsets.shape[1]:
                raise ValueError(f"n = {n!r} differs from subsets.shape[1] = {subsets.shape[1]}")
            return subsets.copy()
        if isinstance(subsets, np.ndarray) and subsets.ndim == 2:
            raise ValueError(
                f"subsets as an array must be boolean of shape (k, n), got dtype {subsets.dtype}"
            )
        try:
            tuples = [tuple(int(i) for i in s) for s in subsets]
        except (TypeError, ValueError):
            raise ValueError(
                f"subsets must be a list of index tuples or a boolean (k, n) array, got {subsets!r}"
            ) from None
        if not tuples:
            raise ValueError("subsets must not be empty")
        largest = max((max(t) for t in tuples if t), default=-1)
        if n is None:
            n = largest + 1
        positive_integer("n", n)
        masks = np.zeros((len(tuples), int(n)), dtype=bool)
        for k, t in enumerate(tuples):
            if any(i < 0 or i >= n for i in t):
                raise ValueError(f"subset {t!r} has an index outside [0, n) = [0, {n})")
            if len(set(t)) != len(t):
                raise ValueError(f"subset {t!r} repeats an index")
            masks[k, list(t)] = True
        return masks

    @property
    def n(self) -> int:
        return self._n

    @property
    def subsets(self) -> np.ndarray:
        """The subsets of positive probability, boolean ``(k, n)`` (duplicates merged)."""
        return self._masks.copy()

    @property
    def probs(self) -> np.ndarray:
        """Their probabilities, shape ``(k,)``."""
        return self._probs.copy()

    def _marginals(self) -> np.ndarray:
        return self._probs @ self._masks

    def _pairs(self) -> np.ndarray:
        M = self._masks.astype(float)
        return (M * self._probs[:, None]).T @ M

    def _marginals_exact(self) -> list[Fraction]:
        return [
            sum((q for q, row in zip(self._probs_exact, self._masks, strict=True) if row[i]),
                Fraction(0))
            for i in range(self._n)
        ]

    def _pairs_exact(self) -> list[list[Fraction]]:
        n = self._n
        out = [[Fraction(0)] * n for _ in range(n)]
        for q, row in zip(self._probs_exact, self._masks, strict=True):
            idx = np.flatnonzero(row)
            for i in idx:
                for j in idx:
                    out[i][j] += q
        return out

    def _sample(self, rng: np.random.Generator, replicas: int) -> np.ndarray:
        k = rng.choice(len(self._probs), size=replicas, p=self._probs)
        return self._masks[k]

    def _count(self) -> int:
        return len(self._probs)

    def _enumerate(self, exact: bool) -> tuple[np.ndarray, np.ndarray]:
        if exact:
            probs = np.empty(len(self._probs_exact), dtype=object)
            probs[:] = self._probs_exact
            return self._masks.copy(), probs
        return self._masks.copy(), self._probs.copy()

    def _repr_args(self) -> str:
        return f"<{len(self._probs)} subsets of n={self._n}>"
