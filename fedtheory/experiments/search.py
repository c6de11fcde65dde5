r"""Adversarial search, family-neutral: look for the worst admissible instance of a bound.

A bound check is worth the instances it tries. :func:`maximize` searches a box of instance
parameters for the largest ratio measured/stated (seeded uniform starts, then
:func:`scipy.optimize.minimize` from each); :func:`rationalize` turns the best point into the
exact rational instance it stands for, so that the claim re-checks it in exact arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
from scipy.optimize import minimize

__all__ = ["SearchResult", "maximize", "rationalize"]


class SearchResult(dict):
    """The best point of :func:`maximize`: ``x`` (array), ``value`` and ``evaluations``."""


def maximize(fun: Callable[[np.ndarray], float], bounds: Sequence[tuple[float, float]],
             rng: np.random.Generator, *, starts: int = 8, maxiter: int = 200) -> SearchResult:
    r"""Maximise ``fun`` over the box ``bounds``: ``starts`` seeded uniform starting points,
    then L-BFGS-B (numerical gradients) from each; returns the best point found.

    Non-finite values count as :math:`-\infty`. Deterministic given ``rng``.

    >>> r = maximize(lambda x: -(x[0] - 0.3) ** 2, [(0, 1)], np.random.default_rng(0), starts=2)
    >>> round(float(r["x"][0]), 4), r["value"] > -1e-8
    (0.3, True)
    """
    if starts < 1:
        raise ValueError(f"starts must be at least 1, got {starts!r}")
    lo = np.array([b[0] for b in bounds], dtype=float)
    hi = np.array([b[1] for b in bounds], dtype=float)
    if lo.shape != hi.shape or lo.ndim != 1 or not np.all(lo < hi):
        raise ValueError(f"bounds must be (lo, hi) pairs with lo < hi, got {bounds!r}")
    evaluations = 0

    def neg(x: np.ndarray) -> float:
        nonlocal evaluations
        evaluations += 1
        v = float(fun(np.clip(x, lo, hi)))
        return -v if np.isfinite(v) else np.inf

    best_x, best_v = None, -np.inf
    for x0 in lo + (hi - lo) * rng.random((starts, lo.size)):
        res = minimize(neg, x0, method="L-BFGS-B", bounds=list(zip(lo, hi, strict=True)),
                       options={"maxiter": maxiter})
        for x in (x0, res.x):
            v = -neg(x)
            if v > best_v:
                best_x, best_v = np.clip(x, lo, hi), v
    return SearchResult(x=best_x, value=best_v, evaluations=evaluations)


def rationalize(x: Any, max_denominator: int = 1000) -> Any:
    """A float (or array of floats) as the nearest :class:`Fraction` with a bounded
    denominator (an object array for arrays): the exact instance a search's best point
    stands for.

    >>> rationalize(np.array([0.25, 1 / 3])).tolist()
    [Fraction(1, 4), Fraction(1, 3)]
    """
    if max_denominator < 1:
        raise ValueError(f"max_denominator must be at least 1, got {max_denominator!r}")
    if np.ndim(x) == 0:
        return Fraction(float(x)).limit_denominator(max_denominator)
    return np.vectorize(lambda v: Fraction(float(v)).limit_denominator(max_denominator),
                        otypes=[object])(np.asarray(x, dtype=float))
