r"""Sampling designs: random subsets :math:`S \subseteq [n]` of participating clients.

A design (a "sampling" in seed 002, Section 2) is described, for everything the estimators
of this package need, by its marginals and its pair-inclusion matrix,

.. math::

    p_i = \Pr(i \in S), \qquad \mathbf P_{ij} = \Pr(\{i, j\} \subseteq S),
    \qquad \mathbf P_{ii} = p_i .

Three designs are provided, each a small class whose constructor stores and validates its
parameters:

* :class:`IndependentSampling` -- client :math:`i` joins with probability :math:`p_i`,
  independently of the others (Bernoulli participation): :math:`\mathbf P_{ij} = p_i p_j`.
* :class:`UniformWithoutReplacement` -- :math:`b` of the :math:`n` clients, every
  :math:`b`-subset equally likely (":math:`b`-nice" sampling): :math:`p_i = b/n`,
  :math:`\mathbf P_{ij} = b(b-1)/(n(n-1))` for :math:`i \ne j`.
* :class:`ExplicitSampling` -- an explicit distribution over a list of subsets (small
  :math:`n`): :math:`\mathbf P = M^\top \mathrm{Diag}(\pi) M` for the 0/1 matrix :math:`M`
  of subsets and their probabilities :math:`\pi`.

Every design offers the same API (:class:`SamplingDesign`): ``n``, ``p``, ``P`` (exact, in
floating point), ``p_exact`` / ``P_exact`` (as :class:`fractions.Fraction`, for exact
checks), ``sample(rng, replicas)`` (boolean masks of shape ``(replicas, n)``, drawn
vectorised, no Python loop over replicas) and ``enumerate()`` (every subset with positive
probability and its probability, for exact expectations when :math:`n` is small).

A design is *proper* (seed 002) when every :math:`p_i > 0`. :class:`IndependentSampling`
and :class:`UniformWithoutReplacement` are always proper; :class:`ExplicitSampling` allows
clients that never participate (``p_i = 0``, reported by :attr:`SamplingDesign.proper`); the
importance-sampled estimators of :mod:`fedtheory.sampling.moments` reject such designs.

Examples
--------
>>> import numpy as np
>>> d = UniformWithoutReplacement(4, 2)
>>> d.p
array([0.5, 0.5, 0.5, 0.5])
>>> d.P_exact[0, 1]  # 2*1 / (4*3)
Fraction(1, 6)
>>> d.sample(np.random.default_rng(0), 3).sum(axis=1)
array([2, 2, 2])
>>> masks, probs = ExplicitSampling([(0,), (0, 1)], [0.25, 0.75]).enumerate()
>>> masks.astype(int).tolist(), probs.tolist()
([[1, 0], [1, 1]], [0.25, 0.75])
"""

from __future__ import annotations

import abc
import itertools
import math
import threading
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory.validation import probabilities

__all__ = [
    "DESIGN_CLASSES",
    "ExplicitSampling",
    "IndependentSampling",
    "SamplingDesign",
    "UniformWithoutReplacement",
]

#: ``enumerate()`` refuses designs with more subsets than this (exact checks are for small n).
MAX_ENUMERATE = 1 << 20

#: Tolerance on the sum of the probabilities of an :class:`ExplicitSampling`.
PROB_SUM_TOL = 1e-9


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
    if isinstance(replicas, bool) or not isinstance(replicas, (int, np.integer)) or replicas < 0:
        raise ValueError(f"replicas must be a non-negative integer, got {replicas!r}")
    return int(replicas)


#: Per thread: the work arrays of :func:`_partial_shuffle`, by shape (``(n, k, rows)``).
#: Scratch only (each table is restored after its call): no result depends on what ran
#: before, and a thread never sees another's (issue 18: no shared mutable module state).
_SHUFFLE_WORK = threading.local()

#: Work arrays for tables of up to this many entries (``rows * n``) are kept between calls (one
#: chunk of the Monte Carlo sampler is far smaller); larger ones are made for the call.
_SHUFFLE_KEEP = 1 << 18


