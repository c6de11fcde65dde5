r"""Identities, tested as a referee would: proved, violated at a concrete point, or not proved.

A symbolic check of an identity computes :math:`d = \text{derived} - \text{stated}`. When sympy
simplifies :math:`d` to 0 the identity is *proved*. When it does not, the identity is not yet
false: simplification can fail on a true identity. It is *violated* only where it is evaluated
at a concrete admissible point and the two sides differ there; otherwise it is *not proved*
(undecided, never a refutation). :func:`prove_zero` does both and says which, the identity
counterpart of :func:`fedtheory.symbolic.inequality.prove_nonnegative`.

>>> import sympy as sp
>>> x, y = sp.symbols("x y", positive=True)
>>> prove_zero((x + y) ** 2 - x**2 - 2 * x * y - y**2, {x: 1, y: 2}).status
'proved'
>>> r = prove_zero(x**2 - x, {x: sp.Rational(1, 2)})
>>> r.status, r.value, r.at
('violated', -1/4, {'x': '1/2'})
>>> prove_zero(x**2 - x, {x: 1}).status  # zero at the point: not proved, not refuted
'not proved'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

__all__ = ["IdentityResult", "prove_zero"]


@dataclass(frozen=True)
class IdentityResult:
    """The outcome of :func:`prove_zero`."""

    status: str  # "proved" | "violated" | "not proved"
    difference: Any  # the simplified difference (a sympy expression or matrix)
    at: dict[str, str] = field(default_factory=dict)  # the point, as strings
    value: Any = None  # the difference at the point (violated: not zero)

    @property
    def verdict(self) -> bool | None:
        """True when proved, False when violated at the point, None otherwise."""
        return {"proved": True, "violated": False}.get(self.status)

    @property
    def proof(self) -> str | None:
        """What proved it (for :attr:`Evidence.proof`), or None."""
        return "sympy: the difference simplifies to 0" if self.status == "proved" else None


def _is_zero(expr: Any) -> bool:
    if isinstance(expr, sp.MatrixBase):
        return all(_is_zero(e) for e in expr)
    return sp.simplify(sp.expand(expr)) == 0


def prove_zero(difference: Any, point: Mapping[Any, Any] | None = None) -> IdentityResult:
    """Prove ``difference == 0`` (a sympy expression or matrix), or show it non-zero at the
    concrete ``point`` (``{symbol: value}``; every free symbol should get a value).

    ``status`` is ``"proved"`` (simplifies to 0), ``"violated"`` (not zero at ``point``: the
    two sides differ on that instance) or ``"not proved"`` (no proof, and equal at ``point``, or
    no point given).
    """
    diff = sp.sympify(difference) if not isinstance(difference, sp.MatrixBase) else difference
    simplified = diff.applyfunc(lambda e: sp.simplify(sp.expand(e))) if isinstance(
        diff, sp.MatrixBase) else sp.simplify(sp.expand(diff))
    if _is_zero(simplified):
        return IdentityResult("proved", simplified)
    if not point:
        return IdentityResult("not proved", simplified)
    at = {str(k): str(v) for k, v in point.items()}
    value = sp.simplify(diff.subs(dict(point)))
    nonzero = (any(e != 0 for e in value) if isinstance(value, sp.MatrixBase)
               else value != 0)
    if nonzero and not value.free_symbols:
        return IdentityResult("violated", simplified, at, value)
    return IdentityResult("not proved", simplified, at, value)
