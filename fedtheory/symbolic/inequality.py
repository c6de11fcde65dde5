r"""Inequalities, not equalities: prove :math:`\text{slack} \ge 0` on a domain, or find where not.

A symbolic check of an upper bound computes the slack
:math:`s = \text{bound} - \text{exact}` and must show :math:`s \ge 0` on the admissible domain
(a lower bound: :math:`\text{exact} - \text{bound} \ge 0`). Comparing the bound with one
derivation for *equality* would refute every looser, true bound. :func:`prove_nonnegative`

1. tries a proof: sympy's sign inference on :math:`s`, then on the factors of
   :math:`\operatorname{factor}(s)` and on the terms of its expansion (a product or sum of
   terms of known sign is of known sign), under the symbols' assumptions;
2. and, whatever the proof found, searches the domain for a violation in exact rational
   arithmetic: a grid and seeded random rationals over the given ranges, kept only where the
   side conditions hold. A violation is a concrete admissible instance, the only thing that
   may refute.

The result says which it did: ``"proved"``, ``"violated"`` (with the instance and the value of
:math:`s` there) or ``"not violated"`` (searched, no proof).

>>> import sympy as sp
>>> eta, L, c, s2, g2 = sp.symbols("eta L c sigma2 g2", positive=True)
>>> slack = eta / 2 * g2 * (1 - eta * L * (1 + c / 2)) + eta**2 * L * c / 4 * s2
>>> theta = sp.Symbol("theta", positive=True)
>>> r = prove_nonnegative(slack.subs(eta, theta / (L * (1 + c))),
...                       {theta: (0, 1), L: (0, 4), c: (0, 10), s2: (0, 5), g2: (0, 5)},
...                       conditions=[theta <= 1])
>>> r.status
'not violated'
>>> r2 = prove_nonnegative(sp.expand((L - c) ** 2 + s2), {L: (0, 4), c: (0, 4), s2: (0, 1)})
>>> r2.status, r2.method
('proved', 'sum of squares and non-negative terms (sympy)')
>>> r3 = prove_nonnegative(L - 2 * c, {L: (0, 4), c: (0, 4)})
>>> r3.status, r3.value < 0, r3.instance
('violated', True, {'L': '4/5', 'c': '4/5'})
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import sympy as sp

__all__ = ["InequalityResult", "prove_nonnegative"]


@dataclass(frozen=True)
class InequalityResult:
    """The outcome of :func:`prove_nonnegative`."""

    status: str  # "proved" | "violated" | "not violated"
    method: str
    points: int
    instance: dict[str, str] = field(default_factory=dict)
    value: Any = None  # the slack at ``instance`` (a sympy Rational), when violated
    smallest: Any = None  # the smallest slack found by the search

    @property
    def holds(self) -> bool:
        return self.status != "violated"

    @property
    def proof(self) -> str | None:
        """The proof's method when proved, else None (what :attr:`Evidence.proof` takes)."""
        return self.method if self.status == "proved" else None


def _sign_proof(expr: sp.Expr) -> str | None:
    """A sign argument for ``expr >= 0`` under the symbols' assumptions, or None."""
    if expr.is_nonnegative:
        return "sign inference (sympy)"
    fac = sp.factor(expr)
    if fac.is_Mul and all(f.is_nonnegative or (f.is_Pow and f.exp.is_even)
                          for f in fac.args):
        return "product of non-negative factors (sympy)"
    expanded = sp.expand(expr)
    terms = expanded.args if expanded.is_Add else (expanded,)
    if all(t.is_nonnegative for t in terms):
        return "sum of non-negative terms (sympy)"
    # try completing squares pairwise: expr == (a - b)^2 + rest with rest >= 0
    for a, b in itertools.combinations(sorted(expr.free_symbols, key=str), 2):
        rest = sp.expand(expr - (a - b) ** 2)
        rest_terms = rest.args if rest.is_Add else (rest,)
        if rest != expanded and all(t.is_nonnegative for t in rest_terms):
            return "sum of squares and non-negative terms (sympy)"
    return None


def _exact_evaluator(expr: sp.Expr, syms: Sequence[sp.Symbol]) -> Any:
    """A fast exact evaluator of ``expr`` at rational points (``Fraction`` arguments): the
    numerator and denominator polynomials of a rational function term by term, else sympy's
    own substitution."""
    num, den = sp.fraction(sp.together(expr))
    try:
        polys = [sp.Poly(num, *syms), sp.Poly(den, *syms)]
    except sp.PolynomialError:
        polys = None
    if polys is None or any(not all(c.is_Rational for c in p.coeffs()) for p in polys):
        def slow(*args: Fraction) -> Fraction:
            val = expr.subs({s: sp.Rational(a.numerator, a.denominator)
                             for s, a in zip(syms, args, strict=True)})
            return Fraction(int(sp.numer(val)), int(sp.denom(val))) if val.is_Rational else val
        return slow
    terms = [[(Fraction(int(c.p), int(c.q)), m) for m, c in p.terms()] for p in polys]

    def fast(*args: Fraction) -> Fraction:
        n, d = (sum((c * _monomial(args, m) for c, m in t), Fraction(0)) for t in terms)
        return n / d if d != 0 else Fraction(0) if n == 0 else None
    return fast


