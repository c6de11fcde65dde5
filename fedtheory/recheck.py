"""``fedtheory recheck --from REPORT.json``: re-check every certificate of a report in exact
rational arithmetic, without a solver (:mod:`fedtheory.certify.recheck`).

The report is read and checked against the schema (:func:`fedtheory.report.load_report`);
each claim with a ``certified`` entry is looked up in the registry (its problem is rebuilt
from the claim's own code, never from the report), and every certified instance, and every
one beyond the stated condition, is re-checked. One line per certificate: the claim, its
parameters, ``ok`` or ``FAILED``, and what was checked (or why it failed). The exit status
is 1 when one failed, 0 otherwise; 2 (the CLI's) for a report that cannot be read.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["MAX_ROWS", "recheck_report"]

#: The most certified instances read for one claim (a claim's grids have a few dozen): a
#: report with more is refused for that claim before any arithmetic.
MAX_ROWS = 500


def _shown(x: Any, limit: int = 160) -> str:
    """Text from the report made safe for a terminal: printable ASCII only (the rest
    escaped), at most ``limit`` characters."""
    s = x if isinstance(x, str) else json.dumps(x, sort_keys=True)
    s = "".join(c if " " <= c <= "~" else f"\\x{ord(c):02x}" if ord(c) < 256
                else f"\\u{ord(c):04x}" for c in s)
    return s if len(s) <= limit else s[:limit - 3] + "..."


def recheck_report(path: Path | str, emit: Callable[[str], None] = print) -> int:
    """Re-check the certificates of the report at ``path``; ``emit`` gets one line per
    certificate and a summary. Returns 0 when every certificate holds (or there is none),
    1 when one fails. A report that is not one raises ValueError (naming it)."""
    from fedtheory.certify import OneStep
    from fedtheory.certify.recheck import recheck_row
    from fedtheory.claims.registry import get_claim
    from fedtheory.report import load_report

    doc = load_report(path)
    ok = failed = 0
    for entry in doc["claims"]:
        cert = entry.get("certified")
        if not cert or cert.get("status") in ("out of scope", "error"):
            continue
        cid = _shown(entry["id"], 80)
        beyond = cert.get("beyond_stated_condition")
        rows = [*cert.get("instances", []), *(r for r in (beyond if isinstance(beyond, list)
                                                          else []) if isinstance(r, dict)
                                              and "certificate" in r)]
        try:
            step = get_claim(entry["id"]).one_step
        except ValueError:
            step = None
        if len(rows) > MAX_ROWS:
            failed += 1
            emit(f"{cid}: FAILED: {len(rows)} certified instances, more than the "
                 f"{MAX_ROWS} read for one claim; none re-checked")
            continue
        for row in rows:
            if not isinstance(step, OneStep):
                res = {"params": row.get("params") if isinstance(row, dict) else None,
                       "status": "failed",
                       "checked": "no registered claim of this id describes a one-step "
                                  "inequality"}
            else:
                res = recheck_row(step, row)
            good = res["status"] == "ok"
            ok, failed = ok + good, failed + (not good)
            emit(f"{cid} {_shown(res['params'])}: {'ok' if good else 'FAILED'}: "
                 f"{_shown(res['checked'], 400)}")
    emit(f"recheck: {ok} certificate(s) hold, {failed} failed (exact rational arithmetic, "
         "no solver)")
    return 1 if failed else 0
