r"""Exact moments and experiment drivers for the lecture's FedAvg claims (seed 003).

The lecture's FedAvg (Algorithms 1 and 3) runs :math:`K` local SGD steps of size
:math:`\gamma` from the server model :math:`x`, and the server moves by :math:`\gamma_g` times
the average model change of the participants :math:`\mathcal S` (:math:`|\mathcal S| = m`):

.. math::

    y_i^{k+1} = y_i^k - \gamma\big(\nabla f_i(y_i^k) + \xi_i^k\big),\quad y_i^0 = x,\qquad
    x^+ = x + \frac{\gamma_g}{m}\sum_{i\in\mathcal S}(y_i^K - x).

On a quadratic :math:`f_i(x) = \tfrac12 (x - c_i)^\top A_i (x - c_i)` with diagonal
:math:`A_i = \mathrm{diag}(a_i)` every coordinate evolves on its own and the local map is
affine, :math:`y_i^K - c_i = P_i (x - c_i) + \text{noise}` with
:math:`P_i = (1 - \gamma a_i)^K`. Hence, with :math:`e = x - x^\star`,

.. math::

    e^+ = \bar\alpha_{\mathcal S}\, e + \bar\beta_{\mathcal S} + \nu_{\mathcal S},\qquad
    \alpha_i = 1 - \gamma_g (1 - P_i),\quad \beta_i = \gamma_g (1 - P_i)(c_i - x^\star),

where :math:`\bar\cdot_{\mathcal S}` is the average over the participants and
:math:`\nu_{\mathcal S}` the averaged local noise. The participants are drawn independently of
:math:`e`, so the mean and second moment of every coordinate obey an exact scalar recursion
(:func:`fedavg_moments`) whose coefficients are the first and second moments of averages over a
uniformly random :math:`m`-subset (:func:`subset_mean_product`). These exact expectations are
the theory that the Monte Carlo runs of the engine are compared with (two-sided).

Everything here takes a :class:`~fedtheory.problems.QuadraticProblem` with diagonal Hessians
and uniform weights (the lecture's :math:`f = \frac1n\sum_i f_i`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory.validation import integer_at_least

__all__ = [
    "FedAvgMoments",
    "enumerate_subset_variance",
    "fedavg_final_moments",
    "fedavg_fixed_point",
    "fedavg_moments",
    "local_contraction",
    "local_noise_gain",
    "subset_mean_product",
    "subset_variance",
    "update_moments",
]


# ---------------------------------------------------------------------------- validation
def _positive(name: str, value: float) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number, got {value!r}") from None
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return v


def _nonneg(name: str, value: float) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a non-negative number, got {value!r}") from None
    if not np.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be a non-negative number, got {value!r}")
    return v


def _participants(m: int | None, n: int) -> int:
    if m is None:
        return n
    m = integer_at_least("participants", m)
    if m > n:
        raise ValueError(f"participants must be at most n = {n}, got {m!r}")
    return m


def _diagonal_quadratic(problem: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hessian diagonals ``(n, d)``, centers ``(n, d)`` and ``x*`` of a uniform diagonal problem."""
    if not getattr(problem, "diagonal", False):
        raise ValueError(
            f"problem must be a QuadraticProblem with diagonal Hessians, got {problem!r}"
        )
    w = np.asarray(problem.weights, dtype=float)
    if not np.allclose(w, 1.0 / problem.n, rtol=0, atol=1e-15):
        raise ValueError(f"problem must have uniform weights 1/n (the lecture's f), got {w!r}")
    return (np.asarray(problem.hessians, dtype=float), np.asarray(problem.centers, dtype=float),
            np.asarray(problem.x_star, dtype=float))


# ---------------------------------------------------------------------------- local steps
def local_contraction(hessians: np.ndarray, lr: float, local_steps: int) -> np.ndarray:
    r"""The linear part :math:`P_i = (1 - \gamma a_i)^K` of :math:`K` local gradient steps.

    .. math:: y^K - c_i = (1-\gamma a_i)^K (y^0 - c_i)\quad\text{(noise-free)}.

    >>> local_contraction(np.array([[1.0, 2.0]]), 0.25, 2).tolist()
    [[0.5625, 0.25]]
    """
    lr = _positive("lr", lr)
    local_steps = integer_at_least("local_steps", local_steps)
    return (1.0 - lr * np.asarray(hessians, dtype=float)) ** local_steps


def local_noise_gain(hessians: np.ndarray, lr: float, local_steps: int) -> np.ndarray:
    r"""How much gradient noise :math:`K` local steps pass on to the model change, per coordinate.

    With independent zero-mean noise of variance :math:`s^2` per coordinate and step,
    :math:`y^K` carries :math:`-\gamma\sum_{k<K}(1-\gamma a)^{K-1-k}\xi^k`, of variance
    :math:`s^2` times

    .. math:: \gamma^2 \sum_{j=0}^{K-1} (1-\gamma a)^{2j}.

    >>> float(local_noise_gain(np.array([0.0]), 0.5, 4)[0])
    1.0
    """
    lr = _positive("lr", lr)
    local_steps = integer_at_least("local_steps", local_steps)
    q = (1.0 - lr * np.asarray(hessians, dtype=float)) ** 2
    powers = q[..., None] ** np.arange(local_steps)
    return lr**2 * powers.sum(axis=-1)


