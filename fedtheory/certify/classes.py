r"""Function classes of a PEP: a function known only where the method evaluates it
(:class:`Function`), a weighted sum of such functions in a class of its own
(:class:`Aggregate`), and explicit quadratic witnesses that an instance is a function of the
class (:func:`quadratic_in_class`).

**Interpolation.** For one function of the classes here the inequalities between its points
are necessary and sufficient (Taylor, Hendrickx and Glineur 2017): a Gram matrix satisfying
them is the restriction of a function of the class, so a rounded worst-case Gram matrix is a
lower certificate. For *convex components with a strongly convex sum* (seed 002's Theorem
13: :math:`f_i` :math:`L`-smooth and convex, :math:`f = \sum_i w_if_i` :math:`\mu`-strongly
convex) the components' inequalities and the sum's, imposed at the points the components
share (the sum's gradient :math:`\sum_i w_ig_i` and value :math:`\sum_i w_if_i`), are
necessary: every multiplier certificate built on them is an upper bound for the class.
Sufficiency is not known for the pair (a component's interpolant need not add up to a
strongly convex sum away from the points), and the lifting :math:`f_i = h_i +
\frac\mu2\|\cdot\|^2` needs every :math:`f_i` strongly convex (the subclass), so a PEP
with an :class:`Aggregate` marks its interpolation ``"necessary"`` and takes a lower
certificate only with explicit functions: quadratics :math:`\frac12x^\top A_ix + b_i^\top x
+ c_i` whose Hessians are checked in the class exactly (:math:`0 \preceq A_i \preceq LI`,
:math:`\sum_iw_iA_i \succeq \mu I`) and whose gradients and values are the instance's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .algebra import Expr, Number, Vec, as_fraction
from .exact import is_psd

__all__ = ["Aggregate", "Function", "class_text", "quadratic_in_class"]


@dataclass
class _Point:
    x: Vec
    g: Vec
    f: Expr


def _rhs(kind: str, L: Fraction, mu: Fraction, pi: _Point, pj: _Point) -> Expr:
    """The interpolation inequality of ``kind`` from point ``j`` to point ``i``, written
    ``rhs - f_i <= 0``."""
    dx, dg = pi.x - pj.x, pi.g - pj.g
    if kind == "smooth":
        # f_i >= f_j + <g_j, dx> + |dg|^2/(2L) - (L/4)|dx - dg/L|^2
        rhs = pj.f + pj.g.dot(dx) + dg.sq() / (2 * L) - (dx - dg / L).sq() * L / 4
    else:
        rhs = pj.f + pj.g.dot(dx) + (dg.sq() / L + dx.sq() * mu
                                     - dg.dot(dx) * (2 * mu / L)) / (2 * (1 - mu / L))
    return rhs - pi.f


def class_text(kind: str, L: Fraction, mu: Fraction) -> str:
    """The class in words: ``L-smooth (L = 1)``, ``L-smooth convex (L = 1)``, ``L-smooth
    mu-strongly convex (L = 1, mu = 1/2)``."""
    if kind == "smooth":
        return f"L-smooth (L = {L})"
    if mu == 0:
        return f"L-smooth convex (L = {L})"
    return f"L-smooth mu-strongly convex (L = {L}, mu = {mu})"


def quadratic_in_class(kind: str, L: Fraction, mu: Fraction,
                       A: Sequence[Sequence[Fraction]]) -> bool:
    """Whether the quadratic with Hessian ``A`` (symmetric, rational) is in the class,
    exactly: :math:`lI \\preceq A \\preceq LI` with :math:`l = -L` (``smooth``) or
    :math:`\\mu`."""
    r = len(A)
    if any(len(row) != r for row in A) or any(A[i][j] != A[j][i] for i in range(r)
                                              for j in range(i)):
        return False
    low = -L if kind == "smooth" else mu
    eye = [[Fraction(int(i == j)) for j in range(r)] for i in range(r)]
    return (is_psd([[A[i][j] - low * eye[i][j] for j in range(r)] for i in range(r)])
            and is_psd([[L * eye[i][j] - A[i][j] for j in range(r)] for i in range(r)]))


class Function:
    """A function of a class, known only where the method evaluates it (its interpolation
    inequalities are imposed between those points: for assumptions that hold everywhere this
    is exact, by the interpolation theorems of the classes below).

    ``kind``: ``"smooth"`` (:math:`-LI \\preceq \\nabla^2 f \\preceq LI`, not necessarily
    convex) or ``"smooth_strongly_convex"`` (:math:`\\mu I \\preceq \\nabla^2 f \\preceq LI`,
    :math:`0 \\le \\mu < L`; ``mu = 0``: smooth convex).
    """

    KINDS = ("smooth", "smooth_strongly_convex")

    def __init__(self, pep: Any, kind: str, L: Number, mu: Number = 0) -> None:
        # pep: the Pep that owns it (its vector() and value() make the oracle's leaves)
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

    def point_at(self, x: Vec) -> _Point | None:
        """The point at ``x``, if the function has one."""
        return self._by_x.get(x.key())

    def interpolation(self) -> list[tuple[Expr, str]]:
        """The interpolation inequalities between every ordered pair of its points."""
        return [(_rhs(self.kind, self.L, self.mu, pi, pj), f"{self.kind}({i},{j})")
                for i, pi in enumerate(self.points) for j, pj in enumerate(self.points)
                if i != j]

    def text(self) -> str:
        return class_text(self.kind, self.L, self.mu)


class Aggregate:
    r"""The weighted sum :math:`f = \sum_i w_if_i` of some of a PEP's functions, in a class
    of its own (``kind``, ``L``, ``mu`` as for :class:`Function`): its points are the
    points the components share (gradient :math:`\sum_iw_ig_i`, value
    :math:`\sum_iw_if_i`), its inequalities those of its class between them. Necessary
    conditions: see the module docstring (a PEP with an aggregate takes lower certificates
    from explicit functions only)."""

    def __init__(self, components: Sequence[Function], weights: Sequence[Any], kind: str,
                 L: Number, mu: Number = 0) -> None:
        if not components or len(components) != len(weights):
            raise ValueError(f"an aggregate needs one weight per component, got "
                             f"{len(components)} components and {len(weights)} weights")
        self.components = list(components)
        self.weights = [as_fraction(v, "weight") for v in weights]
        if any(v <= 0 for v in self.weights):
            raise ValueError(f"weights must be > 0, got {[str(v) for v in self.weights]}")
        probe = Function(components[0].pep, kind, L, mu)  # validates the class
        self.kind, self.L, self.mu = probe.kind, probe.L, probe.mu

    @property
    def points(self) -> list[_Point]:
        """The shared points, in the first component's order."""
        out = []
        for pt in self.components[0].points:
            pts = [c.point_at(pt.x) for c in self.components]
            if any(p is None for p in pts):
                continue
            g, f = Vec(), Expr()
            for w, p in zip(self.weights, pts, strict=True):
                assert p is not None
                g, f = g + p.g * w, f + p.f * w
            out.append(_Point(pt.x, g, f))
        return out

    def interpolation(self) -> list[tuple[Expr, str]]:
        pts = self.points
        return [(_rhs(self.kind, self.L, self.mu, pi, pj), f"sum:{self.kind}({i},{j})")
                for i, pi in enumerate(pts) for j, pj in enumerate(pts) if i != j]

    def text(self) -> str:
        return class_text(self.kind, self.L, self.mu)