class _ShuffleWork:
    """The arrays of one shape of :func:`_partial_shuffle`: the identity table ``(rows, n)``
    (entry = its flat index; 16-bit integers while they fit, so that it stays in cache), its
    pristine copy, the per-step constants and the buffers."""

    def __init__(self, n: int, k: int, rows: int, keep: bool) -> None:
        size = rows * n
        dtype = np.int16 if size <= 1 << 15 else np.int32 if size <= 1 << 31 else np.int64
        steps = np.arange(k, dtype=np.intp)
        self.keep = keep  # reused: the table is restored after each call
        self.template = np.arange(size, dtype=dtype).reshape(rows, n)
        self.table = self.template.copy() if keep else self.template
        self.span = (n - steps).astype(float)[:, None]  # n - j
        self.top = (n - 1 - steps)[:, None]  # the largest offset, n - 1 - j
        self.base = steps[:, None] + np.arange(rows, dtype=np.intp) * n  # r n + j
        self.x = np.empty((k, rows))
        self.pos = np.empty((k, rows), dtype=np.intp)
        self.chosen = np.empty((k, rows), dtype=dtype)


def _shuffle_work(n: int, k: int, rows: int) -> _ShuffleWork:
    if rows * n > _SHUFFLE_KEEP:
        return _ShuffleWork(n, k, rows, keep=False)
    kept = getattr(_SHUFFLE_WORK, "kept", None)
    if kept is None:
        kept = _SHUFFLE_WORK.kept = {}
    work = kept.get((n, k, rows))
    if work is None:
        if len(kept) >= 8:
            kept.clear()
        work = kept[(n, k, rows)] = _ShuffleWork(n, k, rows, keep=True)
    return work


def _partial_shuffle(u: np.ndarray, n: int) -> np.ndarray:
    r"""The first :math:`k` positions of a partial Fisher--Yates shuffle of :math:`0..n-1`, per
    row, as flat indices into a ``(rows, n)`` array: entry ``[j, r]`` is :math:`r n + v_{rj}`.

    ``u`` has shape ``(rows, k)``, :math:`k \le n`: step :math:`j` swaps position :math:`j`
    with position :math:`o_{rj} = j + \min(\lfloor u_{rj}(n-j)\rfloor, n-1-j)` of row
    :math:`r`, and :math:`v_{rj}` is the value that lands at position :math:`j`.

    The permutations of all rows are one table of shape ``(rows, n)`` whose entries start as
    their own flat index :math:`r n + x` (so a value read off is already an index into the
    ``(rows, n)`` result). Step :math:`j` gathers the entries at the :math:`o_{\cdot j}` (the
    chosen values) and scatters the front column :math:`j` there; the front itself is never
    read again, so it is not written: two array operations per step. The table (16-bit while
    its entries fit, cache-resident for a sampler chunk) and the buffers are kept per thread
    and shape, and the table is copied back from its pristine twin after each call.
    """
    rows, k = u.shape
    work = _shuffle_work(n, k, rows)
    np.multiply(u.T, work.span, out=work.x)  # (k, rows): u (n - j)
    pos = work.pos
    np.copyto(pos, work.x, casting="unsafe")  # truncation = floor (u >= 0)
    np.minimum(pos, work.top, out=pos)  # against rounding up to n - j
    pos += work.base  # flat index of (r, o) in the table
    table, chosen = work.table, work.chosen
    flat = table.reshape(-1)
    try:
        for j in range(k):
            flat.take(pos[j], out=chosen[j], mode="clip")  # indices are in range
            flat[pos[j]] = table[:, j]
    finally:
        if work.keep:
            np.copyto(table, work.template)  # the identity again, for the next call
    return chosen.astype(np.intp)


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

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_args()})"

    def _repr_args(self) -> str:  # pragma: no cover - overridden
        return f"n={self.n}"


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

    def _repr_args(self) -> str:
        return f"p={np.array2string(self._p, precision=4, separator=', ')}"


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
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or not 1 <= b <= n:
            raise ValueError(f"b must be an integer in [1, n] = [1, {n}], got {b!r}")
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

    def _repr_args(self) -> str:
        return f"n={self._n}, b={self.b}"


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
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
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


#: Every public design class (the common test battery asserts each one is exercised).
DESIGN_CLASSES: tuple[type[SamplingDesign], ...] = (
    IndependentSampling,
    UniformWithoutReplacement,
    ExplicitSampling,
)
