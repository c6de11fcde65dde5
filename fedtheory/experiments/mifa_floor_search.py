r"""Worst cases of seed 000's error-floor bounds: the exact quantities their adversarial
searches maximise.

The bounds of ``mifa.error_floor_step``, ``mifa.error_floor_average(.corrected)`` and
``mifa.zero_floor(.corrected)`` are tested on parametrised families of admissible instances.
Each function below computes the bounded quantity of one family in floating point (for a
search) and, given :class:`~fractions.Fraction` arguments, in exact rational arithmetic (for
the re-check of the best instance a search found):

* :func:`fedavg_is_step_1d`: :math:`\mathbb E f(w-\eta G)-f(w)` of one FedAvg-IS step on 1-D
  quadratics :math:`f_i = \frac{a_i}2(w-c_i)^2` (closed form over the Bernoulli patterns);
* :func:`fedavg_is_moments_diag`: :math:`\mathbb E\|\nabla f(w_t)\|^2`, :math:`t<T`, of FedAvg-IS
  on quadratics with one diagonal Hessian for every client (exact moment recursion);
* :func:`mifa_paths_1d`: every MIFA path on 1-D quadratics (vectorised over the
  :math:`4^{T-1}` paths of two clients), with the realised staleness.

The searches themselves use :func:`fedtheory.experiments.search.maximize`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory.symbolic.enumeration import all_masks
from fedtheory.validation import positive_integer

__all__ = ["fedavg_is_moments_diag", "fedavg_is_step_1d", "mifa_paths_1d"]


def _as_array(name: str, x: Any) -> np.ndarray:
    arr = np.asarray(x, dtype=object if any(isinstance(v, Fraction) for v in np.ravel(
        np.asarray(x, dtype=object))) else float)
    if arr.ndim != 1 or arr.size < 1:
        raise ValueError(f"{name} must be a non-empty 1-D sequence, got {x!r}")
    return arr


def _check_p(p: Any) -> None:
    if not 0 < p <= 1:
        raise ValueError(f"p must be in (0, 1], got {p!r}")


def fedavg_is_step_1d(a: Any, centers: Any, w: Any, p: Any, eta: Any
                      ) -> tuple[Any, Any, Any]:
    r"""One FedAvg-IS step with exact client gradients on :math:`f_i = \frac{a_i}2(w-c_i)^2`
    (1-D, :math:`f = \frac1n\sum_i f_i` of curvature :math:`\bar a`), independent
    :math:`\mathrm{Bernoulli}(p)` participation, :math:`G = \frac1{np}\sum_{i\in\mathcal A}g_i`:

    .. math:: \mathbb E f(w-\eta G)-f(w) = -\eta g^2+\frac{\eta^2\bar a}2\Big(g^2
              + \frac{1/p-1}{n^2}\sum_i g_i^2\Big),

    exact (:math:`f` is quadratic, :math:`\mathbb E G = g`,
    :math:`\mathbb E G^2 = g^2+\operatorname{Var}G`). Returns the expectation,
    :math:`g^2 = f'(w)^2` and :math:`\sigma_G^2 = \max_i(g_i-g)^2`; exact for Fraction
    arguments.

    >>> v, g2, s2 = fedavg_is_step_1d([Fraction(1)] * 2, [Fraction(1), Fraction(-1)],
    ...                               Fraction(0), Fraction(1, 2), Fraction(1, 4))
    >>> v, g2, s2  # at w*: (eta^2/2)(1/p - 1)/n^2 (1 + 1) = 1/64
    (Fraction(1, 64), Fraction(0, 1), Fraction(1, 1))
    """
    a = _as_array("a", a)
    centers = _as_array("centers", centers)
    if a.shape != centers.shape:
        raise ValueError(f"a and centers must have the same length, got {a.size} and "
                         f"{centers.size}")
    if not all(x > 0 for x in a):
        raise ValueError(f"a must be positive curvatures, got {a.tolist()!r}")
    _check_p(p)
    if not eta > 0:
        raise ValueError(f"eta must be positive, got {eta!r}")
    n = a.size
    g_i = a * (w - centers)
    g = sum(g_i) / n
    abar = sum(a) / n
    value = -eta * g * g + eta * eta * abar / 2 * (g * g + (1 / p - 1) / n**2 * sum(g_i * g_i))
    s2 = max((x - g) ** 2 for x in g_i)
    return value, g * g, s2


def fedavg_is_moments_diag(T: int, lams: Any, h2: Any, u0: Any, p: Any, eta: Any, n: int = 2
                           ) -> list[Any]:
    r"""Exact :math:`\mathbb E\|\nabla f(w_t)\|^2`, :math:`t = 0..T-1`, of FedAvg-IS (exact
    client gradients, :math:`\mathrm{Bernoulli}(p)`, :math:`n` clients) on quadratics that share
    the Hessian :math:`H = \mathrm{diag}(\lambda_k)`: :math:`\nabla f_i(w) = H(w-w^\star)+h_i`,
    :math:`\sum_ih_i = 0`, so :math:`\nabla f_i-\nabla f = h_i` is constant.

    Per coordinate :math:`k`, with :math:`a = (1/p-1)/n^2` and :math:`S_k = \sum_i h_{ik}^2`
    (``h2[k]``), the second moment :math:`M_k = \mathbb E u_k^2` of :math:`u = w-w^\star` obeys

    .. math:: M_k' = (1-\eta\lambda_k)^2M_k+\eta^2a\,(n\lambda_k^2M_k+S_k),\qquad
              \mathbb E\|\nabla f(w_t)\|^2 = \sum_k\lambda_k^2M_k(t)

    (the cross terms vanish because :math:`\sum_ih_i = 0`). ``u0`` is :math:`w_0-w^\star`.
    Exact for Fraction arguments.

    >>> fedavg_is_moments_diag(3, [Fraction(4)], [Fraction(32)], [Fraction(0)],
    ...                        Fraction(1, 2), Fraction(1, 8))
    [Fraction(0, 1), Fraction(2, 1), Fraction(11, 4)]
    """
    positive_integer("T", T)
    positive_integer("n", n)
    lams, h2, u0 = (list(_as_array(k, v)) for k, v in (("lams", lams), ("h2", h2), ("u0", u0)))
    if not len(lams) == len(h2) == len(u0):
        raise ValueError(f"lams, h2 and u0 must have the same length, got {len(lams)}, "
                         f"{len(h2)} and {len(u0)}")
    if not all(x > 0 for x in lams) or not all(x >= 0 for x in h2):
        raise ValueError(f"lams must be positive and h2 non-negative, got {lams!r}, {h2!r}")
    _check_p(p)
    if not eta > 0:
        raise ValueError(f"eta must be positive, got {eta!r}")
    a = (1 / p - 1) / n**2
    M = [u * u for u in u0]
    out = []
    for _ in range(T):
        out.append(sum(lam * lam * m for lam, m in zip(lams, M, strict=True)))
        M = [(1 - eta * lam) ** 2 * m + eta * eta * a * (n * lam * lam * m + s)
             for lam, m, s in zip(lams, M, h2, strict=True)]
    return out


def mifa_paths_1d(a: Any, centers: Any, w0: float, eta: float, T: int
                  ) -> dict[str, np.ndarray]:
    r"""Every MIFA path of two or more clients on :math:`f_i = \frac{a_i}2(w-c_i)^2` (1-D,
    exact gradients, floats), vectorised over the :math:`(2^n)^{T-1}` participation sequences.

    Round 0 fills the memory with every :math:`\nabla f_i(w_0)`; rounds :math:`1..T-1` run
    every pattern (the float twin of :func:`fedtheory.theory.mifa.exact_mifa_paths`, same
    path order). Returns ``grad_norm2`` ``(P, T)`` (:math:`|f'(w_t)|^2`), ``gap0``, ``gap1``
    (:math:`f(w_0)-f^\star`, :math:`f(w_1)-f^\star`, NaN when :math:`T = 1`),
    ``tau_max`` ``(P,)`` (the largest staleness over rounds :math:`1..T-1`) and ``tau_run``
    ``(P, T)`` (the largest over rounds :math:`1..t`: the ``tau_max`` of the horizon
    :math:`t+1`, as the paths of a shorter horizon are the prefixes).

    An enumeration, not a simulator: the same numbers as
    :func:`fedtheory.simulate.simulate` with rule ``MIFA(memory_init="full")`` and a
    :class:`~fedtheory.participation.ReplayParticipation` of every path (round 1 full, as the
    memory's fill), to rounding (``tests/test_engine_references.py`` checks it), kept as this
    closed loop because the adversarial searches call it thousands of times: 0.5 ms a call
    against 10 ms for the engine's set-up on :math:`4^{T-1}` one-coordinate replicas.

    >>> out = mifa_paths_1d([1.0, 1.0], [1.0, -1.0], 2.0, 0.5, 2)
    >>> out["grad_norm2"].tolist(), out["gap1"].tolist(), out["tau_max"].tolist()
    ([[4.0, 1.0], [4.0, 1.0], [4.0, 1.0], [4.0, 1.0]], [0.5, 0.5, 0.5, 0.5], [1, 1, 1, 0])
    """
    a = np.asarray(a, dtype=float)
    c = np.asarray(centers, dtype=float)
    if a.ndim != 1 or a.shape != c.shape or a.size < 1 or np.any(a <= 0):
        raise ValueError(f"a (positive) and centers must be 1-D of one length, got {a!r}, {c!r}")
    positive_integer("T", T)
    if not eta > 0:
        raise ValueError(f"eta must be positive, got {eta!r}")
    n = a.size
    masks = all_masks(n)
    P = masks.shape[0] ** (T - 1)
    seq = np.array(np.unravel_index(np.arange(P), [masks.shape[0]] * (T - 1))).T if T > 1 \
        else np.zeros((1, 0), dtype=int)
    abar = a.mean()
    xs = float((a * c).mean() / abar)
    fstar = float((a * (xs - c) ** 2).mean() / 2)
    w = np.full(P, float(w0))
    mem = a * (w[:, None] - c)
    tau = np.zeros((P, n), dtype=np.int64)
    tau_max = np.zeros(P, dtype=np.int64)
    gn2 = np.empty((P, T))
    tau_run = np.zeros((P, T), dtype=np.int64)
    gap = {}
    for t in range(T):
        g = a * (w[:, None] - c)
        gn2[:, t] = g.mean(axis=1) ** 2
        if t < 2:
            gap[t] = (a * (w[:, None] - c) ** 2).mean(axis=1) / 2 - fstar
        if t > 0:
            m = masks[seq[:, t - 1]]
            tau = np.where(m, 0, tau + 1)
            tau_max = np.maximum(tau_max, tau.max(axis=1))
            tau_run[:, t] = tau_max
            mem = np.where(m, g, mem)
        else:
            mem = g
        w = w - eta * mem.mean(axis=1)
    return {"grad_norm2": gn2, "gap0": gap[0], "gap1": gap.get(1, np.full(P, np.nan)),
            "tau_max": tau_max, "tau_run": tau_run}
