"""Reading a report back: a bounded, strict parse and the schema's check.

A report read back (``verify --resume``, ``show``, ``catalogue --from``) is untrusted input:
:func:`read_json` reads a regular file with a bounded read (at most
:data:`fedtheory.safefiles.MAX_REPORT_BYTES`, nested at most :data:`MAX_REPORT_DEPTH` deep),
:func:`load_report` checks it against the one schema (:mod:`fedtheory.schema`) and names the
file, the claim and the field of any problem; :func:`result_from_dict` recomputes verdicts from
the stored checks, never reads them from the file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fedtheory.report.document import REPORT_VERSION
from fedtheory.safefiles import MAX_REPORT_BYTES, read_bounded
from fedtheory.schema import ReportError, validate

if TYPE_CHECKING:  # the claim machinery (sympy) is imported where results are handled
    from fedtheory.claimkit.core import ClaimResult

__all__ = ["MAX_REPORT_DEPTH", "load_report", "nesting_depth", "read_json", "result_from_dict"]


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key {key!r} appears twice in one object")
        out[key] = value
    return out


#: The deepest nesting of arrays and objects a report may have (a real one has about 10): a
#: deeper document is refused right after parsing, before anything walks it recursively.
MAX_REPORT_DEPTH = 64


def nesting_depth(doc: Any, limit: int = MAX_REPORT_DEPTH) -> int:
    """How deeply ``doc`` nests arrays and objects (a scalar: 0), counted without recursion;
    the count stops at ``limit + 1``.

    >>> nesting_depth({"a": [1, {"b": 2}]}), nesting_depth(3)
    (3, 0)
    """
    deepest, stack = 0, [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict)
                                                   else value))
    return deepest


def read_json(path: Path | str, limit: int = MAX_REPORT_BYTES) -> Any:
    """Parse the JSON file at ``path`` strictly (no NaN or Infinity, no key twice in one
    object); ``ValueError`` naming the path when it is missing, not a regular file, larger than
    ``limit`` bytes (:data:`fedtheory.safefiles.MAX_REPORT_BYTES`: read with a bounded read,
    :func:`fedtheory.safefiles.read_bounded`), not JSON, or nested deeper than
    :data:`MAX_REPORT_DEPTH`."""
    path = Path(path)
    try:
        text = read_bounded(path, "report", limit).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"report {path} is not readable: {exc}") from None
    try:
        doc = json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique_keys)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise ValueError(f"report {path} is not readable JSON: {exc}") from None
    if nesting_depth(doc) > MAX_REPORT_DEPTH:
        raise ValueError(f"report {path}: nested more than {MAX_REPORT_DEPTH} levels deep (a "
                         "report is about 10): not a fedtheory report")
    return doc


def load_report(path: Path | str, only: str | None = None) -> dict[str, Any]:
    """Read a JSON report and check it against the schema (:func:`fedtheory.schema.validate`;
    with ``only``, the document and that claim's entries): a ``ValueError`` names the path, the
    claim and the field when it is missing, not JSON, or not a report of this format."""
    doc = read_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("claims"), list):
        raise ValueError(f"report {path} is not a fedtheory report (no 'claims' list)")
    if doc.get("version") != REPORT_VERSION:
        raise ReportError(str(path), f"report format {doc.get('version')!r}; this fedtheory "
                          f"reads format {REPORT_VERSION!r} (write it again with `fedtheory "
                          "verify`)", field="version")
    validate(doc, str(path), only)
    return doc


def result_from_dict(d: Mapping[str, Any]) -> ClaimResult:
    """A claim's result read back from a schema-valid report entry (the inverse of
    ``to_dict``); the verdict, counterexample and tightness are recomputed from its checks
    (:func:`fedtheory.claimkit.core.combine`), never read from the entry."""
    from fedtheory.claimkit.core import ClaimResult

    return ClaimResult.from_dict(d)
