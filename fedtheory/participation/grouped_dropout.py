r"""Friend-preserving dropout: the dropout process of seed 004's public code.

The authors' experiments (``Code/FL_FDMS/bpc_cifar10_main.py``, ``randNums`` and the lines
after it; the same in ``FL_Stale`` and ``FL_Dropout``) split the :math:`K = 20` clients into
consecutive groups of 4 (the clusters of the clustered setting) and, in every round after a
first round of full participation, keep

* :math:`S = \text{int}((1-\alpha)K)` clients active (:math:`S = K - \lfloor\alpha K\rfloor` for
  the paper's :math:`\alpha \in \{0.3, 0.5, 0.7\}`);
* split over the :math:`G` groups as a tuple :math:`(c_1, \dots, c_G) \in \{1, \dots, g\}^G`
  with :math:`\sum_j c_j = S` (``randNums(5, 1, 4, S)``: i.i.d. uniform integers in
  :math:`\{1..4\}` redrawn until five of them sum to :math:`S`, i.e. a **uniformly random
  tuple** among those with that sum);
* and, in group :math:`j`, :math:`c_j` of its :math:`g` clients chosen uniformly
  (``np.random.choice(..., replace=False)``).

So every group keeps at least one active client in every round: with the groups as the friend
clusters, Assumption 5 of seed 004 holds in every round. The law of a round's mask
:math:`m` (group counts :math:`c(m)`) is

.. math:: P(m) = \frac{1}{N_S}\prod_{j=1}^G\binom{g}{c_j(m)}^{-1},\qquad
          N_S = \#\{c \in \{1..g\}^G : \textstyle\sum_j c_j = S\},

and every client is active with probability :math:`S/K` (:attr:`stationary`, the rounds after
the first; the tuple's law is exchangeable over the groups). :meth:`GroupedDropout.tuples`,
:meth:`GroupedDropout.count_law` and :meth:`GroupedDropout.mask_probability` give the law
exactly (rationals).

The process is vectorised over replicas: one uniform picks each replica's tuple (the tuples
enumerated in lexicographic order), :math:`K` uniforms rank the clients within their groups.
It is registered in :data:`fedtheory.participation.PROCESSES` (``register=True``; its case in
the common battery is ``tests/test_participation.py``'s, its own tests
``tests/test_fdms_dropout.py``).

>>> proc = GroupedDropout(20, 0.5)
>>> rng = np.random.default_rng(0)
>>> masks = proc.sample(rng, 3, 4)
>>> masks[0].sum(axis=1).tolist(), masks[1].sum(axis=1).tolist()   # full first round
([20, 20, 20], [10, 10, 10])
>>> bool((masks[1:].reshape(3, 3, 5, 4).sum(axis=3) >= 1).all())   # a member of every group
True
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from fedtheory.participation.base import (
    ParticipationProcess,
    RNGLike,
    uniforms,
    validate_dropout_rate,
    validate_n,
)

__all__ = ["GroupedDropout"]


class GroupedDropout(ParticipationProcess, register=True):
    """Dropout that keeps ``S = n - floor(alpha n)`` clients, at least one per group.

    Parameters
    ----------
    n
        Number of clients :math:`K`.
    alpha
        Dropout ratio in [0, 1): :math:`S = K - \\lfloor\\alpha K\\rfloor` clients stay.
    group_size
        Clients per group :math:`g` (consecutive indices; must divide ``n``); default 4.
    full_first
        The first round has every client active (the authors' FL-FDMS and Stale code; default).

    The groups need :math:`G \\le S \\le gG` (one active client per group at least, at most all).

    >>> GroupedDropout(20, 0.7).active, GroupedDropout(20, 0.3).active
    (6, 14)
    >>> GroupedDropout(20, 0.9)
    Traceback (most recent call last):
    ...
    ValueError: alpha=0.9 keeps S=2 of n=20 clients, fewer than the 5 groups (each keeps one)
    """

    name: ClassVar[str] = "grouped_dropout"

    def __init__(self, n: int, alpha: float, group_size: int = 4,
                 full_first: bool = True) -> None:
        self.n = validate_n(n)
        self.alpha = validate_dropout_rate(alpha)
        self.group_size = validate_n(group_size, "group_size")
        if self.n % self.group_size:
            raise ValueError(f"group_size must divide n={self.n}, got {group_size!r}")
        if not isinstance(full_first, (bool, np.bool_)):
            raise ValueError(f"full_first must be a bool, got {full_first!r}")
        self.full_first = bool(full_first)
        G, S = self.groups, self.active
        if not G <= S <= self.n:
            raise ValueError(f"alpha={alpha!r} keeps S={S} of n={self.n} clients, fewer than the "
                             f"{G} groups (each keeps one)")

    @property
    def groups(self) -> int:
        """The number of groups :math:`G = K/g`."""
        return self.n // self.group_size

    @property
    def active(self) -> int:
        """:math:`S = K - \\lfloor\\alpha K\\rfloor` (rounding error of ``alpha * n`` forgiven)."""
        return self.n - math.floor(self.alpha * self.n + 1e-9)

    @property
    def stationary(self) -> np.ndarray:
        """:math:`P(\\text{client } i \\text{ active}) = S/K` in every round after the first
        (the first is full when ``full_first``)."""
        return np.full(self.n, self.active / self.n)

    @cached_property
    def _tuples(self) -> np.ndarray:
        g, G, S = self.group_size, self.groups, self.active
        rows = [c for c in itertools.product(range(1, g + 1), repeat=G) if sum(c) == S]
        return np.array(rows, dtype=np.intp)

    def tuples(self) -> np.ndarray:
        """The admissible group counts, ``(N_S, G)`` in lexicographic order (each equally
        likely)."""
        return self._tuples.copy()

    def count_law(self) -> dict[int, Fraction]:
        r""":math:`P(c_j = c)` for one group (the same for every group), exactly.

        >>> {c: str(p) for c, p in GroupedDropout(20, 0.7).count_law().items()}
        {1: '4/5', 2: '1/5'}
        """
        tup = self._tuples
        counts = np.bincount(tup[:, 0], minlength=self.group_size + 1)
        return {c: Fraction(int(counts[c]), len(tup)) for c in range(1, self.group_size + 1)
                if counts[c]}

    def mask_probability(self, mask: Any) -> Fraction:
        r"""The exact probability of one round's ``mask`` (``(n,)`` bool) after the first round:
        :math:`N_S^{-1}\prod_j\binom{g}{c_j}^{-1}` if its group counts are admissible, else 0."""
        m = np.asarray(mask, dtype=bool)
        if m.shape != (self.n,):
            raise ValueError(f"mask must have shape ({self.n},), got {m.shape}")
        c = m.reshape(self.groups, self.group_size).sum(axis=1)
        if c.min() < 1 or int(c.sum()) != self.active:
            return Fraction(0)
        den = len(self._tuples) * math.prod(math.comb(self.group_size, int(x)) for x in c)
        return Fraction(1, den)

    def _step(self, state: dict[str, Any], rng: RNGLike) -> np.ndarray:
        R, n, g = state["replicas"], self.n, self.group_size
        if self.full_first and state["t"] == 0:
            return np.ones((R, n), dtype=bool)
        u = uniforms(rng, R, 1 + n)
        tup = self._tuples
        pick = tup[np.minimum((u[:, 0] * len(tup)).astype(np.intp), len(tup) - 1)]  # (R, G)
        # rank of each client within its group (0 = smallest uniform): the c_j smallest stay
        w = u[:, 1:].reshape(R, self.groups, g)
        rank = np.argsort(np.argsort(w, axis=2), axis=2)
        return (rank < pick[:, :, None]).reshape(R, n)
