"""The exact algebra of a PEP: leaf vectors (:class:`Vec`), scalars quadratic in them and
linear in the function values (:class:`Expr`), and exact parameters (:func:`as_fraction`).

Every coefficient is a :class:`~fractions.Fraction`, so that a certificate checked with them is
a proof (re-exported by :mod:`~fedtheory.certify.pep`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

__all__ = ["Expr", "Number", "Vec", "as_fraction"]

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
