r"""Importance-sampled aggregation (seeds 000, 002, 003): the seeds' closed forms and the
scenario builders of family ``is``.

The object is :math:`X = \sum_{i\in S} w_i\zeta_i/p_i` (seed 002, eq. (2)); seed 000's
:math:`G = \frac1n\sum_i 1_i g_i/p_i` is the case :math:`w_i = 1/n` under independent
sampling. Here: the seeds' right-hand sides (:func:`seed000_variance`, :func:`wor_formula`),
the smallest counterexample to "independent sampling minimises the variance", random rational
instances and the sampling designs the checks run on, the worst case of the
:math:`\sigma_G^2` bound (:func:`equal_spread_updates`), and the pieces of the adversarial
searches: a vectorised hill climb (:func:`hill_climb`), every distribution over the subsets of
a small :math:`[n]` (:func:`subset_masks`, :func:`softmax_pair_matrices`) and the variance of
every sign pattern of the updates (:func:`sign_variances`).

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

from fedtheory import solver_log
from fedtheory.sampling.designs import (
    ExplicitSampling,
    IndependentSampling,
    SamplingDesign,
    UniformWithoutReplacement,
)
from fedtheory.validation import integer_in, nonnegative_integer, positive_integer

__all__ = [
    "SMALLEST_COUNTEREXAMPLE",
    "design_desc",
    "equal_marginal_designs",
    "equal_spread_updates",
    "floats",
    "hill_climb",
    "mean_spread",
    "random_explicit",
    "rational_p",
    "rational_w",
    "seed000_variance",
    "sign_patterns",
    "sign_variances",
    "softmax_pair_matrices",
    "softmax_probabilities",
    "sq_dev",
    "subset_masks",
    "three_designs",
    "wor_formula",
    "worst_direction_sdp",
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


def mean_spread(g: np.ndarray) -> Any:
    r""":math:`\frac1n\sum_i\|g_i - \bar G\|^2` (floats, or a Fraction for integer or
    rational ``g`` given as an object array).

    >>> mean_spread(np.array([[0], [2], [0], [2]], dtype=object))
    Fraction(1, 1)
    >>> float(mean_spread(np.array([[0.0], [2.0]])))
    1.0
    """
    n = len(g)
    centred = g * n - g.sum(axis=0)  # n (g_i - Gbar), exact for integers and Fractions
    total = (centred * centred).sum()
    if isinstance(total, (int, np.integer, Fraction)):
        return Fraction(total) / n**3
    return total / n**3


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
    """A JSON-friendly description of a design (for counterexamples): its own
    :meth:`~fedtheory.sampling.base.SamplingDesign.describe`."""
    return design.describe()


# -- small numeric utilities ---------------------------------------------------------------------

def floats(xs: Any) -> np.ndarray:
    """A float array from any sequence of numbers (Fractions included)."""
    return np.array([float(x) for x in xs], dtype=float)


def sq_dev(X: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """Per-replica squared deviations ||X_r - mean||^2 of a (replicas, d) array."""
    D = X - mean
    return np.einsum("rd,rd->r", D, D)


# -- worst cases and adversarial searches --------------------------------------------------------

def equal_spread_updates(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    r"""Integer updates whose deviations from their mean all have the same norm.

    :math:`g_i = c + s_i e` with a random integer centre :math:`c`, a random non-zero integer
    direction :math:`e` and alternating signs :math:`s = (+1, -1, \dots)` (``n`` even, so
    :math:`\bar G = c`): every :math:`\|g_i - \bar G\|^2 = \|e\|^2`, the case where
    :math:`\frac1n\sum_i\|g_i - \bar G\|^2 \le \sigma_G^2` is an equality with
    :math:`\sigma_G^2 = \max_i \|g_i - \bar G\|^2`.

    >>> g = equal_spread_updates(np.random.default_rng(0), 4, 2)
    >>> dev = g - g.mean(axis=0)
    >>> sorted(set((dev * dev).sum(axis=1).tolist())) == [float((dev[0] ** 2).sum())]
    True
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2 or n % 2:
        raise ValueError(f"n must be an even integer >= 2, got {n!r}")
    positive_integer("d", d)
    centre = rng.integers(-5, 6, d)
    e = rng.integers(-3, 4, d)
    e[0] = max(1, abs(int(e[0])))  # non-zero
    signs = np.where(np.arange(n) % 2 == 0, 1, -1)
    return centre + signs[:, None] * e


