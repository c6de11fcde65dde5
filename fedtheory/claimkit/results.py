"""The records of a verification: a check's result and a claim's (the report entry they
write and read back, field by field as :mod:`fedtheory.vocabulary.record` declares them), and
the rules that combine check results into a verdict, a grade and a tightness
(:mod:`fedtheory.verdicts`)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from fedtheory import verdicts, vocabulary
from fedtheory.claimkit.evidence import Figure
from fedtheory.vocabulary import ClaimKind, Verdict
from fedtheory.vocabulary.record import CHECK_WHEN_SET, CLAIM_FIELDS, RESULT_FIELDS

__all__ = ["BOUND_KINDS", "CheckResult", "ClaimResult", "combine", "grade", "tightness"]


@dataclass
class CheckResult:
    """A check's evidence, with its name, kind and timing, ready for a report."""

    name: str
    kind: str
    passed: bool | None
    measured: Any
    theoretical: Any
    detail: str
    tolerance: float | None = None
    alpha: float | None = None
    counterexample: dict[str, Any] | None = None
    figures: list[str] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None
    neutral: bool = False
    ratio: float | None = None
    instance: dict[str, Any] | None = None
    proof: str | None = None
    search: str | None = None
    #: The stated constants, factors and step condition the check read (see ``--power``).
    reads: list[str] = field(default_factory=list)
    #: Those of them whose value the running mutant changed where the check read them.
    mutated: list[str] = field(default_factory=list)
    #: Why it could not decide, when ``passed`` is None (``"unproven"``, ...).
    undecided: str | None = None
    #: The convex programs it solved (problem, solver, status): :mod:`fedtheory.solver_log`.
    solves: list[dict[str, Any]] = field(default_factory=list)
    #: The statistical tests it decided on (:attr:`Evidence.tests`).
    tests: list[dict[str, Any]] = field(default_factory=list)
    #: Its grade (:data:`fedtheory.verdicts.CHECK_GRADES`: ``consistent (low power)`` for a
    #: pass that could not have failed, ``not testable`` for a check that cannot
    #: discriminate here), or None (a plain outcome).
    grade: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The check's report entry: :data:`fedtheory.vocabulary.record.CHECK_FIELDS`, those
        written only when set (``grade``: older reports lack it) left out when None."""
        d = _jsonable(asdict(self))
        for name in CHECK_WHEN_SET:
            if d[name] is None:
                del d[name]
        return d


@dataclass
class ClaimResult:
    """The verdict on a claim and the evidence behind it."""

    id: str
    family: str
    seed_ref: str
    kind: str
    statement: str
    verdict: Verdict
    checks: list[CheckResult]
    counterexample: dict[str, Any] | None
    preset: str
    seed: int
    seconds: float
    title: str = ""
    derivation: str = ""
    finding: str = ""
    #: For a bound: the largest ratio over its checks, ``{"ratio", "check", "instance"}``.
    tightness: dict[str, Any] | None = None
    #: ``fedtheory verify --power``: one entry per mutant (see :mod:`fedtheory.claimkit.power`).
    power: list[dict[str, Any]] | None = None
    erratum: dict[str, Any] | None = None
    #: An experiment claim's set-up card (:class:`~fedtheory.claimkit.setup.SetupCard`) for the
    #: preset run.
    setup: dict[str, Any] | None = None
    #: Where the claim restates the paper's statement rather than testing it as printed, and
    #: why (empty when it tests it as printed).
    restatement: str = ""
    #: ``fedtheory verify --certify``: the certified worst case of the claim's one-step
    #: inequality (:func:`fedtheory.certify.certify`); None when not asked.
    certified: dict[str, Any] | None = None
    #: The figures its checks asked for and nobody drew yet, as ``(check name, figure)``: the
    #: layer above draws them (:func:`fedtheory.plotting.figures.draw_result`, which adds
    #: their paths to the checks' ``figures``). Not part of the report.
    drawings: list[tuple[str, Figure]] = field(default_factory=list, repr=False)
    #: The grade of the verdict (:func:`fedtheory.verdicts.grade_of`): ``confirmed`` or
    #: ``consistent (low power)`` for a confirmed claim, ``not testable`` for an
    #: inconclusive one whose deciding checks all are; None otherwise.
    grade: str | None = None
    #: The readings the claim declares (:mod:`fedtheory.claimkit.readings`), each with its own
    #: verdict: ``{"name", "lines", "text", "checks", "verdict", "grade"}``; None: one
    #: reading.
    readings: list[dict[str, Any]] | None = None

    @property
    def errors(self) -> list[CheckResult]:
        """The checks that raised (listed beside a refutation, or the cause of ``error``)."""
        return [c for c in self.checks if c.error is not None]

    def to_dict(self) -> dict[str, Any]:
        """The report entry (without what the writer adds: ``origin``, ``digest``): the fields
        of :data:`fedtheory.vocabulary.record.CLAIM_FIELDS`, in their order."""
        out: dict[str, Any] = {}
        for f in CLAIM_FIELDS:
            if f.by_report:
                continue
            write = _WRITE.get(f.name)
            value = write(self) if write is not None else _jsonable(getattr(self, f.name))
            if value is not None or not f.when_set:
                out[f.name] = value
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ClaimResult:
        """A claim's result read back from a schema-valid report entry (the inverse of
        :meth:`to_dict`); what its checks imply (the verdict, counterexample, tightness,
        grade, the readings' verdicts) is recomputed from them (:func:`combine`), never read
        from the entry."""
        from fedtheory.claimkit.readings import Reading, reading_verdicts

        names = {f.name for f in fields(CheckResult)}
        checks = [CheckResult(**{k: v for k, v in c.items() if k in names})
                  for c in d["checks"]]
        verdict, counterexample = combine(checks)
        readings = d.get("readings")
        if readings is not None:  # each reading's verdict recomputed from its checks too
            readings = reading_verdicts([Reading(r["name"], r["lines"], r["text"],
                                                 tuple(r["checks"]), r.get("kind", "reading"))
                                         for r in readings], checks)
        known = {"checks": checks, "verdict": verdict, "counterexample": counterexample,
                 "tightness": tightness(ClaimKind(d["kind"]), checks), "grade": grade(checks),
                 "readings": readings}
        values = {f.name: known[f.name] if f.name in known else f.read(d)
                  for f in CLAIM_FIELDS if f.name in RESULT_FIELDS}
        values["seconds"] = float(values["seconds"])
        return cls(**values)


#: How :meth:`ClaimResult.to_dict` writes the fields that are not their value made
#: JSON-ready.
_WRITE: dict[str, Callable[[ClaimResult], Any]] = {
    "verdict": lambda r: r.verdict.value,
    "checks": lambda r: [c.to_dict() for c in r.checks],
    "errors": lambda r: [{"check": c.name, "detail": c.detail} for c in r.errors],
    "seconds": lambda r: round(r.seconds, 3),
}


#: The claim kinds whose checks report a tightness ratio.
BOUND_KINDS = tuple(ClaimKind(k) for k in vocabulary.BOUND_KINDS)


def tightness(kind: ClaimKind, results: Sequence[CheckResult]) -> dict[str, Any] | None:
    """A bound claim's tightness: the largest ratio any of its checks reached, with the check
    and the instance (None for other kinds, or when no check reported a ratio)."""
    if kind not in BOUND_KINDS:
        return None
    k = verdicts.tightest([r.ratio for r in results])
    if k is None:
        return None
    best = results[k]
    return {"ratio": best.ratio, "check": best.name, "instance": best.instance}


def combine(results: Sequence[CheckResult]) -> tuple[Verdict, dict[str, Any] | None]:
    """Combine check results: refuted > error > inconclusive > confirmed.

    A failed check refutes the claim even when another check raised: the counterexample is
    kept and the errors are listed beside it (:attr:`ClaimResult.errors`). ``error`` means that
    a check raised and nothing refuted the claim.
    """
    verdict, k = verdicts.verdict_of(_outcomes(results))
    if k is None:
        return Verdict(verdict), None
    ce = dict(results[k].counterexample or {})
    ce.setdefault("check", results[k].name)
    return Verdict(verdict), ce


def _outcomes(results: Sequence[CheckResult]) -> list[tuple[Any, ...]]:
    return [(r.passed, r.error is not None, r.neutral, r.grade) for r in results]


def grade(results: Sequence[CheckResult]) -> str | None:
    """The grade of the verdict :func:`combine` gives (:func:`fedtheory.verdicts.grade_of`)."""
    return verdicts.grade_of(_outcomes(results))


def _jsonable(obj: Any) -> Any:
    """Turn numpy scalars/arrays, sympy numbers, paths and tuples into JSON-ready values."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):  # np.float64 is a float subclass: return a plain float
        return float(obj) if np.isfinite(obj) else repr(float(obj))
    if isinstance(obj, np.generic):
        return _jsonable(obj.item())
    if isinstance(obj, np.ndarray):
        return [_jsonable(x) for x in obj.tolist()] if obj.ndim else _jsonable(obj.item())
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(x) for x in obj]
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, enum.Enum):
        return obj.value
    try:  # sympy numbers and other numeric types
        return float(obj)
    except (TypeError, ValueError):
        return str(obj)