def fedavg_fixed_point(problem: Any, lr: float, local_steps: int) -> np.ndarray:
    r"""The fixed point of noise-free FedAvg with full participation on a diagonal quadratic.

    The server step vanishes when :math:`\sum_i (I - P_i)(x - c_i) = 0`, i.e.

    .. math::

        \hat x = \Big[\sum_i (I - P_i)\Big]^{-1} \sum_i (I - P_i)\, c_i,
        \qquad P_i = (I - \gamma A_i)^K,

    which is :math:`x^\star = \bar A^{-1}\frac1n\sum_i A_i c_i` for :math:`K = 1` (or identical
    Hessians) and differs from it by the *client drift* otherwise (for any global step
    :math:`\gamma_g`). A coordinate in which every :math:`(1-\gamma a_{ij})^K = 1` is left at
    :math:`x^\star` (every point is fixed there).

    >>> from fedtheory.problems import QuadraticProblem
    >>> prob = QuadraticProblem(np.array([[1.0], [3.0]]), np.array([[1.0], [-1.0]]))
    >>> float(prob.x_star[0]), round(float(fedavg_fixed_point(prob, 0.1, 1)[0]), 12)
    (-0.5, -0.5)
    >>> round(float(fedavg_fixed_point(prob, 0.1, 2)[0]), 6)  # (0.19 - 0.51) / 0.70
    -0.457143
    """
    A, c, x_star = _diagonal_quadratic(problem)
    one_minus_p = 1.0 - local_contraction(A, lr, local_steps)
    den = one_minus_p.sum(axis=0)
    num = (one_minus_p * c).sum(axis=0)
    safe = np.where(den != 0, den, 1.0)
    return np.where(den != 0, num / safe, x_star)


# ---------------------------------------------------------------------------- subsets
def subset_mean_product(alpha: np.ndarray, beta: np.ndarray, m: int) -> np.ndarray:
    r""":math:`\mathbb E[\bar\alpha_{\mathcal S}\bar\beta_{\mathcal S}]` for a uniform
    :math:`m`-subset :math:`\mathcal S` of the :math:`n` rows (sampling without replacement).

    From the indicators :math:`1_i = 1\{i\in\mathcal S\}`, :math:`\mathbb E[1_i] = m/n` and
    :math:`\mathbb E[1_i 1_j] = \frac{m(m-1)}{n(n-1)}` for :math:`i\ne j`:

    .. math::

        \mathbb E\Big[\frac1m\sum_i 1_i\alpha_i\,\frac1m\sum_j 1_j\beta_j\Big]
        = \frac{1}{m^2}\Big[\frac mn\sum_i\alpha_i\beta_i
          + \frac{m(m-1)}{n(n-1)}\Big(\sum_i\alpha_i\sum_j\beta_j - \sum_i\alpha_i\beta_i\Big)
          \Big].

    ``alpha`` and ``beta`` have the clients on axis 0; the result has the remaining shape.

    >>> float(subset_mean_product(np.array([1.0, 3.0]), np.array([1.0, 3.0]), 1))
    5.0
    >>> float(subset_mean_product(np.array([1.0, 3.0]), np.array([1.0, 3.0]), 2))
    4.0
    """
    alpha = np.asarray(alpha, dtype=float)
    beta = np.asarray(beta, dtype=float)
    if alpha.shape != beta.shape or alpha.ndim < 1:
        raise ValueError(
            f"alpha and beta must have the same shape (n, ...), got {alpha.shape} and {beta.shape}"
        )
    n = alpha.shape[0]
    m = _participants(m, n)
    diag = np.sum(alpha * beta, axis=0)
    if n == 1:
        return diag
    cross = np.sum(alpha, axis=0) * np.sum(beta, axis=0) - diag
    return (diag / n + (m - 1) / (n * (n - 1)) * cross) / m


def subset_variance(updates: np.ndarray, m: int) -> float:
    r"""Exact :math:`\mathbb E\|\bar\Delta_{\mathcal S} - \bar\Delta\|^2` for a uniform
    :math:`m`-of-:math:`n` subset (without replacement).

    .. math::

        \mathbb E\Big\|\frac1m\sum_{i\in\mathcal S}\Delta_i - \bar\Delta\Big\|^2
        = \frac{n-m}{m(n-1)}\cdot\frac1n\sum_{i=1}^n\|\Delta_i - \bar\Delta\|^2
        = \frac{1-m/n}{m}\cdot\frac{n}{n-1}\,\zeta_\Delta^2 ,

    zero for :math:`m = n` (and for :math:`n = 1`).

    >>> subset_variance(np.array([[1.0], [3.0], [5.0]]), 1)
    2.6666666666666665
    >>> subset_variance(np.array([[1.0], [3.0], [5.0]]), 3)
    0.0
    """
    u = np.asarray(updates, dtype=float)
    if u.ndim != 2 or u.shape[0] < 1:
        raise ValueError(f"updates must have shape (n, d) with n >= 1, got shape {u.shape}")
    n = u.shape[0]
    m = _participants(m, n)
    if n == 1 or m == n:
        return 0.0
    zeta2 = float(np.mean(np.sum((u - u.mean(axis=0)) ** 2, axis=1)))
    return (n - m) / (m * (n - 1)) * zeta2


def enumerate_subset_variance(updates: Any, m: int) -> Fraction:
    r""":math:`\mathbb E\|\bar\Delta_{\mathcal S} - \bar\Delta\|^2` by enumerating all
    :math:`\binom nm` subsets in exact rational arithmetic (PEPit style; small ``n`` only).

    ``updates`` is a nested sequence ``(n, d)`` of integers or :class:`fractions.Fraction`.

    >>> enumerate_subset_variance([[1], [3], [5]], 1)
    Fraction(8, 3)
    """
    rows = [[Fraction(v) for v in row] for row in updates]
    n = len(rows)
    if n < 1 or any(len(r) != len(rows[0]) for r in rows) or not rows[0]:
        raise ValueError(f"updates must be a non-empty (n, d) table, got {updates!r}")
    m = _participants(m, n)
    d = len(rows[0])
    mean = [sum(r[j] for r in rows) / n for j in range(d)]
    total = Fraction(0)
    subsets = list(itertools.combinations(range(n), m))
    for s in subsets:
        avg = [sum(rows[i][j] for i in s) / m for j in range(d)]
        total += sum((avg[j] - mean[j]) ** 2 for j in range(d))
    return total / len(subsets)


