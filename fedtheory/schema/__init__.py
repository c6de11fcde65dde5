r"""The JSON report as untrusted input: its one schema, and what a report entry must agree with.

A report (``fedtheory verify --json``, the run record ``.fedtheory/last_run.json``) is read back
by ``verify --resume``, ``show`` and ``catalogue --from``. What it says is never taken on trust:

1. **Structure** (:data:`REPORT_SCHEMA`, JSON Schema 2020-12, checked with ``jsonschema``): every
   field of the document, of each claim entry, check, erratum, set-up card and power entry,
   with its type; unknown fields are refused. A file that fails is refused as a whole
   (:class:`ReportError` names the file, the claim and the field). This is the one place the
   format is written down: a new field of :class:`~fedtheory.claimkit.core.CheckResult` or of
   ``ClaimResult.to_dict`` is one edit here (``tests/test_schema.py`` fails until it is made).
2. **Consistency** (:func:`audit`): what can be recomputed from the stored checks is recomputed
   (:func:`derived`: the verdict, the counterexample, the errors, the tightness; the same
   rules as :func:`fedtheory.claimkit.core.combine` and :func:`~fedtheory.claimkit.core.tightness`,
   which ``tests/test_schema.py`` holds this copy to), and each check must be one
   :meth:`Claim.verify <fedtheory.claimkit.core.Claim.verify>` can produce (a failed check
   carries the command that re-runs it; a check that raised or a figure decided nothing; a
   convex check solved something; a refuted claim has no power table). The **digest** of each
   entry (:func:`digest`, written with it) detects an entry edited after it was written (a
   digest is not a signature: whoever recomputes it can forge it, which is why everything
   derivable is recomputed as well). The **definition** (:func:`definition_of`: ids, texts,
   erratum, set-up card, the checks' names and kinds, the mutants) must be the claim's as the
   registry defines it now, else the entry belongs to another version of the claim.

An entry that fails 2 is never used: ``--resume`` runs the claim again (with a warning naming
the file, the claim and the field), ``show`` does not show its verdict, ``catalogue`` refuses
the report.

>>> derived({"kind": "identity", "checks": [
...     {"name": "a", "passed": True, "neutral": False, "error": None, "ratio": None,
...      "counterexample": None, "detail": ""},
...     {"name": "b", "passed": False, "neutral": False, "error": None, "ratio": None,
...      "counterexample": {"x": 1}, "detail": ""}]})["verdict"]
'refuted'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fedtheory import verdicts, vocabulary
from fedtheory.vocabulary import record

__all__ = [
    "DEFINITION_FIELDS",
    "REPORT_FORMAT",
    "REPORT_SCHEMA",
    "ReportError",
    "audit",
    "definition_digest",
    "definition_of",
    "derived",
    "digest",
    "entry_definition",
    "field_path",
    "file_source",
    "grades_of",
    "mutants_of",
    "replay_command_text",
    "replay_shown",
    "summary_of",
    "validate",
]

#: The report format this version writes and reads (the document's ``version``).
REPORT_FORMAT = "5"

# The vocabulary's values (fedtheory.vocabulary, which imports no claim machinery: reading a
# report needs no sympy), under the names this module has always given them.
VERDICTS = vocabulary.VERDICTS
CLAIM_KINDS = vocabulary.CLAIM_KINDS
BOUND_KINDS = vocabulary.BOUND_KINDS
CHECK_KINDS = vocabulary.CHECK_KINDS
PRESETS = vocabulary.PRESETS
ERRATUM_KINDS = vocabulary.ERRATUM_KINDS
MUTANT_KINDS = vocabulary.MUTANT_KINDS
OUTCOMES = vocabulary.POWER_OUTCOMES

_STR: dict[str, Any] = {"type": "string"}
_STR_OR_NULL: dict[str, Any] = {"type": ["string", "null"]}
_OBJ_OR_NULL: dict[str, Any] = {"type": ["object", "null"]}
_STRINGS: dict[str, Any] = {"type": "array", "items": _STR}


def _object(properties: Mapping[str, Any], optional: Sequence[str] = (),
            closed: bool = True) -> dict[str, Any]:
    """An object schema: every property required except ``optional``; no others if
    ``closed``."""
    return {"type": "object", "properties": dict(properties),
            "required": [k for k in properties if k not in optional],
            "additionalProperties": not closed}


def _or_null(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (an object's) or null: the object keywords apply to objects only."""
    return {**schema, "type": ["object", "null"]}


REPLAY_SCHEMA = _object({"command": _STR, "python": _STR})  # a counterexample's replay
#: A counterexample: open (each check says what it found), but the fields readers use typed.
COUNTEREXAMPLE_SCHEMA: dict[str, Any] = {
    "type": ["object", "null"],
    "properties": {"replay": REPLAY_SCHEMA},  # its other fields are the check's own
}

