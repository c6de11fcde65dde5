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
:func:`make_problem` builds the claims' scenarios (a family of problems that differ in their
heterogeneity alone), :func:`local_steps_curves` the exact trajectories of FedAvg against
parallel SGD and :func:`fedavg_and_sgd_final` their final errors; the engine runs that these
formulas are compared with are in :mod:`fedtheory.experiments.fedavg_experiments`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory.problems import QuadraticProblem
from fedtheory.validation import integer_at_least, nonnegative_real, positive_real

__all__ = [
    "FedAvgMoments",
    "enumerate_subset_variance",
    "fedavg_and_sgd_final",
    "fedavg_final_moments",
    "fedavg_fixed_point",
    "fedavg_moments",
    "local_contraction",
    "local_noise_gain",
    "local_steps_curves",
    "make_problem",
    "step_size_for",
    "subset_mean_product",
    "subset_variance",
    "update_moments",
]

# ---------------------------------------------------------------------------- validation


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
    lr = positive_real("lr", lr)
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
    lr = positive_real("lr", lr)
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
    sigma2 = nonnegative_real("sigma2", sigma2)
    global_lr = positive_real("global_lr", global_lr)
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


@dataclass(frozen=True)
class _RoundMap:
    r"""The per-client coefficients of one FedAvg round in deviation coordinates,
    :math:`e^+ = \bar\alpha_{\mathcal S} e + \bar\beta_{\mathcal S} + \nu_{\mathcal S}`
    (module docstring), with the validated arguments of :func:`fedavg_moments`.

    ``noise`` is :math:`\gamma_g^2\frac{\sigma^2}{d}\sum_i\gamma^2\sum_{j<K}(1-\gamma a_i)^{2j}`
    per coordinate: :math:`mn` times the variance of :math:`\nu_{\mathcal S}`.
    """

    alpha: np.ndarray
    beta: np.ndarray
    noise: np.ndarray
    e0: np.ndarray
    rounds: int
    participants: int


def _round_map(problem: Any, *, lr: float, rounds: int, local_steps: int, sigma2: float,
               global_lr: float, x0: np.ndarray | None,
               participants: int | None = None) -> _RoundMap:
    """Validate the arguments of the moment recursions and build the round's coefficients."""
    A, c, x_star = _diagonal_quadratic(problem)
    n, d = c.shape
    rounds = integer_at_least("rounds", rounds, minimum=0)
    m = _participants(participants, n)
    sigma2 = nonnegative_real("sigma2", sigma2)
    global_lr = positive_real("global_lr", global_lr)
    x0 = _start(x0, d)
    one_minus_p = 1.0 - local_contraction(A, lr, local_steps)
    noise = global_lr**2 * sigma2 / d * local_noise_gain(A, lr, local_steps).sum(axis=0)
    return _RoundMap(alpha=1.0 - global_lr * one_minus_p,
                     beta=global_lr * one_minus_p * (c - x_star), noise=noise,
                     e0=x0 - x_star, rounds=rounds, participants=m)


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
    rm = _round_map(problem, lr=lr, rounds=rounds, local_steps=local_steps, sigma2=sigma2,
                    global_lr=global_lr, x0=x0, participants=participants)
    alpha, beta, m = rm.alpha, rm.beta, rm.participants
    n, d = alpha.shape
    e_a = alpha.mean(axis=0)
    e_b = beta.mean(axis=0)
    e_aa = subset_mean_product(alpha, alpha, m)
    e_ab = subset_mean_product(alpha, beta, m)
    e_bb = subset_mean_product(beta, beta, m)
    noise = rm.noise / (m * n)

    mean = np.empty((rm.rounds + 1, d))
    second = np.empty((rm.rounds + 1, d))
    mean[0] = rm.e0
    second[0] = mean[0] ** 2
    for r in range(rm.rounds):
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
    rm = _round_map(problem, lr=lr, rounds=rounds, local_steps=local_steps, sigma2=sigma2,
                    global_lr=global_lr, x0=x0)
    rounds = rm.rounds
    a = rm.alpha.mean(axis=0)
    b = rm.beta.mean(axis=0)
    q = rm.noise / rm.alpha.shape[0] ** 2

    def geometric(ratio: np.ndarray) -> np.ndarray:
        one = np.isclose(ratio, 1.0, rtol=0.0, atol=1e-15)
        safe = np.where(one, 0.0, ratio)
        return np.where(one, float(rounds), (1.0 - safe**rounds) / (1.0 - safe))

    mu0 = rm.e0
    mu = a**rounds * mu0 + b * geometric(a)
    var = q * geometric(a**2)
    mean = np.stack([mu0, mu])
    second = np.stack([mu0**2, mu**2 + var])
    return FedAvgMoments(mean, second, np.asarray(problem.hessian, dtype=float))


def _example_problem() -> Any:
    """A small diagonal quadratic for the examples (3 clients, 2 coordinates)."""
    return QuadraticProblem(np.array([[1.0, 0.5], [2.0, 1.0], [0.5, 1.5]]),
                            np.array([[1.0, -1.0], [0.0, 2.0], [-2.0, 0.5]]))


# ---------------------------------------------------------------------------- scenarios
def make_problem(
    zeta2: float,
    *,
    n: int = 10,
    d: int = 8,
    L: float = 1.0,
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
    return QuadraticProblem.heterogeneous(
        n, d, L=L, mu=mu, sigma_G2=nonnegative_real("zeta2", zeta2),
        rng=np.random.default_rng(problem_seed), identical_hessians=identical_hessians,
    )


def step_size_for(total_steps: int, c: float) -> float:
    r"""The step :math:`\gamma = c/\sqrt T` with which both FedAvg and parallel SGD run."""
    return positive_real("c", c) / np.sqrt(integer_at_least("total_steps", total_steps))


def fedavg_and_sgd_final(problem: Any, *, rounds: int, local_steps: int, c: float,
                         sigma2: float, x0: np.ndarray | None) -> tuple[float, float]:
    r"""Exact final :math:`\mathbb E\|\nabla f\|^2` of FedAvg (:math:`K` local steps,
    :math:`R` rounds) and of parallel SGD (:math:`KR` rounds of one step), both with
    :math:`\gamma = c/\sqrt{KR}` and full participation (:func:`fedavg_final_moments`).

    >>> fed, sgd = fedavg_and_sgd_final(_example_problem(), rounds=4, local_steps=3, c=0.5,
    ...                                 sigma2=1.0, x0=None)
    >>> bool(fed > 0 and sgd > 0)
    True
    """
    K = integer_at_least("local_steps", local_steps)
    R = integer_at_least("rounds", rounds)
    lr = step_size_for(K * R, c)

    def final(steps_per_round: int) -> float:
        return float(fedavg_final_moments(problem, lr=lr, rounds=K * R // steps_per_round,
                                          local_steps=steps_per_round, sigma2=sigma2,
                                          x0=x0).grad_norm2[-1])

    return final(K), final(1)


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
