r"""Worst cases of the ``mifa`` family's bounds (seed 000): adversarial searches and the exact
quantities they maximise.

A bound check is worth the instances it tries. The functions here compute, for the bounds of
:mod:`fedtheory.claims.mifa` (``mifa.mifa_error``, ``mifa.rates_table``,
``mifa.rates_table.corrected``), the bounded quantity on a parametrised family of admissible
instances — in floating point for a search, in exact rational arithmetic for the re-check of
the best instance found; :func:`fedtheory.experiments.search.maximize` searches the family for
the largest ratio measured/stated.

* :func:`mifa_error_expectation`: :math:`\mathbb E\|\nabla f(w_t)-G_t\|^2` of one MIFA round
  over all :math:`2^n` patterns (vectorised; exact with :class:`~fractions.Fraction` entries);
* :func:`fedpgd_quadratic_average`: the average :math:`\frac1T\sum_{t<T}\mathbb E f(x_t)-f^\star`
  of FedPGD on 1-D quadratics with equal curvature :math:`\lambda` (closed-form moment
  recursion :math:`\mathbb E u_{t+1}^2 = (1-\eta\lambda)^2\mathbb E u_t^2 + \eta^2V`);
* :func:`huber_gd_average`: the same average for gradient descent on the Huber function,
  where the iterates move linearly and the convex bound's first term is nearly attained;
* :func:`fedpgd_nonconvex_average`: :math:`\frac1T\sum_{t<T}\mathbb E\|\nabla f(x_t)\|^2` of
  FedPGD on the isotropic quadratic (the non-convex row of the rates table).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory.symbolic.enumeration import all_masks, mask_probabilities
from fedtheory.validation import positive_integer

__all__ = [
    "fedpgd_nonconvex_average",
    "fedpgd_quadratic_average",
    "huber_gd_average",
    "mifa_error_expectation",
]


def mifa_error_expectation(e: np.ndarray, p: Any) -> Any:
    r"""Exact :math:`\mathbb E\|\nabla f(w_t)-G_t\|^2` of one MIFA round given the memory
    errors :math:`e_i = \nabla f_i(w_t)-G_{t-1}^{(i)}` (rows of ``e``, shape (n, d)):

    .. math:: \mathbb E\Big\|\frac1n\sum_i(1-1_i)e_i\Big\|^2
              = \sum_{m\in\{0,1\}^n}P(m)\,\Big\|\frac1n\sum_i(1-m_i)e_i\Big\|^2,

    summed over all :math:`2^n` patterns of independent Bernoulli(``p``) participation
    (vectorised over the patterns). With an object array of Fractions and a Fraction ``p`` the
    result is exact.

    >>> float(mifa_error_expectation(np.array([[1.0], [3.0]]), 0.5))  # (16 + 9 + 1 + 0)/16
    1.625
    """
    e = np.asarray(e) if isinstance(e, np.ndarray) and e.dtype == object else \
        np.asarray(e, dtype=float)
    if e.ndim != 2:
        raise ValueError(f"e must have shape (n, d), got shape {e.shape}")
    n = e.shape[0]
    masks = all_masks(n)
    exact = e.dtype == object
    probs = mask_probabilities(masks, p, exact=exact)
    keep = (~masks).astype(object if exact else float)
    err = keep @ e / n  # (2^n, d)
    return probs @ np.sum(err * err, axis=1)


def _check_step(eta: Any, lam: Any, T: int) -> None:
    if not eta > 0 or not lam > 0:
        raise ValueError(f"eta and lam must be positive, got eta={eta!r}, lam={lam!r}")
    positive_integer("T", T)


def fedpgd_quadratic_average(T: int, *, eta: Any, lam: Any, u0_sq: Any, V: Any) -> Any:
    r"""Exact :math:`\frac1T\sum_{t<T}\mathbb E f(x_t)-f^\star` of FedPGD (an unbiased
    direction with variance :math:`V` given the past) on :math:`f(x) = \frac\lambda2(x-x^\star)^2`
    (every client of curvature :math:`\lambda`), from :math:`(x_0-x^\star)^2 = ` ``u0_sq``:

    .. math:: \mathbb E u_{t+1}^2 = (1-\eta\lambda)^2\,\mathbb E u_t^2 + \eta^2V,\qquad
              \mathbb E f(x_t)-f^\star = \frac\lambda2\,\mathbb E u_t^2 .

    Exact for Fraction arguments.

    >>> fedpgd_quadratic_average(2, eta=Fraction(1, 2), lam=Fraction(1), u0_sq=Fraction(1),
    ...                          V=Fraction(0))
    Fraction(5, 16)
    """
    _check_step(eta, lam, T)
    q = (1 - eta * lam) ** 2
    if not isinstance(eta * lam * u0_sq * V, Fraction) and q < 1:
        # floats: the closed form, sum_{t<T} E u_t^2 = u0 S + eta^2 V (T - S)/(1 - q)
        S = (1 - q**T) / (1 - q)
        return lam / (2 * T) * (u0_sq * S + eta**2 * V * (T - S) / (1 - q))
    u, total = u0_sq, 0 * u0_sq
    for _ in range(T):
        total += lam / 2 * u
        u = q * u + eta**2 * V
    return total / T


def huber_gd_average(T: int, *, eta: Any, L: Any, delta: Any, x0: Any) -> Any:
    r"""Exact :math:`\frac1T\sum_{t<T}f(x_t)-f^\star` of gradient descent on the Huber function

    .. math:: f(x) = \begin{cases}\frac L2x^2, & |x|\le\delta\\
              L\delta|x|-\frac L2\delta^2, & |x|>\delta\end{cases}\qquad
              (\text{convex, } L\text{-smooth, } f^\star = 0 \text{ at } x^\star = 0),

    :math:`x_{t+1} = x_t-\eta f'(x_t)`, :math:`f'(x) = L\,\mathrm{clip}(x,-\delta,\delta)`.
    Far from :math:`x^\star` the gradient is constant and the iterates move linearly, where
    the convexity step :math:`f(x)-f^\star\le\langle\nabla f(x), x-x^\star\rangle` of the convex
    bound is nearly an equality. Exact for Fraction arguments.

    >>> huber_gd_average(2, eta=Fraction(1, 2), L=Fraction(1), delta=Fraction(1), x0=Fraction(3))
    Fraction(9, 4)
    """
    _check_step(eta, L, T)
    if not delta > 0:
        raise ValueError(f"delta must be positive, got {delta!r}")
    theta = eta * L
    if not isinstance(theta * delta * x0, Fraction) and theta <= 1:
        # floats: the closed form; the linear phase moves |x| by θδ per step while |x| > δ
        ax = abs(float(x0))
        k = max(0, int(np.ceil((ax - delta) / (theta * delta)))) if ax > delta else 0
        m = min(k, T)
        total = L * delta * (m * ax - theta * delta * m * (m - 1) / 2) - m * L * delta**2 / 2
        xk, j = ax - k * theta * delta, T - m
        q = (1 - theta) ** 2
        if j > 0:
            total += L / 2 * xk**2 * ((1 - q**j) / (1 - q) if q < 1 else j)
        return total / T
    x, total = x0, 0 * x0
    for _ in range(T):
        ax = abs(x)
        total += L * x * x / 2 if ax <= delta else L * delta * ax - L * delta * delta / 2
        x = x - eta * L * max(-delta, min(delta, x))
    return total / T


def fedpgd_nonconvex_average(T: int, *, eta: Any, L: Any, n: int, b: int, h2: Any,
                             u0_sq: Any) -> Any:
    r"""Exact :math:`\frac1T\sum_{t<T}\mathbb E\|\nabla f(x_t)\|^2` of FedPGD (``b`` of ``n``
    clients without replacement) on the isotropic quadratic (Hessians :math:`LI`,
    :math:`\|\nabla f_i-\nabla f\|^2 = ` ``h2`` for every client):
    :math:`\mathbb E\|u_{t+1}\|^2 = (1-\eta L)^2\mathbb E\|u_t\|^2+\eta^2\frac{n/b-1}{n-1}h_2`,
    :math:`\|\nabla f\|^2 = L^2\|u\|^2`. Exact for Fraction arguments.

    >>> fedpgd_nonconvex_average(2, eta=Fraction(1, 2), L=Fraction(1), n=2, b=1,
    ...                          h2=Fraction(1), u0_sq=Fraction(0))
    Fraction(1, 8)
    """
    _check_step(eta, L, T)
    for name, v in (("n", n), ("b", b)):
        positive_integer(name, v)
    if b > n or n < 2:
        raise ValueError(f"need 1 <= b <= n and n >= 2, got n={n!r}, b={b!r}")
    V = (Fraction(n, b) - 1) / (n - 1) * h2 if isinstance(h2, Fraction) else \
        (n / b - 1) / (n - 1) * h2
    avg_u2 = fedpgd_quadratic_average(T, eta=eta, lam=L, u0_sq=u0_sq, V=V)  # (L/2) avg E u^2
    return 2 * L * avg_u2
