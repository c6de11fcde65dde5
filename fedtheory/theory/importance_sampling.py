r"""Importance-sampled aggregation (seeds 000, 002, 003): the seeds' closed forms and the
scenario builders of family ``is``.

The object is :math:`X = \sum_{i\in S} w_i\zeta_i/p_i` (seed 002, eq. (2)); seed 000's
:math:`G = \frac1n\sum_i 1_i g_i/p_i` is the case :math:`w_i = 1/n` under independent
sampling. Here: the seeds' right-hand sides (:func:`seed000_variance`, :func:`wor_formula`),
the smallest counterexample to "independent sampling minimises the variance", random rational
instances and the sampling designs the checks run on.

>>> from fractions import Fraction
>>> seed000_variance([Fraction(1, 2), Fraction(1, 2)], [[1], [1]])
Fraction(1, 2)
>>> import numpy as np
>>> float(wor_formula(4, 2, np.array([[0.0], [2.0], [0.0], [2.0]])))
0.3333333333333333
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory.sampling.designs import (
    ExplicitSampling,
    IndependentSampling,
    SamplingDesign,
    UniformWithoutReplacement,
)

__all__ = [
    "SMALLEST_COUNTEREXAMPLE",
    "design_desc",
    "equal_marginal_designs",
    "floats",
    "random_explicit",
    "rational_p",
    "rational_w",
    "seed000_variance",
    "sq_dev",
    "three_designs",
    "wor_formula",
]


# -- the seeds' right-hand sides -----------------------------------------------------------------

def seed000_variance(p: Any, g: Any) -> Any:
    """The seed's right-hand side (1/n^2) sum (1/p_i - 1)||g_i||^2 (any numeric type)."""
    n = len(p)
    return sum((1 / p[i] - 1) * sum(x * x for x in g[i]) for i in range(n)) / n**2


def wor_formula(n: Any, b: Any, g: np.ndarray) -> Any:
    """The seed's (n - b)/(b(n - 1)) * (1/n) sum ||g_i - Gbar||^2 (floats, or rationals for
    integer g with n, b given as Fractions)."""
    if n == 1:
        return 0 * b
    centred = g * n - g.sum(axis=0)  # n (g_i - Gbar), exact for integers
    spread = (centred * centred).sum()
    return (n - b) / (b * (n - 1)) * spread / n**3


#: The smallest counterexample to ``is.independent_minimises_variance`` (n = 2, d = 1), in
#: exact rationals.
SMALLEST_COUNTEREXAMPLE: dict[str, Any] = {
    "n": 2,
    "p": ["1/2", "1/2"],
    "w": ["1/2", "1/2"],
    "zeta": [[1], [1]],
    "design": "uniform without replacement, b = 1 (P_12 = 0)",
    "variance_design": "0",
    "variance_independent": "1/2",
}


# -- random instances and designs ----------------------------------------------------------------

def rational_p(rng: np.random.Generator, n: int, denominator: int = 10) -> list[Fraction]:
    """``n`` random marginals k/denominator, 1 <= k < denominator."""
    return [Fraction(int(k), denominator) for k in rng.integers(1, denominator, n)]


def rational_w(rng: np.random.Generator, n: int) -> list[Fraction]:
    """Non-negative rational weights summing to 1 (the seed's assumption on w)."""
    raw = rng.integers(1, 6, n)
    return [Fraction(int(x), int(raw.sum())) for x in raw]


def random_explicit(rng: np.random.Generator, n: int, k: int | None = None) -> ExplicitSampling:
    """A random explicit design on ``n`` clients: ``k`` random subsets plus the full set (so it
    is proper), with rational probabilities."""
    k = k or 2 * n
    rows = rng.random((k, n)) < 0.5
    rows = np.vstack([rows, np.ones((1, n), dtype=bool)])
    weights = rng.integers(1, 10, rows.shape[0])
    total = int(weights.sum())
    return ExplicitSampling(rows, [Fraction(int(x), total) for x in weights])


def three_designs(rng: np.random.Generator, n: int) -> list[tuple[str, SamplingDesign]]:
    """Independent (random rational p), floor(n/2)-of-n without replacement, random explicit."""
    return [
        ("independent", IndependentSampling(rational_p(rng, n))),
        (f"{max(1, n // 2)}-of-{n} without replacement",
         UniformWithoutReplacement(n, max(1, n // 2))),
        ("explicit", random_explicit(rng, n)),
    ]


def equal_marginal_designs(n: int, b: int) -> list[tuple[str, SamplingDesign]]:
    """Designs whose marginals all equal b/n: b-of-n, a random cyclic block, all-or-nothing."""
    blocks = [tuple((s + k) % n for k in range(b)) for s in range(n)]
    return [
        (f"{b}-of-{n} without replacement", UniformWithoutReplacement(n, b)),
        (f"cyclic block of {b}", ExplicitSampling(blocks, [Fraction(1, n)] * n, n=n)),
        ("all or nothing", ExplicitSampling([tuple(range(n)), ()],
                                            [Fraction(b, n), 1 - Fraction(b, n)], n=n)),
    ]


def design_desc(design: SamplingDesign) -> dict[str, Any]:
    """A JSON-friendly description of a design (for counterexamples)."""
    if isinstance(design, IndependentSampling):
        return {"design": "independent", "p": [str(x) for x in design.p_exact]}
    if isinstance(design, UniformWithoutReplacement):
        return {"design": "uniform without replacement", "n": design.n, "b": design.b}
    masks, probs = design.enumerate(exact=True)
    return {
        "design": "explicit",
        "subsets": [tuple(int(i) for i in np.flatnonzero(r)) for r in masks],
        "probs": [str(q) for q in probs],
        "n": design.n,
    }


# -- small numeric utilities ---------------------------------------------------------------------

def floats(xs: Any) -> np.ndarray:
    """A float array from any sequence of numbers (Fractions included)."""
    return np.array([float(x) for x in xs], dtype=float)


def sq_dev(X: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """Per-replica squared deviations ||X_r - mean||^2 of a (replicas, d) array."""
    D = X - mean
    return np.einsum("rd,rd->r", D, D)
