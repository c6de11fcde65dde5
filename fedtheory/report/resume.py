"""Which entries of a report read back may be used: ``verify --resume``, ``show``, errata.

An entry is used only when its id is a claim loaded here (:func:`unresolved`);
:func:`resume_plan` keeps only the entries that agree with their checks, their digest, the
claim's definition and its source (:func:`source_changes`), and runs the others again.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fedtheory.report.reading import load_report, result_from_dict
from fedtheory.report.run_provenance import _source_tree
from fedtheory.schema import audit, claim_label, definition_of, derived, mutants_of

if TYPE_CHECKING:  # the claim machinery (sympy) is imported where results are handled
    from fedtheory.claimkit.core import Claim, ClaimResult

__all__ = ["Resume", "loaded_definition", "resume_plan", "source_changes", "unresolved"]


def _live_claims() -> tuple[Any, dict[str, Any]]:
    """The registry module (None when this process has not imported it) and its claims."""
    reg = sys.modules.get("fedtheory.claims.registry")
    return reg, (getattr(reg, "_REGISTRY", {}) if reg is not None else {})


def unresolved(entry: Mapping[str, Any]) -> str | None:
    """Why a report entry's ``id`` names no claim loaded here, as ``"field: what"``; None when
    it does: a built-in claim, one of an installed entry point, or one of a ``--claims`` file
    whose SHA-256 is the one the entry's ``origin`` records (the file that computed it).

    An entry whose id resolves to nothing has no definition to be checked against (a look-alike
    id, ``is.unb\u0456ased`` with a Cyrillic letter, would carry any text): it is never used.
    """
    from fedtheory import index

    cid = entry["id"]
    reg, live = _live_claims()
    if cid not in live and cid not in index.file_ids():
        index.load_entry_points()
        reg, live = _live_claims()
        if cid not in live:
            return (f"id: {ascii(cid)} is no claim loaded here (built in, an installed entry "
                    "point, or a --claims file): the entry cannot be checked against a "
                    "definition")
    stored = entry.get("origin") or {}
    if stored.get("kind") == "file":
        now = reg.origin_of(cid) if reg is not None and cid in live else None
        if now is None or now.kind != "file" or now.sha256 != stored.get("sha256"):
            where = (f"the loaded claim is {now.describe()}" if now is not None
                     else "no --claims file defines it here")
            return (f"origin.sha256: written by the claim file {stored.get('path')} "
                    f"(sha256 {str(stored.get('sha256'))[:12]}...), but {where}: give "
                    "--claims with the file that computed it")
    return None


def loaded_definition(claim_id: str, preset: str) -> dict[str, Any] | str | None:
    """The definition of the loaded claim ``claim_id`` with ``preset``
    (:func:`fedtheory.schema.definition_of`, or its digest from the index when the claim is
    not imported), for :func:`fedtheory.schema.audit`; None when no claim has this id."""
    from fedtheory.index import lookup

    _, live = _live_claims()
    if claim_id in live:
        return definition_of(live[claim_id], preset)
    try:
        return lookup(claim_id).definition.get(preset)
    except ValueError:
        return None


@dataclass
class Resume:
    """What ``verify --resume`` keeps of a report: ``kept`` (claim id -> result), and the
    ``warnings`` to print (the claims run again because their entries could not be used, or
    the report's code differs from this run's)."""

    kept: dict[str, ClaimResult] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def resume_plan(path: Path | str, claims: Sequence[Claim], seed: int, preset: str,
                power: bool) -> Resume:
    """The finished results of the report at ``path`` that a run of ``claims`` with ``seed``
    and ``preset`` can keep (``fedtheory verify --resume``).

    The report must be valid (:func:`load_report`) and of the same fedtheory version, seed and
    preset, else ``ValueError``. Of its entries for ``claims``, those that fail the audit
    (:func:`fedtheory.schema.audit`: a stored verdict its checks do not give, an edited entry,
    another version of the claim, ...) or whose source changed (:func:`source_changes`: the
    claim's file or a helper module beside it hashes otherwise now) are run again with a
    warning naming the file, the claim and the field; those with verdict ``error``, and those
    without mutants when ``power`` is asked for, are run again silently.
    """
    from fedtheory import __version__

    doc = load_report(path)
    want = {"fedtheory_version": __version__, "seed": seed, "preset": preset}
    for key, value in want.items():
        if doc.get(key) != value:
            raise ValueError(f"--resume {path}: its {key} is {doc.get(key)!r}, this run's is "
                             f"{value!r}; run without --resume")
    out = Resume()
    then, now = doc["provenance"].get("commit"), _source_tree()["commit"]
    if then and now and then != now:
        out.warnings.append(f"--resume {path}: written by commit {then[:12]}, this is "
                            f"{now[:12]}: the claims it keeps were computed by other code")
    by_id = {c.id: c for c in claims}
    for k, d in enumerate(doc["claims"]):
        claim = by_id.get(d["id"])
        problem = unresolved(d)
        if problem is not None and (claim is not None or problem.startswith("id:")):
            out.warnings.append(f"--resume {path}: {claim_label(doc, k)}: {problem}; "
                                + ("the claim is run again" if claim is not None
                                   else "the entry is dropped"))
            continue
        if claim is None or derived(d)["verdict"] == "error" or (power and d["power"] is None):
            continue  # run again anyway: nothing of it is used
        problems = audit(d, preset=doc["preset"], seed=doc["seed"],
                         definition=definition_of(claim, preset), mutants=mutants_of(claim))
        changed = source_changes(d.get("origin"), claim.id)
        if changed:
            problems = [changed, *problems]
        if problems:
            more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
            out.warnings.append(f"--resume {path}: {claim_label(doc, k)}: {problems[0]}{more}; "
                                "the claim is run again")
            continue
        res = result_from_dict(d)
        out.kept[res.id] = res
    return out


def source_changes(then: Any, claim_id: str) -> str | None:
    """How the source of ``claim_id`` differs from the one an entry recorded (its ``origin``,
    ``then``): the claim's file or a helper module beside it hashes otherwise now, or is
    gone or new (or the entry records none of it); None when they hash the same."""
    from fedtheory.claims.registry import origin_of

    origin = origin_of(claim_id)
    if origin is None:
        return None
    now = origin.to_dict()
    then = then if isinstance(then, Mapping) else {}
    if now.get("sha256") and then.get("sha256") != now["sha256"]:
        old = str(then.get("sha256") or "none")[:12]
        return (f"its source {now.get('path')} changed since the entry was computed (sha256 "
                f"{old}..., now {now['sha256'][:12]}...)")
    before, after = then.get("helpers"), now.get("helpers") or {}
    if before is None:
        return ("the entry does not record the helper modules beside its source "
                f"({', '.join(sorted(after))})") if after else None
    if not isinstance(before, Mapping):
        return "its origin's helpers are not a name -> SHA-256 table"
    for name in sorted(set(before) | set(after)):
        if before.get(name) != after.get(name):
            what = ("is new" if name not in before else "is gone" if name not in after
                    else "changed")
            return f"the helper module {name} beside its source {what} since it was computed"
    return None