def hill_climb(objective: Any, x0: np.ndarray, rng: np.random.Generator,
               steps: int) -> tuple[float, np.ndarray]:
    r"""Maximise ``objective`` by a population of (1+1) evolution strategies, vectorised.

    ``objective`` maps a ``(population, dim)`` array to ``(population,)`` values (NaN counts
    as :math:`-\infty`); ``x0`` is the starting population. Each member proposes a Gaussian
    step, keeps it when the value improves, and adapts its step size (x1.5 on success, x0.9 on
    failure). Returns the best value and its point.

    >>> val, x = hill_climb(lambda X: -((X - 1.0) ** 2).sum(axis=1), np.zeros((8, 2)),
    ...                     np.random.default_rng(0), 200)
    >>> bool(val > -1e-6), np.round(x, 2).tolist()
    (True, [1.0, 1.0])
    """
    x = np.array(x0, dtype=float)
    if x.ndim != 2 or x.shape[0] < 1:
        raise ValueError(f"x0 must have shape (population, dim), got shape {x.shape}")
    nonnegative_integer("steps", steps)

    def value(X: np.ndarray) -> np.ndarray:
        f = np.asarray(objective(X), dtype=float)
        return np.where(np.isnan(f), -np.inf, f)

    f = value(x)
    step = np.ones((x.shape[0], 1))
    for _ in range(int(steps)):
        y = x + step * rng.standard_normal(x.shape)
        g = value(y)
        better = g > f
        x = np.where(better[:, None], y, x)
        f = np.where(better, g, f)
        step = np.clip(step * np.where(better, 1.5, 0.9)[:, None], 1e-8, 10.0)
    best = int(np.argmax(f))
    return float(f[best]), x[best]


def subset_masks(n: int) -> np.ndarray:
    """Every subset of ``range(n)`` as a 0/1 row, shape ``(2**n, n)`` (small ``n``).

    >>> subset_masks(2).tolist()
    [[0, 0], [1, 0], [0, 1], [1, 1]]
    """
    integer_in("n", n, 1, 12, "an integer in 1..12")
    return (np.arange(2**n)[:, None] >> np.arange(n)) & 1


def softmax_probabilities(logits: np.ndarray, floor: float = 0.0) -> np.ndarray:
    r"""Rows :math:`\pi = (1 - \text{floor})\,\mathrm{softmax}(\text{logits}) +
    \text{floor}/k` (``logits`` ``(population, k)``): distributions over ``k`` outcomes, each
    of probability at least ``floor / k``.

    >>> softmax_probabilities(np.array([[0.0, np.log(3.0)]]), floor=0.5).tolist()
    [[0.375, 0.625]]
    """
    logits = np.asarray(logits, dtype=float)
    if not 0.0 <= floor <= 1.0:
        raise ValueError(f"floor must lie in [0, 1], got {floor!r}")
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return (1.0 - floor) * e / e.sum(axis=1, keepdims=True) + floor / logits.shape[1]


def softmax_pair_matrices(masks: np.ndarray, logits: np.ndarray,
                          floor: float = 0.0) -> np.ndarray:
    r"""Pair-inclusion matrices :math:`\mathbf P = M^\top\mathrm{Diag}(\pi)M` of the
    distributions :math:`\pi` of :func:`softmax_probabilities` over the subsets ``masks``
    (rows of :math:`M`), vectorised: ``logits`` ``(population, k)`` gives ``(population, n,
    n)``. Every subset has positive probability, so every design is proper when every client
    is in some subset.

    >>> P = softmax_pair_matrices(subset_masks(2), np.zeros((1, 4)))
    >>> P[0].tolist()
    [[0.5, 0.25], [0.25, 0.5]]
    """
    masks = np.asarray(masks, dtype=float)
    logits = np.asarray(logits, dtype=float)
    if logits.ndim != 2 or logits.shape[1] != masks.shape[0]:
        raise ValueError(f"logits must have shape (population, {masks.shape[0]}), got shape "
                         f"{logits.shape}")
    pi = softmax_probabilities(logits, floor)
    return np.einsum("pk,ki,kj->pij", pi, masks, masks)


