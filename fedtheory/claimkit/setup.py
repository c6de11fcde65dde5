r"""The set-up card of an experiment claim: the paper's set-up, the authors' code's, this run's.

A verdict on an experiment is fair only on the paper's set-up. A :class:`SetupCard` lists,
for every aspect a referee would ask about (data, model, clients, rounds, local steps, the
participation or dropout mechanism, hyper-parameters, the metric and its thresholds), the
value the paper states (quoted, with where it says so), the value the authors' public code
uses where it is known, and the value of this run (per preset); every row where this run
differs from the paper or the code carries the reason (:attr:`SetupRow.deviation`). The card
goes into the JSON report and the Markdown report beside the verdict.

>>> card = SetupCard(rows=(
...     SetupRow("data", paper="MNIST, CIFAR-10", paper_where="Sec. 6, 'Setup.'",
...              run="scikit-learn digits (8x8)",
...              deviation="no offline MNIST/CIFAR-10: digits ships with scikit-learn"),
...     SetupRow("rounds", paper="not stated", code="500", code_where="options.py --epochs",
...              run={"quick": "60", "full": "500"},
...              deviation={"quick": "the quick preset's budget"}),
... ), code_url="https://github.com/owner/repo")
>>> [r["run"] for r in card.to_dict("quick")["rows"]]
['scikit-learn digits (8x8)', '60']
>>> card.to_dict("full")["rows"][1]["deviation"] is None
True
>>> card.deviations("quick")
['data', 'rounds']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fedtheory.vocabulary import PRESETS

__all__ = ["REQUIRED_ASPECTS", "SetupCard", "SetupRow"]

#: The aspects every experiment claim's card covers (others may be added).
REQUIRED_ASPECTS = ("data", "model", "clients", "rounds", "local steps", "participation",
                    "hyper-parameters", "metric", "threshold")

_PRESETS = PRESETS

PerPreset = str | Mapping[str, str]


def _per_preset(name: str, value: PerPreset | None, preset: str) -> str | None:
    """``value`` for ``preset``: a plain string is the same for every preset; a mapping gives
    each preset its own (a preset it does not name: None)."""
    if value is None or isinstance(value, str):
        return value
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a string or a mapping preset -> string, got "
                        f"{type(value).__name__}")
    return value.get(preset)


@dataclass(frozen=True)
class SetupRow:
    """One aspect of an experiment's set-up.

    Parameters
    ----------
    aspect:
        What this row is about (one of :data:`REQUIRED_ASPECTS`, or another).
    paper:
        The value the paper states, in its words where possible ("not stated" when silent).
    paper_where:
        Where the paper says so (section, figure, the quoted sentence).
    code:
        The value in the authors' public code, when there is code (None: no code, or not
        in it).
    code_where:
        Where in that code (file and line or option).
    run:
        This run's value: one string, or ``{"quick": ..., "full": ...}``.
    deviation:
        Why this run differs from the paper (or from the code where the paper is silent):
        one string, or per preset; None when it does not differ.
    """

    aspect: str
    paper: str
    paper_where: str = ""
    code: str | None = None
    code_where: str | None = None
    run: PerPreset = ""
    deviation: PerPreset | None = None

    def __post_init__(self) -> None:
        if not self.aspect.strip():
            raise ValueError("a set-up row needs an aspect")
        if not self.paper.strip():
            raise ValueError(f"set-up row {self.aspect!r}: say what the paper states (or "
                             "'not stated')")
        for name in ("run", "deviation"):
            value = getattr(self, name)
            if isinstance(value, Mapping):
                unknown = sorted(set(value) - set(_PRESETS))
                if unknown:
                    raise ValueError(f"set-up row {self.aspect!r}: {name} names unknown presets "
                                     f"{unknown} (presets: {list(_PRESETS)})")
        if not _per_preset("run", self.run, "quick") or not _per_preset("run", self.run, "full"):
            raise ValueError(f"set-up row {self.aspect!r}: give this run's value for every "
                             "preset")

    def to_dict(self, preset: str) -> dict[str, Any]:
        return {"aspect": self.aspect, "paper": self.paper, "paper_where": self.paper_where,
                "code": self.code, "code_where": self.code_where,
                "run": _per_preset("run", self.run, preset),
                "deviation": _per_preset("deviation", self.deviation, preset)}


@dataclass(frozen=True)
class SetupCard:
    """An experiment claim's set-up (see the module docstring).

    Parameters
    ----------
    rows:
        One :class:`SetupRow` per aspect.
    code_url:
        The authors' public code, if any (what the ``code`` column was read from, with the
        commit when known).
    sensitivity:
        Other set-ups this claim also runs, labelled as sensitivity runs, and what they
        teach (their numbers are in the checks' data, never in the verdict unless said).
    notes:
        Anything else a referee needs to judge the set-up.
    """

    rows: Sequence[SetupRow]
    code_url: str | None = None
    sensitivity: Sequence[str] = ()
    notes: str = ""
    _aspects: tuple[str, ...] = field(default=(), init=False, repr=False)

    def __post_init__(self) -> None:
        rows = tuple(self.rows)
        if not rows:
            raise ValueError("a set-up card needs at least one row")
        aspects = tuple(r.aspect for r in rows)
        dup = sorted({a for a in aspects if aspects.count(a) > 1})
        if dup:
            raise ValueError(f"set-up card: aspects listed twice: {dup}")
        object.__setattr__(self, "rows", rows)
        object.__setattr__(self, "sensitivity", tuple(self.sensitivity))
        object.__setattr__(self, "_aspects", aspects)

    @property
    def aspects(self) -> tuple[str, ...]:
        return self._aspects

    def missing(self) -> list[str]:
        """The required aspects (:data:`REQUIRED_ASPECTS`) this card does not cover."""
        return [a for a in REQUIRED_ASPECTS if a not in self._aspects]

    def deviations(self, preset: str) -> list[str]:
        """The aspects where ``preset``'s run deviates (with its reason)."""
        return [r.aspect for r in self.rows if _per_preset("deviation", r.deviation, preset)]

    def to_dict(self, preset: str) -> dict[str, Any]:
        return {"code_url": self.code_url,
                "rows": [r.to_dict(preset) for r in self.rows],
                "deviations": self.deviations(preset),
                "sensitivity": list(self.sensitivity), "notes": self.notes}
