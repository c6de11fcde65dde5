r"""Data of the variance-against-:math:`b` figure of family ``is`` (claim
``is.variance_without_replacement``; script ``paper_figures/is_variance_designs.py``).

:func:`variance_curves` computes the exact variance of the importance-sampled average for
:math:`b`-of-:math:`n` sampling without replacement and for independent sampling with
:math:`p_i = b/n`, for every :math:`b`, with Monte Carlo points and their intervals;
:func:`fedtheory.plotting.importance_sampling.plot_variance_curves` draws it.

>>> import numpy as np
>>> g = np.array([[1.0], [2.0], [4.0]])
>>> data = variance_curves(3, g, np.random.default_rng(0), replicas=2_000, mc_points=2)
>>> data.b.tolist(), data.mc_b.tolist(), bool(data.exact_without_replacement[-1] == 0.0)
([1, 2, 3], [1, 2], True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedtheory import stats
from fedtheory.sampling.designs import IndependentSampling, UniformWithoutReplacement
from fedtheory.sampling.moments import estimator_variance, sample_estimator
from fedtheory.theory.importance_sampling import sq_dev

__all__ = ["VarianceCurves", "variance_curves"]


@dataclass
class VarianceCurves:
    """Exact variance against b for b-of-n and independent (p = b/n) sampling, with Monte Carlo
    points and their two-sided intervals (alpha per point)."""

    n: int
    b: np.ndarray
    exact_without_replacement: np.ndarray
    exact_independent: np.ndarray
    mc_b: np.ndarray
    mc_without_replacement: np.ndarray
    mc_independent: np.ndarray
    half_width_without_replacement: np.ndarray
    half_width_independent: np.ndarray
    alpha: float
    replicas: int

    def consistent(self) -> bool:
        """Every Monte Carlo point lies within its interval of the exact curve."""
        ew = np.interp(self.mc_b, self.b, self.exact_without_replacement)
        ei = np.interp(self.mc_b, self.b, self.exact_independent)
        tol = 1e-12 + 1e-9 * np.abs(ew)
        return bool(np.all(np.abs(self.mc_without_replacement - ew)
                           <= self.half_width_without_replacement + tol)
                    and np.all(np.abs(self.mc_independent - ei)
                               <= self.half_width_independent + 1e-12 + 1e-9 * np.abs(ei)))


def variance_curves(n: int, g: np.ndarray, rng: np.random.Generator, replicas: int,
                    mc_points: int = 6, alpha: float = stats.DEFAULT_ALPHA) -> VarianceCurves:
    r"""Data of the variance-against-:math:`b` figure.

    Exact curves for every :math:`b = 1..n`:
    :math:`\frac{n-b}{b(n-1)}\frac1n\sum_i\|g_i - \bar G\|^2` (without replacement, from
    :func:`~fedtheory.sampling.moments.estimator_variance`) and
    :math:`\frac1{n^2}(\frac nb - 1)\sum_i\|g_i\|^2` (independent, :math:`p = b/n`); Monte Carlo
    means of :math:`\|X - \bar G\|^2` at ``mc_points`` values of :math:`b < n` (at
    :math:`b = n` both variances are 0), with two-sided intervals at level
    ``alpha / (2 mc_points)`` each.
    """
    g = np.asarray(g, dtype=float)
    w = np.full(n, 1.0 / n)
    bs = np.arange(1, n + 1)
    ex_w = np.array([estimator_variance(UniformWithoutReplacement(n, int(b)), w, g) for b in bs])
    ex_i = np.array([estimator_variance(IndependentSampling(np.full(n, b / n)), w, g)
                     for b in bs])
    mc_b = np.unique(np.linspace(1, max(n - 1, 1), mc_points).round().astype(int))
    a = alpha / (2 * len(mc_b))
    gbar = g.mean(axis=0)
    out: dict[str, list[float]] = {"w": [], "i": [], "hw": [], "hi": []}
    for b in mc_b:
        for key, design in (("w", UniformWithoutReplacement(n, int(b))),
                            ("i", IndependentSampling(np.full(n, b / n)))):
            sq = sq_dev(sample_estimator(design, w, g, rng, replicas), gbar)
            ci = stats.mean_interval(sq, a, "two")
            out[key].append(float(ci.mean))
            out["h" + key].append(float(ci.z * ci.stderr))
    return VarianceCurves(n, bs, ex_w, ex_i, mc_b, np.array(out["w"]), np.array(out["i"]),
                          np.array(out["hw"]), np.array(out["hi"]), alpha, replicas)
