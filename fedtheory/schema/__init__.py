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

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fedtheory import verdicts, vocabulary
from fedtheory.vocabulary import record

__all__ = [
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
    "mutants_of",
    "replay_shown",
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


# ------------------------------------------------------------------ derived fields, recomputed


def derived(entry: Mapping[str, Any]) -> dict[str, Any]:
    """What an entry's checks imply: its ``verdict``, ``counterexample``, ``errors`` and
    ``tightness``, by the rules of :mod:`fedtheory.verdicts` (the same that
    :func:`fedtheory.claimkit.core.combine` and :func:`~fedtheory.claimkit.core.tightness`
    apply)."""
    checks = list(entry["checks"])
    outcomes = [(c["passed"], c["error"] is not None, c["neutral"], c.get("grade"))
                for c in checks]
    verdict, k = verdicts.verdict_of(outcomes)
    counterexample = None
    if k is not None:
        counterexample = dict(checks[k]["counterexample"] or {})
        counterexample.setdefault("check", checks[k]["name"])
    tight = None
    if entry["kind"] in BOUND_KINDS:
        b = verdicts.tightest([c["ratio"] for c in checks])
        if b is not None:
            best = checks[b]
            tight = {"ratio": best["ratio"], "check": best["name"], "instance": best["instance"]}
    return {"verdict": verdict, "counterexample": counterexample,
            "errors": [{"check": c["name"], "detail": c["detail"]}
                       for c in checks if c["error"] is not None],
            "tightness": tight, "grade": verdicts.grade_of(outcomes)}


def replay_command_text(claim_id: str, check: str, preset: str, seed: int,
                        claims: str | None = None) -> str:
    """The shell command :func:`fedtheory.claimkit.core.replay_command` gives; for a claim
    defined in a file outside the package, with ``--claims FILE`` (what a report entry's
    ``origin`` names), so that the command finds it."""
    from fedtheory.commands import RECORD, replay

    try:
        return replay(claim_id, check, preset, seed, claims, prog=RECORD)
    except ValueError as exc:  # parts no run writes (control characters, say)
        return f"(none: {exc})"


def replay_shown(entry: Mapping[str, Any], check: str, terminal: bool = False
                 ) -> dict[str, str]:
    """The commands re-running ``check`` of a schema-valid entry, rebuilt from its id, preset,
    seed and claim file and quoted (:func:`fedtheory.commands.replay` for the shell,
    :func:`fedtheory.commands.replay_python` for Python): what pages and terminals show, never
    the string a (hostile) report stores. Pages start the command with ``fedtheory``;
    ``terminal=True`` starts it with the program as the user invoked it.

    >>> replay_shown({"id": "is.x$(id)", "preset": "quick", "seed": 0}, "c; sh")["command"]
    "fedtheory replay 'is.x$(id)' --check 'c; sh' --preset quick --seed 0"
    """
    from fedtheory.commands import RECORD, replay, replay_python

    cid, preset, seed = entry["id"], entry["preset"], int(entry["seed"])
    claims = file_source(entry)
    try:
        return {"command": replay(cid, check, preset, seed, claims,
                                  prog=None if terminal else RECORD),
                "python": replay_python(cid, check, preset, seed, claims)}
    except ValueError as exc:  # parts no run writes (control characters, say)
        return {"command": f"(none: {exc})", "python": f"(none: {exc})"}


def file_source(entry: Mapping[str, Any]) -> str | None:
    """The claim file of an entry whose claim came from a file outside the package (its
    ``origin``), else None."""
    origin = entry.get("origin") or {}
    return origin.get("path") if origin.get("kind") == "file" else None


# ---------------------------------------------------------------------------------- digests


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def digest(entry: Mapping[str, Any]) -> str:
    """SHA-256 of an entry's canonical JSON, every field but ``digest`` itself: it changes when
    anything in the entry is edited (and is no proof of origin: see the module docstring)."""
    return hashlib.sha256(_canonical({k: v for k, v in entry.items() if k != "digest"}))\
        .hexdigest()


#: The fields of an entry that come from the claim's definition, not from running it.
DEFINITION_FIELDS = record.DEFINITION_FIELDS


def definition_of(claim: Any, preset: str) -> dict[str, Any]:
    """What every report entry of ``claim`` (a :class:`~fedtheory.claimkit.core.Claim`) with
    ``preset`` repeats from its definition: :data:`DEFINITION_FIELDS` and the checks' names and
    kinds, in order."""
    from fedtheory.claimkit.core import _jsonable

    fields = {
        "id": claim.id, "family": claim.family, "seed_ref": claim.seed_ref,
        "kind": claim.kind.value, "title": claim.title, "statement": claim.statement,
        "derivation": claim.derivation, "finding": claim.finding,
        "erratum": claim.erratum.to_dict() if claim.erratum is not None else None,
        "setup": claim.setup.to_dict(preset) if claim.setup is not None else None,
        "restatement": claim.restatement,
        "checks": [[c.name, c.kind] for c in claim.checks],
    }
    return json.loads(json.dumps(_jsonable(fields)))  # as a report holds it (lists, not tuples)


def entry_definition(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The definition part of a report entry (see :func:`definition_of`)."""
    out = {k: entry[k] for k in DEFINITION_FIELDS}
    out["checks"] = [[c["name"], c["kind"]] for c in entry["checks"]]
    return out


def definition_digest(fields: Mapping[str, Any]) -> str:
    """SHA-256 of a definition (:func:`definition_of` or :func:`entry_definition`)."""
    return hashlib.sha256(_canonical(fields)).hexdigest()


def mutants_of(claim: Any) -> list[list[str]]:
    """``[mutant, kind, target, scale]`` of each mutant ``verify --power`` runs for
    ``claim``."""
    if claim.stated is None:
        return []
    return [[m.name, m.kind, m.target, str(m.scale)] for m in claim.stated.mutants(
        claim.kind.value)]


# ------------------------------------------------------------------------------------ audit


def audit(entry: Mapping[str, Any], *, preset: str, seed: int,
          definition: Mapping[str, Any] | str | None = None,
          mutants: Sequence[Sequence[str]] | None = None) -> list[str]:
    """Every reason not to use a schema-valid entry, as ``"field: what"`` (empty: usable).

    ``preset`` and ``seed`` are the report's; ``definition`` is the claim's now
    (:func:`definition_of`, or its :func:`definition_digest`), ``mutants`` its mutants
    (:func:`mutants_of`); None skips that comparison.
    """
    problems: list[str] = []
    cid = entry["id"]
    if not cid.startswith(entry["family"] + "."):
        problems.append(f"family: {entry['family']!r} is not the family of {cid!r}")
    for name, want in (("preset", preset), ("seed", seed)):
        if entry[name] != want:
            problems.append(f"{name}: {entry[name]!r}, but the report's is {want!r}")
    seen: set[str] = set()
    for k, c in enumerate(entry["checks"]):
        where = f"checks[{k}]"
        if c["name"] in seen:
            problems.append(f"{where}.name: {c['name']!r} appears twice")
        seen.add(c["name"])
        if c["error"] is not None and c["passed"] is not None:
            problems.append(f"{where}.passed: {c['passed']}, but the check raised (a check "
                            "that raised decided nothing: null)")
        if c["neutral"] and c["passed"] is not None:
            problems.append(f"{where}.passed: {c['passed']}, but a figure decides nothing "
                            "(null)")
        undecided = c["passed"] is None and not c["neutral"] and c["error"] is None
        if undecided != (c["undecided"] is not None):
            problems.append(f"{where}.undecided: {c['undecided']!r} does not fit passed="
                            f"{c['passed']}, neutral={c['neutral']}, error="
                            f"{'set' if c['error'] is not None else 'null'}")
        if c["passed"] is False:
            replay = (c["counterexample"] or {}).get("replay")
            want = replay_command_text(cid, c["name"], entry["preset"], entry["seed"],
                                       file_source(entry))
            if not isinstance(replay, dict) or replay.get("command") != want:
                problems.append(f"{where}.counterexample.replay: not the command that re-runs "
                                f"this check ({want})")
        elif c["passed"] is True and c["counterexample"] is not None:
            problems.append(f"{where}.counterexample: a check that passed has no "
                            "counterexample")
        if c["kind"] in _SOLVING and c["error"] is None and not c["solves"]:
            problems.append(f"{where}.solves: empty, but a convex check that solved no program "
                            "raised")
    now = derived(entry)
    for name in ("verdict", "counterexample", "errors", "tightness"):
        if entry[name] != now[name]:
            stored = repr(entry[name]) if name == "verdict" else "what is stored"
            problems.append(f"{name}: {stored} is not what its checks give"
                            + (f" ({now[name]!r})" if name == "verdict" else ""))
    if entry.get("grade") != now["grade"] and ("grade" in entry or now["grade"] not in (
            None, verdicts.CONFIRMED)):  # reports before grades carry none: plain confirmed
        problems.append(f"grade: {entry.get('grade')!r} is not what its checks give "
                        f"({now['grade']!r})")
    problems += _audit_power(entry, now["verdict"], mutants)
    if definition is not None:
        mine = entry_definition(entry)
        if isinstance(definition, str):
            if definition_digest(mine) != definition:
                problems.append("definition: the claim's statement, texts or checks differ from "
                                "this entry's: it was written by another version of the claim")
        else:
            differ = [k for k in mine if mine[k] != definition.get(k)]
            if differ:
                problems.append(f"{differ[0]}: differs from the claim's definition now (also: "
                                f"{', '.join(differ[1:]) or 'nothing else'}): the entry was "
                                "written by another version of the claim")
    if entry.get("digest") != digest(entry):  # last: the rules above say more when they fail
        problems.append("digest: does not match the entry: it was edited after fedtheory "
                        "wrote it")
    return problems


#: The evidence kinds whose check must have solved a convex program.
_SOLVING = vocabulary.kinds_where("solves")


def _audit_power(entry: Mapping[str, Any], verdict: str,
                 mutants: Sequence[Sequence[str]] | None) -> list[str]:
    power = entry["power"]
    if power is None:
        return []
    problems: list[str] = []
    if verdict == "refuted" and power:
        problems.append("power: a refuted claim has no power table (its statement already "
                        "fails)")
    for k, m in enumerate(power):
        if m["outcome"] in ("caught", "still true") and not m["by"]:
            problems.append(f"power[{k}].by: empty, but a mutant {m['outcome']} names the "
                            "checks that decided it")
        if m["outcome"] == "missed" and m["by"]:
            problems.append(f"power[{k}].by: a missed mutant was decided by no check")
        if "statement_unchanged" in m and m["outcome"] != "caught":
            problems.append(f"power[{k}].statement_unchanged: only a caught mutant has it")
    if mutants is not None and verdict != "refuted":
        stored = [[m["mutant"], m["kind"], m["target"], m["scale"]] for m in power]
        if stored != [list(m) for m in mutants]:
            problems.append("power: its mutants are not the claim's ("
                            + (", ".join(m[0] for m in mutants) or "none") + ")")
    return problems


def summary_of(entries: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """The ``summary`` of a report: how many entries have each recomputed verdict."""
    return dict(sorted(Counter(derived(e)["verdict"] for e in entries).items()))


def grades_of(entries: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """The ``grades`` of a report: how many entries have each recomputed grade (a confirmed
    claim ``confirmed`` or ``consistent (low power)``, an inconclusive one ``not testable``).
    Not-testable checks of claims decided by other checks are counted apart
    (:func:`fedtheory.report.grade_counts`)."""
    grades = (derived(e)["grade"] for e in entries)
    return dict(sorted(Counter(g for g in grades if g is not None).items()))