# ---------------------------------------------------------------------------- one round
def update_moments(
    problem: Any,
    x: np.ndarray,
    *,
    lr: float,
    local_steps: int,
    participants: int | None = None,
    sigma2: float = 0.0,
    global_lr: float = 1.0,
) -> dict[str, Any]:
    r"""Exact mean and variance of one FedAvg server step from ``x`` (diagonal quadratic).

    With :math:`\Delta_i = y_i^K - x` the noisy local model change, its mean
    :math:`\mu_i = (P_i - I)(x - c_i)` and its noise covariance
    :math:`\Sigma_i = \frac{\sigma^2}{d}\gamma^2\sum_{j<K}(I-\gamma A_i)^{2j}` (isotropic
    gradient noise with :math:`\mathbb E\|\xi\|^2 = \sigma^2`), the law of total variance over
    the uniform :math:`m`-subset gives

    .. math::

        \mathbb E\big\|x^+ - \mathbb E x^+\big\|^2 = \gamma_g^2\Big[
            \frac{n-m}{m(n-1)}\cdot\frac1n\sum_i\|\mu_i - \bar\mu\|^2
            + \frac{1}{mn}\sum_i \operatorname{tr}\Sigma_i\Big].

    Returns a dict with ``mean`` (``E x^+``, shape ``(d,)``), ``variance`` and its two parts
    ``heterogeneity`` and ``noise``, and ``zeta2_updates``
    (:math:`\frac1n\sum_i\|\mu_i-\bar\mu\|^2`).
    """
    A, c, _ = _diagonal_quadratic(problem)
    n, d = c.shape
    x = np.asarray(x, dtype=float)
    if x.shape != (d,):
        raise ValueError(f"x must have shape ({d},), got shape {x.shape}")
    m = _participants(participants, n)
    sigma2 = _nonneg("sigma2", sigma2)
    global_lr = _positive("global_lr", global_lr)
    mu = (local_contraction(A, lr, local_steps) - 1.0) * (x - c)
    het = subset_variance(mu, m)
    noise = sigma2 / d * float(local_noise_gain(A, lr, local_steps).sum()) / (m * n)
    g2 = global_lr**2
    zeta2 = float(np.mean(np.sum((mu - mu.mean(axis=0)) ** 2, axis=1)))
    return {
        "mean": x + global_lr * mu.mean(axis=0),
        "variance": g2 * (het + noise),
        "heterogeneity": g2 * het,
        "noise": g2 * noise,
        "zeta2_updates": zeta2,
    }


# ---------------------------------------------------------------------------- many rounds
@dataclass(frozen=True)
class FedAvgMoments:
    r"""Exact per-coordinate moments of :math:`e_r = x_r - x^\star`, rounds :math:`0..R`.

    Attributes
    ----------
    mean, second:
        :math:`\mathbb E[e_{r,j}]` and :math:`\mathbb E[e_{r,j}^2]`, shape ``(R + 1, d)``.
    hessian:
        The diagonal of :math:`\bar A`, shape ``(d,)``.
    """

    mean: np.ndarray
    second: np.ndarray
    hessian: np.ndarray

    @property
    def dist2(self) -> np.ndarray:
        r""":math:`\mathbb E\|x_r - x^\star\|^2`, shape ``(R + 1,)``."""
        return self.second.sum(axis=1)

    @property
    def grad_norm2(self) -> np.ndarray:
        r""":math:`\mathbb E\|\nabla f(x_r)\|^2 = \sum_j \bar a_j^2\,\mathbb E[e_{r,j}^2]`."""
        return self.second @ self.hessian**2

    @property
    def bias2(self) -> np.ndarray:
        r""":math:`\|\mathbb E x_r - x^\star\|^2`, shape ``(R + 1,)``."""
        return np.sum(self.mean**2, axis=1)


def _start(x0: np.ndarray | None, d: int) -> np.ndarray:
    """The start ``x0`` as a float vector of length ``d`` (zeros when None)."""
    x0 = np.zeros(d) if x0 is None else np.asarray(x0, dtype=float)
    if x0.shape != (d,):
        raise ValueError(f"x0 must have shape ({d},), got shape {x0.shape}")
    return x0


def fedavg_moments(
    problem: Any,
    *,
    lr: float,
    rounds: int,
    local_steps: int = 1,
    participants: int | None = None,
    sigma2: float = 0.0,
    global_lr: float = 1.0,
    x0: np.ndarray | None = None,
) -> FedAvgMoments:
    r"""Exact mean and second moment of FedAvg's iterates on a diagonal quadratic.

    Per coordinate, with :math:`\alpha_i,\beta_i` as in the module docstring and the
    participants a fresh uniform :math:`m`-subset each round,

    .. math::

        \mathbb E e^+ &= \mathbb E[\bar\alpha_{\mathcal S}]\,\mathbb E e
                         + \mathbb E[\bar\beta_{\mathcal S}],\\
        \mathbb E (e^+)^2 &= \mathbb E[\bar\alpha_{\mathcal S}^2]\,\mathbb E e^2
            + 2\,\mathbb E[\bar\alpha_{\mathcal S}\bar\beta_{\mathcal S}]\,\mathbb E e
            + \mathbb E[\bar\beta_{\mathcal S}^2]
            + \frac{\gamma_g^2}{mn}\,\frac{\sigma^2}{d}\sum_i\gamma^2\sum_{j<K}(1-\gamma a_i)^{2j}.

    Parallel SGD is the case ``local_steps=1`` (one gradient step per round).

    Parameters
    ----------
    problem:
        Diagonal :class:`~fedtheory.problems.QuadraticProblem` with uniform weights.
    lr, local_steps, global_lr:
        :math:`\gamma`, :math:`K`, :math:`\gamma_g`.
    rounds:
        :math:`R \ge 0`.
    participants:
        :math:`m` (all :math:`n` clients when ``None``).
    sigma2:
        :math:`\mathbb E\|\xi\|^2` of the additive isotropic gradient noise.
    x0:
        Start (zeros by default).

    >>> from fedtheory.problems import QuadraticProblem
    >>> prob = QuadraticProblem(np.array([[1.0], [1.0]]), np.array([[1.0], [-1.0]]))
    >>> mom = fedavg_moments(prob, lr=0.5, rounds=2, sigma2=1.0, x0=np.array([2.0]))
    >>> mom.mean[:, 0].tolist(), mom.dist2.tolist()
    ([2.0, 1.0, 0.5], [4.0, 1.125, 0.40625])
    """
    A, c, x_star = _diagonal_quadratic(problem)
    n, d = c.shape
    rounds = integer_at_least("rounds", rounds, minimum=0)
    m = _participants(participants, n)
    sigma2 = _nonneg("sigma2", sigma2)
    global_lr = _positive("global_lr", global_lr)
    x0 = _start(x0, d)

    one_minus_p = 1.0 - local_contraction(A, lr, local_steps)
    alpha = 1.0 - global_lr * one_minus_p
    beta = global_lr * one_minus_p * (c - x_star)
    e_a = alpha.mean(axis=0)
    e_b = beta.mean(axis=0)
    e_aa = subset_mean_product(alpha, alpha, m)
    e_ab = subset_mean_product(alpha, beta, m)
    e_bb = subset_mean_product(beta, beta, m)
    noise = global_lr**2 * sigma2 / d * local_noise_gain(A, lr, local_steps).sum(axis=0) / (m * n)

    mean = np.empty((rounds + 1, d))
    second = np.empty((rounds + 1, d))
    mean[0] = x0 - x_star
    second[0] = mean[0] ** 2
    for r in range(rounds):
        mean[r + 1] = e_a * mean[r] + e_b
        second[r + 1] = e_aa * second[r] + 2.0 * e_ab * mean[r] + e_bb + noise
    return FedAvgMoments(mean, second, np.asarray(problem.hessian, dtype=float))


