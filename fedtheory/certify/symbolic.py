r"""Tight constants derived from the PEP's dual, in one symbolic parameter (sympy).

At several exact values :math:`t_1, \dots, t_K` of a parameter (e.g. the participation
probability :math:`p`), each PEP is solved and its certified rational dual multipliers
:math:`\lambda_k(t_j)` are taken (the least-weight ones: a vertex of the dual face, the same
face across :math:`t` more often than the solver's centre). Every multiplier, and every
coefficient of the PEP itself (objective and constraints: rational functions of :math:`t`
by construction), is then fitted as a rational function of :math:`t` on some of the samples
and required to reproduce *all* of them exactly (the rest are held out). With the fitted
data the certificate is checked **symbolically, for every** :math:`t` in the range:

* the function values cancel identically, :math:`\sum_k\lambda_k(t)a_k(t) = a_0(t)`;
* :math:`S(t) = \sum_k\lambda_k(t)Q_k(t) - Q_0(t) \succeq 0`: a symmetric elimination
  (:math:`LDL^\top`) whose pivots are rational functions of :math:`t`, each proved
  :math:`\ge 0` on the range (sympy's ``solveset`` finds no point where it is negative); a
  pivot identically 0 needs its row identically 0; continuity covers the isolated zeros;
* :math:`\lambda_k(t) \ge 0` on the range, likewise;

and the certified bound :math:`c_0(t) - \sum_k\lambda_k(t)c_k(t)` is compared with the
closed form. ``derivation`` is ``"symbolic"`` when every step holds, ``"instances only"``
when a fit or a check fails (then only the exact instances stand). The fitted PEP data equal
the true data for every :math:`t` when their degrees are at most the fitted ones (true of the
builders here: pattern probabilities are polynomials of degree :math:`n` in :math:`p`,
steps rational of low degree), which the held-out samples test.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import sympy as sp
from sympy.polys.polyfuncs import rational_interpolate

from .onestep import OneStep, _lower
from .pep import Pep

__all__ = ["derive_worst_case", "fit_rational", "psd_on"]


def fit_rational(points: Sequence[tuple[Fraction, Fraction]], t: sp.Symbol,
                 holdout: int = 2) -> sp.Expr | None:
    """The lowest-degree rational function of ``t`` through all ``points`` (fitted on the
    first ones, the last ``holdout`` at least reproduced exactly), or None.

    >>> t = sp.Symbol("t")
    >>> fit_rational([(Fraction(k), Fraction(1, k + 1)) for k in range(1, 6)], t)
    1/(t + 1)
    """
    pts = [(sp.Rational(x.numerator, x.denominator), sp.Rational(y.numerator, y.denominator))
           for x, y in points]
    if len({y for _, y in pts}) == 1:
        return pts[0][1]
    for size in range(2, len(pts) - holdout + 1):
        for degnum in range(size):
            try:
                f = sp.cancel(rational_interpolate(pts[:size], degnum, X=t))
            except (ZeroDivisionError, ValueError):
                continue
            try:
                if all(f.subs(t, x) == y for x, y in pts):
                    return f
            except (ZeroDivisionError, TypeError):
                continue
    return None


def _nonnegative_on(e: sp.Expr, t: sp.Symbol, domain: sp.Interval) -> bool:
    e = sp.factor(sp.cancel(e))
    if e.is_number:
        return bool(e >= 0)
    return sp.solveset(e < 0, t, domain) == sp.S.EmptySet


def psd_on(S: sp.Matrix, t: sp.Symbol, domain: sp.Interval) -> bool:
    """Whether the symmetric matrix ``S(t)`` is PSD for every ``t`` in ``domain`` (an
    :math:`LDL^\\top` elimination with pivots proved non-negative there; an identically
    zero pivot needs an identically zero row).

    >>> t = sp.Symbol("t")
    >>> psd_on(sp.Matrix([[t, t], [t, t]]), t, sp.Interval.open(0, 1))
    True
    >>> psd_on(sp.Matrix([[t, 1], [1, t]]), t, sp.Interval.open(0, 1))
    False
    """
    S = sp.Matrix(S)
    n = S.rows
    for k in range(n):
        piv = sp.cancel(S[k, k])
        if piv == 0:
            if any(sp.cancel(S[k, j]) != 0 for j in range(k + 1, n)):
                return False
            continue
        if not _nonnegative_on(piv, t, domain):
            return False
        for i in range(k + 1, n):
            for j in range(k + 1, n):
                S[i, j] = sp.cancel(S[i, j] - S[i, k] * S[k, j] / piv)
    return True


def _certificate(pep: Pep, built: Any) -> tuple[Fraction, list[Fraction]] | None:
    """Rational multipliers certifying the instance's worst case (least weight first)."""
    sol = pep.solve("derive")
    low = _lower(built, sol)
    target = low[0] if low is not None else None
    if target is not None:
        lam = pep.sparse_dual(float(target))
        if lam is not None:
            up = pep.round_dual(lam, target=target)
            if up is not None and up[0] == target:
                return up
    return pep.round_dual(sol.duals, target=target)