def _fields_of(properties: Mapping[str, Any], names: Sequence[str], what: str
               ) -> Mapping[str, Any]:
    """``properties``, which must name exactly the fields ``names`` of the record
    (:mod:`fedtheory.vocabulary.record`): a field added there and not here fails at import."""
    if set(properties) != set(names):
        raise RuntimeError(f"the schema of {what} and fedtheory.vocabulary.record disagree: "
                           f"{sorted(set(properties) ^ set(names))}")
    return properties


CHECK_SCHEMA = _object(_fields_of({
    "name": {"type": "string", "minLength": 1},
    "kind": {"enum": list(CHECK_KINDS)},
    "passed": {"type": ["boolean", "null"]},
    "measured": {},
    "theoretical": {},
    "detail": _STR,
    "tolerance": {"type": ["number", "null"]},
    "alpha": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
    "counterexample": COUNTEREXAMPLE_SCHEMA,
    "figures": _STRINGS,
    "seconds": {"type": "number", "minimum": 0},
    "error": _STR_OR_NULL,
    "neutral": {"type": "boolean"},
    "ratio": {"type": ["number", "null"]},
    "instance": _OBJ_OR_NULL,
    "proof": _STR_OR_NULL,
    "search": _STR_OR_NULL,
    "reads": _STRINGS,
    "mutated": _STRINGS,
    "undecided": _STR_OR_NULL,
    "solves": {"type": "array", "items": _object(
        {"problem": _STR, "solver": _STR, "status": _STR})},
    "tests": {"type": "array", "items": {"type": "object"}},
    "grade": {"enum": list(verdicts.CHECK_GRADES)},
}, record.CHECK_FIELDS, "a check"), optional=record.CHECK_WHEN_SET)

#: A declared reading's verdict (:mod:`fedtheory.claimkit.readings`).
READING_SCHEMA = _object({
    "name": _STR, "lines": _STR, "text": _STR, "checks": _STRINGS,
    "kind": {"enum": list(vocabulary.READING_KINDS)},
    "verdict": {"enum": list(VERDICTS)},
    "grade": {"enum": [*verdicts.GRADES, None]},
})

ERRATUM_SCHEMA = _object({
    "kind": {"enum": list(ERRATUM_KINDS)},
    "where": _STR,
    "quote": _STR,
    "location": _STR,
    "hypothesis": _STR_OR_NULL,
    "relied_on": _STR_OR_NULL,
    "intended_holds": {"type": ["boolean", "null"]},
})

SETUP_SCHEMA = _object({
    "code_url": _STR_OR_NULL,
    "rows": {"type": "array", "items": _object({
        "aspect": _STR,
        "paper": _STR,
        "paper_where": _STR,
        "code": _STR_OR_NULL,
        "code_where": _STR_OR_NULL,
        "run": _STR_OR_NULL,
        "deviation": _STR_OR_NULL,
    })},
    "deviations": _STRINGS,
    "sensitivity": _STRINGS,
    "notes": _STR,
})

POWER_SCHEMA = _object({
    "mutant": _STR,
    "kind": {"enum": list(MUTANT_KINDS)},
    "target": _STR,
    "scale": _STR,
    "outcome": {"enum": list(OUTCOMES)},
    "by": _STRINGS,
    "instance": _OBJ_OR_NULL,
    "statement_unchanged": {"type": "boolean"},
}, optional=("statement_unchanged",))

#: ``verify --certify``'s entry (:func:`fedtheory.certify.certify`); open beyond the
#: fields every status has (an instance carries its parameters and both certificates).
CERTIFIED_STATUSES = vocabulary.CERTIFIED_STATUSES
_NUM_OR_NULL, _BOOL_OR_NULL = {"type": ["number", "null"]}, {"type": ["boolean", "null"]}
_COUNT = {"type": "integer", "minimum": 0}
CERTIFIED_SCHEMA = _object({
    "status": {"enum": list(CERTIFIED_STATUSES)},
    "ratio": _NUM_OR_NULL,
    "lower": _STR_OR_NULL,
    "upper": _STR_OR_NULL,
    "instances": {"type": "array", "items": _object({
        "params": {"type": "object"},
        "status": {"enum": list(CERTIFIED_STATUSES)},
        "stated": _STR,
        "lower": _STR_OR_NULL,
        "upper": _STR_OR_NULL,
        "ratio": _NUM_OR_NULL,
        # the class certified, and the certificates in exact form (`fedtheory recheck`)
        "function_class": _STR,
        "certificate": {"type": "object"},
    }, optional=("function_class", "certificate"), closed=False)},
    "solver": _STR_OR_NULL,
    "seconds": {"type": "number", "minimum": 0},
    "reason": _STR,
    "at": _OBJ_OR_NULL,
    "finding": _STR,
    "refuted": _STR,
    "counterexample": _OBJ_OR_NULL,
    "closed_form": _object({"text": _STR, "holds": {"type": "boolean"}, "instances": _COUNT,
                            "exactly": _COUNT}, optional=("instances", "exactly"), closed=False),
    "derived": {"type": ["array", "null"], "items": {"type": "object", "properties": {
        "derivation": _STR_OR_NULL, "n": {"type": ["integer", "string", "null"]},
        "parameter": _STR_OR_NULL,
        "attained": _BOOL_OR_NULL, "closed_form_equal": _BOOL_OR_NULL}}},
    "function_class": _STR_OR_NULL,
}, optional=("reason", "at", "finding", "refuted", "counterexample", "closed_form", "derived",
             "function_class"), closed=False)

