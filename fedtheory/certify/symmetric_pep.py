r"""The symmetry-reduced PEP, numerically, and the client-symmetric one-step models.

:func:`solve_symmetric` solves the dual of a :class:`~.symmetric.SymmetricStep` at one
numeric n: multipliers that depend on a pattern only through its size :math:`k`
(:math:`\kappa_{j,k}` on pattern constraint j, :math:`\mu_j` on client constraint j), and
per size a symmetric matrix :math:`R_k` (what is left of a pattern's form once its local
vectors are eliminated); the LMIs are

.. math::

    Q_k(\kappa_{\cdot,k}) - \begin{pmatrix}0 & 0\\ 0 & R_k\end{pmatrix} \succeq 0
    \quad(k = 0..n),\qquad
    \sum_k P(|S| = k)\,\mathbb E\big[R_k \mid |S| = k\big] + \sum_j\mu_j\sum_iH_j
    \ \text{PSD as a client-symmetric form} \ (A \succeq 0,\ M \succeq 0),

with the conditional moments :math:`\mathbb E[1_i \mid k] = k/n`,
:math:`\mathbb E[1_i1_j \mid k] = k(k-1)/(n(n-1))`. Its size grows linearly in n (the full
PEP's Gram matrix grows as :math:`2^n`), so n = 8 solves in well under a second. Its value
is an upper bound on the worst case over the constraints it keeps (those between the
current point and each pattern's point); where the full PEP's certificate uses only those
(both claims here), the values agree.

The models: :func:`mifa_error_model` (one MIFA aggregation) and :func:`fedavg_is_model`
(one FedAvg-IS step on an L-smooth f), written over abstract vectors for symbolic or
numeric parameters.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import sympy as sp

from fedtheory import solver_log

from .symmetric import Form, Instance, SymmetricStep, add, client_sum, dot, expect, sq

__all__ = ["fedavg_is_model", "mifa_error_model", "solve_symmetric"]


def _f(M: sp.Matrix) -> np.ndarray:
    return np.array(M.evalf(), dtype=float).reshape(M.rows, M.cols)


def solve_symmetric(step: SymmetricStep, n: int) -> dict[str, Any]:
    """The symmetry-reduced dual at ``n`` clients (the step's forms with ``step.n = n``
    substituted; every other parameter numeric): ``{"value", "kappa": {label: [per size]},
    "mu": {label: value}, "seconds", "status", "lmi_sizes"}``."""
    import cvxpy as cp

    t0 = time.perf_counter()
    sub = {step.n: n}
    p = sp.nsimplify(sp.sympify(step.p).subs(sub))
    names = step.pattern_names()
    nl = len(step.local)
    r = len(names) - nl
    nonlocal_names = names[nl:]
    obj = step.objective
    cons = [(f, lab) for f, _, lab in step.pattern_constraints]
    ccons = [(f, lab) for f, _, lab, _ in step.client_constraints]

    def mat(f: Form) -> np.ndarray:
        return _f(f.matrix(names).subs(sub))

    def val(e: Any) -> float:
        return float(sp.sympify(e).subs(sub))

    Qobj = -mat(obj)
    Qc = [mat(f) for f, _ in cons]
    kappa = cp.Variable((len(cons), n + 1), nonneg=True) if cons else None
    mu = cp.Variable(len(ccons), nonneg=True) if ccons else None
    bound = cp.Variable()
    parts: list[Any] = []
    k_ = len(step.clients)
    m_ = len(step.shared)
    At: Any = np.zeros((k_, k_))
    Bt: Any = np.zeros((k_, k_))
    Ct: Any = np.zeros((k_, m_))
    Dt: Any = np.zeros((m_, m_))
    const: Any = 0.0
    shared_vals: dict[str, Any] = {}
    basis = [(i, j) for i in range(r) for j in range(i, r)]
    for k in range(n + 1):
        Pk = math.comb(n, k) * p**k * (1 - p) ** (n - k)
        if Pk == 0:
            continue
        Pk = float(Pk)
        pi1 = sp.Rational(k, n)
        pi2 = sp.Rational(k * (k - 1), n * (n - 1)) if n > 1 else sp.Integer(0)
        Q = Qobj + sum((kappa[j, k] * Qc[j] for j in range(len(cons))), np.zeros_like(Qobj))
        R = cp.Variable((r, r), symmetric=True)
        Z = cp.bmat([[np.zeros((nl, nl)), np.zeros((nl, r))], [np.zeros((r, nl)), R]]) \
            if nl else R
        QZ = Q - Z
        parts.append((QZ + QZ.T) / 2 >> 0)
        for v in step.local_values:
            parts.append(-val(obj.a.get(v, 0)) + sum(
                (kappa[j, k] * val(f.a.get(v, 0)) for j, (f, _) in enumerate(cons)), 0) == 0)
        for i, j in basis:
            x, y = nonlocal_names[i], nonlocal_names[j]
            e = expect(step, Form(q={(x, y) if x <= y else (y, x): 1 if i == j else 2}),
                       pi1, pi2)
            sub_e = [_f(M.subs(sub)) if M.rows and M.cols else np.zeros((M.rows, M.cols))
                     for M in (e.A, e.B, e.C, e.D)]
            At = At + Pk * R[i, j] * sub_e[0]
            Bt = Bt + Pk * R[i, j] * sub_e[1]
            Ct = Ct + Pk * R[i, j] * sub_e[2]
            Dt = Dt + Pk * R[i, j] * sub_e[3]
        lin_c = -val(obj.c) + sum((kappa[j, k] * val(f.c) for j, (f, _) in enumerate(cons)), 0)
        const = const + Pk * lin_c
        for v in {*obj.a, *(x for f, _ in cons for x in f.a)} - set(step.local_values):
            shared_vals[v] = shared_vals.get(v, 0) + Pk * (-val(obj.a.get(v, 0)) + sum(
                (kappa[j, k] * val(f.a.get(v, 0)) for j, (f, _) in enumerate(cons)), 0))
    for j, (f, _) in enumerate(ccons):
        s = client_sum(step, f)
        mats = [_f(M.subs(sub)) if M.rows and M.cols else np.zeros((M.rows, M.cols))
                for M in (s.A, s.B, s.C, s.D)]
        At, Bt, Ct, Dt = (X + mu[j] * Y for X, Y in zip((At, Bt, Ct, Dt), mats, strict=True))
        const = const + mu[j] * val(s.c)
        for v, c in s.a.items():
            shared_vals[v] = shared_vals.get(v, 0) + mu[j] * val(c)
    parts += [e == 0 for e in shared_vals.values() if not isinstance(e, (int, float))]
    M = n * At + n**2 * Bt
    if m_:
        M = cp.bmat([[M, n * Ct], [n * Ct.T, Dt]])
    parts += [(At + At.T) / 2 >> 0, (M + M.T) / 2 >> 0, bound + const >= 0]
    prob = cp.Problem(cp.Minimize(bound), parts)
    prob.solve(solver=cp.CLARABEL)
    solver_log.record("symmetric pep", "CLARABEL", str(prob.status))
    if prob.status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"symmetric PEP at n = {n}: solver status {prob.status}")
    return {
        "n": n, "value": float(prob.value), "status": str(prob.status),
        "kappa": {lab: [float(v) for v in kappa.value[j]] for j, (_, lab) in enumerate(cons)}
        if kappa is not None else {},
        "mu": {lab: float(mu.value[j]) for j, (_, lab) in enumerate(ccons)}
        if mu is not None else {},
        "lmi_sizes": [len(names)] * (n + 1) + [k_, k_ + m_],
        "seconds": round(time.perf_counter() - t0, 3),
    }


_HALF = sp.Rational(1, 2)


def _pos_symbols() -> tuple[sp.Symbol, sp.Symbol, sp.Symbol]:
    return (sp.Symbol("m", nonnegative=True), sp.Symbol("q", nonnegative=True),
            sp.Symbol("s", nonnegative=True))


def mifa_error_model(n: Any, p: Any, bound: Any = 1, lam: Any = 0,
                     positive: dict[Any, Any] | None = None, closed_form: Any = None,
                     ) -> SymmetricStep:
    """One MIFA aggregation: maximise :math:`\\mathbb E\\|\\frac1n\\sum_i(1-1_i)e_i\\|^2`
    subject to :math:`\\sum_i\\|e_i\\|^2 \\le` ``bound`` (one constraint, multiplier
    ``lam``), independent Bernoulli(p); the lower instance: equal :math:`e_i`."""
    miss = {"Σe": sp.Integer(1) / n, "σe": -sp.Integer(1) / n}
    inst = Instance(X=sp.Matrix([[sp.Integer(bound) / n]]),
                    Y=sp.Matrix([[sp.Integer(bound) / n]]), Z=sp.zeros(1, 0),
                    W=sp.zeros(0, 0), function="no function class: equal e_i")
    return SymmetricStep(
        clients=("e",), shared=(), local=(), local_values=(), objective=sq(miss),
        pattern_constraints=(),
        client_constraints=((sq({"e": 1}) - sp.Integer(bound) / n, lam,
                             "Σ||e_i||^2 <= 1", True),),
        n=n, p=p, positive=positive or {}, closed_form=closed_form, instance=inst,
        range_text="n >= 1, 0 < p <= 1")


def fedavg_is_model(n: Any, p: Any, eta: Any, L: Any, grad_half: Any = _HALF,
                    mu: Any = 0, kappa: tuple[Any, Any] = (0, 0),
                    positive: dict[Any, Any] | None = None, closed_form: Any = None,
                    range_text: str = "") -> SymmetricStep:
    """One FedAvg-IS step, :math:`w^+ = w - \\eta\\frac1{np}\\sum_{i\\in S}\\nabla f_i(w)`, on
    an L-smooth f (class :math:`-LI \\preceq \\nabla^2 f \\preceq LI`), w = 0: maximise
    :math:`\\mathbb E f(w^+) - f(w) +` ``grad_half`` :math:`\\eta\\|\\nabla f(w)\\|^2` subject to
    :math:`\\|\\nabla f_i(w) - \\nabla f(w)\\|^2 \\le 1` (multiplier ``mu`` on each) and the
    interpolation inequalities between w and each pattern's point (multipliers ``kappa``,
    times P(S)). Names: ``g`` the client gradients at w, ``b`` the gradient at the pattern's
    point, ``fS`` its value, ``f0 = f(w)``. The lower instance: :math:`f = \\frac L2\\|x\\|^2`
    at its minimiser, unit client gradients summing to zero (n >= 2)."""
    one = sp.Integer(1)
    gbar = {"Σg": one / n}
    x = {"σg": -eta / (n * p)}
    b = {"b": one}
    neg_x = {k: -v for k, v in x.items()}
    diff = {**gbar, "b": -one}  # g_0 - b_S
    c_0S = (Form(a={"fS": 1, "f0": -1}) + dot(b, neg_x) + sq(diff) / (2 * L)
            - sq(add(neg_x, diff, scale=(1, -1 / L))) * (L / 4))
    ndiff = {k: -v for k, v in diff.items()}  # b_S - g_0
    c_S0 = (Form(a={"f0": 1, "fS": -1}) + dot(gbar, x) + sq(ndiff) / (2 * L)
            - sq(add(x, ndiff, scale=(1, -1 / L))) * (L / 4))
    objective = Form(a={"fS": 1, "f0": -1}) + sq(gbar) * (grad_half * eta)
    het = sq({"g": one, "Σg": -one / n}) - 1
    inst = Instance(X=sp.Matrix([[one]]), Y=sp.Matrix([[-one / (n - 1)]]),
                    Z=sp.zeros(1, 0), W=sp.zeros(0, 0),
                    local={"b": {k: L * v for k, v in x.items()}},
                    local_values={"fS": sq(x) * (L / 2)}, values={"f0": 0},
                    function="f = (L/2)||x||^2 (in the class), w = its minimiser; unit "
                             "client gradients with <g_i, g_j> = -1/(n-1)")
    return SymmetricStep(
        clients=("g",), shared=(), local=("b",), local_values=("fS",), objective=objective,
        pattern_constraints=((c_0S, kappa[0], "interpolation (0, S)"),
                             (c_S0, kappa[1], "interpolation (S, 0)")),
        client_constraints=((het, mu, "||∇f_i(w) - ∇f(w)||^2 <= σ_G^2 = 1", False),),
        n=n, p=p, positive=positive or {}, closed_form=closed_form, instance=inst,
        range_text=range_text)
