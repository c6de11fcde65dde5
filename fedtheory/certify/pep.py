"""A performance-estimation problem (PEP) in exact coefficients, its SDP and its certificates.

The worst case of a one-step inequality over a function class is a small semidefinite program
in the Gram matrix :math:`G` of the leaf vectors (points, gradients, client vectors) and the
vector :math:`F` of the function values (Drori and Teboulle 2014; Taylor, Hendrickx and
Glineur 2017, whose PEPit this mirrors). Here every coefficient is a
:class:`~fractions.Fraction`: the SDP is solved in floating point (cvxpy, Clarabel), and its
answer is then turned into two certificates checked in exact arithmetic:

* **upper**: the dual multipliers :math:`\\lambda \\ge 0`, rounded to rationals, with
  :math:`\\sum_k \\lambda_k a_k = a_0` exactly (the function values cancel) and
  :math:`S = \\sum_k \\lambda_k Q_k - Q_0 \\succeq 0` exactly (:func:`~.exact.is_psd`): then
  for every feasible :math:`(G, F)`

  .. math::

      \\langle Q_0, G\\rangle + a_0^\\top F + c_0 = \\sum_k \\lambda_k
      \\big(\\langle Q_k, G\\rangle + a_k^\\top F + c_k\\big) - \\langle S, G\\rangle
      + c_0 - \\sum_k \\lambda_k c_k \\le c_0 - \\sum_k \\lambda_k c_k;

* **lower**: an explicit rational assignment of the leaves (vectors in :math:`\\mathbb Q^r`)
  and function values satisfying every constraint exactly; the interpolation theorems of the
  function classes make it the restriction of a function of the class, so its objective value
  is attained.

A constraint is an :class:`Expr` ``e`` meaning ``e <= 0``.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory import solver_log

from .algebra import Expr, Number, Vec, as_fraction
from .classes import Aggregate, Function, quadratic_in_class
from .exact import is_psd, solve_exact

__all__ = ["Aggregate", "Expr", "Function", "Pep", "Solution", "Vec", "as_fraction"]

@dataclass
class Solution:
    """The SDP's floating-point answer: value, primal Gram matrix and function values, the
    dual multiplier of each constraint, the solver and the seconds it took."""

    value: float
    G: np.ndarray
    F: np.ndarray
    duals: np.ndarray
    status: str
    solver: str
    seconds: float


@dataclass
class Pep:
    """A performance-estimation problem: leaves, functions, constraints (``e <= 0``) and the
    objective to maximise, all with exact coefficients."""

    n_vec: int = 0
    n_val: int = 0
    functions: list[Function] = field(default_factory=list)
    #: Weighted sums of functions in a class of their own (:meth:`aggregate`).
    aggregates: list[Aggregate] = field(default_factory=list)
    constraints: list[tuple[Expr, str]] = field(default_factory=list)
    objective: Expr | None = None
    names: list[str] = field(default_factory=list)
    _cons: Any = field(default=None, repr=False)

    def vector(self, name: str = "") -> Vec:
        """A new leaf vector (free: a point, a gradient, a client vector)."""
        self.n_vec += 1
        self.names.append(name or f"v{self.n_vec - 1}")
        return Vec({self.n_vec - 1: Fraction(1)})

    def value(self) -> Expr:
        """A new function value leaf."""
        self.n_val += 1
        return Expr(a={self.n_val - 1: Fraction(1)})

    def function(self, kind: str, L: Number, mu: Number = 0) -> Function:
        f = Function(self, kind, L, mu)
        self.functions.append(f)
        return f

    def aggregate(self, functions: Sequence[Function], weights: Sequence[Any], kind: str,
                  L: Number, mu: Number = 0) -> Aggregate:
        """Put the weighted sum of ``functions`` in a class of its own (e.g. convex clients
        with a strongly convex sum): its inequalities join the PEP's, which then
        certifies lower bounds with explicit functions only (:attr:`interpolation`)."""
        if any(f.pep is not self for f in functions):
            raise ValueError("an aggregate's functions must be this PEP's")
        agg = Aggregate(functions, weights, kind, L, mu)
        self.aggregates.append(agg)
        return agg

    def lifted(self, moduli: Sequence[Any]) -> Pep:
        r"""The same problem on a subclass with exact interpolation: the aggregate's
        components in :math:`\mathcal F_{a_i, L}` (``moduli`` :math:`a_i`, one per
        component, :math:`f.\mu \le a_i < L`) with :math:`\sum_i w_ia_i \ge \mu` of the
        sum: then :math:`f_i - \frac{a_i}2\|\cdot\|^2` is convex and
        :math:`\sum_iw_if_i` is :math:`\mu`-strongly convex, so an instance of the lifted
        PEP (a Gram matrix satisfying its constraints) is one of the PEP's class: a lower
        certificate. Raises ValueError for moduli outside that range."""
        if len(self.aggregates) != 1:
            raise ValueError("lifting needs exactly one aggregate")
        agg = self.aggregates[0]
        a = [as_fraction(v, "modulus") for v in moduli]
        if len(a) != len(agg.components):
            raise ValueError(f"give one modulus per component ({len(agg.components)}), "
                             f"got {len(a)}")
        for f, ai in zip(agg.components, a, strict=True):
            if f.kind != "smooth_strongly_convex" or not f.mu <= ai < f.L:
                raise ValueError(f"a modulus must be in [{f.mu}, {f.L}), got {ai}")
        if sum((w * ai for w, ai in zip(agg.weights, a, strict=True)), Fraction(0)) < agg.mu:
            raise ValueError(f"the moduli must give the sum's mu = {agg.mu}")
        out = Pep(self.n_vec, self.n_val, constraints=list(self.constraints),
                  objective=self.objective, names=list(self.names))
        by_id = dict(zip(map(id, agg.components), a, strict=True))
        for f in self.functions:
            g = Function(out, f.kind, f.L, by_id.get(id(f), f.mu))
            g.points, g._by_x = f.points, f._by_x
            out.functions.append(g)
        return out

    def lift_candidates(self) -> list[list[Fraction]]:
        """Moduli to try in :meth:`lifted`: equal (every component :math:`\\mu`-strongly
        convex: the classical subclass), then each component carrying the sum's strong
        convexity alone (:math:`a_j = \\mu/w_j`, or :math:`\\frac{99}{100}L` and the rest
        shared by the others when that is not below :math:`L`)."""
        if len(self.aggregates) != 1:
            return []
        agg = self.aggregates[0]
        w, mu, n = agg.weights, agg.mu, len(agg.weights)
        out = [[mu] * n] if all(mu < f.L for f in agg.components) else []
        for j, f in enumerate(agg.components):
            aj = mu / w[j] if mu / w[j] < f.L else f.L * Fraction(99, 100)
            rest = (mu - w[j] * aj) / (1 - w[j]) if n > 1 else Fraction(0)
            a = [aj if i == j else rest for i in range(n)]
            try:
                self.lifted(a)
            except ValueError:
                continue
            if a not in out:
                out.append(a)
        return out

    @property
    def interpolation(self) -> str:
        """``"exact"``: every function's inequalities are its class's interpolation
        conditions (a Gram matrix satisfying them is a lower certificate); ``"necessary"``:
        an aggregate's are only necessary (upper certificates hold for the class; a lower
        one needs explicit functions, :meth:`check_witness`)."""
        return "necessary" if self.aggregates else "exact"

    def class_text(self) -> str:
        """The function class in words: each function's, then each aggregate's."""
        parts: list[str] = []
        names = {id(f): f"f_{k + 1}" for k, f in enumerate(self.functions)}
        groups: dict[str, list[str]] = {}
        for f in self.functions:
            groups.setdefault(f.text(), []).append(names[id(f)])
        for text, fs in groups.items():
            parts.append(f"{', '.join(fs)}: {text}")
        for a in self.aggregates:
            terms = " + ".join(f"{w} {names[id(f)]}" for w, f in
                               zip(a.weights, a.components, strict=True))
            parts.append(f"their sum {terms}: {a.text()}")
        return "; ".join(parts) if parts else "no function (client vectors only)"

    def constrain(self, e: Expr, label: str = "") -> None:
        """Impose ``e <= 0``."""
        self.constraints.append((e, label or f"c{len(self.constraints)}"))

    def maximize(self, e: Expr) -> None:
        self.objective = e

    def all_constraints(self) -> list[tuple[Expr, str]]:
        """The stated constraints, then every function's interpolation inequalities (cached
        until a constraint, point or function is added)."""
        key = (len(self.constraints), tuple(len(f.points) for f in self.functions),
               len(self.aggregates))
        if self._cons is None or self._cons[0] != key:
            out = list(self.constraints)
            for f in self.functions:
                out += f.interpolation()
            for agg in self.aggregates:
                out += agg.interpolation()
            self._cons = (key, out, [self._exact_Q(e) for e, _ in out])
        return self._cons[1]

    # -- the SDP, in floating point --------------------------------------------------------
    def _dense(self, e: Expr) -> tuple[np.ndarray, np.ndarray, float]:
        d = self.n_vec
        Q = np.zeros((d, d))
        for (i, j), v in e.q.items():
            if i == j:
                Q[i, i] += float(v)
            else:
                Q[i, j] += float(v) / 2
                Q[j, i] += float(v) / 2
        a = np.zeros(self.n_val)
        for k, v in e.a.items():
            a[k] = float(v)
        return Q, a, float(e.c)

    def solve(self, problem: str = "pep") -> Solution:
        """Solve the SDP with Clarabel (cvxpy): max objective s.t. constraints, G PSD."""
        if self.objective is None:
            raise ValueError("the PEP has no objective (call maximize first)")
        import cvxpy as cp  # heavy: imported when a PEP is solved
        cons = self.all_constraints()
        d, m = self.n_vec, self.n_val
        Qs, As, cs = zip(*(self._dense(e) for e, _ in cons), strict=True)
        Qm = np.array([Q.ravel() for Q in Qs])
        Am = np.array(As).reshape(len(cons), m)
        cm = np.array(cs)
        Q0, a0, c0 = self._dense(self.objective)
        G = cp.Variable((d, d), PSD=True)
        F = cp.Variable(m) if m else None
        lhs = Qm @ cp.vec(G, order="C") + cm
        if F is not None:
            lhs = lhs + Am @ F
        con = lhs <= 0
        obj = cp.sum(cp.multiply(Q0, G)) + c0 + (a0 @ F if F is not None else 0)
        prob = cp.Problem(cp.Maximize(obj), [con])
        t0 = time.perf_counter()
        msgs = _solve_quietly(prob, cp.CLARABEL)
        secs = time.perf_counter() - t0
        solver_log.record(problem, "CLARABEL", str(prob.status), msgs)
        if prob.status not in ("optimal", "optimal_inaccurate"):
            raise RuntimeError(f"PEP {problem!r}: solver status {prob.status}")
        return Solution(float(prob.value), np.array(G.value), np.array(
            F.value if F is not None else []), np.maximum(np.array(con.dual_value), 0.0),
            str(prob.status), f"CLARABEL (cvxpy {cp.__version__})", secs)

    def sparse_dual(self, target: float, slack: float = 1e-9) -> np.ndarray | None:
        r"""Multipliers of least total weight among those certifying ``target`` (the dual
        SDP: :math:`\min \sum_k\lambda_k` s.t. :math:`\lambda \ge 0`,
        :math:`\sum_k\lambda_ka_k = a_0`, :math:`S \succeq 0`,
        :math:`c_0 - \sum_k\lambda_kc_k \le` target + slack): an interior-point solver
        returns the centre of the optimal face, often irrational; the least-weight point is
        a vertex-like one whose rounding is exact more often. None if not solved."""
        import cvxpy as cp

        assert self.objective is not None
        cons = self.all_constraints()
        d = self.n_vec
        Qs, As, cs = zip(*(self._dense(e) for e, _ in cons), strict=True)
        Qm = np.array([Q.ravel() for Q in Qs])
        Q0, a0, c0 = self._dense(self.objective)
        lam = cp.Variable(len(cons), nonneg=True)
        S = cp.reshape(Qm.T @ lam, (d, d), order="C") - Q0
        parts = [(S + S.T) / 2 >> 0, c0 - np.array(cs) @ lam <= target + slack]
        if self.n_val:
            parts.append(np.array(As).reshape(len(cons), self.n_val).T @ lam == a0)
        prob = cp.Problem(cp.Minimize(cp.sum(lam)), parts)
        msgs: list[str] = []
        try:
            _solve_quietly(prob, cp.CLARABEL, msgs)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:  # noqa: BLE001 - a refinement only: the first certificate
            # stands (SolverError, or a panic of Clarabel's Rust core: a BaseException)
            solver_log.record("pep dual (least weight)", "CLARABEL", "solver_error",
                              "".join(msgs))
            return None
        solver_log.record("pep dual (least weight)", "CLARABEL", str(prob.status),
                          "".join(msgs))
        if prob.status not in ("optimal", "optimal_inaccurate") or lam.value is None:
            return None
        return np.maximum(np.array(lam.value), 0.0)

    # -- certificates, in exact arithmetic -------------------------------------------------
    def _exact_mats(self) -> tuple[list[tuple[Expr, str]], list[list[list[Fraction]]]]:
        cons = self.all_constraints()
        return cons, self._cons[2]

    def _exact_Q(self, e: Expr) -> list[list[Fraction]]:
        d = self.n_vec
        Q = [[Fraction(0)] * d for _ in range(d)]
        for (i, j), v in e.q.items():
            if i == j:
                Q[i][i] += v
            else:
                Q[i][j] += v / 2
                Q[j][i] += v / 2
        return Q

    def denominator(self) -> int:
        """The lcm of the denominators of every coefficient (objective and constraints): a
        natural denominator for the multipliers."""
        assert self.objective is not None
        D = 1
        for e in [self.objective, *(e for e, _ in self.all_constraints())]:
            for v in [*e.q.values(), *e.a.values(), e.c]:
                D = math.lcm(D, v.denominator)
        return D

    def check_dual(self, lam: Sequence[Fraction]) -> Fraction | None:
        """The upper bound ``c_0 - sum_k lam_k c_k`` certified by the rational multipliers
        ``lam`` (>= 0, the function values cancelling exactly, ``S`` PSD exactly), or None."""
        assert self.objective is not None
        cons = self.all_constraints()
        if len(lam) != len(cons) or any(v < 0 for v in lam):
            return None
        used = [(lk, e) for lk, (e, _) in zip(lam, cons, strict=True) if lk]
        for k in range(self.n_val):
            if sum((lk * e.a.get(k, 0) for lk, e in used), Fraction(0)) \
                    != self.objective.a.get(k, 0):
                return None
        S = [[-v for v in row] for row in self._exact_Q(self.objective)]
        for lk, e in used:
            for (i, j), v in e.q.items():
                if i == j:
                    S[i][i] += lk * v
                else:
                    S[i][j] += lk * v / 2
                    S[j][i] += lk * v / 2
        if not is_psd(S):
            return None
        return self.objective.c - sum((lk * e.c for lk, e in used), Fraction(0))

    def _float_screen(self, lam: Sequence[Fraction]) -> tuple[float, float]:
        """The bound and the smallest eigenvalue of ``S`` in floating point (a cheap screen
        before the exact check)."""
        assert self.objective is not None
        cons = self.all_constraints()
        S = -self._dense(self.objective)[0]
        bound = float(self.objective.c)
        for lk, (e, _) in zip(lam, cons, strict=True):
            if lk:
                Q, _, c = self._dense(e)
                S += float(lk) * Q
                bound -= float(lk) * c
        scale = max(1.0, float(np.abs(S).max())) if S.size else 1.0
        return bound, float(np.linalg.eigvalsh(S).min()) / scale if S.size else 0.0

    def round_dual(self, duals: np.ndarray, target: Fraction | None = None,
                   dens: Sequence[int] = (1, 2, 6, 12, 60, 420, 2520, 10**4, 10**6, 10**9)
                   ) -> tuple[Fraction, list[Fraction]] | None:
        """Round the solver's multipliers (support: the ones above 1e-7 of the largest), make
        the function values cancel exactly (an exact solve on the support), and return the
        smallest certified ``(bound, lam)`` over the denominators ``dens`` (None if none);
        stop early at a bound <= ``target`` (a certified lower value: then they meet).
        Every certified bound is valid; a coarse rounding may only give a looser one.
        (``target`` is kept for callers; the screen already orders by bound.)"""
        best: tuple[Fraction, list[Fraction]] | None = None
        assert self.objective is not None
        cons = self.all_constraints()
        D = self.denominator()
        dens = [*dens, *(k * D**e for e in (1, 2, 3) for k in (1, 2, 6, 12)
                         if k * D**e <= 10**12)]
        top = float(np.max(duals)) if len(duals) else 0.0
        support = [k for k, v in enumerate(duals) if v > 1e-7 * max(top, 1e-12)]
        # screen every denominator in floating point, then check exactly from the smallest
        # bound up: the first that holds is (close to) the best
        cands = []
        for den in sorted(set(dens)):
            lam = [Fraction(0)] * len(cons)
            for k in support:
                lam[k] = Fraction(float(duals[k])).limit_denominator(den)
            fb, fmin = self._float_screen(lam)
            cands.append((fb, den, lam))
        cands.sort(key=lambda t: (t[0], t[1]))
        for _, _, lam in cands:
            # the residual of the function-value equations, corrected on the support
            resid = [self.objective.a.get(k, Fraction(0)) - sum(
                (lam[i] * cons[i][0].a.get(k, 0) for i in support), Fraction(0))
                for k in range(self.n_val)]
            if any(resid):
                A = [[cons[i][0].a.get(k, Fraction(0)) for i in support]
                     for k in range(self.n_val)]
                delta = solve_exact(A, resid)
                if delta is None:
                    continue
                for i, dv in zip(support, delta, strict=True):
                    lam[i] += dv
            if any(v < 0 for v in lam):
                continue
            fb, fmin = self._float_screen(lam)
            if fmin < -1e-9 or (best is not None and fb >= float(best[0])):
                continue
            bound = self.check_dual(lam)
            if bound is not None and (best is None or bound < best[0]):
                best = (bound, lam)
                break
        return best

    def check_primal(self, V: Sequence[Sequence[Fraction]], F: Sequence[Fraction]
                     ) -> Fraction | None:
        """The objective at the explicit rational instance (leaf ``i`` is the row ``V[i]``,
        function value ``k`` is ``F[k]``) if it satisfies every constraint exactly, else
        None."""
        assert self.objective is not None
        if len(V) != self.n_vec or len(F) != self.n_val:
            raise ValueError(f"the instance must give {self.n_vec} vectors and {self.n_val} "
                             f"values, got {len(V)} and {len(F)}")
        G = [[sum((a * b for a, b in zip(vi, vj, strict=True)), Fraction(0)) for vj in V]
             for vi in V]
        return self.check_gram(G, F, psd_known=True)

    def check_gram(self, G: Sequence[Sequence[Fraction]], F: Sequence[Fraction],
                   psd_known: bool = False) -> Fraction | None:
        """The objective at a rational Gram matrix ``G`` (checked PSD exactly, unless it is
        ``V V^T`` by construction: then vectors realising it exist) and function values
        ``F``, if every constraint holds exactly; else None."""
        assert self.objective is not None
        if not psd_known and not is_psd(G):
            return None
        for e, _ in self.all_constraints():
            if e.evaluate(G, F) > 0:
                return None
        return self.objective.evaluate(G, F)

    def check_witness(self, V: Sequence[Sequence[Fraction]], F: Sequence[Fraction],
                      functions: Sequence[Any]) -> Fraction | None:
        """The objective at the instance ``(V, F)`` if explicit quadratics prove it one of
        the class (every class, an aggregate's included), else None.

        ``functions[k] = {"hessian": A, "linear": b, "constant": c}`` for the PEP's
        ``k``-th function, :math:`f_k(x) = \\frac12x^\\top Ax + b^\\top x + c` on
        :math:`\\mathbb Q^r` (``r`` the length of ``V``'s rows): ``A`` in the function's
        class and each aggregate's :math:`\\sum_iw_iA_i` in its own, exactly; at every
        point the gradient leaf equals :math:`Ax + b` and the value :math:`f_k(x)`; then
        every constraint holds exactly. Shapes are the caller's to validate (a report's
        certificate: :mod:`~fedtheory.certify.recheck`)."""
        assert self.objective is not None
        if len(V) != self.n_vec or len(F) != self.n_val or len(functions) != len(
                self.functions):
            raise ValueError(f"the instance must give {self.n_vec} vectors, {self.n_val} "
                             f"values and {len(self.functions)} functions")
        r = len(V[0]) if V else 0
        G = [[sum((a * b for a, b in zip(vi, vj, strict=True)), Fraction(0)) for vj in V]
             for vi in V]

        def row(v: Vec) -> list[Fraction]:
            out = [Fraction(0)] * r
            for k, c in v.c.items():
                out = [o + c * x for o, x in zip(out, V[k], strict=True)]
            return out

        hess = {}
        for f, w in zip(self.functions, functions, strict=True):
            A, b, c = w["hessian"], w["linear"], w["constant"]
            if len(A) != r or len(b) != r or not quadratic_in_class(f.kind, f.L, f.mu, A):
                return None
            hess[id(f)] = A
            for pt in f.points:
                x = row(pt.x)
                Ax = [sum((a * v for a, v in zip(Ai, x, strict=True)), Fraction(0)) for Ai in A]
                if [u + v for u, v in zip(Ax, b, strict=True)] != row(pt.g):
                    return None
                fx = (sum((u * v for u, v in zip(Ax, x, strict=True)), Fraction(0)) / 2
                      + sum((u * v for u, v in zip(b, x, strict=True)), Fraction(0)) + c)
                if pt.f.evaluate(G, F) != fx:
                    return None
        for agg in self.aggregates:
            S = [[sum((wt * hess[id(f)][i][j] for wt, f in zip(agg.weights, agg.components,
                                                              strict=True)), Fraction(0))
                  for j in range(r)] for i in range(r)]
            if not quadratic_in_class(agg.kind, agg.L, agg.mu, S):
                return None
        return self.check_gram(G, F, psd_known=True)

    def shrink_factor(self, V: Sequence[Sequence[Fraction]], F: Sequence[Fraction]
                      ) -> Fraction | None:
        """The largest simple rational ``s <= 1`` found such that scaling the instance
        (``G`` by ``s^2``, ``F`` by ``s^2``) satisfies every constraint ``q(G) + a F + c <= 0``
        with ``c < 0``; the homogeneous ones (``c = 0``: interpolation) are unchanged by
        scaling and must hold already. 1 when nothing needs shrinking, None when it cannot
        be done."""
        G = [[sum((a * b for a, b in zip(vi, vj, strict=True)), Fraction(0)) for vj in V]
             for vi in V]
        r: Fraction | None = None
        for e, _ in self.all_constraints():
            h = e.evaluate(G, F) - e.c
            if e.c == 0:
                if h > 0:
                    return None
            elif h > -e.c:
                if e.c > 0:
                    return None
                ratio = -e.c / h
                r = ratio if r is None else min(r, ratio)
        if r is None:
            return Fraction(1)
        s = Fraction(math.sqrt(float(r))).limit_denominator(10**6)
        while s * s > r:
            s -= Fraction(1, 10**6)
        return s if s > 0 else None

    def _shrink(self, V: list[list[Fraction]], F: list[Fraction]
                 ) -> tuple[Any, Any]:
        """The instance scaled by :meth:`shrink_factor` (``(None, None)`` when it cannot
        be)."""
        s = self.shrink_factor(V, F)
        if s is None:
            return None, None
        if s == 1:
            return V, F
        return [[s * v for v in row] for row in V], [s * s * v for v in F]

    def round_primal(self, sol: Solution, dens: Sequence[int] = (1, 2, 6, 12, 60, 420, 2520,
                                                                 10**4, 10**6)
                     ) -> tuple[Fraction, list[list[Fraction]], list[Fraction]] | None:
        """An exact instance from the solver's primal: ``(objective, M, F)`` with ``M`` the
        Gram matrix rounded (PSD checked exactly) when that satisfies every constraint and
        keeps the value; else a factor ``V`` (``G = V V^T``, the eigen-directions above 1e-7
        of the largest: rounding a factor keeps ``G`` PSD), rounded, shrunk if a
        normalisation broke; None if nothing holds exactly."""
        assert self.objective is not None
        best: tuple[Fraction, list[list[Fraction]], list[Fraction]] | None = None
        # first the Gram matrix itself, rounded (its PSD-ness checked exactly: vectors that
        # realise it exist, possibly with irrational coordinates), from the smallest
        # denominator up
        Gs = (sol.G + sol.G.T) / 2
        for den in sorted(set(dens))[:7]:
            G = [[Fraction(float(v)).limit_denominator(den) for v in row] for row in Gs]
            F = [Fraction(float(v)).limit_denominator(den) for v in sol.F]
            val = self.check_gram(G, F)
            if val is not None and abs(float(val) - sol.value) <= 1e-6 * max(1, abs(sol.value)):
                return val, G, F
        # then a factor, rounded: the largest objective (in floating point) first
        w, U = np.linalg.eigh(Gs)
        keep = w > 1e-7 * max(float(w.max()), 1e-12)
        Vf = U[:, keep] * np.sqrt(w[keep])
        if Vf.shape[1] == 0:
            Vf = np.zeros((self.n_vec, 1))
        Q0, a0, c0 = self._dense(self.objective)
        cands = []
        for den in sorted(set(dens)):
            V = [[Fraction(float(v)).limit_denominator(den) for v in row] for row in Vf]
            F = [Fraction(float(v)).limit_denominator(den) for v in sol.F]
            Vn = np.array([[float(v) for v in row] for row in V])
            Fn = np.array([float(v) for v in F])
            value = float(np.sum(Q0 * (Vn @ Vn.T))) + (float(a0 @ Fn) if len(Fn) else 0.0) + c0
            cands.append((-value, den, V, F))
        cands.sort(key=lambda t: (t[0], t[1]))
        for _, _, V, F in cands:  # the best after shrinking; stop once at the solver's value
            val = self.check_primal(V, F)
            if val is None:  # rounding broke a normalisation: shrink the instance to fit
                V, F = self._shrink(V, F)
                val = None if V is None else self.check_primal(V, F)
            if val is not None and (best is None or val > best[0]):
                best = (val, V, F)
                if float(val) >= sol.value - 1e-9 * max(1.0, abs(sol.value)):
                    break
        return best


def _solve_quietly(prob: Any, solver: str, sink: list[str] | None = None) -> str:
    """Solve ``prob`` with nothing on the terminal: cvxpy's "Solution may be inaccurate"
    warning is dropped (the status, ``optimal_inaccurate``, is recorded) and what the solver
    prints on file descriptor 2 (Clarabel's Rust panics, "Eigval error") is captured
    (:func:`fedtheory.solver_log.captured_stderr`) and returned, also appended to ``sink``
    when the solve raises, for the run's log (:mod:`fedtheory.solver_log`). What is
    reported is only ever the certificates, checked in exact arithmetic."""
    sink = [] if sink is None else sink
    text: list[str] = []
    try:
        with warnings.catch_warnings(), solver_log.captured_stderr() as text:
            warnings.filterwarnings("ignore", message="Solution may be inaccurate",
                                    category=UserWarning)
            prob.solve(solver=solver)
    finally:
        sink.extend(text)
    return "".join(text)
