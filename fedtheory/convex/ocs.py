r"""Convex cross-check of Optimal Client Sampling, with a KKT certificate for the closed form.

The sampling problem of seed 002 (eq. (6) minimised under the budget, Lemma 20):

.. math::

    \min_{p}\ V(p) = \sum_i \frac{1-p_i}{p_i} u_i^2
    \quad\text{s.t.}\quad 0 \le p_i \le 1,\ \ \sum_i p_i \le m .

:func:`solve_ocs_convex` solves it with cvxpy (Clarabel by default). Zero norms are handled
explicitly: their term vanishes, they get :math:`p_i = 0` and are left out of the solve; when at
most :math:`m` norms are non-zero the answer (:math:`p_i = 1` on them) needs no solver.

:func:`kkt_certificate` certifies the closed form independently of any solver's accuracy.
Lemma 20's Lagrangian (for :math:`\Omega(p) = \sum_i u_i^2/p_i = V(p) + \sum_i u_i^2`) is

.. math::

    L = \sum_i \frac{u_i^2}{p_i} - \sum_i \lambda_i p_i - \sum_i \mu_i (1 - p_i)
        - y\Big(m - \sum_i p_i\Big);

from the closed form :math:`p` we build :math:`y = (S_l/(m+l-n))^2` (0 when the budget is
slack), :math:`\mu_i = u_i^2 - y` on the clients with :math:`p_i = 1`, :math:`\lambda_i = y` on
the zero norms (:math:`p_i = 0`), and 0 elsewhere, and report the stationarity
(:math:`-u_i^2/p_i^2 - \lambda_i + \mu_i + y = 0`), complementarity, primal and dual
feasibility residuals and the duality gap :math:`V(p) - g(y, \lambda, \mu)`, where the dual
function is computed exactly,

.. math::

    g = \sum_{i:\,u_i>0} 2 u_i \sqrt{a_i} - \sum_i \mu_i - y m - \sum_i u_i^2,\qquad
    a_i = y - \lambda_i + \mu_i

(:math:`-\infty` when some :math:`a_i < 0`, or :math:`a_i = 0 < u_i`). By weak duality every
feasible :math:`p` has :math:`V(p) \ge g`, so a zero gap certifies that the closed form is
optimal, whatever a solver returns.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import cvxpy as cp
import numpy as np

from fedtheory import solver_log
from fedtheory.sampling.ocs import (
    independent_sampling_variance,
    optimal_probabilities,
    validate_norms,
)
from fedtheory.sampling.ocs_solver import _threshold
from fedtheory.validation import real_array

__all__ = [
    "KKTCertificate",
    "budget_dual_bound",
    "OCSConvexSolution",
    "dual_function",
    "kkt_certificate",
    "solve_ocs_convex",
]


@dataclass(frozen=True)
class OCSConvexSolution:
    """The result of :func:`solve_ocs_convex`.

    ``p`` is the solver's point made feasible (clipped to :math:`[0, 1]`, scaled down to the
    budget if it overshoots by the solver's tolerance), ``objective`` is :math:`V(p)` recomputed
    from it (in the input's units, an upper bound on the optimum),
    ``solver_objective`` the solver's own value, ``budget_dual`` the multiplier :math:`y` of
    :math:`\\sum_i p_i \\le m` (for :math:`\\Omega`, in the input's units).
    """

    p: np.ndarray
    objective: float
    solver_objective: float
    status: str
    budget_dual: float
    solve_seconds: float
    solver: str

    @property
    def optimal(self) -> bool:
        return self.status in ("optimal", "trivial")


# A memo of the compiled problem of size n (a function of n and the solver): every solve
# sets all its parameters and solves cold (warm_start=False, commit 15ddfaf), so nothing of
# an earlier solve is read and a result never depends on what ran before.
@lru_cache(maxsize=64)
def _problem(n: int, solver: str) -> tuple[cp.Problem, cp.Variable, cp.Parameter, cp.Parameter,
                                           cp.Constraint]:
    p = cp.Variable(n)
    w = cp.Parameter(n, nonneg=True)  # u_i^2 (scaled)
    budget = cp.Parameter(nonneg=True)
    cons = cp.sum(p) <= budget
    prob = cp.Problem(cp.Minimize(w @ cp.inv_pos(p) - cp.sum(w)), [p <= 1, cons])
    return prob, p, w, budget, cons


def solve_ocs_convex(
    norms: np.ndarray | Sequence[float], m: float, solver: str = "CLARABEL"
) -> OCSConvexSolution:
    r"""Solve the OCS problem numerically with cvxpy.

    The norms are scaled by their maximum before the solve (the minimiser is invariant
    under scaling, the objective scales by its square) and the problem is cached per size,
    so repeated solves only update parameters.

    Parameters
    ----------
    norms:
        :math:`u_i \ge 0`, shape ``(n,)``.
    m:
        Budget, :math:`0 < m \le n`.
    solver:
        A cvxpy solver name (default Clarabel).

    Examples
    --------
    >>> sol = solve_ocs_convex([1.0, 1.0, 10.0], 2)
    >>> sol.status, np.round(sol.p, 6), round(sol.objective, 6)
    ('optimal', array([0.5, 0.5, 1. ]), 2.0)
    """
    u, m = validate_norms(norms, m)
    if u.ndim != 1:
        raise ValueError(f"norms must be 1-D for the convex solve, got shape {u.shape}")
    nz = np.flatnonzero(u > 0)
    p_full = np.zeros_like(u)
    if nz.size <= m:
        p_full[nz] = 1.0
        return OCSConvexSolution(p_full, 0.0, 0.0, "trivial", 0.0, 0.0, "none")
    scale = float(u[nz].max())
    v = u[nz] / scale
    prob, p, w, budget, cons = _problem(int(nz.size), solver)
    w.value = v**2
    budget.value = m
    t0 = time.perf_counter()
    with warnings.catch_warnings():  # accuracy is reported through the status
        warnings.simplefilter("ignore", UserWarning)
        prob.solve(solver=solver, warm_start=False)  # the same bits whatever was solved before
    secs = time.perf_counter() - t0
    solver_log.record("ocs sampling probabilities", solver, str(prob.status))
    if p.value is None:
        return OCSConvexSolution(p_full * np.nan, np.nan, np.nan, str(prob.status), np.nan,
                                 secs, solver)
    q = np.clip(p.value, 0.0, 1.0)
    if q.sum() > m:  # an interior-point solution may overshoot the budget by its tolerance
        q *= m / q.sum()
    p_full[nz] = q
    dual = float(cons.dual_value) * scale**2 if cons.dual_value is not None else np.nan
    obj = independent_sampling_variance(u, p_full) if np.all(p_full[nz] > 0) else np.inf
    return OCSConvexSolution(p_full, float(obj), float(prob.value) * scale**2, str(prob.status),
                             dual, secs, solver)


def dual_function(norms: np.ndarray | Sequence[float], m: float, y: float, lam: np.ndarray,
                  mu: np.ndarray) -> float:
    r"""The Lagrange dual function :math:`g(y, \lambda, \mu)` of the OCS problem, exactly.

    A lower bound on :math:`V(p)` for every feasible :math:`p` whenever
    :math:`y, \lambda, \mu \ge 0` (weak duality); :math:`-\infty` where the infimum over
    :math:`p > 0` is unbounded.

    >>> dual_function([1.0, 1.0, 10.0], 2, 4.0, np.zeros(3), np.array([0.0, 0.0, 96.0]))
    2.0
    """
    u, m = validate_norms(norms, m)
    lam, mu = real_array("lam", lam), real_array("mu", mu)
    for name, value in (("y", np.asarray(real_array("y", y))), ("lam", lam), ("mu", mu)):
        if value.shape not in ((), u.shape) or np.isnan(value).any():
            raise ValueError(f"{name} must be a number or an array of shape {u.shape}, not "
                             f"NaN, got {value!r}")
    a = y - lam + mu
    pos = u > 0
    if np.any(a < 0) or np.any(pos & (a <= 0)):
        return -np.inf
    return float(np.sum(2.0 * u[pos] * np.sqrt(a[pos])) - mu.sum() - y * m - np.sum(u**2))


@dataclass(frozen=True)
class KKTCertificate:
    """Dual multipliers built from the closed form and the residuals of the KKT system.

    Residuals are relative to :math:`\\max_i u_i^2` (stationarity, multipliers) and to
    :math:`\\max(V(p), \\max_i u_i^2)` (gap); ``certified(tol)`` is True when all are
    below ``tol``.
    """

    p: np.ndarray
    y: float
    lam: np.ndarray
    mu: np.ndarray
    primal_value: float
    dual_value: float
    stationarity: float
    complementarity: float
    primal_infeasibility: float
    dual_infeasibility: float
    gap: float

    def certified(self, tol: float = 1e-9) -> bool:
        return bool(max(self.stationarity, self.complementarity, self.primal_infeasibility,
                        self.dual_infeasibility, abs(self.gap)) <= tol)

    def summary(self) -> dict[str, float]:
        return {
            "y": self.y,
            "primal_value": self.primal_value,
            "dual_value": self.dual_value,
            "stationarity": self.stationarity,
            "complementarity": self.complementarity,
            "primal_infeasibility": self.primal_infeasibility,
            "dual_infeasibility": self.dual_infeasibility,
            "gap": self.gap,
        }


def budget_dual_bound(norms: np.ndarray | Sequence[float], m: float, y: float) -> float:
    r"""Lower bound on the optimum from a budget multiplier :math:`y \ge 0` alone.

    Keeping the box :math:`0 < p_i \le 1` in the inner problem (the optimal
    :math:`\lambda, \mu` for this :math:`y`),

    .. math::

        h(y) = \sum_i \min_{0 < p_i \le 1}\Big(\frac{u_i^2}{p_i} + y p_i\Big) - y m
               - \sum_i u_i^2,\qquad
        \min_{0<p\le 1}\Big(\frac{u^2}{p} + y p\Big) =
        \begin{cases} 2u\sqrt y, & u \le \sqrt y,\\ u^2 + y, & u > \sqrt y,\end{cases}

    and :math:`h(y) \le V(p)` for every feasible :math:`p` (weak duality). Use it with a
    solver's multiplier to bracket the optimum independently of the closed form.

    >>> budget_dual_bound([1.0, 1.0, 10.0], 2, 4.0)
    2.0
    """
    u, m = validate_norms(norms, m)
    if not (np.isfinite(y) and y >= 0):
        raise ValueError(f"y must be a non-negative number, got {y!r}")
    r = np.sqrt(y)
    inner = np.where(u <= r, 2.0 * u * r, u**2 + y)
    return float(inner.sum() - y * m - np.sum(u**2))


def kkt_certificate(norms: np.ndarray | Sequence[float], m: float,
                    p: np.ndarray | Sequence[float] | None = None) -> KKTCertificate:
    r"""Certify a candidate :math:`p` through Lemma 20's Lagrangian (module docstring).

    With ``p=None`` the candidate is the closed form of eq. (7) and :math:`y` is built from
    it, :math:`y = (S_l/(m+l-n))^2`; for another candidate (e.g. a solver's), :math:`y` is the
    median of :math:`u_i^2/p_i^2` over its interior clients (0 if there are none) and the
    clients with :math:`p_i = 1` are the saturated ones.

    >>> cert = kkt_certificate([1.0, 1.0, 10.0], 2)
    >>> cert.y, cert.mu.tolist(), cert.certified()
    (4.0, [0.0, 0.0, 96.0], True)
    """
    u, m = validate_norms(norms, m)
    if u.ndim != 1:
        raise ValueError(f"norms must be 1-D for the certificate, got shape {u.shape}")
    zero = u == 0
    if p is None:
        p = optimal_probabilities(u, m)
        ell, _, sum_l = _threshold(u, m)
        coef = m + float(ell) - u.size
        y = float((sum_l / coef) ** 2) if sum_l > 0 else 0.0
    else:
        p = real_array("p", p)
        if p.shape != u.shape:
            raise ValueError(f"p must have shape {u.shape} (that of norms), got {p.shape}")
        if np.isnan(p).any():  # an infeasible p (outside [0, 1]) is certified as such
            raise ValueError(f"p must be numbers (not NaN), got {p!r}")
        inner = (p > 0) & (p < 1) & ~zero
        y = float(np.median((u[inner] / p[inner]) ** 2)) if inner.any() else 0.0
    sat = (p >= 1.0) & ~zero
    lam = np.where(zero, y, 0.0)
    mu = np.where(sat, u**2 - y, 0.0)
    scale = float(np.max(u) ** 2) if np.max(u) > 0 else 1.0

    with np.errstate(divide="ignore", invalid="ignore"):
        grad = np.where(zero, 0.0, -(u**2) / p**2)
    stat = np.abs(grad - lam + mu + y) / scale
    comp = np.concatenate([np.abs(lam * p), np.abs(mu * (1.0 - p)),
                           [abs(y * (m - p.sum()))]]) / scale
    primal_inf = max(0.0, float(-p.min()), float(p.max() - 1.0), float(p.sum() - m))
    dual_inf = max(0.0, float(-lam.min()), float(-mu.min()), -y) / scale
    pc = np.clip(p, 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        primal = float(np.sum(np.where(zero, 0.0, (1.0 - pc) / pc * u**2)))
    dual = dual_function(u, m, y, np.maximum(lam, 0.0), np.maximum(mu, 0.0))
    gap = (primal - dual) / max(primal, scale) if np.isfinite(primal) else np.inf
    return KKTCertificate(p, y, lam, mu, primal, float(dual), float(np.nanmax(stat)),
                          float(comp.max()), float(primal_inf), float(dual_inf), float(gap))