def sign_patterns(n: int) -> np.ndarray:
    r"""The sign vectors :math:`\varepsilon \in \{\pm 1\}^n` with :math:`\varepsilon_0 = +1`
    (:math:`\varepsilon` and :math:`-\varepsilon` give the same variance), ``(2**(n-1), n)``.

    >>> sign_patterns(2).tolist()
    [[1, 1], [1, -1]]
    """
    return 1 - 2 * np.hstack([np.zeros((2 ** (n - 1), 1), dtype=int), subset_masks(n - 1)]) \
        if n > 1 else np.ones((1, 1), dtype=int)


def sign_variances(P: np.ndarray, A: np.ndarray) -> np.ndarray:
    r"""The variance of :math:`X(\varepsilon\circ\zeta) = \sum_{i\in S}\varepsilon_i a_i`
    for every sign pattern of :func:`sign_patterns`, vectorised over a population:
    :math:`\sum_{ij}(\mathbf P_{ij} - p_ip_j)\,\varepsilon_i\varepsilon_j\,a_i^\top a_j`
    (eq. (30)). ``P`` ``(population, n, n)``, ``A`` ``(population, n, d)`` (rows
    :math:`a_i = w_i\zeta_i/p_i`); returns ``(population, 2**(n-1))``.

    >>> P = np.array([[[0.5, 0.0], [0.0, 0.5]]])  # one of two clients, uniformly
    >>> sign_variances(P, np.ones((1, 2, 1))).tolist()
    [[0.0, 1.0]]
    """
    P = np.asarray(P, dtype=float)
    A = np.asarray(A, dtype=float)
    p = np.diagonal(P, axis1=1, axis2=2)
    C = P - p[:, :, None] * p[:, None, :]
    M = C * np.einsum("pid,pjd->pij", A, A)
    s = sign_patterns(P.shape[1]).astype(float)
    return np.einsum("si,pij,sj->ps", s, M, s)


def worst_direction_sdp(design: SamplingDesign, solver: str = "CLARABEL"
                        ) -> tuple[float, np.ndarray]:
    r"""The direction in which ``design`` beats independent sampling with the same marginals
    the most, by a semidefinite program (cvxpy; the solve is recorded in
    :mod:`fedtheory.solver_log`):

    .. math:: \min_G\ \langle M, G\rangle \quad\text{s.t.}\quad G \succeq 0,\ \operatorname{tr}G
              = 1,\qquad M = \mathbf P - pp^\top - \mathrm{Diag}(\mathbf P - pp^\top),

    whose value is :math:`\lambda_{\min}(M)` (the variance difference
    :math:`\mathrm{Var}_S - \mathrm{Var}_{\rm ind} = a^\top M a` in the columns
    :math:`a_i = w_i\zeta_i/p_i`). Returns the optimal value and the leading factor of the
    optimal :math:`G` (a vector :math:`a` with :math:`a^\top M a` the value, :math:`\|a\| = 1`).

    Raises ``RuntimeError`` when the solver reports no optimal solution.
    """
    import cvxpy as cp  # heavy (about a second to import); only this solve needs it

    p = design.p
    n = p.size
    M = design.P - np.outer(p, p)
    np.fill_diagonal(M, 0.0)
    G = cp.Variable((n, n), PSD=True)
    prob = cp.Problem(cp.Minimize(cp.trace(M @ G)), [cp.trace(G) == 1])
    try:
        prob.solve(solver=solver)
    except cp.error.SolverError as exc:
        solver_log.record("worst-direction SDP", solver, "solver error")
        raise RuntimeError(f"worst-direction SDP: solver {solver} failed: {exc}") from exc
    solver_log.record("worst-direction SDP", solver, str(prob.status))
    if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or G.value is None:
        raise RuntimeError(f"worst-direction SDP: status {prob.status}")
    lam, vec = np.linalg.eigh((G.value + G.value.T) / 2)
    return float(prob.value), vec[:, -1] * np.sqrt(max(lam[-1], 0.0))
