r"""The one protocol of a round's law of who takes part (a *sampling design*): marginals,
pair matrix, exact moments, vectorised draws and, for small :math:`n`, exact enumeration.

.. math::

    p_i = \Pr(i \in S), \qquad \mathbf P_{ij} = \Pr(\{i, j\} \subseteq S),
    \qquad \mathbf P_{ii} = p_i .

A sampling scheme declares these as the methods of one :class:`SamplingDesign` subclass
(``n``, ``_marginals``, ``_pairs``, ``_marginals_exact``, ``_pairs_exact``, ``_sample``,
``_count``, ``_enumerate``; optionally ``_sample_into`` and ``describe``); the estimators and
exact moments of :mod:`fedtheory.sampling.moments` and the convex programs of
:mod:`fedtheory.convex` read only this protocol. A memoryless participation process gives its
round's design (``process.design()``) and is found back from it
(:func:`fedtheory.participation.process_of_design`): the scheme lives in one file
(docs/architecture.md, "A sampling scheme").
"""

from __future__ import annotations

import abc
from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory.validation import nonnegative_integer

__all__ = ["MAX_ENUMERATE", "SamplingDesign"]

#: ``enumerate()`` refuses designs with more subsets than this (exact checks are for small n).
MAX_ENUMERATE = 1 << 20


def _as_fraction(x: Any) -> Fraction:
    """Exact rational value of a number (floats are converted exactly, bit for bit)."""
    if isinstance(x, (Fraction, int, np.integer)):
        return Fraction(int(x)) if isinstance(x, np.integer) else Fraction(x)
    if isinstance(x, (float, np.floating)):
        return Fraction(float(x))
    try:  # sympy Rational and friends
        return Fraction(str(x))
    except (TypeError, ValueError):
        return Fraction(float(x))


def _check_rng(rng: Any) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {rng!r}")
    return rng


def _check_replicas(replicas: Any) -> int:
    return nonnegative_integer("replicas", replicas)

class SamplingDesign(abc.ABC):
    """Base class of the sampling designs: marginals, pair matrix, sampler, enumeration.

    Subclasses implement ``n``, ``_marginals``, ``_pairs``, ``_pairs_exact``, ``_marginals_exact``,
    ``_sample`` and ``_enumerate``; the base class provides the public API and its checks.
    """

    @property
    @abc.abstractmethod
    def n(self) -> int:
        """Number of clients."""

    @abc.abstractmethod
    def _marginals(self) -> np.ndarray: ...

    @abc.abstractmethod
    def _pairs(self) -> np.ndarray: ...

    @abc.abstractmethod
    def _marginals_exact(self) -> list[Fraction]: ...

    @abc.abstractmethod
    def _pairs_exact(self) -> list[list[Fraction]]: ...

    @abc.abstractmethod
    def _sample(self, rng: np.random.Generator, replicas: int) -> np.ndarray: ...

    @abc.abstractmethod
    def _enumerate(self, exact: bool) -> tuple[np.ndarray, np.ndarray]: ...

    def _sample_into(self, rng: np.random.Generator, out: np.ndarray) -> None:
        """Write ``len(out)`` masks as 0.0/1.0 into the float array ``out`` (rows, n).

        Must consume the generator exactly as ``_sample(rng, len(out))`` does and give the same
        masks; subclasses override it to avoid temporaries (the Monte Carlo hot path).
        """
        np.copyto(out, self._sample(rng, out.shape[0]))

    @abc.abstractmethod
    def _count(self) -> int:
        """Number of subsets ``enumerate()`` would return."""

    # -- public API -------------------------------------------------------------------------
    @property
    def p(self) -> np.ndarray:
        r"""Marginals :math:`p_i = \Pr(i \in S)`, shape ``(n,)``."""
        return self._marginals()

    @property
    def P(self) -> np.ndarray:
        r"""Pair-inclusion matrix :math:`\mathbf P_{ij} = \Pr(\{i,j\} \subseteq S)`, ``(n, n)``."""
        return self._pairs()

    @property
    def p_exact(self) -> np.ndarray:
        """Marginals as an object array of :class:`fractions.Fraction` (exact)."""
        out = np.empty(self.n, dtype=object)
        out[:] = self._marginals_exact()
        return out

    @property
    def P_exact(self) -> np.ndarray:
        """Pair-inclusion matrix as an object array of :class:`fractions.Fraction` (exact)."""
        rows = self._pairs_exact()
        out = np.empty((self.n, self.n), dtype=object)
        for i, row in enumerate(rows):
            out[i, :] = row
        return out

    @property
    def proper(self) -> bool:
        """True when every client participates with positive probability (seed 002)."""
        return bool(np.all(self.p > 0))

    @property
    def expected_size(self) -> float:
        r""":math:`\mathbb E|S| = \sum_i p_i = \mathrm{Trace}(\mathbf P)`."""
        return float(np.sum(self.p))

    def sample(self, rng: np.random.Generator, replicas: int) -> np.ndarray:
        r"""Draw ``replicas`` independent subsets as a boolean array of shape ``(replicas, n)``.

        Row ``r`` is the indicator vector :math:`(1_{i \in S_r})_i`. Vectorised over replicas;
        the same generator state gives the same masks.
        """
        rng = _check_rng(rng)
        replicas = _check_replicas(replicas)
        return self._sample(rng, replicas)

    def enumerate(self, exact: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Every subset with positive probability, and its probability.

        Returns
        -------
        masks : numpy.ndarray
            Boolean, shape ``(k, n)``, one row per subset.
        probs : numpy.ndarray
            Shape ``(k,)``: floats summing to 1, or (``exact=True``) an object array of
            :class:`fractions.Fraction` summing exactly to 1.

        Raises ``ValueError`` when there are more than :data:`MAX_ENUMERATE` subsets.
        """
        k = self._count()
        if k > MAX_ENUMERATE:
            raise ValueError(
                f"{type(self).__name__} has {k} subsets, more than enumerate() allows "
                f"({MAX_ENUMERATE}); use sample() for large n"
            )
        return self._enumerate(bool(exact))

    @classmethod
    def examples(cls) -> list[SamplingDesign]:
        """Small instances for the common battery of checks (tests/test_sampling_designs.py:
        enumeration against the moments, the structure of ``P``, the statistics of
        ``sample()``): a design of a new scheme that declares them is checked with no edit of
        the tests. None by default."""
        return []

    def describe(self) -> dict[str, Any]:
        """A JSON-friendly description of the design (for counterexamples): by default its
        subsets and their exact probabilities; a scheme with parameters states those."""
        masks, probs = self.enumerate(exact=True)
        return {
            "design": "explicit",
            "subsets": [tuple(int(i) for i in np.flatnonzero(r)) for r in masks],
            "probs": [str(q) for q in probs],
            "n": self.n,
        }

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_args()})"

    def _repr_args(self) -> str:  # pragma: no cover - overridden
        return f"n={self.n}"