def fedavg_final_moments(
    problem: Any,
    *,
    lr: float,
    rounds: int,
    local_steps: int = 1,
    sigma2: float = 0.0,
    global_lr: float = 1.0,
    x0: np.ndarray | None = None,
) -> FedAvgMoments:
    r"""The moments of :func:`fedavg_moments` at rounds 0 and :math:`R` only, in closed form
    (full participation): :math:`O(d)` work whatever :math:`R`.

    With every client taking part the coefficients are deterministic, the variance obeys
    :math:`V^+ = \bar\alpha^2 V + q` and the mean :math:`\mu^+ = \bar\alpha\mu + \bar\beta`,
    so

    .. math::

        \mu_R = \bar\alpha^R\mu_0 + \bar\beta\,\frac{1-\bar\alpha^R}{1-\bar\alpha},\qquad
        V_R = q\,\frac{1-\bar\alpha^{2R}}{1-\bar\alpha^2}

    (the fractions read :math:`R` where :math:`\bar\alpha = 1`). Rows: rounds 0 and ``rounds``.

    >>> prob = _example_problem()
    >>> a = fedavg_final_moments(prob, lr=0.3, rounds=50, local_steps=3, sigma2=1.0)
    >>> b = fedavg_moments(prob, lr=0.3, rounds=50, local_steps=3, sigma2=1.0)
    >>> bool(np.allclose(a.second[-1], b.second[-1], rtol=1e-10))
    True
    """
    A, c, x_star = _diagonal_quadratic(problem)
    n, d = c.shape
    rounds = integer_at_least("rounds", rounds, minimum=0)
    sigma2 = _nonneg("sigma2", sigma2)
    global_lr = _positive("global_lr", global_lr)
    x0 = _start(x0, d)
    one_minus_p = 1.0 - local_contraction(A, lr, local_steps)
    a = (1.0 - global_lr * one_minus_p).mean(axis=0)
    b = (global_lr * one_minus_p * (c - x_star)).mean(axis=0)
    q = global_lr**2 * sigma2 / d * local_noise_gain(A, lr, local_steps).sum(axis=0) / n**2

    def geometric(ratio: np.ndarray) -> np.ndarray:
        one = np.isclose(ratio, 1.0, rtol=0.0, atol=1e-15)
        safe = np.where(one, 0.0, ratio)
        return np.where(one, float(rounds), (1.0 - safe**rounds) / (1.0 - safe))

    mu0 = x0 - x_star
    mu = a**rounds * mu0 + b * geometric(a)
    var = q * geometric(a**2)
    mean = np.stack([mu0, mu])
    second = np.stack([mu0**2, mu**2 + var])
    return FedAvgMoments(mean, second, np.asarray(problem.hessian, dtype=float))


def _example_problem() -> Any:
    """A small diagonal quadratic for the examples (3 clients, 2 coordinates)."""
    from fedtheory.problems import QuadraticProblem

    return QuadraticProblem(np.array([[1.0, 0.5], [2.0, 1.0], [0.5, 1.5]]),
                            np.array([[1.0, -1.0], [0.0, 2.0], [-2.0, 0.5]]))


# ---------------------------------------------------------------------------- experiments
def make_problem(
    zeta2: float,
    *,
    n: int = 10,
    d: int = 8,
    L: float = 1.0,  # noqa: N803 (the paper's symbol)
    mu: float = 0.2,
    identical_hessians: bool = False,
    problem_seed: int = 0,
) -> Any:
    r"""A diagonal quadratic with heterogeneity :math:`\zeta_\star^2 = \frac1n\sum_i\|\nabla
    f_i(x^\star)\|^2` equal to ``zeta2`` and :math:`x^\star = 0`.

    The same ``problem_seed`` gives the same Hessians and the same center directions for every
    ``zeta2`` (only the centers' scale changes), so a family of problems differs in its
    heterogeneity alone. With ``identical_hessians`` the gradient differences are constant in
    :math:`x` and Assumption 2 of the lecture holds with equality everywhere,
    :math:`\frac1n\sum_i\|\nabla f_i(x) - \nabla f(x)\|^2 = \zeta^2`.
    """
    from fedtheory.problems import QuadraticProblem

    return QuadraticProblem.heterogeneous(
        n, d, L=L, mu=mu, sigma_G2=_nonneg("zeta2", zeta2),
        rng=np.random.default_rng(problem_seed), identical_hessians=identical_hessians,
    )


def _final(res: Any, metric: str) -> np.ndarray:
    """Per-replica value of ``metric`` at the last recorded round."""
    return np.asarray(res.metric(metric).replicas[:, -1], dtype=float)


