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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory import solver_log

from .exact import is_psd, solve_exact

__all__ = ["Expr", "Function", "Pep", "Solution", "Vec", "as_fraction"]

Number = int | Fraction


def as_fraction(x: Any, name: str = "value") -> Fraction:
    """``x`` as an exact Fraction (int, Fraction or a decimal string); floats are refused, so
    that a certificate never rests on a rounded parameter."""
    if isinstance(x, bool) or isinstance(x, float):
        raise ValueError(f"{name} must be exact (int, Fraction or str), got {x!r}")
    try:
        return Fraction(x)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be exact (int, Fraction or str), got {x!r}") from exc


class Vec:
    """A linear combination of leaf vectors, exact coefficients (``{leaf: coefficient}``)."""

    __slots__ = ("c",)

    def __init__(self, c: Mapping[int, Fraction] | None = None) -> None:
        self.c = {k: Fraction(v) for k, v in (c or {}).items() if v != 0}

    def __add__(self, o: Vec) -> Vec:
        out = dict(self.c)
        for k, v in o.c.items():
            out[k] = out.get(k, Fraction(0)) + v
        return Vec(out)

    def __sub__(self, o: Vec) -> Vec:
        return self + (-1) * o

    def __neg__(self) -> Vec:
        return (-1) * self

    def __mul__(self, s: Number) -> Vec:
        return Vec({k: v * s for k, v in self.c.items()})

    __rmul__ = __mul__

    def __truediv__(self, s: Number) -> Vec:
        return Vec({k: v / Fraction(s) for k, v in self.c.items()})

    def dot(self, o: Vec) -> Expr:
        """The inner product, a quadratic form in the Gram matrix."""
        q: dict[tuple[int, int], Fraction] = {}
        for i, a in self.c.items():
            for j, b in o.c.items():
                key = (i, j) if i <= j else (j, i)
                q[key] = q.get(key, Fraction(0)) + a * b
        return Expr(q=q)

    def sq(self) -> Expr:
        """The squared norm."""
        return self.dot(self)

    def key(self) -> tuple[tuple[int, Fraction], ...]:
        return tuple(sorted(self.c.items()))


class Expr:
    """A scalar: quadratic in the leaf vectors (``q``: ``{(i, j): coefficient}``, i <= j, the
    coefficient of :math:`\\langle v_i, v_j\\rangle`), linear in the function values (``a``)
    plus a constant ``c``."""

    __slots__ = ("a", "c", "q")

    def __init__(self, q: Mapping[tuple[int, int], Fraction] | None = None,
                 a: Mapping[int, Fraction] | None = None, c: Number = 0) -> None:
        self.q = {k: Fraction(v) for k, v in (q or {}).items() if v != 0}
        self.a = {k: Fraction(v) for k, v in (a or {}).items() if v != 0}
        self.c = Fraction(c)

    @staticmethod
    def _lift(o: Expr | Number) -> Expr:
        return o if isinstance(o, Expr) else Expr(c=Fraction(o))

    def __add__(self, o: Expr | Number) -> Expr:
        o = self._lift(o)
        q, a = dict(self.q), dict(self.a)
        for k, v in o.q.items():
            q[k] = q.get(k, Fraction(0)) + v
        for k, v in o.a.items():
            a[k] = a.get(k, Fraction(0)) + v
        return Expr(q, a, self.c + o.c)

    __radd__ = __add__

    def __sub__(self, o: Expr | Number) -> Expr:
        return self + (-1) * self._lift(o)

    def __rsub__(self, o: Expr | Number) -> Expr:
        return self._lift(o) - self

    def __neg__(self) -> Expr:
        return (-1) * self

    def __mul__(self, s: Number) -> Expr:
        s = Fraction(s)
        return Expr({k: v * s for k, v in self.q.items()},
                    {k: v * s for k, v in self.a.items()}, self.c * s)

    __rmul__ = __mul__

    def __truediv__(self, s: Number) -> Expr:
        return self * (1 / Fraction(s))

    def evaluate(self, G: Sequence[Sequence[Any]], F: Sequence[Any]) -> Any:
        """The value at a Gram matrix ``G`` and function values ``F`` (exact for rationals)."""
        return (sum((v * G[i][j] for (i, j), v in self.q.items()), Fraction(0))
                + sum((v * F[k] for k, v in self.a.items()), Fraction(0)) + self.c)


@dataclass
class _Point:
    x: Vec
    g: Vec
    f: Expr


