r"""Exact enumeration of independent participation patterns (PEPit style).

For small :math:`n`, every one of the :math:`2^n` patterns of independent
:math:`1_i\sim\mathrm{Bernoulli}(p_i)` participation is listed with its probability, so that an
expectation over the mask is computed exactly (with :class:`fractions.Fraction`) and a Monte
Carlo estimate can be compared with it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ["all_masks", "exact_expectation", "fractions", "mask_probabilities"]


def all_masks(n: int) -> np.ndarray:
    """Every participation pattern of ``n`` clients: a boolean array ``(2**n, n)``.

    >>> all_masks(2).astype(int).tolist()
    [[0, 0], [0, 1], [1, 0], [1, 1]]
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if n > 20:
        raise ValueError(f"n must be at most 20 for exact enumeration, got {n!r}")
    return np.array(list(itertools.product([False, True], repeat=n)), dtype=bool)


def mask_probabilities(masks: np.ndarray, p: Sequence[Any] | Any, exact: bool = False
                       ) -> np.ndarray:
    r"""Probability of each pattern under independent :math:`1_i\sim\mathrm{Bernoulli}(p_i)`.

    .. math:: P(m) = \prod_i p_i^{m_i}(1-p_i)^{1-m_i}.

    ``p`` is a scalar or a sequence of length ``n``; with ``exact=True`` the entries are
    :class:`fractions.Fraction` (``p`` given as fractions, integers or strings) and the result
    is an object array of fractions that sums to exactly 1.

    >>> probs = mask_probabilities(all_masks(2), [Fraction(1, 2), Fraction(1, 3)], exact=True)
    >>> [str(x) for x in probs], sum(probs)
    (['1/3', '1/6', '1/3', '1/6'], Fraction(1, 1))
    """
    m = np.asarray(masks, dtype=bool)
    if m.ndim != 2:
        raise ValueError(f"masks must have shape (patterns, n), got shape {m.shape}")
    n = m.shape[1]
    if exact:
        ps = [Fraction(p)] * n if np.ndim(p) == 0 else [Fraction(x) for x in p]
        if len(ps) != n or any(not 0 <= x <= 1 for x in ps):
            raise ValueError(f"p must be {n} probabilities in [0, 1], got {p!r}")
        out = np.empty(m.shape[0], dtype=object)
        for k, row in enumerate(m):
            prob = Fraction(1)
            for i in range(n):
                prob *= ps[i] if row[i] else 1 - ps[i]
            out[k] = prob
        return out
    pv = np.broadcast_to(np.asarray(p, dtype=float), (n,))
    if np.any((pv < 0) | (pv > 1)) or not np.all(np.isfinite(pv)):
        raise ValueError(f"p must be probabilities in [0, 1], got {p!r}")
    return np.prod(np.where(m, pv, 1.0 - pv), axis=1)


def exact_expectation(func: Any, n: int, p: Sequence[Any] | Any) -> Any:
    r"""Exact :math:`\mathbb E[\text{func}(1)]` over the :math:`2^n` participation patterns.

    ``func`` maps a boolean mask ``(n,)`` to a number or an array of
    :class:`fractions.Fraction` (object dtype); ``p`` holds rational probabilities. The result
    is exact (no rounding), PEPit style: every equally described branch is enumerated.

    >>> exact_expectation(lambda m: Fraction(int(m.sum())), 3, Fraction(1, 3))
    Fraction(1, 1)
    """
    masks = all_masks(n)
    probs = mask_probabilities(masks, p, exact=True)
    total: Any = 0
    for prob, mask in zip(probs, masks, strict=True):
        if prob != 0:
            total = total + prob * func(mask)
    return total


def fractions(values: Any) -> np.ndarray:
    """``values`` as an object array of :class:`fractions.Fraction` (exact arithmetic).

    >>> fractions([[1, "1/2"]]).tolist()
    [[Fraction(1, 1), Fraction(1, 2)]]
    """
    arr = np.asarray(values, dtype=object)
    return np.vectorize(Fraction, otypes=[object])(arr)