def _simulate_uniform(problem: Any, rule: str, *, participants: int | None, lr: float,
                      local_steps: int, rounds: int, replicas: int, sigma2: float, seed: int,
                      x0: np.ndarray | None, record_every: int,
                      keep_replicas: bool = False) -> Any:
    r"""The engine with uniform ``m``-of-``n`` participation (all clients when ``participants``
    is None) and additive Gaussian noise of :math:`\mathbb E\|\xi\|^2 = \sigma^2` (none when
    ``sigma2 == 0``)."""
    from fedtheory.participation import UniformParticipation
    from fedtheory.problems import GaussianNoise
    from fedtheory.simulate import simulate

    m = _participants(participants, problem.n)
    return simulate(problem, rule, UniformParticipation(problem.n, m), rounds=rounds,
                    replicas=replicas, lr=lr, local_steps=local_steps,
                    noise=GaussianNoise(sigma2) if sigma2 > 0 else None, x0=x0, seed=seed,
                    keep_replicas=keep_replicas, record_every=record_every)


def run_final(
    problem: Any,
    rule: str,
    *,
    participants: int | None = None,
    lr: float,
    local_steps: int,
    rounds: int,
    replicas: int,
    sigma2: float,
    seed: int,
    x0: np.ndarray | None = None,
    metrics: tuple[str, ...] = ("dist2", "grad_norm2"),
) -> dict[str, Any]:
    r"""Run the engine (:func:`fedtheory.simulate.simulate`) and keep the final metrics.

    Participation is uniform :math:`m`-of-:math:`n` (all clients when ``participants`` is
    None); noise is additive Gaussian with :math:`\mathbb E\|\xi\|^2 = \sigma^2` (none when
    ``sigma2 == 0``). The seed fixes every stream per replica, so two runs with the same seed
    and shapes share their participation and noise draws (common random numbers): their
    per-replica difference is a paired sample.

    Returns ``{metric: (replicas,) final values}`` plus ``bits`` (final, per replica) and
    ``x`` (final iterates).
    """
    res = _simulate_uniform(problem, rule, participants=participants, lr=lr,
                            local_steps=local_steps, rounds=rounds, replicas=replicas,
                            sigma2=_nonneg("sigma2", sigma2), seed=seed, x0=x0,
                            keep_replicas=True, record_every=max(rounds, 1))
    out: dict[str, Any] = {k: _final(res, k) for k in metrics}
    out["bits"] = _final(res, "bits")
    out["x"] = res.x
    out["seconds"] = res.seconds
    return out


def floors_vs_heterogeneity(
    zeta2_levels: tuple[float, ...],
    rules: tuple[str, ...],
    *,
    participants: int | None = None,
    lr: float,
    local_steps: int,
    rounds: int,
    replicas: int,
    sigma2: float,
    seed: int,
    problem_kw: dict[str, Any] | None = None,
    x0: np.ndarray | None = None,
) -> dict[str, Any]:
    r"""Final :math:`\|x_R - x^\star\|^2` of each rule at each heterogeneity level.

    All levels and rules share the seed (paired replicas). For FedAvg the exact expectation
    (:func:`fedavg_moments`) and the noise-free drift :math:`\|\hat x - x^\star\|^2`
    (:func:`fedavg_fixed_point`, full participation) come with it; for every rule a noise-free
    single run gives the deterministic part of the error left after ``rounds`` rounds.

    Returns a dict with ``levels``, ``rules``, ``dist2[rule]`` (shape ``(levels, replicas)``),
    ``exact_fedavg`` (levels,), ``drift2`` (levels,), ``noise_free[rule]`` (levels,) and
    ``seconds``.
    """
    problem_kw = dict(problem_kw or {})
    levels = tuple(float(z) for z in zeta2_levels)
    out: dict[str, Any] = {"levels": np.array(levels), "rules": tuple(rules), "dist2": {},
                           "noise_free": {}, "seconds": 0.0}
    probs = [make_problem(z, **problem_kw) for z in levels]
    d = probs[0].d
    x0 = np.zeros(d) if x0 is None else np.asarray(x0, dtype=float)
    for rule in rules:
        rows, clean = [], []
        for prob in probs:
            run = run_final(prob, rule, participants=participants, lr=lr,
                            local_steps=local_steps, rounds=rounds, replicas=replicas,
                            sigma2=sigma2, seed=seed, x0=x0, metrics=("dist2",))
            rows.append(run["dist2"])
            out["seconds"] += run["seconds"]
            ref = run_final(prob, rule, participants=participants, lr=lr,
                            local_steps=local_steps, rounds=rounds, replicas=1, sigma2=0.0,
                            seed=seed, x0=x0, metrics=("dist2",))
            clean.append(float(ref["dist2"][0]))
        out["dist2"][rule] = np.array(rows)
        out["noise_free"][rule] = np.array(clean)
    out["exact_fedavg"] = np.array([
        fedavg_moments(p, lr=lr, rounds=rounds, local_steps=local_steps,
                       participants=participants, sigma2=sigma2, x0=x0).dist2[-1]
        for p in probs])
    out["drift2"] = np.array([
        float(np.sum((fedavg_fixed_point(p, lr, local_steps) - p.x_star) ** 2)) for p in probs])
    out["zeta2_at_optimum"] = np.array([p.heterogeneity_at_optimum for p in probs])
    return out


