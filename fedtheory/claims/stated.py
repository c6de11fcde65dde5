r"""What a claim states, in the parts a referee would change: constants, factors, step condition.

A bound such as

.. math:: \mathbb E f(w_{t+1}) - f(w_t) \le -\frac{\eta}{2}\|\nabla f\|^2
          + \frac{\eta^2 L c}{2}\sigma_G^2 \quad\text{if } \eta L(1 + c) \le 1

has named constants (the :math:`\tfrac12` of each term), factors a careless reader might drop
(:math:`c`, :math:`\sigma_G^2`) and a step condition. A claim declares them in a
:class:`Stated`; its checks read them from the context (:meth:`Context.const`,
:meth:`Context.factor`, :meth:`Context.step_limit`) instead of typing the numbers, so that
``fedtheory verify --power`` can run the same checks against **mutants** of the statement
(:class:`Mutant`): each constant :math:`\times 7/10` (an upper bound; :math:`\times 13/10` for a
lower bound), each factor dropped (replaced by 1), the step condition relaxed by 2. A check that
still passes on a mutant could not have told the stated formula from a plausible mistake.

:class:`Erratum` says what kind of error a refutation found, as a referee would.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import sympy as sp

__all__ = ["ERRATUM_KINDS", "MUTANT_KINDS", "Erratum", "Mutant", "Stated", "exact_like"]

#: The kinds of mutant (see the module docstring).
MUTANT_KINDS = ("constant", "factor", "step")

#: The kinds of error a refutation may find.
ERRATUM_KINDS = ("typo", "wrong constant", "false statement", "proof gap")


def _exact(name: str, value: Any) -> Fraction:
    """A declared constant as an exact rational (floats are taken at their exact value only
    when they are short decimals: ``0.5`` -> 1/2)."""
    if isinstance(value, bool):
        raise ValueError(f"constant {name!r} must be a number, got {value!r}")
    if isinstance(value, (int, Fraction)):
        return Fraction(value)
    if isinstance(value, float):
        frac = Fraction(value).limit_denominator(10**6)
        if float(frac) != value:
            raise ValueError(f"constant {name!r} must be rational (give a Fraction), got {value!r}")
        return frac
    if isinstance(value, str):
        try:
            return Fraction(value)
        except ValueError:
            pass
    raise ValueError(f"constant {name!r} must be an int, Fraction or short decimal, got {value!r}")


@dataclass(frozen=True)
class Stated:
    """The stated side of a claim: named constants, droppable factors, a step condition.

    Parameters
    ----------
    constants:
        ``{name: value}``; the checks read ``ctx.const(name)`` (an exact :class:`Fraction`).
    factors:
        Names of factors the checks pass through ``ctx.factor(name, value)``.
    step:
        A name for the step-size condition, if the statement has one; the checks take their
        largest step from ``ctx.step_limit(eta_max)``.

    >>> s = Stated({"half": "1/2", "c": 2}, factors=("sigma",), step="eta L (1 + c) <= 1")
    >>> s.constants["half"], [m.name for m in s.mutants("upper bound")]
    (Fraction(1, 2), ['half x 7/10', 'c x 7/10', 'sigma dropped', 'step condition relaxed x 2'])
    """

    constants: Mapping[str, Any] = field(default_factory=dict)
    factors: tuple[str, ...] = ()
    step: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "constants",
                           {str(k): _exact(str(k), v) for k, v in dict(self.constants).items()})
        object.__setattr__(self, "factors", tuple(self.factors))
        names = list(self.constants) + list(self.factors)
        if len(set(names)) != len(names):
            raise ValueError(f"constant and factor names must be distinct, got {names}")

    def mutants(self, kind: str) -> list[Mutant]:
        """The mutants of this statement for a claim of ``kind`` (a ClaimKind value)."""
        scale = Fraction(13, 10) if kind == "lower bound" else Fraction(7, 10)
        out = [Mutant("constant", c, scale) for c in self.constants]
        out += [Mutant("factor", f) for f in self.factors]
        if self.step is not None:
            out.append(Mutant("step", self.step, Fraction(2)))
        return out


@dataclass(frozen=True)
class Mutant:
    """One plausible mistake in a statement: a constant scaled, a factor dropped, or the step
    condition relaxed (its limit multiplied by ``scale``)."""

    kind: str
    target: str
    scale: Fraction = Fraction(1)

    def __post_init__(self) -> None:
        if self.kind not in MUTANT_KINDS:
            raise ValueError(f"mutant kind must be one of {MUTANT_KINDS}, got {self.kind!r}")

    @property
    def name(self) -> str:
        if self.kind == "constant":
            return f"{self.target} x {self.scale}"
        if self.kind == "factor":
            return f"{self.target} dropped"
        return f"step condition relaxed x {self.scale}"


@dataclass(frozen=True)
class Erratum:
    """What kind of error a refutation found, where, and whether the intended statement holds
    (``None``: not known)."""

    kind: str
    where: str
    intended_holds: bool | None = None

    def __post_init__(self) -> None:
        if self.kind not in ERRATUM_KINDS:
            raise ValueError(f"erratum kind must be one of {ERRATUM_KINDS}, got {self.kind!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "where": self.where, "intended_holds": self.intended_holds}


def exact_like(c: Fraction, like: Any) -> Any:
    """A stated constant ``c`` (exact, as :meth:`Context.const` gives it) in the arithmetic of
    ``like``: a sympy Rational beside sympy expressions, the Fraction itself beside Fractions
    and integers, a float otherwise (floats, arrays).

    >>> exact_like(Fraction(7, 10), sp.Symbol("x")), exact_like(Fraction(7, 10), 0.5)
    (7/10, 0.7)
    >>> exact_like(Fraction(7, 10), Fraction(1, 2))
    Fraction(7, 10)
    """
    if isinstance(like, sp.Basic):
        return sp.Rational(c.numerator, c.denominator)
    if isinstance(like, (Fraction, int, np.integer)) and not isinstance(like, bool):
        return c
    return float(c)
