r"""Exact moments of the importance-sampled aggregate, from the pair-inclusion matrix.

For a sampling design with marginals :math:`p` and pair-inclusion matrix :math:`\mathbf P`
(:mod:`fedtheory.sampling.designs`), weights :math:`w_i` and vectors
:math:`\zeta_i \in \mathbb R^d`, the estimator of seed 002 (eq. (2), Lemma 1) is

.. math::

    X = \sum_{i \in S} \frac{w_i \zeta_i}{p_i} = \sum_{i=1}^n 1_{i\in S}\, a_i,
    \qquad a_i = \frac{w_i \zeta_i}{p_i}.

With :math:`\mathbb E[1_{i\in S}] = p_i` and :math:`\mathbb E[1_{i\in S} 1_{j \in S}] =
\mathbf P_{ij}` (Appendix A of seed 002),

.. math::

    \mathbb E X = \sum_i p_i a_i = \sum_i w_i \zeta_i, \qquad
    \mathbb E\|X - \mathbb E X\|^2 = \sum_{i,j} (\mathbf P_{ij} - p_i p_j)\, a_i^\top a_j
    = e^\top\big((\mathbf P - p p^\top) \circ A^\top A\big) e,

with :math:`A = [a_1, \dots, a_n] \in \mathbb R^{d \times n}`. Whenever
:math:`\mathbf P - pp^\top \preceq \mathrm{Diag}(p \circ v)` (an ESO, see
:mod:`fedtheory.convex.eso`), the variance is at most
:math:`\sum_i w_i^2 v_i \|\zeta_i\|^2 / p_i` (eq. (5)), :func:`eso_bound`.

Conventions: ``w`` has shape ``(n,)`` (any real weights: the identities do not need the seed's
:math:`w_i \ge 0, \sum_i w_i = 1`), ``zeta`` shape ``(n, d)`` (a 1-D ``zeta`` is read as
``(n, 1)``). The design must be *proper* (every :math:`p_i > 0`). Wherever a design is
expected, its pair-inclusion matrix ``P`` (an ``(n, n)`` array; :math:`p = \mathrm{diag}\,P`)
is accepted too.

Examples
--------
>>> import numpy as np
>>> from fedtheory.sampling.designs import UniformWithoutReplacement
>>> d = UniformWithoutReplacement(2, 1)
>>> w, zeta = np.array([0.5, 0.5]), np.array([[1.0], [1.0]])
>>> estimator_mean(d, w, zeta), float(estimator_variance(d, w, zeta))
(array([1.]), 0.0)
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory.sampling.designs import SamplingDesign

__all__ = [
    "bound_coefficients",
    "enumerate_moments",
    "eso_bound",
    "estimator_mean",
    "estimator_variance",
    "importance_vectors",
    "sample_estimator",
    "variance_formula",
]

DesignLike = SamplingDesign | np.ndarray

#: Elements per chunk of the Monte Carlo sampler (keeps BLAS calls small and cache-resident).
CHUNK_ELEMENTS = 1 << 15


def _marginals_and_pairs(design: DesignLike) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(design, SamplingDesign):
        return design.p, design.P
    P = np.asarray(design, dtype=float)
    if P.ndim != 2 or P.shape[0] != P.shape[1] or P.shape[0] == 0:
        raise ValueError(f"P must be a square (n, n) matrix, got shape {P.shape}")
    if not np.all(np.isfinite(P)):
        raise ValueError("P must be finite")
    if not np.allclose(P, P.T, rtol=0, atol=1e-12):
        raise ValueError("P must be symmetric")
    p = np.diag(P).copy()
    if np.any((p < 0) | (p > 1)):
        raise ValueError(f"diag(P) = p must lie in [0, 1], got {p.tolist()!r}")
    return p, P


def _check_proper(p: np.ndarray) -> None:
    if np.any(p <= 0):
        raise ValueError(
            f"the design must be proper (every p_i > 0), got p_{int(np.argmin(p))} = "
            f"{float(np.min(p))!r}"
        )


def _check_w_zeta(w: Any, zeta: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    w = np.asarray(w, dtype=float)
    if w.shape != (n,):
        raise ValueError(f"w must have shape ({n},), got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError(f"w must be finite, got {w.tolist()!r}")
    z = np.asarray(zeta, dtype=float)
    if z.ndim == 1:
        z = z[:, None]
    if z.ndim != 2 or z.shape[0] != n:
        raise ValueError(f"zeta must have shape ({n}, d), got shape {np.shape(zeta)}")
    if not np.all(np.isfinite(z)):
        raise ValueError("zeta must be finite")
    return w, z


def importance_vectors(design: DesignLike, w: Any, zeta: Any) -> np.ndarray:
    r"""The rows :math:`a_i = w_i \zeta_i / p_i`, shape ``(n, d)``."""
    p, _ = _marginals_and_pairs(design)
    _check_proper(p)
    w, z = _check_w_zeta(w, zeta, p.size)
    return (w / p)[:, None] * z


def estimator_mean(design: DesignLike, w: Any, zeta: Any) -> np.ndarray:
    r"""Exact :math:`\mathbb E X = \sum_i p_i a_i` (which equals :math:`\sum_i w_i \zeta_i`).

    Computed from the design's marginals and the importance vectors, so that it tests the
    unbiasedness rather than assuming it. Shape ``(d,)``.
    """
    p, _ = _marginals_and_pairs(design)
    return p @ importance_vectors(design, w, zeta)


def variance_formula(P: np.ndarray, A: np.ndarray) -> Any:
    r""":math:`e^\top((\mathbf P - pp^\top)\circ A^\top A)e` with :math:`p = \mathrm{diag}\,P`.

    ``A`` holds the vectors :math:`a_i` as rows, shape ``(n, d)``. Works for any numeric dtype,
    including object arrays of :class:`fractions.Fraction` (exact arithmetic).

    >>> from fractions import Fraction as F
    >>> P = np.array([[F(1, 2), F(0)], [F(0), F(1, 2)]], dtype=object)
    >>> variance_formula(P, np.array([[F(1)], [F(1)]], dtype=object))
    Fraction(0, 1)
    """
    p = np.diagonal(P)
    C = P - np.outer(p, p)
    G = A @ A.T
    return (C * G).sum()


def estimator_variance(design: DesignLike, w: Any, zeta: Any) -> float:
    r"""Exact :math:`\mathbb E\|X - \mathbb EX\|^2 = e^\top((\mathbf P - pp^\top)\circ A^\top A)e`.

    Seed 002, Lemma 1, eq. (30). Returns a float (clipped at 0 from below: the value is a
    variance; rounding may otherwise leave ``-1e-17``).
    """
    _, P = _marginals_and_pairs(design)
    A = importance_vectors(design, w, zeta)
    return max(float(variance_formula(P, A)), 0.0)


def bound_coefficients(p: Any, w: Any, zeta: Any) -> np.ndarray:
    r"""Coefficients :math:`c_i = w_i^2 \|\zeta_i\|^2 / p_i` of the bound (5): bound
    :math:`= \sum_i c_i v_i`."""
    p = np.asarray(p, dtype=float)
    if p.ndim != 1 or p.size == 0:
        raise ValueError(f"p must be a non-empty 1-D array, got shape {p.shape}")
    bad = ~np.isfinite(p) | (p <= 0) | (p > 1)
    if bad.any():
        raise ValueError(f"p must be in (0, 1], got {float(p[bad][0])!r}")
    w, z = _check_w_zeta(w, zeta, p.size)
    return w**2 * np.einsum("ij,ij->i", z, z) / p


def eso_bound(p: Any, v: Any, w: Any, zeta: Any) -> float:
    r"""Right-hand side of (5): :math:`\sum_i w_i^2 \frac{v_i}{p_i} \|\zeta_i\|^2`.

    >>> eso_bound([0.5, 0.5], [0.5, 0.5], [0.5, 0.5], [[1.0], [1.0]])
    0.5
    """
    c = bound_coefficients(p, w, zeta)
    v = np.asarray(v, dtype=float)
    if v.shape != c.shape:
        raise ValueError(f"v must have shape {c.shape}, got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"v must be finite, got {v.tolist()!r}")
    return float(c @ v)


def enumerate_moments(design: SamplingDesign, w: Any, zeta: Any,
                      exact: bool = True) -> tuple[np.ndarray, Any]:
    r"""Mean and variance of :math:`X` by summing over every subset (small ``n`` only).

    .. math:: \mathbb E X = \sum_k \pi_k X(S_k),\qquad
              \mathbb E\|X-\mathbb EX\|^2 = \sum_k \pi_k \|X(S_k) - \mathbb E X\|^2 .

    With ``exact=True`` the arithmetic is rational (:class:`fractions.Fraction`): ``w`` and
    ``zeta`` are converted exactly (floats bit for bit; pass Fractions or integers for
    "nice" numbers) and so are the design's probabilities. This is independent of
    :func:`variance_formula`: it never uses :math:`\mathbf P`.

    Returns ``(mean, variance)``: an object array of shape ``(d,)`` and a Fraction (exact), or a
    float array and a float.
    """
    if not isinstance(design, SamplingDesign):
        raise ValueError(f"design must be a SamplingDesign, got {type(design).__name__}")
    _check_proper(design.p)
    _check_w_zeta(w, zeta, design.n)  # validates shapes and finiteness
    masks, probs = design.enumerate(exact=exact)
    if exact:
        p = design.p_exact
        w_e = np.array([_frac(x) for x in np.asarray(w, dtype=object).ravel()], dtype=object)
        z_e = np.asarray(zeta, dtype=object)
        if z_e.ndim == 1:
            z_e = z_e[:, None]
        z_e = np.vectorize(_frac, otypes=[object])(z_e)
        A = (w_e / p)[:, None] * z_e
        Xs = masks.astype(int).astype(object) @ A  # (k, d)
        mean = probs @ Xs
        dev = Xs - mean
        var = probs @ (dev * dev).sum(axis=1)
        return mean, var
    A = importance_vectors(design, w, zeta)
    Xs = masks.astype(float) @ A
    mean = probs @ Xs
    dev = Xs - mean
    return mean, float(probs @ np.einsum("kd,kd->k", dev, dev))


def _frac(x: Any) -> Fraction:
    if isinstance(x, Fraction):
        return x
    if isinstance(x, (int, np.integer)):
        return Fraction(int(x))
    if isinstance(x, (float, np.floating)):
        return Fraction(float(x))
    return Fraction(str(x))


def sample_estimator(design: SamplingDesign, w: Any, zeta: Any, rng: np.random.Generator,
                     replicas: int, chunk_rows: int | None = None) -> np.ndarray:
    r"""Monte Carlo draws of :math:`X = \sum_{i \in S} w_i \zeta_i / p_i`, shape ``(replicas, d)``.

    Vectorised: each chunk of replicas is one ``(rows, n)`` mask times the ``(n, d)`` matrix of
    importance vectors; the Python loop is over chunks (of :data:`CHUNK_ELEMENTS` mask entries
    by default, small enough to stay in cache and keep BLAS single-threaded), never over
    replicas or clients. The masks are written as 0.0/1.0 into a reused float buffer
    (independent sampling thresholds its uniforms in place). The draws are those of
    ``design.sample`` and depend only on the generator's state, not on ``chunk_rows``.

    >>> from fedtheory.sampling.designs import IndependentSampling
    >>> X = sample_estimator(IndependentSampling([0.5, 0.5]), [0.5, 0.5], [[1.0], [1.0]],
    ...                      np.random.default_rng(0), 4)
    >>> X.shape
    (4, 1)
    """
    if not isinstance(design, SamplingDesign):
        raise ValueError(f"design must be a SamplingDesign, got {type(design).__name__}")
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {rng!r}")
    if isinstance(replicas, bool) or not isinstance(replicas, (int, np.integer)) or replicas < 0:
        raise ValueError(f"replicas must be a non-negative integer, got {replicas!r}")
    A = importance_vectors(design, w, zeta)
    n, d = A.shape
    if chunk_rows is None:
        chunk_rows = max(1, CHUNK_ELEMENTS // max(n, d))
    elif isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) \
            or chunk_rows < 1:
        raise ValueError(f"chunk_rows must be a positive integer, got {chunk_rows!r}")
    out = np.empty((int(replicas), d))
    buf = np.empty((min(chunk_rows, max(int(replicas), 1)), n))
    for start in range(0, int(replicas), chunk_rows):
        rows = min(chunk_rows, int(replicas) - start)
        b = buf[:rows]
        design._sample_into(rng, b)  # 0.0/1.0 masks, same draws as design.sample
        np.matmul(b, A, out=out[start:start + rows])
    return out