CLAIM_SCHEMA = _object(_fields_of({
    "id": {"type": "string", "pattern": r"^[^.\s]+(\.[^.\s]+)+$"},
    "family": {"type": "string", "minLength": 1},
    "seed_ref": _STR,
    "kind": {"enum": list(CLAIM_KINDS)},
    "title": _STR,
    "statement": _STR,
    "derivation": _STR,
    "finding": _STR,
    "verdict": {"enum": list(VERDICTS)},
    "checks": {"type": "array", "items": CHECK_SCHEMA},
    "counterexample": COUNTEREXAMPLE_SCHEMA,
    "errors": {"type": "array", "items": _object({"check": _STR, "detail": _STR})},
    "tightness": _or_null(_object({"ratio": {"type": "number"}, "check": _STR,
                                   "instance": _OBJ_OR_NULL})),
    "erratum": _or_null(ERRATUM_SCHEMA),
    "setup": _or_null(SETUP_SCHEMA),
    "restatement": _STR,
    "origin": _object({
        "kind": {"enum": list(vocabulary.ORIGIN_KINDS)},
        "module": _STR,
        "path": _STR_OR_NULL,
        "sha256": {"type": ["string", "null"], "pattern": "^[0-9a-f]{64}$"},
        "entry_point": _STR_OR_NULL,
        "commit": _STR_OR_NULL,
        "dirty": {"type": ["boolean", "null"]},
        "helpers": {"type": ["object", "null"],
                    "additionalProperties": {"type": "string", "pattern": "^[0-9a-f]{64}$"}},
    }, optional=("helpers",)),
    "power": {"type": ["array", "null"], "items": POWER_SCHEMA},
    "certified": CERTIFIED_SCHEMA,
    "preset": {"enum": list(PRESETS)},
    "seed": {"type": "integer", "minimum": 0},
    "seconds": {"type": "number", "minimum": 0},
    "digest": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
    "grade": {"enum": list(verdicts.GRADES)},
    "readings": {"type": "array", "items": READING_SCHEMA},
}, [f.name for f in record.CLAIM_FIELDS], "a claim"), optional=record.optional_fields())

#: One BLAS library of the provenance (threadpoolctl's description, the fields kept).
_BLAS = {"internal_api": _STR_OR_NULL, "version": _STR_OR_NULL, "architecture": _STR_OR_NULL,
         "num_threads": {"type": ["integer", "null"]}, "threading_layer": _STR_OR_NULL}
BLAS_SCHEMA = _object(_BLAS, optional=tuple(_BLAS))

_PROVENANCE = {
    "fedtheory_version": _STR,
    "commit": _STR_OR_NULL,
    "dirty": {"type": ["boolean", "null"]},
    "source": _STR,
    "preset": {"enum": list(PRESETS)},
    "seed": {"type": "integer", "minimum": 0},
    "jobs": {"type": ["integer", "null"]},
    "time": _STR,
    "python": _STR,
    "platform": _STR,
    "machine": _STR,
    "packages": {"type": "object", "additionalProperties": _STR_OR_NULL},
    "blas": {"type": "array", "items": BLAS_SCHEMA},
    "blas_threads_in_checks": {"type": ["integer", "null"]},
    "compiled_kernels": {"type": ["boolean", "null"]},
    "argv": _STRINGS,
    "cwd": _STR,
    "pid": {"type": ["integer", "null"]},
    "executor": _STR,
    "resumed": _STRINGS,
    "reruns": {"type": "object", "additionalProperties": {"type": "integer"}},
    "interrupted": _STR_OR_NULL,
    "path": _STR,
    "report_dir": _STR_OR_NULL,
}
PROVENANCE_SCHEMA = _object(_PROVENANCE, optional=tuple(_PROVENANCE), closed=False)

