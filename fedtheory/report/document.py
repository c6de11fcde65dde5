"""The JSON report: a claim's entry, the document, its volatile fields, writing it.

Each claim entry carries a ``digest`` of itself (:func:`fedtheory.schema.digest`). Everything
outside ``provenance``, the timings (``seconds``), the figures' paths and the digests depends
only on the preset, the seed and the code, so two runs with the same seed and preset give
byte-identical documents there (:func:`without_volatile`).

Nothing is written that the user did not ask for, except the **run record**
``.fedtheory/last_run.json`` in the working directory (:data:`RECORD_PATH`: the JSON report of
the last ``fedtheory verify`` run there, provenance included, rewritten as each claim finishes
with ``"complete": false`` until the run ends), which ``fedtheory show`` reads when no
``--from REPORT.json`` is given and ``--resume`` continues from after an interrupt.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fedtheory.report.files import atomic_write_text
from fedtheory.report.run_provenance import provenance
from fedtheory.schema import REPORT_FORMAT, digest, grades_of

if TYPE_CHECKING:  # the claim machinery (sympy) is imported where results are handled
    from fedtheory.claimkit.core import ClaimResult

__all__ = [
    "RECORD_PATH", "REPORT_VERSION", "VOLATILE", "claim_file", "entry", "to_json",
    "without_volatile", "write_json", "write_record",
]


#: The report format (the document's ``version``; :data:`fedtheory.schema.REPORT_FORMAT`).
REPORT_VERSION = REPORT_FORMAT

#: The run record ``fedtheory verify`` leaves in the working directory (relative path).
RECORD_PATH = Path(".fedtheory") / "last_run.json"


def entry(result: ClaimResult, report_dir: Path | str | None = None) -> dict[str, Any]:
    """A claim's entry in a report: ``result.to_dict()``, where the claim was defined
    (``origin``: :func:`fedtheory.claims.registry.origin_of`; the replay commands of a claim
    from a file name that file) and its ``digest``. With ``report_dir`` (the run's
    ``--report`` directory, which the provenance records as ``report_dir``), the figures drawn
    into it are given relative to it (what ``fedtheory errata`` embeds, and nothing else)."""
    from fedtheory.claims.registry import origin_of

    d = result.to_dict()
    if report_dir is not None:
        for c in d["checks"]:
            c["figures"] = [_relative_figure(f, report_dir) for f in c["figures"]]
    origin = origin_of(d["id"])
    if origin is not None:
        d["origin"] = origin.to_dict()
        if origin.kind == "file":
            _replay_from_file(d, origin.path)
    d["digest"] = digest(d)
    return d


def _relative_figure(figure: str, report_dir: Path | str) -> str:
    """``figure`` relative to ``report_dir`` (POSIX form) when it lies inside it, else as it is.

    >>> _relative_figure("out/figures/a.png", "out"), _relative_figure("figures/a.png", "out")
    ('figures/a.png', 'figures/a.png')
    """
    rel = os.path.relpath(os.path.abspath(figure), os.path.abspath(report_dir))
    return figure if rel.split(os.sep)[0] == os.pardir else Path(rel).as_posix()


def _replay_from_file(d: dict[str, Any], path: str | None) -> None:
    """Make every replay command of the entry ``d`` load the claim file ``path`` first: each
    made again from its parts (the claim id, the check, the preset and the seed)."""
    from fedtheory.claimkit.core import replay_command

    top = d.get("counterexample")
    for ce, check in [(top, (top or {}).get("check")),
                      *((c.get("counterexample"), c["name"]) for c in d["checks"])]:
        if path and isinstance(ce, dict) and isinstance(ce.get("replay"), dict) and check:
            ce["replay"] = replay_command(d["id"], check, d["preset"], d["seed"], path)


def claim_file(claim_id: str) -> str | None:
    """The claim file that defines ``claim_id`` (a claim from outside the package), else
    None."""
    from fedtheory.claims.registry import origin_of

    origin = origin_of(claim_id)
    return origin.path if origin is not None and origin.kind == "file" else None


def to_json(results: Sequence[ClaimResult | Mapping[str, Any]], seed: int, preset: str,
            prov: dict[str, Any] | None = None, complete: bool = True) -> dict[str, Any]:
    """The report document: ``{"version", "fedtheory_version", "seed", "preset", "complete",
    "summary", "claims", "provenance"}``; ``complete`` is False while a run is still writing it
    (the claims listed are finished ones). ``results`` are claim results, or their entries
    already made (:func:`entry`). Outside ``provenance``, the ``seconds`` and the ``digest``
    fields it depends only on the results."""
    from fedtheory import __version__

    entries = [dict(r) if isinstance(r, Mapping) else entry(r) for r in results]
    return {
        "version": REPORT_VERSION,
        "fedtheory_version": __version__,
        "seed": seed,
        "preset": preset,
        "complete": bool(complete),
        "summary": dict(sorted(Counter(e["verdict"] for e in entries).items())),
        "claims": entries,
        "provenance": prov if prov is not None else provenance(seed, preset),
        "grades": grades_of(entries),
    }


#: The fields of a report that may differ between two runs of the same seed and preset.
VOLATILE = ("provenance", "seconds", "figures", "digest", "origin")


def without_volatile(doc: Any) -> Any:
    """A report (or any part of one) without :data:`VOLATILE` fields, at every depth: what
    must be identical between two runs of the same seed and preset, whatever the executor.

    >>> without_volatile({"a": 1, "seconds": 2.0, "b": [{"figures": [], "c": 3}]})
    {'a': 1, 'b': [{'c': 3}]}
    """
    if isinstance(doc, dict):
        return {k: without_volatile(v) for k, v in doc.items() if k not in VOLATILE}
    if isinstance(doc, list):
        return [without_volatile(v) for v in doc]
    return doc


def _dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def write_json(path: Path | str, results: Sequence[ClaimResult | Mapping[str, Any]], seed: int,
               preset: str, prov: dict[str, Any] | None = None, complete: bool = True,
               option: str = "--json") -> Path:
    """Write the JSON report atomically (:func:`atomic_write_text`: an error naming ``option``
    where ``path`` is not a regular file); ``provenance.path`` says where it was written."""
    path = Path(path)
    doc = to_json(results, seed, preset, prov, complete)
    doc["provenance"] = {**doc["provenance"], "path": str(path.resolve())}
    return atomic_write_text(path, _dumps(doc), option)


def write_record(results: Sequence[ClaimResult | Mapping[str, Any]], seed: int, preset: str,
                 prov: dict[str, Any] | None = None, root: Path | str = ".",
                 complete: bool = True) -> Path | None:
    """Write the run record (``.fedtheory/last_run.json`` under ``root``), best effort.

    Returns its path, or None when the working directory is not writable (not an error).
    """
    try:
        return write_json(Path(root) / RECORD_PATH, results, seed, preset, prov, complete,
                          option="the run record")
    except OSError:
        return None
