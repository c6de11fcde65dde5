"""``fedtheory recheck --from REPORT.json``: re-check every certificate of a report in exact
rational arithmetic, without a solver (:mod:`fedtheory.certify.recheck`).

The report is read and checked against the schema (:func:`fedtheory.report.load_report`);
each claim with a ``certified`` entry is looked up in the registry (its problem is rebuilt
from the claim's own code, never from the report), and every certified instance, every one
beyond the stated condition, and every certified instance of its rate (``certified.rate``:
rate certificates) is re-checked. One line per certificate: the claim, its parameters,
``ok`` or ``FAILED``, and what was checked (or why it failed). A "proof for every n" is not
read from the report but re-derived from the claim's code (sympy, exact, no solver) and
compared with it; its line says ``re-derived``. The exit status is 1 when one failed, 0
otherwise; 2 (the CLI's) for a report that cannot be read.
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


def _rows(block: dict[str, Any], beyond_too: bool) -> list[Any]:
    """The certified instances of an entry (and those beyond the stated condition that carry
    a certificate); for a rate entry, the instances it says are certified or that carry a
    certificate."""
    inst = block.get("instances")
    inst = inst if isinstance(inst, list) else []
    if not beyond_too:
        return [r for r in inst if isinstance(r, dict) and (
            r.get("status") == "certified" or "certificate" in r)]
    beyond = block.get("beyond_stated_condition")
    return [*inst, *(r for r in (beyond if isinstance(beyond, list) else [])
                     if isinstance(r, dict) and "certificate" in r)]


def recheck_report(path: Path | str, emit: Callable[[str], None] = print) -> int:
    """Re-check the certificates of the report at ``path``; ``emit`` gets one line per
    certificate (one-step and rate certificates; proofs for every n re-derived from the
    claim's code, said so) and a summary. Returns 0 when every one holds (or there is none),
    1 when one fails. A report that is not one raises ValueError (naming it)."""
    from fedtheory.certify import OneStep
    from fedtheory.certify.lyapunov import RateStep
    from fedtheory.certify.recheck import recheck_proofs, recheck_rate_row, recheck_row
    from fedtheory.claims.registry import get_claim
    from fedtheory.report import load_report

    doc = load_report(path)
    ok = failed = proofs = 0
    for entry in doc["claims"]:
        cert = entry.get("certified")
        if not isinstance(cert, dict):
            continue
        cid = _shown(entry["id"], 80)
        try:
            claim = get_claim(entry["id"])
            step, rate_step = claim.one_step, claim.rate
        except ValueError:
            step = rate_step = None
        blocks = []
        if cert.get("status") not in ("out of scope", "error"):
            blocks.append(("", _rows(cert, True), step, OneStep, recheck_row,
                           "a one-step inequality"))
        rate = cert.get("rate")
        if isinstance(rate, dict) and rate.get("status") not in ("out of scope", "error"):
            blocks.append(("rate ", _rows(rate, False), rate_step, RateStep, recheck_rate_row,
                           "a rate"))
        for label, rows, st, kind, check, what in blocks:
            if len(rows) > MAX_ROWS:
                failed += 1
                emit(f"{cid}: {label}FAILED: {len(rows)} certified instances, more than the "
                     f"{MAX_ROWS} read for one claim; none re-checked")
                continue
            for row in rows:
                if not isinstance(st, kind):
                    res = {"params": row.get("params") if isinstance(row, dict) else None,
                           "status": "failed",
                           "checked": f"no registered claim of this id describes {what}"}
                else:
                    res = check(st, row)
                good = res["status"] == "ok"
                ok, failed = ok + good, failed + (not good)
                emit(f"{cid} {label}{_shown(res['params'])}: {'ok' if good else 'FAILED'}: "
                     f"{_shown(res['checked'], 400)}")
        if cert.get("derivation") == "proof for every n":
            res = recheck_proofs(step, cert)
            good = res["status"] == "ok"
            proofs, failed = proofs + good, failed + (not good)
            emit(f"{cid} proof for every n: {'re-derived' if good else 'FAILED'}: "
                 f"{_shown(res['checked'], 400)}")
    emit(f"recheck: {ok} certificate(s) hold, {failed} failed (exact rational arithmetic, "
         f"no solver); {proofs} proof(s) for every n re-derived from the claims' code")
    return 1 if failed else 0
