"""What a schema-valid report entry must agree with: the fields derived from its checks,
recomputed (:func:`derived`), the commands it shows rebuilt (:func:`replay_shown`), its digest
(:func:`digest`) and definition (:func:`definition_of`), and every rule a check of
:meth:`Claim.verify <fedtheory.claimkit.claim.Claim.verify>` obeys (:func:`audit`). Part of
:mod:`fedtheory.schema` (its names are imported from there)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fedtheory import verdicts, vocabulary
from fedtheory.vocabulary import BOUND_KINDS, record

__all__ = ["DEFINITION_FIELDS", "audit", "definition_digest", "definition_of", "derived",
           "digest", "entry_definition", "file_source", "grades_of", "mutants_of",
           "replay_command_text", "replay_shown", "summary_of"]


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
