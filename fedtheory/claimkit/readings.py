r"""Readings: where a seed admits more than one reading of a statement, each gets a verdict.

A seed may print a definition one way and name or use it another way in the same text
(seed 000 prints U-MIFA's memory row as :math:`\frac1{p_i}\Delta_i - (\frac1{p_i}-1)G^{(i)}_{t-1}`
at lines 22 and 47, and names the method SAGA at lines 115-121, 189 and 203), index a
quantity ambiguously, or leave a constant unstated. A claim then declares its readings, each
with the seed's lines that support it and the checks that test it::

    Claim(..., readings=(
        Reading("as printed", lines="22, 47", text="U-MIFA's row as printed",
                checks=("umifam_best_p0.1",)),
        Reading("SAGA", lines="115-121, 189, 203", text="U-MIFA is SAGA",
                checks=("saga_p0.1",)),
    ))

Each reading's verdict and grade are those of its own checks, by the rules of
:mod:`fedtheory.verdicts` (:func:`reading_verdicts`); the claim's verdict stays the
combination of all its checks (a reading refuted as printed refutes the claim as printed),
and the report says which readings hold. The erratum then sits on the line that is wrong (a
misprinted definition), not on a statement that holds under the seed's own reading.

>>> r = Reading("as printed", lines="22, 47", text="the row as printed", checks=("a",))
>>> r.to_dict()["lines"]
'22, 47'
>>> Reading("x", lines="", text="t", checks=("a",))
Traceback (most recent call last):
...
ValueError: reading 'x': lines must name the seed's lines that support it, got ''
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fedtheory import verdicts, vocabulary

__all__ = ["KINDS", "Reading", "check_readings", "parts_label", "reading_verdicts",
           "readings_text"]

#: What a declared part is: a reading of the statement, or one of the settings it spans.
KINDS = vocabulary.READING_KINDS


@dataclass(frozen=True)
class Reading:
    """One reading of a statement: its name, the seed's lines that support it, what it takes
    the statement to mean, and the names of the checks that test it.

    Parameters
    ----------
    name:
        A short name (``"as printed"``, ``"SAGA"``).
    lines:
        The seed's lines (or places) that support this reading, as a referee would cite them.
    text:
        What the statement means under this reading, in a sentence.
    checks:
        The claim's checks that test it (names); a check may serve several readings.
    kind:
        ``"reading"`` (a way to read the statement), or ``"setting"``: a part of a statement
        that spans settings (clustered / general, several panels), given its own verdict in
        the same way, so that the report says which settings carry the claim's verdict.
    """

    name: str
    lines: str
    text: str
    checks: tuple[str, ...] = ()
    kind: str = "reading"

    def __post_init__(self) -> None:
        for field_name in ("name", "lines", "text"):
            value = getattr(self, field_name)
            if not isinstance(value, str) or not value.strip():
                what = ("must name the seed's lines that support it" if field_name == "lines"
                        else "must be a non-empty string")
                raise ValueError(f"reading {self.name!r}: {field_name} {what}, got {value!r}")
        if self.kind not in KINDS:
            raise ValueError(f"reading {self.name!r}: kind must be one of {KINDS}, got "
                             f"{self.kind!r}")
        object.__setattr__(self, "checks", tuple(self.checks))
        if not self.checks or not all(isinstance(c, str) and c for c in self.checks):
            raise ValueError(f"reading {self.name!r}: checks must name the claim's checks "
                             f"that test it, got {self.checks!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "lines": self.lines, "text": self.text,
                "checks": list(self.checks), "kind": self.kind}


def check_readings(readings: Sequence[Reading], check_names: Sequence[str]) -> None:
    """Raise when a reading names a check the claim does not have, or two share a name."""
    names = [r.name for r in readings]
    if len(set(names)) != len(names):
        raise ValueError(f"readings must have distinct names, got {names}")
    for r in readings:
        unknown = [c for c in r.checks if c not in check_names]
        if unknown:
            raise ValueError(f"reading {r.name!r} names checks the claim does not have: "
                             f"{unknown} (its checks: {list(check_names)})")


def reading_verdicts(readings: Sequence[Reading], results: Sequence[Any]
                     ) -> list[dict[str, Any]]:
    """Each reading with the verdict and grade of its own checks among ``results`` (check
    results, or their dicts); a reading none of whose checks ran is ``inconclusive``.

    >>> from types import SimpleNamespace as C
    >>> res = [C(name="a", passed=False, error=None, neutral=False, grade=None),
    ...        C(name="b", passed=True, error=None, neutral=False, grade=None)]
    >>> [(d["name"], d["verdict"], d["grade"]) for d in reading_verdicts(
    ...     [Reading("printed", "22", "t", ("a",)), Reading("SAGA", "115", "t", ("b",))], res)]
    [('printed', 'refuted', None), ('SAGA', 'confirmed', 'confirmed')]
    """
    def get(c: Any, key: str) -> Any:
        return c.get(key) if isinstance(c, dict) else getattr(c, key, None)

    out = []
    for r in readings:
        mine = [c for c in results if get(c, "name") in r.checks]
        outcomes = [(get(c, "passed"), get(c, "error") is not None, bool(get(c, "neutral")),
                     get(c, "grade")) for c in mine]
        verdict, _ = verdicts.verdict_of(outcomes)
        out.append({**r.to_dict(), "verdict": verdict, "grade": verdicts.grade_of(outcomes)})
    return out


def readings_text(readings: Sequence[dict[str, Any]]) -> str:
    """One line saying which readings hold: ``"as printed (lines 22, 47): refuted; SAGA
    (lines 115-121): confirmed"``.

    >>> readings_text([{"name": "printed", "lines": "22", "verdict": "refuted", "grade": None}])
    'printed (lines 22): refuted'
    >>> readings_text([{"name": "general setting", "lines": "Fig. 3", "verdict": "refuted",
    ...                 "grade": None, "kind": "setting"}])
    'general setting (Fig. 3): refuted'
    """
    parts = []
    for d in readings:
        g = d.get("grade")
        shown = d["verdict"] if g in (None, verdicts.CONFIRMED) else f"{d['verdict']} ({g})"
        where = f"lines {d['lines']}" if d.get("kind", "reading") == "reading" else d["lines"]
        parts.append(f"{d['name']} ({where}): {shown}")
    return "; ".join(parts)


def parts_label(readings: Sequence[dict[str, Any]]) -> str:
    """How a report names a claim's declared parts: ``"readings"``, ``"settings"``, or
    ``"readings and settings"``.

    >>> parts_label([{"kind": "setting"}]), parts_label([{"name": "x"}])
    ('settings', 'readings')
    """
    kinds = {d.get("kind", "reading") for d in readings}
    return " and ".join(f"{k}s" for k in KINDS if k in kinds)