def server_update_samples(
    problem: Any,
    participants: tuple[int, ...],
    *,
    lr: float,
    local_steps: int,
    sigma2: float,
    x0: np.ndarray,
    replicas: int,
    seed: int,
) -> dict[str, Any]:
    r"""One engine round from ``x0`` per participation level :math:`m`, against the exact law.

    Returns ``samples`` (shape ``(len(participants), replicas)``) of
    :math:`\|x_1 - \mathbb E x_1\|^2` with the exact mean of :func:`update_moments`, the exact
    ``variance`` and its ``heterogeneity`` and ``noise`` parts per :math:`m`, and the
    leading-order forms ``leading`` :math:`=\frac{\gamma^2K}{m}(\sigma^2 +
    K\zeta^2\frac{n-m}{n-1})` and ``lecture`` :math:`=\frac{\gamma^2K}{m}(\sigma^2 +
    K\zeta^2(1-\frac mn))` with :math:`\zeta^2 = \frac1n\sum_i\|\nabla f_i(x_0) - \nabla
    f(x_0)\|^2`.
    """
    x0 = np.asarray(x0, dtype=float)
    n = problem.n
    zeta2 = float(problem.heterogeneity(x0))
    out: dict[str, Any] = {"participants": np.array(participants), "zeta2": zeta2,
                           "samples": [], "variance": [], "heterogeneity": [], "noise": []}
    for m in participants:
        run = run_final(problem, "fedavg", participants=m, lr=lr, local_steps=local_steps,
                        rounds=1, replicas=replicas, sigma2=sigma2, seed=seed, x0=x0,
                        metrics=("dist2",))
        mom = update_moments(problem, x0, lr=lr, local_steps=local_steps, participants=m,
                             sigma2=sigma2)
        out["samples"].append(np.sum((run["x"] - mom["mean"]) ** 2, axis=1))
        for key in ("variance", "heterogeneity", "noise"):
            out[key].append(mom[key])
    for key in ("samples", "variance", "heterogeneity", "noise"):
        out[key] = np.array(out[key])
    m_arr = np.array(participants, dtype=float)
    base = lr**2 * local_steps / m_arr
    out["leading"] = base * (sigma2 + local_steps * zeta2 * (n - m_arr) / max(n - 1, 1))
    out["lecture"] = base * (sigma2 + local_steps * zeta2 * (1 - m_arr / n))
    return out


def step_size_for(total_steps: int, c: float) -> float:
    r"""The step :math:`\gamma = c/\sqrt T` with which both FedAvg and parallel SGD run."""
    return _positive("c", c) / np.sqrt(integer_at_least("total_steps", total_steps))


def local_steps_runs(
    problem: Any,
    rounds_grid: tuple[int, ...],
    *,
    local_steps: int,
    c: float,
    sigma2: float,
    replicas: int,
    seed: int,
    x0: np.ndarray,
) -> dict[str, Any]:
    r"""FedAvg (:math:`K` local steps, :math:`R` rounds) against parallel SGD (:math:`KR` steps,
    one per round), both with :math:`\gamma = c/\sqrt{KR}` and full participation.

    Returns per :math:`R` the per-replica final :math:`\|\nabla f\|^2` of both
    (``fedavg``, ``sgd``: shape ``(len(grid), replicas)``), their exact expectations
    (``exact_fedavg``, ``exact_sgd``), the bits each sent (``bits_fedavg``, ``bits_sgd``) and
    the rounds each used.
    """
    K = integer_at_least("local_steps", local_steps)
    out: dict[str, Any] = {"rounds": np.array(rounds_grid), "local_steps": K, "c": c,
                           "fedavg": [], "sgd": [], "exact_fedavg": [], "exact_sgd": [],
                           "bits_fedavg": [], "bits_sgd": [], "seconds": 0.0}
    for R in rounds_grid:
        T = K * R
        lr = step_size_for(T, c)
        fed = run_final(problem, "fedavg", lr=lr, local_steps=K, rounds=R, replicas=replicas,
                        sigma2=sigma2, seed=seed, x0=x0, metrics=("grad_norm2",))
        sgd = run_final(problem, "fedavg", lr=lr, local_steps=1, rounds=T, replicas=replicas,
                        sigma2=sigma2, seed=seed + 1, x0=x0, metrics=("grad_norm2",))
        out["fedavg"].append(fed["grad_norm2"])
        out["sgd"].append(sgd["grad_norm2"])
        out["bits_fedavg"].append(float(fed["bits"][0]))
        out["bits_sgd"].append(float(sgd["bits"][0]))
        out["seconds"] += fed["seconds"] + sgd["seconds"]
        out["exact_fedavg"].append(fedavg_final_moments(
            problem, lr=lr, rounds=R, local_steps=K, sigma2=sigma2, x0=x0).grad_norm2[-1])
        out["exact_sgd"].append(fedavg_final_moments(
            problem, lr=lr, rounds=T, local_steps=1, sigma2=sigma2, x0=x0).grad_norm2[-1])
    for key in ("fedavg", "sgd", "exact_fedavg", "exact_sgd", "bits_fedavg", "bits_sgd"):
        out[key] = np.array(out[key])
    return out


def fit_exponent(x: np.ndarray, samples: np.ndarray,
                 values: np.ndarray | None = None) -> tuple[float, float]:
    r"""Slope of :math:`\log\mathbb E[X]` against :math:`\log x`, and its standard error.

    ``samples`` has shape ``(len(x), replicas)``, independent across rows. Each row's log-mean
    has variance :math:`s^2/(N\bar X^2)` (delta method); the slope is the weighted least
    squares fit with these weights, of variance :math:`1/\sum_j w_j(\log x_j - \overline{\log
    x})^2`. With ``values`` (e.g. the exact expectations) the same weighted fit is applied to
    :math:`\log` ``values`` instead of the log sample means: the slope the estimator targets.

    >>> rng = np.random.default_rng(0)
    >>> x = np.array([10.0, 100.0, 1000.0])
    >>> s = rng.exponential(1.0, (3, 4000)) / np.sqrt(x)[:, None]
    >>> slope, se = fit_exponent(x, s)
    >>> bool(abs(slope + 0.5) < 5 * se), bool(se < 0.02)
    (True, True)
    """
    x = np.asarray(x, dtype=float)
    s = np.asarray(samples, dtype=float)
    if s.ndim != 2 or s.shape[0] != x.shape[0] or x.shape[0] < 2 or s.shape[1] < 2:
        raise ValueError(f"samples must have shape (len(x) >= 2, replicas >= 2), got {s.shape}")
    if np.any(x <= 0):
        raise ValueError(f"x must be positive, got {x!r}")
    mean = s.mean(axis=1)
    if np.any(mean <= 0):
        raise ValueError(f"the sample means must be positive to take logs, got {mean!r}")
    var_log = s.var(axis=1, ddof=1) / s.shape[1] / mean**2
    lx, ly = np.log(x), np.log(mean)
    if np.all(var_log == 0):  # deterministic rows: the ordinary fit is exact
        target = ly if values is None else np.log(np.asarray(values, dtype=float))
        return float(np.polyfit(lx, target, 1)[0]), 0.0
    if np.any(var_log == 0):
        raise ValueError("samples rows must all vary or all be constant, got constant rows "
                         f"{np.flatnonzero(var_log == 0).tolist()} among varying ones")
    w = 1.0 / var_log
    if values is not None:
        v = np.asarray(values, dtype=float)
        if v.shape != x.shape or np.any(v <= 0):
            raise ValueError(f"values must be positive with shape {x.shape}, got {v!r}")
        ly = np.log(v)
    xb = np.sum(w * lx) / np.sum(w)
    sxx = np.sum(w * (lx - xb) ** 2)
    slope = float(np.sum(w * (lx - xb) * ly) / sxx)
    return slope, float(np.sqrt(1.0 / sxx))