def _data(pep: Pep) -> list[tuple[list[list[Fraction]], dict[int, Fraction], Fraction]]:
    """Objective, then every constraint: ``(Q, a, c)`` exactly."""
    assert pep.objective is not None
    out = []
    for e in [pep.objective, *(e for e, _ in pep.all_constraints())]:
        out.append((pep._exact_Q(e), dict(e.a), e.c))
    return out


def _attained(insts: list[Any], samples: Sequence[Fraction], t: sp.Symbol,
              domain: sp.Interval, Qs: list[sp.Matrix], As: list[dict[int, sp.Expr]],
              Cs: list[sp.Expr], worst: sp.Expr) -> bool | None:
    """The lower side, symbolically: the constructed instance (its vectors and values
    fitted as rational functions of ``t``) satisfies every fitted constraint on the range
    and its objective equals ``worst`` identically. None without an instance."""
    if any(i is None for i in insts):
        return None
    rows, cols, nval = len(insts[0][0]), len(insts[0][0][0]), len(insts[0][1])
    if any(len(i[0]) != rows or len(i[0][0]) != cols or len(i[1]) != nval for i in insts):
        return False
    pts = lambda vals: fit_rational(list(zip(samples, vals, strict=True)), t)  # noqa: E731
    V = sp.zeros(rows, cols)
    for i in range(rows):
        for j in range(cols):
            f = pts([inst[0][i][j] for inst in insts])
            if f is None:
                return False
            V[i, j] = f
    Fv = []
    for k in range(nval):
        f = pts([inst[1][k] for inst in insts])
        if f is None:
            return False
        Fv.append(f)
    G = (V * V.T).applyfunc(sp.cancel)

    def value(idx: int) -> sp.Expr:
        Q = Qs[idx]
        return sp.cancel(sum((Q[i, j] * G[i, j] for i in range(rows) for j in range(rows)),
                             sp.Integer(0)) + sum((v * Fv[k] for k, v in As[idx].items()),
                                                  sp.Integer(0)) + Cs[idx])

    if sp.cancel(value(0) - worst) != 0:
        return False
    return all(_nonnegative_on(-value(k), t, domain) for k in range(1, len(Qs)))