def _monomial(args: Sequence[Fraction], exps: Sequence[int]) -> Fraction:
    out = Fraction(1)
    for a, e in zip(args, exps, strict=True):
        if e:
            out *= a**e
    return out


def _condition(rel: Any, syms: Sequence[sp.Symbol]) -> Any:
    """An exact test of the side condition ``rel`` (``a <= b``, ``a < b``, ...) at a point."""
    lhs = _exact_evaluator(rel.lhs - rel.rhs, syms)
    ops = {"<=": lambda v: v <= 0, "<": lambda v: v < 0, ">=": lambda v: v >= 0,
           ">": lambda v: v > 0}
    if rel.rel_op not in ops:
        raise ValueError(f"conditions must be <, <=, > or >= relations, got {rel!r}")
    test = ops[rel.rel_op]

    def holds(*args: Fraction) -> bool:
        v = lhs(*args)
        return v is not None and bool(test(v))
    return holds


def _grid(lo: Fraction, hi: Fraction, k: int) -> list[Fraction]:
    """``k`` interior rationals of ``(lo, hi)`` and the closed ends where admissible."""
    return [lo + (hi - lo) * Fraction(j, k + 1) for j in range(1, k + 1)] + [hi]


def prove_nonnegative(
    slack: sp.Expr,
    ranges: Mapping[sp.Symbol, tuple[Any, Any]],
    *,
    conditions: Sequence[Any] = (),
    grid: int = 4,
    random_points: int = 200,
    seed: int = 0,
) -> InequalityResult:
    r"""Prove ``slack >= 0`` on the domain, or search it for a violation (exact rationals).

    Parameters
    ----------
    slack:
        The sympy expression that must be non-negative (bound minus exact for an upper bound).
    ranges:
        ``{symbol: (lo, hi)}`` for every free symbol: the search box (open at ``lo``, closed at
        ``hi``; the symbols' own assumptions, e.g. ``positive=True``, carry the proof).
    conditions:
        Side conditions (sympy relations) an admissible instance must satisfy, e.g. the step
        condition :math:`\eta L(1 + c) \le 1`.
    grid, random_points, seed:
        Grid points per symbol (capped so the grid has at most ~5000 points) and seeded random
        rationals.
    """
    free = sorted(slack.free_symbols, key=str)
    missing = [s for s in free if s not in ranges]
    if missing:
        raise ValueError(f"ranges must cover every free symbol of slack, missing {missing}")
    syms = list(ranges)
    box = {s: (Fraction(str(lo)), Fraction(str(hi))) for s, (lo, hi) in ranges.items()}
    for s, (lo, hi) in box.items():
        if not lo < hi:
            raise ValueError(f"ranges[{s}] must have lo < hi, got {ranges[s]!r}")
    proof = _sign_proof(slack)
    fn = _exact_evaluator(slack, syms)
    conds = [_condition(c, syms) for c in conditions]
    k = max(2, min(grid, int(round(5000 ** (1 / max(1, len(syms)))))))
    rng = random.Random(seed)
    points = itertools.chain(
        itertools.product(*[_grid(*box[s], k) for s in syms]),
        ([box[s][0] + (box[s][1] - box[s][0]) * Fraction(rng.randint(1, 997), 997)
          for s in syms] for _ in range(random_points)),
    )
    tried, smallest, worst = 0, None, None
    for pt in points:
        args = list(pt)
        if conds and not all(c(*args) for c in conds):
            continue
        val = fn(*args)
        if val is None:  # a pole of the slack: not an admissible instance
            continue
        tried += 1
        if smallest is None or val < smallest:
            smallest, worst = val, args
        if val < 0:
            inst = {str(s): str(a) for s, a in zip(syms, args, strict=True)}
            return InequalityResult("violated", "exact rational search", tried, inst, val, val)
    if proof is not None:
        return InequalityResult("proved", proof, tried, smallest=smallest)
    inst = {} if worst is None else {str(s): str(a) for s, a in zip(syms, worst, strict=True)}
    return InequalityResult("not violated", f"exact rational search of {tried} admissible points",
                            tried, inst, smallest=smallest)
