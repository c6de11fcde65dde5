r"""The smallest ESO vector of a sampling design, as a semidefinite program (seed 002, (4)).

A vector :math:`v` is an *ESO* (expected separable overapproximation) vector of a sampling
with marginals :math:`p` and pair-inclusion matrix :math:`\mathbf P` when

.. math:: \mathbf P - p p^\top \preceq \mathrm{Diag}(p \circ v) .                     \tag{4}

Then the importance-sampled aggregate has variance at most
:math:`\sum_i c_i v_i` with :math:`c_i = w_i^2 \|\zeta_i\|^2 / p_i` (Lemma 1, eq. (5)).
Since (4) is a linear matrix inequality in :math:`v`, the best bound for given
:math:`c \ge 0` is the SDP

.. math::

    \min_{v \in \mathbb R^n}\ c^\top v
    \quad\text{s.t.}\quad \mathrm{Diag}(p \circ v) - (\mathbf P - pp^\top) \succeq 0,

with dual :math:`\max_{Z \succeq 0} \langle Z, \mathbf P - pp^\top\rangle` s.t.
:math:`p_i Z_{ii} = c_i`. "The smallest v" is not unique in general (the feasible set has
many Pareto-minimal points), hence the stated linear objective: **by default**
:math:`c = (1, \dots, 1)` (minimise :math:`\sum_i v_i`); pass
``c=bound_coefficients(p, w, zeta)`` (:func:`fedtheory.sampling.moments.bound_coefficients`)
to minimise the right-hand side of (5) for given updates.

Known answers: independent sampling gives :math:`v = 1 - p` for every :math:`c > 0` (then
:math:`\mathbf P - pp^\top = \mathrm{Diag}(p \circ (1-p))`); :math:`b`-of-:math:`n`
sampling without replacement with :math:`c = e` gives :math:`v_i = (n-b)/(n-1)`. Every
feasible :math:`v` has :math:`v_i \ge 1 - p_i` (compare diagonals).

The certificate of a solve: the smallest eigenvalue of :math:`\mathrm{Diag}(p\circ v) -
(\mathbf P - pp^\top)` for the returned :math:`v` (which is the solver's :math:`v` shifted by
:math:`\delta / p_i`, :math:`\delta = \max(0, -\lambda_{\min})`, so that it is feasible in
floating point; the shift is reported and is of the order of the solver tolerance), the dual
matrix :math:`Z`, the duality gap and the residual of stationarity :math:`c_i - p_i Z_{ii}`.

Examples
--------
>>> from fedtheory.sampling.designs import IndependentSampling, UniformWithoutReplacement
>>> res = smallest_eso(IndependentSampling([0.2, 0.5, 0.9]))
>>> bool(np.allclose(res.v, [0.8, 0.5, 0.1], atol=1e-6)), res.certified
(True, True)
>>> bool(np.allclose(smallest_eso(UniformWithoutReplacement(4, 2)).v, 2 / 3, atol=1e-6))
True
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import cvxpy as cp
import numpy as np

from fedtheory import solver_log
from fedtheory.sampling.designs import SamplingDesign
from fedtheory.validation import real_array

__all__ = ["ESOResult", "ESOSolverError", "eso_gap_matrix", "eso_min_eigenvalue", "smallest_eso"]


class ESOSolverError(RuntimeError):
    """The ESO SDP did not solve to optimality (infeasible, unbounded, or solver failure)."""


@dataclass(frozen=True)
class ESOResult:
    r"""The solution of the ESO SDP and its certificate.

    Attributes
    ----------
    v:
        The ESO vector, certified feasible in floating point (see :attr:`shift`).
    v_solver:
        The solver's raw ``v``.
    objective:
        :math:`c^\top v` for the returned ``v``, to 10 significant digits: the solver's
        accuracy is far coarser, and the last digits of an interior-point solve vary with the
        process's history (memory alignment of the SIMD kernels), which must not make a report
        depend on the order in which claims ran (``--jobs``).
    status:
        cvxpy's status string (``"optimal"`` or ``"optimal_inaccurate"``).
    c:
        The objective coefficients used.
    min_eigenvalue:
        :math:`\lambda_{\min}(\mathrm{Diag}(p \circ v) - (\mathbf P - pp^\top))` for the
        returned ``v`` (``>= -tol`` when :attr:`certified`).
    shift:
        :math:`\delta \ge 0` with ``v = v_solver + delta / p``.
    dual:
        The dual matrix :math:`Z \succeq 0` of the LMI.
    dual_objective:
        :math:`\langle Z, \mathbf P - pp^\top\rangle` (equals the optimum at strong duality).
    duality_gap:
        :math:`c^\top v_{\rm solver} - \langle Z, \mathbf P - pp^\top\rangle`.
    stationarity_residual:
        :math:`\max_i |c_i - p_i Z_{ii}|`.
    certified:
        ``min_eigenvalue >= -1e-12 max(1, max|P - pp^T|)`` (feasible in floating point).
    """

    v: np.ndarray
    v_solver: np.ndarray
    objective: float
    status: str
    c: np.ndarray
    min_eigenvalue: float
    shift: float
    dual: np.ndarray
    dual_objective: float
    duality_gap: float
    stationarity_residual: float
    certified: bool


def _design_p_P(design: SamplingDesign | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(design, SamplingDesign):
        p, P = design.p, design.P
    else:
        P = real_array("P", design)
        if P.ndim != 2 or P.shape[0] != P.shape[1] or P.shape[0] == 0:
            raise ValueError(f"P must be a square (n, n) matrix, got shape {P.shape}")
        if not np.all(np.isfinite(P)) or not np.allclose(P, P.T, rtol=0, atol=1e-12):
            raise ValueError("P must be a finite symmetric matrix")
        p = np.diag(P).copy()
    if np.any(p <= 0) or np.any(p > 1):
        raise ValueError(
            f"the design must be proper with p in (0, 1], got p = {np.array2string(p)}"
        )
    return p, P


def eso_gap_matrix(design: SamplingDesign | np.ndarray, v: Any) -> np.ndarray:
    r""":math:`\mathrm{Diag}(p \circ v) - (\mathbf P - pp^\top)`; (4) holds iff it is PSD."""
    p, P = _design_p_P(design)
    v = real_array("v", v)
    if v.shape != p.shape:
        raise ValueError(f"v must have shape {p.shape}, got shape {v.shape}")
    return np.diag(p * v) - (P - np.outer(p, p))


def eso_min_eigenvalue(design: SamplingDesign | np.ndarray, v: Any) -> float:
    r"""Smallest eigenvalue of :func:`eso_gap_matrix`: :math:`\ge 0` iff ``v`` is an ESO vector.

    >>> from fedtheory.sampling.designs import IndependentSampling
    >>> round(eso_min_eigenvalue(IndependentSampling([0.5, 0.5]), [0.5, 0.5]), 12)
    0.0
    """
    G = eso_gap_matrix(design, v)
    return float(np.linalg.eigvalsh((G + G.T) / 2)[0])


# A memo of the compiled problem of size n (a function of n): every solve sets all its
# parameters and solves cold (warm_start=False, commit 15ddfaf), so nothing of an earlier
# solve is read and a result never depends on what ran before (no module-level dict).
@functools.lru_cache(maxsize=64)
def _problem(n: int) -> tuple[Any, ...]:
    """A DPP-parameterised SDP for ``n`` clients, compiled once and re-solved."""
    v = cp.Variable(n)
    p = cp.Parameter(n, nonneg=True)
    M = cp.Parameter((n, n), symmetric=True)
    c = cp.Parameter(n, nonneg=True)
    lmi = cp.diag(cp.multiply(p, v)) - M >> 0
    prob = cp.Problem(cp.Minimize(c @ v), [lmi])
    return prob, v, p, M, c, lmi


def smallest_eso(
    design: SamplingDesign | np.ndarray,
    c: Any = None,
    *,
    tol: float = 1e-7,
    solver: str = "CLARABEL",
) -> ESOResult:
    r"""The ESO vector minimising :math:`c^\top v` subject to (4), by a cvxpy SDP.

    .. math:: \min_v\ c^\top v \quad\text{s.t.}\quad
              \mathbf P - pp^\top \preceq \mathrm{Diag}(p \circ v).

    Parameters
    ----------
    design:
        A proper :class:`~fedtheory.sampling.designs.SamplingDesign` or its pair matrix ``P``.
    c:
        Objective coefficients :math:`c_i \ge 0`, shape ``(n,)``; default all ones. Use
        :func:`fedtheory.sampling.moments.bound_coefficients` to minimise the bound (5).
    tol:
        Tolerance of the certificate: the shift that makes ``v`` feasible must be at most
        ``tol`` (relative to the scale of :math:`\mathbf P - pp^\top`), else
        :class:`ESOSolverError`.
    solver:
        A cvxpy solver name (Clarabel by default).

    Raises
    ------
    ValueError
        Bad ``design`` or ``c``.
    ESOSolverError
        The solver did not report an optimal solution, or its solution is infeasible beyond
        ``tol``.
    """
    p, P = _design_p_P(design)
    n = p.size
    if c is None:
        c = np.ones(n)
    c = real_array("c", c)
    if c.shape != (n,):
        raise ValueError(f"c must have shape ({n},), got shape {c.shape}")
    if not np.all(np.isfinite(c)) or np.any(c < 0):
        raise ValueError(f"c must be finite and non-negative, got {c.tolist()!r}")
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol!r}")
    M = P - np.outer(p, p)
    M = (M + M.T) / 2
    prob, v_var, p_par, M_par, c_par, lmi = _problem(n)
    p_par.value, M_par.value, c_par.value = p, M, c
    try:
        # no warm start: a re-solve of the cached problem would start from (and end at the
        # last bits of) whatever this process solved before; the same data, the same bits
        prob.solve(solver=solver, warm_start=False)
    except cp.error.SolverError as exc:
        solver_log.record("ESO semidefinite program", solver, "solver error")
        raise ESOSolverError(f"ESO SDP: solver {solver} failed: {exc}") from exc
    status = prob.status
    solver_log.record("ESO semidefinite program", solver, str(status))
    if status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or v_var.value is None:
        raise ESOSolverError(f"ESO SDP: solver {solver} returned status {status!r}")
    v_solver = np.asarray(v_var.value, dtype=float).copy()
    Z = np.asarray(lmi.dual_value, dtype=float)
    Z = (Z + Z.T) / 2
    lam = eso_min_eigenvalue(P, v_solver)
    scale = max(1.0, float(np.max(np.abs(M))))
    shift = max(0.0, -lam)
    if shift > tol * scale:
        raise ESOSolverError(
            f"ESO SDP: solution violates (4) by {shift:.3g} > tol = {tol:g} (status {status})"
        )
    v = v_solver + shift * (1.0 + 1e-6) / p if shift > 0 else v_solver
    lam_v = eso_min_eigenvalue(P, v)
    dual_obj = float(np.sum(Z * M))
    return ESOResult(
        v=v,
        v_solver=v_solver,
        objective=float(f"{float(c @ v):.10g}"),
        status=str(status),
        c=c,
        min_eigenvalue=lam_v,
        shift=float(shift),
        dual=Z,
        dual_objective=dual_obj,
        duality_gap=float(c @ v_solver - dual_obj),
        stationarity_residual=float(np.max(np.abs(c - p * np.diag(Z)))),
        certified=bool(lam_v >= -1e-12 * scale),
    )