def derive_worst_case(step: OneStep, params_of: Callable[[Fraction], dict[str, Any]],
                      samples: Sequence[Fraction], name: str = "p",
                      domain: sp.Interval | None = None,
                      closed_form: Callable[[sp.Symbol], sp.Expr] | None = None
                      ) -> dict[str, Any]:
    """The worst case of ``step`` as a function of one parameter (``params_of(t)``), derived
    from the dual as the module docstring says: ``{"derivation": "symbolic" | "instances
    only", "worst": str, "closed_form_equal": bool | None, "samples": [...], "reason": ...}``.
    """
    if len(samples) < 4:
        raise ValueError(f"samples must hold at least 4 values, got {len(samples)}")
    t = sp.Symbol(name, positive=True)
    domain = domain if domain is not None else sp.Interval.open(0, 1)
    certs, datas, insts = [], [], []
    for s in samples:
        built = step.build(params_of(s))
        insts.append(built.instance)
        cert = _certificate(built.pep, built)
        if cert is None:
            return {"derivation": "instances only", "worst": None, "closed_form_equal": None,
                    "samples": [str(v) for v in samples],
                    "reason": f"no exact certificate at {name} = {s}"}
        certs.append(cert)
        datas.append(_data(built.pep))
    out: dict[str, Any] = {"samples": [str(v) for v in samples], "parameter": name}
    shape = [(len(Q), sorted(a)) for Q, a, _ in datas[0]]
    if any([(len(Q), sorted(a)) for Q, a, _ in d] != shape for d in datas[1:]):
        return {**out, "derivation": "instances only", "worst": None,
                "closed_form_equal": None, "reason": "the PEP's structure varies with "
                f"{name} (a fit needs the same constraints at every sample)"}

    def fit(values: list[Fraction]) -> sp.Expr | None:
        return fit_rational(list(zip(samples, values, strict=True)), t)

    lam = []
    for k in range(len(certs[0][1])):
        f = fit([c[1][k] for c in certs])
        if f is None:
            return {**out, "derivation": "instances only", "worst": None,
                    "closed_form_equal": None,
                    "reason": f"multiplier {k} fits no rational function of {name}"}
        lam.append(f)
    d = len(datas[0][0][0])
    Qs, As, Cs = [], [], []
    for idx in range(len(datas[0])):
        Q = sp.zeros(d, d)
        for i in range(d):
            for j in range(i, d):
                f = fit([dd[idx][0][i][j] for dd in datas])
                if f is None:
                    return {**out, "derivation": "instances only", "worst": None,
                            "closed_form_equal": None, "reason": "a PEP coefficient fits "
                            f"no rational function of {name}"}
                Q[i, j] = Q[j, i] = f
        a = {}
        for key in datas[0][idx][1]:
            f = fit([dd[idx][1][key] for dd in datas])
            if f is None:
                return {**out, "derivation": "instances only", "worst": None,
                        "closed_form_equal": None, "reason": "a PEP coefficient fits no "
                        f"rational function of {name}"}
            a[key] = f
        c = fit([dd[idx][2] for dd in datas])
        if c is None:
            return {**out, "derivation": "instances only", "worst": None,
                    "closed_form_equal": None, "reason": "a PEP constant fits no rational "
                    f"function of {name}"}
        Qs.append(Q)
        As.append(a)
        Cs.append(c)
    keys = set().union(*(set(a) for a in As))
    cancel = all(sp.cancel(sum((lam[k] * As[k + 1].get(v, 0) for k in range(len(lam))),
                               sp.Integer(0)) - As[0].get(v, 0)) == 0 for v in keys)
    S = sum((lam[k] * Qs[k + 1] for k in range(len(lam))), sp.zeros(d, d)) - Qs[0]
    S = S.applyfunc(sp.cancel)
    nonneg = all(_nonnegative_on(v, t, domain) for v in lam if v != 0)
    psd = psd_on(S, t, domain)
    worst = sp.factor(sp.cancel(Cs[0] - sum((lam[k] * Cs[k + 1] for k in range(len(lam))),
                                            sp.Integer(0))))
    ok = cancel and nonneg and psd
    out.update({
        "derivation": "symbolic" if ok else "instances only",
        "worst": str(worst),
        "multipliers": {str(k): str(sp.factor(v)) for k, v in enumerate(lam) if v != 0},
        "checks": {"values_cancel": cancel, "multipliers_nonnegative": nonneg,
                   "S_psd": psd, "range": str(domain)},
    })
    out["attained"] = _attained(insts, samples, t, domain, Qs, As, Cs, worst)
    out["closed_form_equal"] = None if closed_form is None else bool(
        sp.cancel(worst - closed_form(t)) == 0)
    if not ok:
        out["reason"] = "the fitted certificate fails a symbolic check (see checks)"
    return out
