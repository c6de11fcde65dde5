r"""Sampling with replacement (multinomial sampling): every round the master draws :math:`K`
clients independently, client :math:`i` with probability :math:`p_i` each time
(:math:`\sum_i p_i = 1`), and client :math:`i` counts as many times as it was drawn.

The draw counts :math:`N = (N_1, \dots, N_n) \sim \mathrm{Multinomial}(K, p)` have the moments

.. math:: \mathbb E N_i = K p_i, \qquad \operatorname{Var} N_i = K p_i (1 - p_i), \qquad
    \operatorname{Cov}(N_i, N_j) = -K p_i p_j \quad (i \ne j),

so the aggregate with the coefficients :math:`a_i = w_i N_i / (K p_i)` (Hansen--Hurwitz's
estimator),

.. math:: G = \sum_{i:\,N_i > 0} \frac{w_i N_i}{K p_i}\,\Delta_i, \qquad
    \mathbb E\,G = \sum_{i:\,p_i > 0} w_i \Delta_i ,

is unbiased for :math:`\sum_i w_i\Delta_i` when every :math:`p_i > 0`. The clients that take
part are those drawn at least once, :math:`S = \{i : N_i > 0\}`, with

.. math:: \Pr(i \in S) = 1 - (1 - p_i)^K, \qquad
    \Pr(\{i, j\} \subseteq S) = 1 - (1 - p_i)^K - (1 - p_j)^K + (1 - p_i - p_j)^K .

:class:`WithReplacementParticipation` is the process (it sees the round only to read the
objective weights :math:`w_i`: its selections carry the coefficients :math:`a_i`, which
``"fedavg_is"`` applies; it never asks for the clients' updates, so it costs what a plain
process costs). :class:`WithReplacementSampling` is its round's law: the design of the set
:math:`S` (:class:`~fedtheory.sampling.base.SamplingDesign`: marginals, pair matrix,
enumeration) and the moments of the counts (:meth:`~WithReplacementSampling.count_mean`,
:meth:`~WithReplacementSampling.count_covariance`, exactly or in floating point) with their
enumeration over every multiset (:meth:`~WithReplacementSampling.enumerate_counts`).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from fedtheory.participation.base import (
    ParticipationProcess,
    RNGLike,
    RoundAwareProcess,
    RoundView,
    Selection,
    uniforms,
)
from fedtheory.sampling import base as sampling_base
from fedtheory.sampling.base import SamplingDesign, _as_fraction
from fedtheory.sampling.explicit import PROB_SUM_TOL
from fedtheory.validation import integer_at_least, probabilities

__all__ = ["WithReplacementParticipation", "WithReplacementSampling"]

#: Up to this many draws the marginals and the pair matrix are series of positive terms
#: (relative accuracy about ``K`` ulps); beyond, :math:`1 - (1-p_i)^K` by ``expm1`` and the
#: pairs by inclusion-exclusion (absolute accuracy about 1 ulp).
_SERIES_DRAWS = 64

#: Most exact terms ``enumerate()`` sums (inclusion-exclusion: :math:`2^{|S|}` per subset).
_MAX_TERMS = 1 << 22


def _probability_vector(p: Any) -> tuple[np.ndarray, list[Fraction]]:
    """``p`` as floats summing to 1 and as exact fractions summing exactly to 1, or a
    ``ValueError`` naming ``p`` (entries in [0, 1], a sum within :data:`PROB_SUM_TOL` of 1)."""
    arr = probabilities("p", p, allow_zero=True)
    total = float(arr.sum())
    if abs(total - 1.0) > PROB_SUM_TOL:
        raise ValueError(f"p must sum to 1 (a probability vector), got sum {total!r}")
    given = list(p) if isinstance(p, (list, tuple)) else list(arr)
    exact = [_as_fraction(x) for x in given]
    exact_total = sum(exact, Fraction(0))
    if exact_total != 1:
        exact = [q / exact_total for q in exact]
    return arr / total, exact


def _counts(u: np.ndarray, cdf: np.ndarray, last: int) -> np.ndarray:
    """The draw counts ``(R, n)`` of the uniforms ``u`` ``(R, K)``: draw ``k`` of row ``r`` is
    the client whose bin of the cumulative probabilities ``cdf`` holds ``u[r, k]`` (clients
    with :math:`p_i = 0` have empty bins); ``last``: the last client with :math:`p_i > 0`."""
    R, n = u.shape[0], cdf.shape[0]
    idx = np.minimum(np.searchsorted(cdf, u, side="right"), last)
    flat = idx + (np.arange(R, dtype=np.intp) * n)[:, None]
    return np.bincount(flat.ravel(), minlength=R * n).reshape(R, n)


class WithReplacementSampling(SamplingDesign):
    r"""The law of one round of :math:`K` draws with replacement by :math:`p`: the design of
    the set of clients drawn at least once, and the moments of the draw counts.

    Parameters
    ----------
    p
        ``(n,)`` probabilities :math:`p_i \in [0, 1]` summing to 1 (exact values such as
        :class:`fractions.Fraction` are kept for the exact moments; floats are normalised).
    K
        The number of draws, an integer :math:`\ge 1`.

    Examples
    --------
    One draw is one client (no pair ever meets); a client of probability 1 is drawn every
    time; one client is all of them:

    >>> d = WithReplacementSampling([0.25, 0.75], K=1)
    >>> d.p.tolist(), d.P[0, 1], d.count_covariance(exact=True)[0, 1]
    ([0.25, 0.75], np.float64(0.0), Fraction(-3, 16))
    >>> WithReplacementSampling([0.0, 1.0, 0.0], K=3).enumerate_counts()[0].tolist()
    [[0, 3, 0]]
    >>> WithReplacementSampling([1.0], K=4).count_mean().tolist(), WithReplacementSampling(
    ...     [1.0], K=4).count_covariance().tolist()
    ([4.0], [[0.0]])
    """

    def __init__(self, p: Any, K: int) -> None:
        self.K = integer_at_least("K", K)
        self._p, self._q = _probability_vector(p)
        positive = np.flatnonzero(self._p > 0)
        self._last = int(positive[-1])
        self._cdf = np.cumsum(self._p)
        self._cdf[self._last:] = 1.0  # (u < 1: the last bin closes the interval)

    @property
    def n(self) -> int:
        return int(self._p.size)

    @property
    def probabilities(self) -> np.ndarray:
        """The probabilities :math:`p_i` of one draw, ``(n,)``."""
        return self._p.copy()

    # -- the counts -------------------------------------------------------------------------
    def count_mean(self, exact: bool = False) -> np.ndarray:
        r""":math:`\mathbb E N_i = K p_i`, ``(n,)`` (an object array of fractions when
        ``exact``)."""
        if exact:
            out = np.empty(self.n, dtype=object)
            out[:] = [self.K * q for q in self._q]
            return out
        return self.K * self._p

    def count_covariance(self, exact: bool = False) -> np.ndarray:
        r""":math:`\operatorname{Cov}(N_i, N_j) = K(p_i 1_{i=j} - p_i p_j)`, ``(n, n)``."""
        if exact:
            q, K = self._q, self.K
            out = np.empty((self.n, self.n), dtype=object)
            for i, j in itertools.product(range(self.n), repeat=2):
                out[i, j] = K * ((q[i] if i == j else 0) - q[i] * q[j])
            return out
        return self.K * (np.diag(self._p) - np.outer(self._p, self._p))

    def sample_counts(self, rng: np.random.Generator, replicas: int) -> np.ndarray:
        """``replicas`` rounds of draw counts, int ``(replicas, n)`` (rows sum to ``K``); the
        masks of :meth:`sample` are ``counts > 0`` of the same draws."""
        rng = sampling_base._check_rng(rng)
        replicas = sampling_base._check_replicas(replicas)
        return self.counts_of(rng.random((replicas, self.K)))

    def counts_of(self, u: np.ndarray) -> np.ndarray:
        """The draw counts ``(R, n)`` of ``(R, K)`` uniforms on [0, 1) (one per draw)."""
        return _counts(u, self._cdf, self._last)

    def enumerate_counts(self, exact: bool = False) -> tuple[np.ndarray, np.ndarray]:
        r"""Every count vector of positive probability (every multiset of :math:`K` clients
        with :math:`p_i > 0`) and its multinomial probability
        :math:`\frac{K!}{\prod_i N_i!}\prod_i p_i^{N_i}`: int ``(k, n)`` and ``(k,)`` floats,
        or fractions summing exactly to 1 (``exact``). A ``ValueError`` beyond
        :data:`~fedtheory.sampling.base.MAX_ENUMERATE` multisets."""
        free = np.flatnonzero(self._p > 0).tolist()
        count = math.comb(len(free) + self.K - 1, self.K)
        if count > sampling_base.MAX_ENUMERATE:
            raise ValueError(f"{type(self).__name__} has {count} multisets of K={self.K} draws, "
                             f"more than enumerate_counts() allows "
                             f"({sampling_base.MAX_ENUMERATE}); use sample_counts()")
        rows = np.zeros((count, self.n), dtype=np.int64)
        probs = np.empty(count, dtype=object)
        for r, draws in enumerate(itertools.combinations_with_replacement(free, self.K)):
            for i in draws:
                rows[r, i] += 1
            val = Fraction(math.factorial(self.K))
            for i in set(draws):
                c = int(rows[r, i])
                val *= self._q[i] ** c / math.factorial(c)
            probs[r] = val
        return rows, (probs if exact else probs.astype(float))

    # -- the design of the set drawn -------------------------------------------------------
    def _marginals(self) -> np.ndarray:
        p, K = self._p, self.K
        if K <= _SERIES_DRAWS:  # p sum_{j<K} (1 - p)^j: positive terms (exactly p for K = 1)
            q = 1.0 - p
            return p * sum(q**j for j in range(K))
        return -np.expm1(K * np.log1p(-p))

    def _pairs(self) -> np.ndarray:
        p, K = self._p, self.K
        u, v = p[:, None], p[None, :]
        if K <= _SERIES_DRAWS:
            # P_ij = sum_{m>=2} C(K, m) x^{K-m} g_m, x = 1 - p_i - p_j, g_m = (u+v)^m - u^m - v^m
            # by g_{m+1} = (u+v) g_m + uv(u^{m-1} + v^{m-1}), g_2 = 2uv: positive terms only
            x = np.maximum((1.0 - u) - v, 0.0)
            s, uv = u + v, u * v
            g = 2.0 * uv
            P = np.zeros((self.n, self.n))
            for m in range(2, K + 1):
                P += float(math.comb(K, m)) * x ** (K - m) * g
                g = s * g + uv * (u ** (m - 1) + v ** (m - 1))
        else:
            a = np.exp(K * np.log1p(-p))
            with np.errstate(divide="ignore"):
                b = np.exp(K * np.log(np.maximum((1.0 - u) - v, 0.0)))
            P = np.maximum(1.0 - a[:, None] - a[None, :] + b, 0.0)
        np.fill_diagonal(P, self._marginals())
        return P

    def _marginals_exact(self) -> list[Fraction]:
        return [1 - (1 - q) ** self.K for q in self._q]

    def _pairs_exact(self) -> list[list[Fraction]]:
        q, K = self._q, self.K
        one = self._marginals_exact()
        return [[one[i] if i == j else 1 - (1 - q[i]) ** K - (1 - q[j]) ** K
                 + (1 - q[i] - q[j]) ** K for j in range(self.n)] for i in range(self.n)]

    def _sample(self, rng: np.random.Generator, replicas: int) -> np.ndarray:
        return self.counts_of(rng.random((replicas, self.K))) > 0

    def _sizes(self) -> range:
        return range(1, min(self.K, int(np.count_nonzero(self._p))) + 1)

    def _count(self) -> int:
        m = int(np.count_nonzero(self._p))
        return sum(math.comb(m, s) for s in self._sizes())

    def _enumerate(self, exact: bool) -> tuple[np.ndarray, np.ndarray]:
        # P(S drawn) = sum_{T subset of S} (-1)^{|S|-|T|} p_T^K (inclusion-exclusion)
        free = np.flatnonzero(self._p > 0).tolist()
        terms = sum(math.comb(len(free), s) << s for s in self._sizes())
        if terms > _MAX_TERMS:
            raise ValueError(f"{type(self).__name__}.enumerate() would sum {terms} exact terms "
                             f"(more than {_MAX_TERMS}); use sample() for large n and K")
        q, K = self._q, self.K
        subsets = [S for s in self._sizes() for S in itertools.combinations(free, s)]
        masks = np.zeros((len(subsets), self.n), dtype=bool)
        probs = np.empty(len(subsets), dtype=object)
        for r, S in enumerate(subsets):
            masks[r, list(S)] = True
            probs[r] = sum(((-1) ** (len(S) - t) * sum((q[i] for i in T), Fraction(0)) ** K
                            for t in range(1, len(S) + 1)
                            for T in itertools.combinations(S, t)), Fraction(0))
        return masks, (probs if exact else probs.astype(float))

    @classmethod
    def examples(cls) -> list[SamplingDesign]:
        return [cls([0.2, 0.3, 0.5], 2), cls([Fraction(1, 6), Fraction(1, 3), Fraction(1, 2)], 1),
                cls([0.1, 0.2, 0.3, 0.4], 3), cls([0.5, 0.0, 0.5], 2)]

    def describe(self) -> dict[str, Any]:
        return {"design": "with replacement", "p": [str(q) for q in self._q], "K": self.K}

    def _repr_args(self) -> str:
        return f"p={np.array2string(self._p, precision=4, separator=', ')}, K={self.K}"


class WithReplacementParticipation(RoundAwareProcess, register=True):
    r""":math:`K` draws with replacement by :math:`p` every round; client :math:`i` takes part
    when drawn, its update weighted by its count (see the module docstring).

    ``select`` (the engine's call) gives the mask :math:`N_i > 0` and the coefficients
    :math:`a_{r,i} = w_i N_{r,i}/(K p_i)` (0 where :math:`N_{r,i} = 0`), which ``"fedavg_is"``
    applies: :math:`G` is unbiased for :math:`\sum_i w_i\Delta_i` when every
    :math:`p_i > 0` (a client with :math:`p_i = 0` is never drawn, and the engine refuses
    it with an importance-weighted rule). ``step`` and ``sample`` give the same masks from
    the same streams (no view needed). :attr:`stationary` is the true marginal
    :math:`1 - (1 - p_i)^K`.

    >>> proc = WithReplacementParticipation([0.5, 0.25, 0.25], K=1)
    >>> proc.sample(np.random.default_rng(0), 4, 1)[0].sum(axis=1).tolist()  # K = 1: one client
    [1, 1, 1, 1]
    >>> rng = [np.random.default_rng(s) for s in range(2)]
    >>> view = RoundView(1, np.zeros((2, 1)), np.full(3, 1 / 3), lambda only: None)
    >>> sel, _ = proc.select(proc.init(rng, 2), rng, view)
    >>> bool(np.all(sel.coef[sel.mask] == (1 / 3) / np.array([0.5, 0.25, 0.25])[
    ...     np.nonzero(sel.mask)[1]]))
    True
    >>> one = WithReplacementParticipation([0.0, 1.0], K=3)  # p_1 = 1: client 1 every time
    >>> sel, _ = one.select(one.init(rng, 2), rng, RoundView(1, np.zeros((2, 1)), [0.5, 0.5],
    ...                                                     lambda only: None))
    >>> sel.mask.tolist(), sel.coef.tolist()
    ([[False, True], [False, True]], [[0.0, 0.5], [0.0, 0.5]])
    >>> WithReplacementParticipation([1.0], K=5).draw_counts(rng, 2).tolist()  # n = 1
    [[5], [5]]
    """

    name: ClassVar[str] = "with_replacement"
    design_class: ClassVar[type[WithReplacementSampling]] = WithReplacementSampling
    sets_coefficients: ClassVar[bool] = True

    def __init__(self, p: Any, K: int) -> None:
        self._design = WithReplacementSampling(p, K)
        self.p, self.K = self._design.probabilities, self._design.K
        self.n = self._design.n

    @property
    def stationary(self) -> np.ndarray:
        return self._design.p

    def design(self) -> WithReplacementSampling:
        """The law of one round: the set drawn and the draw counts (:class:`WithReplacement
        Sampling`).

        >>> WithReplacementParticipation([0.5, 0.5], K=2).design().P_exact[0, 1]
        Fraction(1, 2)
        """
        return self._design

    @classmethod
    def from_design(cls, design: WithReplacementSampling) -> WithReplacementParticipation:
        """The process whose every round is drawn from ``design``."""
        return cls(list(design._q), design.K)

    @classmethod
    def examples(cls) -> list[ParticipationProcess]:
        return [cls([0.1, 0.2, 0.3, 0.4], 3), cls([0.6, 0.4], 1), cls([0.05, 0.15, 0.8], 2)]

    def draw_counts(self, rng: RNGLike, replicas: int) -> np.ndarray:
        """One round's draw counts, int ``(replicas, n)``: row ``r`` from ``rng[r]`` (its
        ``K`` uniforms) when ``rng`` is a sequence of per-replica generators."""
        return self._design.counts_of(uniforms(rng, replicas, self.K))

    def step(self, state: dict[str, Any], rng: RNGLike) -> tuple[np.ndarray, dict[str, Any]]:
        """The mask of the next round (the clients drawn), without the coefficients."""
        return ParticipationProcess.step(self, state, rng)

    def _step(self, state: dict[str, Any], rng: RNGLike) -> np.ndarray:
        return self.draw_counts(rng, state["replicas"]) > 0

    def _select(self, state: dict[str, Any], rng: RNGLike, view: RoundView) -> Selection:
        counts = self.draw_counts(rng, state["replicas"])
        scale = np.zeros(self.n)
        np.divide(np.asarray(view.weights, dtype=float), self.K * self.p, out=scale,
                  where=self.p > 0)
        return Selection(counts > 0, counts * scale)