REPORT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "fedtheory report",
    **_object({
        "version": {"const": REPORT_FORMAT},
        "fedtheory_version": _STR,
        "seed": {"type": "integer", "minimum": 0},
        "preset": {"enum": list(PRESETS)},
        "complete": {"type": "boolean"},
        "summary": {"type": "object", "propertyNames": {"enum": list(VERDICTS)},
                    "additionalProperties": {"type": "integer", "minimum": 0}},
        "claims": {"type": "array", "items": CLAIM_SCHEMA},
        "provenance": PROVENANCE_SCHEMA,
        "grades": {"type": "object", "propertyNames": {"enum": list(verdicts.GRADES)},
                   "additionalProperties": {"type": "integer", "minimum": 0}},
    }, optional=("grades",)),
}


class ReportError(ValueError):
    """A report that cannot be used: the message names the file, the claim and the field."""

    def __init__(self, source: str, message: str, claim: str | None = None,
                 field: str | None = None) -> None:
        self.source, self.claim, self.field = source, claim, field
        where = "".join(f"{part}: " for part in (claim, field) if part)
        super().__init__(f"report {source}: {where}{message}")


def field_path(path: Iterable[Any]) -> str:
    """``["checks", 1, "passed"]`` -> ``checks[1].passed``.

    >>> field_path(["checks", 1, "passed"]), field_path([])
    ('checks[1].passed', '(the document)')
    """
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(the document)"


def claim_label(doc: Any, index: int) -> str:
    """``claims[3] (ocs.closed_form)``: an entry by its place, and its id when it has one."""
    entry = doc["claims"][index] if isinstance(doc, dict) else None
    cid = entry.get("id") if isinstance(entry, dict) else None
    return f"claims[{index}]" + (f" ({cid})" if isinstance(cid, str) else "")


_VALIDATOR: list[Any] = []


def _validator() -> Any:
    if not _VALIDATOR:
        from jsonschema import Draft202012Validator

        _VALIDATOR.append(Draft202012Validator(REPORT_SCHEMA))
    return _VALIDATOR[0]


def _describe(error: Any) -> tuple[list[Any], str]:
    """A jsonschema error as (path, message), for a reader rather than a schema author."""
    path = list(error.absolute_path)
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return [*path, missing], "missing"
    if error.validator == "additionalProperties":
        extra = [k for k in error.instance if k not in error.schema.get("properties", {})]
        return [*path, *extra[:1]], "not a field of a fedtheory report"
    if error.validator == "const" and path == ["version"]:
        return path, (f"report format {error.instance!r}; this fedtheory reads format "
                      f"{REPORT_FORMAT!r} (write it again with `fedtheory verify`)")
    return path, error.message


def validate(doc: Any, source: str, only: str | None = None) -> None:
    """Raise :class:`ReportError` unless ``doc`` matches :data:`REPORT_SCHEMA` and names each
    claim once; with ``only``, the document and the entries of the claim ``only`` (what
    ``show ID`` reads). The message names ``source``, the claim and the field of the most
    relevant problem, and how many more there are."""
    from jsonschema.exceptions import best_match

    subject, places = doc, None
    if only is not None and isinstance(doc, dict) and isinstance(doc.get("claims"), list):
        places = [k for k, e in enumerate(doc["claims"])  # and every entry without an id
                  if not isinstance(e, dict) or not isinstance(e.get("id"), str)
                  or e.get("id") == only]
        subject = {**doc, "claims": [doc["claims"][k] for k in places]}
    errors = list(_validator().iter_errors(subject))
    if errors:
        path, message = _describe(best_match(errors))
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        claim_part = None
        if len(path) >= 2 and path[0] == "claims" and isinstance(path[1], int):
            k = places[path[1]] if places is not None else path[1]
            claim_part, path = claim_label(doc, k), path[2:]
        raise ReportError(source, message + more, claim_part, field_path(path))
    seen: dict[str, int] = {}
    for k, entry in enumerate(doc["claims"]):
        cid = entry.get("id") if isinstance(entry, dict) else None
        if not isinstance(cid, str):
            continue
        if cid in seen:
            raise ReportError(source, f"the claim appears twice (also claims[{seen[cid]}])",
                              claim_label(doc, k), "id")
        seen[cid] = k


# What a valid entry must agree with (recomputed, rebuilt, digested, audited): in its own room.
from fedtheory.schema.audit import (  # noqa: E402 - after the structure it completes
    DEFINITION_FIELDS,
    audit,
    definition_digest,
    definition_of,
    derived,
    digest,
    entry_definition,
    file_source,
    grades_of,
    mutants_of,
    replay_command_text,
    replay_shown,
    summary_of,
)