def trajectories(
    problem: Any,
    *,
    rule: str = "fedavg",
    participants: int | None = None,
    lr: float,
    local_steps: int,
    rounds: int,
    replicas: int,
    sigma2: float,
    seed: int,
    x0: np.ndarray,
    record_every: int = 1,
) -> dict[str, np.ndarray]:
    """Mean and standard error per recorded round of the engine's metrics (for figures)."""
    res = _simulate_uniform(problem, rule, participants=participants, lr=lr,
                            local_steps=local_steps, rounds=rounds, replicas=replicas,
                            sigma2=sigma2, seed=seed, x0=x0, record_every=record_every)
    return {"rounds": res.rounds, "dist2": res.dist2.mean, "dist2_se": res.dist2.se,
            "grad_norm2": res.grad_norm2.mean, "grad_norm2_se": res.grad_norm2.se,
            "bits": res.bits.mean}


# ---------------------------------------------------------------------------- figures
def _interval(samples: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Row means of ``samples`` (rows, replicas) and two-sided half-widths at level alpha
    (Bonferroni over the rows)."""
    from fedtheory.stats import z_quantile

    s = np.asarray(samples, dtype=float)
    z = z_quantile(alpha, "two", s.shape[0])
    return s.mean(axis=1), z * s.std(axis=1, ddof=1) / np.sqrt(s.shape[1])


def plot_heterogeneity(drift: dict[str, Any], sampling: dict[str, Any], path: Any,
                       alpha: float = 1e-6) -> list[str]:
    r"""Error floor against :math:`\zeta^2`: FedAvg (exact line, Monte Carlo points) against
    SCAFFOLD (full participation, :math:`K` local steps) and SAGA (:math:`m` of :math:`n`).

    ``drift`` and ``sampling`` are :func:`floors_vs_heterogeneity` results with a ``params``
    entry; intervals are two-sided at ``alpha`` (Bonferroni over the points of a curve).
    Returns the saved paths (none when ``path`` is None).
    """
    from fedtheory.plotting import plt, save_figure

    fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.0))
    panels = ((axes[0], drift, "scaffold", "SCAFFOLD"), (axes[1], sampling, "saga", "SAGA"))
    for ax, data, rule, label in panels:
        p = data["params"]
        lv = np.asarray(data["levels"])
        ax.plot(lv, data["exact_fedavg"], "-", color="C0", label="FedAvg (exact)")
        for key, color, name in (("fedavg", "C0", "FedAvg"), (rule, "C1", label)):
            mean, hw = _interval(data["dist2"][key], alpha)
            ax.errorbar(lv, mean, yerr=hw, fmt="o", color=color, ms=4, capsize=3,
                        label=f"{name} (Monte Carlo)")
        m = p.get("participants") or p["problem_kw"]["n"]
        ax.set_title(f"m = {m} of {p['problem_kw']['n']}, K = {p['local_steps']}, "
                     f"lr = {p['lr']}, R = {p['rounds']}, {p['replicas']} replicas",
                     fontsize=9)
        ax.set_xlabel(r"heterogeneity $\zeta_\star^2 = \frac{1}{n}\sum_i\|\nabla f_i(x^\star)\|^2$")
        ax.set_ylabel(r"$\mathbb{E}\|x_R - x^\star\|^2$")
        ax.legend(fontsize=8)
    fig.suptitle(f"FedAvg's floor grows with heterogeneity; memory removes it "
                 f"(intervals at alpha = {alpha:g})", fontsize=10)
    return save_figure(fig, path)


def plot_partial_participation(update: dict[str, Any], floor: dict[str, Any], path: Any,
                               alpha: float = 1e-6) -> list[str]:
    r"""Left: variance of one server update against :math:`m` (exact, leading order, the
    lecture's :math:`\sigma^2 + K\zeta^2(1-m/n)` form, Monte Carlo). Right: the part of the
    error after :math:`R` rounds due to heterogeneity against :math:`m` (exact, Monte Carlo,
    paired), with :math:`(1-m/n)/m` scaled to it. ``update`` from :func:`server_update_samples`
    and ``floor`` as in ``fedavg.partial_participation`` (``dist2`` of shape
    ``(m values, 2 levels, replicas)``, ``exact``, ``factor``, ``lecture_factor``)."""
    from fedtheory.plotting import plt, save_figure

    fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.0))
    ax = axes[0]
    m = np.asarray(update["participants"], dtype=float)
    mean, hw = _interval(update["samples"], alpha)
    ax.plot(m, update["variance"], "-", color="C0", label="exact")
    ax.plot(m, update["leading"], "--", color="C2",
            label=r"$\frac{\gamma^2K}{m}(\sigma^2 + K\zeta^2\frac{n-m}{n-1})$")
    ax.plot(m, update["lecture"], ":", color="C3",
            label=r"lecture: $\frac{\gamma^2K}{m}(\sigma^2 + K\zeta^2(1-\frac{m}{n}))$")
    ax.errorbar(m, mean, yerr=hw, fmt="o", color="C0", ms=4, capsize=3, label="Monte Carlo")
    ax.set_yscale("log")
    ax.set_xlabel("m (participants per round)")
    ax.set_ylabel(r"$\mathbb{E}\|x_1 - \mathbb{E}x_1\|^2$")
    p = update["params"]
    ax.set_title(f"one round, K = {p['local_steps']}, lr = {p['lr']}, sigma^2 = {p['sigma2']}, "
                 f"zeta^2 = {update['zeta2']:.3g}, {p['replicas']} replicas", fontsize=8)
    ax.legend(fontsize=7)
    ax = axes[1]
    p = floor["params"]
    m = np.asarray(p["participants"], dtype=float)
    diff = floor["dist2"][:, 1, :] - floor["dist2"][:, 0, :]
    exact = floor["exact"][:, 1] - floor["exact"][:, 0]
    mean, hw = _interval(diff, alpha)
    ax.plot(m, exact, "-", color="C0", label="exact")
    scale = exact[0] / floor["lecture_factor"][0]
    ax.plot(m, scale * floor["lecture_factor"], ":", color="C3",
            label=r"$\propto (1-\frac{m}{n})/m$ (lecture)")
    ax.errorbar(m, mean, yerr=hw, fmt="o", color="C0", ms=4, capsize=3,
                label="Monte Carlo (paired)")
    ax.set_xlabel("m (participants per round)")
    ax.set_ylabel(r"$\mathbb{E}\|x_R - x^\star\|^2_{\zeta^2=1} - "
                  r"\mathbb{E}\|x_R - x^\star\|^2_{\zeta^2=0}$")
    ax.set_title(f"after R = {p['rounds']} rounds, K = {p['local_steps']}, lr = {p['lr']}, "
                 f"{p['replicas']} replicas", fontsize=8)
    ax.legend(fontsize=7)
    fig.suptitle(f"Partial participation amplifies heterogeneity (intervals at alpha = "
                 f"{alpha:g})", fontsize=10)
    return save_figure(fig, path)


def local_steps_curves(problem: Any, *, rounds: int, local_steps: int, c: float,
                       sigma2: float, x0: np.ndarray) -> dict[str, np.ndarray]:
    r"""Exact :math:`\mathbb E\|\nabla f(x)\|^2` along FedAvg (:math:`K` local steps,
    :math:`R` rounds) and parallel SGD (:math:`KR` rounds), :math:`\gamma = c/\sqrt{KR}`,
    against communication rounds (for figures)."""
    T = integer_at_least("local_steps", local_steps) * integer_at_least("rounds", rounds)
    lr = step_size_for(T, c)
    fed = fedavg_moments(problem, lr=lr, rounds=rounds, local_steps=local_steps,
                         sigma2=sigma2, x0=x0).grad_norm2
    sgd = fedavg_moments(problem, lr=lr, rounds=T, local_steps=1, sigma2=sigma2,
                         x0=x0).grad_norm2
    return {"fedavg_rounds": np.arange(rounds + 1), "fedavg": fed,
            "sgd_rounds": np.arange(T + 1), "sgd": sgd, "lr": np.array(lr)}


def plot_local_steps(rate: dict[str, Any], curves: dict[str, Any], path: Any,
                     alpha: float = 1e-6) -> list[str]:
    r"""Left: final :math:`\mathbb E\|\nabla f\|^2` against :math:`T = KR` for FedAvg and
    parallel SGD (exact lines, Monte Carlo points, a :math:`T^{-1/2}` guide). Right: exact
    trajectories against communication rounds: FedAvg reaches in :math:`R` rounds what SGD
    reaches in :math:`KR`. ``rate`` from :func:`local_steps_runs` (with ``params`` and
    ``exact_grid``), ``curves`` from :func:`local_steps_curves`."""
    from fedtheory.plotting import plt, save_figure

    fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.0))
    ax = axes[0]
    K = rate["local_steps"]
    T = K * np.asarray(rate["rounds"], dtype=float)
    grid = rate["exact_grid"]
    Tg = K * np.asarray(grid["rounds"], dtype=float)
    ax.plot(Tg, grid["fedavg"], "-", color="C0", label=f"FedAvg, K = {K} (exact)")
    ax.plot(Tg, grid["sgd"], "--", color="C1", label="parallel SGD (exact)")
    for key, color, fmt, name in (("fedavg", "C0", "o", "FedAvg"), ("sgd", "C1", "s", "SGD")):
        mean, hw = _interval(rate[key], alpha)
        ax.errorbar(T, mean, yerr=hw, fmt=fmt, color=color, ms=4, capsize=3,
                    label=f"{name} (Monte Carlo)")
    guide = grid["sgd"][0] * np.sqrt(Tg[0] / Tg)
    ax.plot(Tg, guide, ":", color="gray", label=r"$\propto T^{-1/2}$")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"gradient steps per client $T = KR$ ($\gamma = c/\sqrt{T}$)")
    ax.set_ylabel(r"$\mathbb{E}\|\nabla f(x_{\mathrm{final}})\|^2$")
    p = rate["params"]
    ax.set_title(f"n = {p['problem_kw']['n']}, c = {rate['c']}, sigma^2 = {p['sigma2']}, "
                 f"{p['replicas']} replicas", fontsize=8)
    ax.legend(fontsize=7)
    ax = axes[1]
    ax.plot(curves["fedavg_rounds"][1:], curves["fedavg"][1:], "-", color="C0",
            label=f"FedAvg, K = {K}")
    ax.plot(curves["sgd_rounds"][1:], curves["sgd"][1:], "--", color="C1",
            label="parallel SGD")
    R = curves["fedavg_rounds"][-1]
    ax.axvline(R, color="C0", lw=0.8, ls=":")
    ax.axhline(curves["fedavg"][-1], color="gray", lw=0.8, ls=":")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("communication rounds")
    ax.set_ylabel(r"$\mathbb{E}\|\nabla f(x)\|^2$ (exact)")
    ax.set_title(f"R = {R} rounds vs KR = {curves['sgd_rounds'][-1]}, "
                 f"gamma = {float(curves['lr']):.3g}", fontsize=8)
    ax.legend(fontsize=7)
    fig.suptitle("FedAvg with K local steps vs parallel SGD with the same gradient steps",
                 fontsize=10)
    return save_figure(fig, path)
