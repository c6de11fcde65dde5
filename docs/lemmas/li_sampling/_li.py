r"""Shared by the li_* claim files: one round of Li et al.'s Scheme I, computed exactly.

Client :math:`k` runs :math:`E` gradient steps from :math:`w_{t_0}` on
:math:`f_k(w) = G\langle u_k, w\rangle` (gradient :math:`G u_k`, norm :math:`G`: Assumption
4 with equality), step sizes :math:`\eta_{t_0}` then, at the last step :math:`t`,
:math:`\eta_t = \rho\,\eta_{t_0}` (non-increasing; :math:`\eta_{t_0} \le 2\eta_t` is
:math:`\rho \ge 1/2`). Two clients pull apart: :math:`u_1 = e`, :math:`u_2 = -e`.
"""

from fractions import Fraction

import numpy as np

from fedtheory.participation import WithReplacementParticipation

G, ETA0 = Fraction(1), Fraction(1, 10)


def local_models(E, rho, p1):
    """v^k_{t+1} (scalars: the direction e), by running the E local steps."""
    grads = (G, -G)  # the gradient of f_k, the same at every point
    out = []
    for g in grads:
        w = Fraction(0) if isinstance(rho, Fraction) else 0.0
        for s in range(E):
            eta = ETA0 * rho if s == E - 1 else ETA0
            w = w - eta * g
        out.append(w)
    return out


def design(p1, K):
    """Scheme I's law: K draws with replacement by p = (p1, 1 - p1)."""
    return WithReplacementParticipation([p1, 1 - p1], K=K).design()


def sampled_mean(p1, K, v, exact):
    """E_S[w_bar] over every multiset of draws: sum_i E[N_i] / K v_i (the design's moments)."""
    mean = design(p1, K).count_mean(exact=exact)
    return sum(m * vi for m, vi in zip(mean, v, strict=True)) / K


def variance(E, rho, p1, K, exact=False):
    """E_S ||w_bar - v_bar||^2 = sum_ij Cov(N_i, N_j) <v_i, v_j> / K^2, exactly."""
    v = local_models(E, rho, p1)
    cov = design(p1, K).count_covariance(exact=exact)
    return sum(cov[i, j] * v[i] * v[j] for i in range(2) for j in range(2)) / K ** 2


def stated(ctx, E, rho, K):
    """The statement's right-hand side, (4/K) eta_t^2 E^2 G^2."""
    return ctx.const("four") / K * (ETA0 * rho) ** 2 * E ** 2 * G ** 2


def as_array(x):
    return np.asarray(x, dtype=float)
