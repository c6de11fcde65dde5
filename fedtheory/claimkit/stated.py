r"""What a claim states, in the parts a referee would change: constants, factors, step condition.

A bound such as

.. math:: \mathbb E f(w_{t+1}) - f(w_t) \le -\frac{\eta}{2}\|\nabla f\|^2
          + \frac{\eta^2 L c}{2}\sigma_G^2 \quad\text{if } \eta L(1 + c) \le 1

has named constants (the :math:`\tfrac12` of each term), factors a careless reader might drop
(:math:`c`, :math:`\sigma_G^2`) and a step condition. A claim declares them in a
:class:`Stated`; its checks read them from the context (:meth:`Context.const`,
:meth:`Context.factor`, :meth:`Context.step_limit`) instead of typing the numbers, so that
``fedtheory verify --power`` can run the same checks against **mutants** of the statement
(:class:`Mutant`): each constant moved in the direction that *strengthens* the statement (by
:math:`7/10` where smaller is stronger, :math:`13/10` where larger is stronger), each factor
dropped (replaced by 1), the step condition relaxed by 2. A check that still passes on a
mutant could not have told the stated formula from a plausible, stronger mistake.

Which direction strengthens a constant depends on where it sits. The default follows the
claim's kind: a multiplicative constant of an upper bound is stronger when smaller, of a
lower bound when larger. A rate or an exponent (:math:`e^{-c\beta\delta^2t}`, a contraction
factor's :math:`\mu`, a base :math:`c` in :math:`\log_c T`) is stronger the other way: the
claim declares it (``Stated(..., stronger={"rate": "larger"})``). A mutant that loosens the
statement proves nothing when it "still holds".

:class:`Erratum` says what kind of error a refutation found, as a referee would, and quotes
the line of the seed it concerns.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import sympy as sp

from fedtheory import vocabulary

__all__ = ["DIRECTIONS", "ERRATUM_KINDS", "MUTANT_KINDS", "Erratum", "Mutant", "Stated",
           "exact_like"]

#: The kinds of mutant (see the module docstring).
MUTANT_KINDS = vocabulary.MUTANT_KINDS

#: Which way a constant moves to strengthen the statement.
DIRECTIONS = vocabulary.STRONGER_DIRECTIONS

#: The kinds of error a refutation may find, as a referee names them:
#:
#: * ``typo``: the intended statement is evident and holds (a sign, an index, a symbol);
#: * ``wrong constant``: the form holds, a constant does not;
#: * ``proof gap``: the proof has a step that does not follow, and the statement fails as
#:   printed (the corrected statement names the missing step);
#: * ``omitted hypothesis``: the statement is true once a hypothesis is added; the erratum names
#:   it (``hypothesis``) and quotes where the paper relies on it;
#: * ``false statement``: no reading of the statement holds;
#: * ``not reproduced``: an experiment whose outcome differs under a set-up as faithful as the
#:   machine allows (its set-up card lists every deviation).
#:
#: (their one list, with what each means, is :data:`fedtheory.vocabulary.ERRATUM_MEANING`).
ERRATUM_KINDS = vocabulary.ERRATUM_KINDS


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
    stronger:
        ``{constant: "smaller" | "larger"}``: the direction that strengthens the statement, for
        the constants where it is not the kind's default (smaller for an upper bound's
        multiplicative constants, larger for a lower bound's): rates and exponents.

    >>> s = Stated({"half": "1/2", "rate": "1/2"}, factors=("sigma",), step="eta L <= 1",
    ...            stronger={"rate": "larger"})
    >>> s.constants["half"], [m.name for m in s.mutants("upper bound")]
    (Fraction(1, 2), ['half x 7/10', 'rate x 13/10', 'sigma dropped', 'step condition relaxed x 2'])
    >>> Stated({"c": 1}, stronger={"d": "larger"})
    Traceback (most recent call last):
    ...
    ValueError: stronger names constants that are not declared: ['d'] (declared: ['c'])
    """

    constants: Mapping[str, Any] = field(default_factory=dict)
    factors: tuple[str, ...] = ()
    step: str | None = None
    stronger: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "constants",
                           {str(k): _exact(str(k), v) for k, v in dict(self.constants).items()})
        object.__setattr__(self, "factors", tuple(self.factors))
        names = list(self.constants) + list(self.factors)
        if len(set(names)) != len(names):
            raise ValueError(f"constant and factor names must be distinct, got {names}")
        stronger = {str(k): v for k, v in dict(self.stronger).items()}
        unknown = sorted(set(stronger) - set(self.constants))
        if unknown:
            raise ValueError(f"stronger names constants that are not declared: {unknown} "
                             f"(declared: {sorted(self.constants)})")
        bad = {k: v for k, v in stronger.items() if v not in DIRECTIONS}
        if bad:
            raise ValueError(f"stronger must map constants to one of {DIRECTIONS}, got {bad}")
        object.__setattr__(self, "stronger", stronger)

    def direction(self, constant: str, kind: str) -> str:
        """Which way ``constant`` moves to strengthen a claim of ``kind`` (a ClaimKind value):
        the declared direction, else the kind's default (larger for a lower bound, smaller
        otherwise)."""
        if constant not in self.constants:
            raise ValueError(f"no constant {constant!r} declared (declared: "
                             f"{sorted(self.constants)})")
        default = "larger" if kind == "lower bound" else "smaller"
        return self.stronger.get(constant, default)

    def mutants(self, kind: str) -> list[Mutant]:
        """The mutants of this statement for a claim of ``kind`` (a ClaimKind value): each
        constant moved the way that strengthens the statement, each factor dropped, the step
        condition relaxed."""
        scale = {"smaller": Fraction(7, 10), "larger": Fraction(13, 10)}
        out = [Mutant("constant", c, scale[self.direction(c, kind)]) for c in self.constants]
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
    """What kind of error a refutation found (:data:`ERRATUM_KINDS`), what is wrong, the line of
    the seed it concerns, and whether the intended statement holds (``None``: not known).

    Parameters
    ----------
    kind:
        One of :data:`ERRATUM_KINDS`.
    where:
        What is wrong and where, in a referee's words.
    quote:
        The seed's own words the erratum concerns, verbatim (a sentence or a formula as
        printed), so that an author finds the line (every registered erratum has one: the
        registry test holds them to it).
    location:
        Where the quote sits in the seed (section, equation, page).
    hypothesis:
        For an ``omitted hypothesis``: the hypothesis that makes the statement true.
    relied_on:
        For an ``omitted hypothesis``: the seed's words where it relies on that hypothesis
        (verbatim), if any.
    intended_holds:
        Whether the intended statement holds (True, False, or None: not known).

    >>> Erratum("omitted hypothesis", "Lemma 2", quote="...", location="Sec. 4")
    Traceback (most recent call last):
    ...
    ValueError: an 'omitted hypothesis' erratum names the hypothesis (hypothesis=...)
    """

    kind: str
    where: str
    quote: str = ""
    location: str = ""
    hypothesis: str | None = None
    relied_on: str | None = None
    intended_holds: bool | None = None

    def __post_init__(self) -> None:
        if self.kind not in ERRATUM_KINDS:
            raise ValueError(f"erratum kind must be one of {ERRATUM_KINDS}, got {self.kind!r}")
        if self.kind == "omitted hypothesis" and not (self.hypothesis or "").strip():
            raise ValueError("an 'omitted hypothesis' erratum names the hypothesis "
                             "(hypothesis=...)")

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "where": self.where, "quote": self.quote,
                "location": self.location, "hypothesis": self.hypothesis,
                "relied_on": self.relied_on, "intended_holds": self.intended_holds}


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
