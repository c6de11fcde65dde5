"""The end of ``fedtheory verify``: its summary.

The last lines a run prints are what a user reads first: the count of each verdict, one line
per refuted claim (its id, the kind of erratum, the command that re-runs the check that refutes
it), where the run record and the reports were written, and the commands to go on with. Every
command is built by :mod:`fedtheory.commands` (the program as invoked, each word quoted).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from fedtheory.commands import command, replay
from fedtheory.report import RECORD_PATH, claim_file, grade_counts

if TYPE_CHECKING:
    from fedtheory.claimkit.core import ClaimResult

__all__ = ["summary_lines"]


def summary_lines(results: Sequence[ClaimResult], written: Sequence[tuple[str, str]],
                  report: str | None) -> list[str]:
    """The end of ``verify``: the count of each verdict and of each grade, one line per
    refuted claim (its id, the kind of erratum, the command that re-runs the check that
    refutes it), where the run record and the reports were written, and the commands to go
    on with (``report``: the JSON report those commands read, None when none was written)."""
    counts = {v: sum(r.verdict.value == v for r in results)
              for v in ("confirmed", "refuted", "inconclusive", "error")}
    lines = [f"{len(results)} claim(s): " + ", ".join(f"{k}: {n}" for k, n in counts.items()),
             grade_counts(results)]
    refuted = [r for r in results if r.verdict.value == "refuted"]
    if refuted:
        lines.append("refuted (erratum; the command that re-runs the check that refutes it):")
    for r in refuted:
        kind = (r.erratum or {}).get("kind") or "no erratum registered"
        check = (r.counterexample or {}).get("check")
        again = (replay(r.id, check, r.preset, r.seed, claim_file(r.id))
                 if isinstance(check, str) else "(no counterexample)")
        lines.append(f"  {r.id} ({kind}): {again}")
    for r in results:
        if r.errors:
            lines.append(f"  {r.id}: error in check(s) {', '.join(c.name for c in r.errors)} "
                         "(above)")
    if written:
        lines.append("written: " + "; ".join(f"{what} {path}" for what, path in written))
    else:
        lines.append("written: nothing (--no-record without --json)")
    if report is not None:
        show = []
        if results:
            first = (refuted or list(results))[0].id
            words = [first] if report == str(RECORD_PATH) else [first, "--from", report]
            if claim_file(first) is not None:
                words += ["--claims", claim_file(first)]
            show = [command("show", *words)]
        lines.append("next: " + "\n      ".join(
            [*(f"{c}    # a claim: statement, finding, this run's verdict" for c in show),
             f"{command('errata', '--from', report, '--out', 'errata', *_claims_words(results))}"
             "    # the errata pages and LaTeX snippets per paper"]))
    return lines


def _claims_words(results: Sequence[ClaimResult]) -> list[str]:
    """``--claims FILE`` for each claim file the results' claims come from (their papers are
    declared there: ``errata`` reads them), in order, once each."""
    files = dict.fromkeys(f for r in results if (f := claim_file(r.id)) is not None)
    return [w for f in files for w in ("--claims", f)]