class Function:
    """A function of a class, known only where the method evaluates it (its interpolation
    inequalities are imposed between those points: for assumptions that hold everywhere this
    is exact, by the interpolation theorems of the classes below).

    ``kind``: ``"smooth"`` (:math:`-LI \\preceq \\nabla^2 f \\preceq LI`, not necessarily
    convex) or ``"smooth_strongly_convex"`` (:math:`\\mu I \\preceq \\nabla^2 f \\preceq LI`,
    :math:`0 \\le \\mu < L`).
    """

    KINDS = ("smooth", "smooth_strongly_convex")

    def __init__(self, pep: Pep, kind: str, L: Number, mu: Number = 0) -> None:
        if kind not in self.KINDS:
            raise ValueError(f"kind must be one of {self.KINDS}, got {kind!r}")
        self.L, self.mu = as_fraction(L, "L"), as_fraction(mu, "mu")
        if self.L <= 0:
            raise ValueError(f"L must be > 0, got {self.L}")
        if kind == "smooth_strongly_convex" and not 0 <= self.mu < self.L:
            raise ValueError(f"mu must be in [0, L), got {self.mu} (L = {self.L})")
        self.pep, self.kind = pep, kind
        self.points: list[_Point] = []
        self._by_x: dict[Any, _Point] = {}

    def add_point(self, x: Vec, g: Vec, f: Expr) -> None:
        """Declare ``(x, g, f)`` a point of the function (its gradient and value there)."""
        if x.key() in self._by_x:
            raise ValueError("the function already has a point at this x")
        pt = _Point(x, g, f)
        self.points.append(pt)
        self._by_x[x.key()] = pt

    def oracle(self, x: Vec) -> tuple[Vec, Expr]:
        """The gradient and value at ``x`` (new leaves, or those of a point already there)."""
        pt = self._by_x.get(x.key())
        if pt is None:
            self.add_point(x, self.pep.vector(), self.pep.value())
            pt = self.points[-1]
        return pt.g, pt.f

    def value(self, x: Vec) -> Expr:
        return self.oracle(x)[1]

    def interpolation(self) -> list[tuple[Expr, str]]:
        """The interpolation inequalities between every ordered pair of its points."""
        out = []
        L, mu = self.L, self.mu
        for i, pi in enumerate(self.points):
            for j, pj in enumerate(self.points):
                if i == j:
                    continue
                dx, dg = pi.x - pj.x, pi.g - pj.g
                if self.kind == "smooth":
                    # f_i >= f_j + <g_j, dx> + |dg|^2/(2L) - (L/4)|dx - dg/L|^2
                    rhs = pj.f + pj.g.dot(dx) + dg.sq() / (2 * L) - (dx - dg / L).sq() * L / 4
                else:
                    rhs = pj.f + pj.g.dot(dx) + (dg.sq() / L + dx.sq() * mu
                                                 - dg.dot(dx) * (2 * mu / L)) / (2 * (1 - mu / L))
                out.append((rhs - pi.f, f"{self.kind}({i},{j})"))
        return out


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

    def constrain(self, e: Expr, label: str = "") -> None:
        """Impose ``e <= 0``."""
        self.constraints.append((e, label or f"c{len(self.constraints)}"))

    def maximize(self, e: Expr) -> None:
        self.objective = e

    def all_constraints(self) -> list[tuple[Expr, str]]:
        """The stated constraints, then every function's interpolation inequalities (cached
        until a constraint, point or function is added)."""
        key = (len(self.constraints), tuple(len(f.points) for f in self.functions))
        if self._cons is None or self._cons[0] != key:
            out = list(self.constraints)
            for f in self.functions:
                out += f.interpolation()
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
        _solve_quietly(prob, cp.CLARABEL)
        secs = time.perf_counter() - t0
        solver_log.record(problem, "CLARABEL", str(prob.status))
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
        try:
            _solve_quietly(prob, cp.CLARABEL)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:  # noqa: BLE001 - a refinement only: the first certificate
            # stands (SolverError, or a panic of Clarabel's Rust core: a BaseException)
            solver_log.record("pep dual (least weight)", "CLARABEL", "solver_error")
            return None
        solver_log.record("pep dual (least weight)", "CLARABEL", str(prob.status))
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

    def _shrink(self, V: list[list[Fraction]], F: list[Fraction]
                 ) -> tuple[Any, Any]:
        """Scale an instance by a rational ``s <= 1`` (``G`` by ``s^2``, ``F`` by ``s^2``)
        so that every constraint ``q(G) + a F + c <= 0`` with ``c < 0`` holds; the
        homogeneous ones (``c = 0``: interpolation) are unchanged by scaling and must hold
        already. ``(None, None)`` when that cannot be done."""
        G = [[sum((a * b for a, b in zip(vi, vj, strict=True)), Fraction(0)) for vj in V]
             for vi in V]
        r: Fraction | None = None
        for e, _ in self.all_constraints():
            h = e.evaluate(G, F) - e.c
            if e.c == 0:
                if h > 0:
                    return None, None
            elif h > -e.c:
                if e.c > 0:
                    return None, None
                ratio = -e.c / h
                r = ratio if r is None else min(r, ratio)
        if r is None:
            return V, F
        s = Fraction(math.sqrt(float(r))).limit_denominator(10**6)
        while s * s > r:
            s -= Fraction(1, 10**6)
        if s <= 0:
            return None, None
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


def _solve_quietly(prob: Any, solver: str) -> None:
    """Solve ``prob`` without cvxpy's "Solution may be inaccurate" warning on the terminal:
    the status (``optimal_inaccurate``) is recorded (:mod:`fedtheory.solver_log`) and what is
    reported is only ever the certificates, checked in exact arithmetic."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Solution may be inaccurate",
                                category=UserWarning)
        prob.solve(solver=solver)
