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

Scale: the mean scales like :math:`w\zeta` and the variance and the bound like
:math:`(w\zeta)^2`. Each column of :math:`A` whose entries are very large or very small (beyond
:math:`2^{\pm 480}`), or cannot be formed as :math:`(w_i/p_i)\zeta_i` without overflow or
underflow, is built from mantissas and binary exponents (:func:`numpy.frexp`) and carried as a
scaled column times a power of two, and the moments are assembled the same way: no
intermediate step (:math:`w_i/p_i`, :math:`a_i^\top a_j`, :math:`w_i^2\|\zeta_i\|^2`)
overflows or underflows where the result does not, so the result is :math:`\pm\infty` only
when it is beyond the float range (and a zero variance stays 0, never ``inf * 0 = nan``).
Columns in the ordinary range are computed exactly as before, bit for bit.

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
from fedtheory.sampling.ocs import _frexp, _ldexp
from fedtheory.validation import nonnegative_integer, positive_integer, probabilities, real_array

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

#: A column of importance vectors whose largest entry lies in :math:`[2^{-480}, 2^{480}]` is
#: used in its own units: products of two entries and sums of up to :math:`2^{40}` of them then
#: neither overflow nor, for the largest, underflow.
_SAFE_EXPONENT = 480


def _marginals_and_pairs(design: DesignLike) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(design, SamplingDesign):
        return design.p, design.P
    P = real_array("P", design)
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
    w = real_array("w", w)
    if w.shape != (n,):
        raise ValueError(f"w must have shape ({n},), got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError(f"w must be finite, got {w.tolist()!r}")
    z = real_array("zeta", zeta)
    if z.ndim == 1:
        z = z[:, None]
    if z.ndim != 2 or z.shape[0] != n:
        raise ValueError(f"zeta must have shape ({n}, d), got shape {np.shape(zeta)}")
    if not np.all(np.isfinite(z)):
        raise ValueError("zeta must be finite")
    return w, z


def _importance_parts(p: np.ndarray, w: np.ndarray,
                      z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""``(A_s, E)`` with :math:`a_{ik} = (A_s)_{ik}\, 2^{E_k}`, :math:`a_i = w_i\zeta_i/p_i`.

    :math:`E_k = 0` and column :math:`k` is :math:`(w_i/p_i)\zeta_{ik}` as computed directly
    when that is safe (every :math:`w_i/p_i` finite and normal or 0, the column's largest entry
    in :math:`[2^{-480}, 2^{480}]`). Otherwise every entry is formed from mantissas and
    exponents, :math:`a_{ik} = (f_i g_{ik}/h_i)\,2^{e_i + x_{ik} - k_i}` for :math:`w_i = f_i
    2^{e_i}`, :math:`\zeta_{ik} = g_{ik}2^{x_{ik}}`, :math:`p_i = h_i 2^{k_i}`, and a column
    beyond :math:`2^{\pm 480}` is rescaled so that its largest entry is about :math:`2^{480}`.
    """
    n, d = z.shape
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        fac = w / p
        A = fac[:, None] * z
    amax = np.max(np.abs(A), axis=0) if n else np.zeros(d)
    fac_ok = np.all(np.isfinite(fac) & ((fac == 0) | (np.abs(fac) >= 2.0**-1022)))
    col_ok = np.isfinite(amax) & ((amax == 0) | (np.abs(_frexp(amax)[1]) <= _SAFE_EXPONENT))
    if fac_ok and np.all(col_ok):
        return A, np.zeros(d, dtype=np.int64)
    wf, we = _frexp(w)
    pf, pe = _frexp(p)
    zf, ze = _frexp(z)
    mant = (wf / pf)[:, None] * zf  # |mant| < 2: a_ik = mant_ik * 2**x_ik
    x = (we - pe)[:, None] + ze
    nonzero = mant != 0
    xmax = np.where(nonzero, x, np.iinfo(np.int64).min).max(axis=0, initial=np.iinfo(np.int64).min)
    # a column beyond the window is brought to its top: small factors (a subnormal p_i in
    # P_ij - p_i p_j) then multiply entries near 2**480, and their products stay normal
    E = np.where(np.any(nonzero, axis=0) & (np.abs(xmax) > _SAFE_EXPONENT),
                 xmax - _SAFE_EXPONENT, 0)
    return _ldexp(mant, x - E), E


def _with_exponents(x: np.ndarray, E: np.ndarray) -> np.ndarray:
    """``x * 2**E`` (the last axis carries ``E``), or ``x`` itself when ``E`` is 0."""
    return _ldexp(x, E) if np.any(E) else x


def importance_vectors(design: DesignLike, w: Any, zeta: Any) -> np.ndarray:
    r"""The rows :math:`a_i = w_i \zeta_i / p_i`, shape ``(n, d)``.

    Formed without intermediate overflow: an entry is :math:`\pm\infty` only when it is itself
    beyond the float range.

    >>> from fedtheory.sampling.designs import IndependentSampling
    >>> importance_vectors(IndependentSampling([1e-300, 1.0]), [1e10, 1.0], [[1e-100], [1.0]])
    array([[1.e+210],
           [1.e+000]])
    """
    p, _ = _marginals_and_pairs(design)
    _check_proper(p)
    w, z = _check_w_zeta(w, zeta, p.size)
    return _with_exponents(*_importance_parts(p, w, z))


def estimator_mean(design: DesignLike, w: Any, zeta: Any) -> np.ndarray:
    r"""Exact :math:`\mathbb E X = \sum_i p_i a_i` (which equals :math:`\sum_i w_i \zeta_i`).

    Computed from the design's marginals and the importance vectors, so that it tests the
    unbiasedness rather than assuming it. Shape ``(d,)``.
    """
    p, _ = _marginals_and_pairs(design)
    _check_proper(p)
    w, z = _check_w_zeta(w, zeta, p.size)
    A_s, E = _importance_parts(p, w, z)
    return _with_exponents(p @ A_s, E)


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
    variance; rounding may otherwise leave ``-1e-17``). Columns of :math:`A` kept with different
    binary exponents (see the module docstring) contribute separately,
    :math:`\sum_k 4^{E_k}\, (A_s)_{:k}^\top (\mathbf P - pp^\top) (A_s)_{:k}`, each term
    non-negative.

    >>> from fedtheory.sampling.designs import UniformWithoutReplacement
    >>> estimator_variance(UniformWithoutReplacement(2, 2), [0.5, 0.5], [[1e300], [1e300]])
    0.0
    """
    p, P = _marginals_and_pairs(design)
    _check_proper(p)
    w, z = _check_w_zeta(w, zeta, p.size)
    A_s, E = _importance_parts(p, w, z)
    if not np.any(E):
        return max(float(variance_formula(P, A_s)), 0.0)
    total = 0.0
    for e in np.unique(E):
        part = max(float(variance_formula(P, A_s[:, E == e])), 0.0)
        total += float(_ldexp(part, 2 * int(e)))
    return total


def _bound_parts(p: Any, w: Any, zeta: Any) -> tuple[np.ndarray, np.ndarray]:
    r"""Mantissas and binary exponents of :math:`c_i = w_i^2\|\zeta_i\|^2/p_i`.

    Row :math:`i` of :math:`\zeta` is multiplied by the power of two :math:`2^{-x_i}` that
    brings its largest entry into :math:`[1/2, 1)` (exact), so :math:`\|\zeta_i\|^2` is formed
    without overflow; with :math:`w_i = f_i 2^{e_i}`, :math:`p_i = h_i 2^{k_i}`,
    :math:`c_i = (f_i^2 \|2^{-x_i}\zeta_i\|^2/h_i)\,2^{2e_i + 2x_i - k_i}`.
    """
    p = probabilities("p", p)
    w, z = _check_w_zeta(w, zeta, p.size)
    zx = _frexp(np.max(np.abs(z), axis=1))[1] if z.shape[1] else np.zeros(p.size, np.int64)
    zs = np.ldexp(z, -zx[:, None])
    wf, we = _frexp(w)
    pf, pe = _frexp(p)
    return wf**2 * np.einsum("ij,ij->i", zs, zs) / pf, 2 * we + 2 * zx - pe


def bound_coefficients(p: Any, w: Any, zeta: Any) -> np.ndarray:
    r"""Coefficients :math:`c_i = w_i^2 \|\zeta_i\|^2 / p_i` of the bound (5): bound
    :math:`= \sum_i c_i v_i`.

    Formed from mantissas and binary exponents: :math:`+\infty` only where :math:`c_i` is
    beyond the float range (:math:`w_i^2` or :math:`\|\zeta_i\|^2` alone may overflow).

    >>> bound_coefficients([0.5], [1e200], [[1e-200, 0.0]])
    array([2.])
    """
    return _ldexp(*_bound_parts(p, w, zeta))


def eso_bound(p: Any, v: Any, w: Any, zeta: Any) -> float:
    r"""Right-hand side of (5): :math:`\sum_i w_i^2 \frac{v_i}{p_i} \|\zeta_i\|^2`.

    Each term :math:`c_i v_i` is formed from mantissas and binary exponents and the terms are
    summed relative to the largest non-zero one: a zero :math:`v_i` next to a huge :math:`c_i`
    gives 0 (never ``inf * 0``), and the result is :math:`\pm\infty` only when it is beyond the
    float range.

    >>> eso_bound([0.5, 0.5], [0.5, 0.5], [0.5, 0.5], [[1.0], [1.0]])
    0.5
    >>> eso_bound([0.5, 0.5], [0.0, 1e-300], [1e200, 1.0], [[1e200], [1.0]])
    2e-300
    """
    mant, exp = _bound_parts(p, w, zeta)
    v = real_array("v", v)
    if v.shape != mant.shape:
        raise ValueError(f"v must have shape {mant.shape}, got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"v must be finite, got {v.tolist()!r}")
    vf, ve = _frexp(v)
    term = mant * vf  # c_i v_i = term_i * 2**(exp_i + ve_i); |term_i| < 2 d
    texp = exp + ve
    nonzero = term != 0
    top = int(texp[nonzero].max()) if nonzero.any() else 0
    return float(_ldexp(np.sum(_ldexp(term, texp - top)), top))


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
    w_f, z_f = _check_w_zeta(w, zeta, design.n)  # validates shapes and finiteness
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
    A_s, E = _importance_parts(design.p, w_f, z_f)
    Xs = masks.astype(float) @ A_s
    mean = probs @ Xs
    dev = Xs - mean
    if not np.any(E):
        return mean, float(probs @ np.einsum("kd,kd->k", dev, dev))
    var = 0.0  # columns with different exponents: separately (see estimator_variance)
    for e in np.unique(E):
        cols = dev[:, E == e]
        var += float(_ldexp(float(probs @ np.einsum("kd,kd->k", cols, cols)), 2 * int(e)))
    return _with_exponents(mean, E), var


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
    nonnegative_integer("replicas", replicas)
    p = design.p
    _check_proper(p)
    w, z = _check_w_zeta(w, zeta, p.size)
    A, E = _importance_parts(p, w, z)  # E = 0 (A exactly as before) but for extreme scales
    n, d = A.shape
    if chunk_rows is None:
        chunk_rows = max(1, CHUNK_ELEMENTS // max(n, d))
    else:
        positive_integer("chunk_rows", chunk_rows)
    out = np.empty((int(replicas), d))
    buf = np.empty((min(chunk_rows, max(int(replicas), 1)), n))
    for start in range(0, int(replicas), chunk_rows):
        rows = min(chunk_rows, int(replicas) - start)
        b = buf[:rows]
        design._sample_into(rng, b)  # 0.0/1.0 masks, same draws as design.sample
        np.matmul(b, A, out=out[start:start + rows])
    if np.any(E):
        with np.errstate(over="ignore", under="ignore"):
            np.ldexp(out, E, out=out)
    return out
