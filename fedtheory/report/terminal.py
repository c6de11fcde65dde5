"""The plain text a ``verify`` run prints: the verdict table, the certified worst cases, the
power against mutants."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from fedtheory.report.counts import _ratio_text, check_counts, grade_counts, verdict_label

if TYPE_CHECKING:  # the claim machinery (sympy) is imported where results are handled
    from fedtheory.claimkit.core import ClaimResult

__all__ = ["certified_summary", "power_summary", "verdict_table"]


def verdict_table(results: Sequence[ClaimResult], counts: bool = True) -> str:
    """A plain-text table: id, verdict, checks passed (figures apart), seconds; then, with
    ``counts``, the count of each verdict."""
    rows = [("claim", "verdict", "checks", "seconds")]
    for r in results:
        n = check_counts(r.checks)
        cell = f"{n['passed']}/{n['checks']}" + (f" +{n['figures']} fig" if n["figures"]
                                                else "")
        rows.append((r.id, verdict_label(r.verdict.value, r.grade), cell, f"{r.seconds:.1f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = []
    for k, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    if counts:
        n_of = Counter(r.verdict.value for r in results)
        lines.append("")
        lines.append(", ".join(f"{v}: {n_of.get(v, 0)}" for v in
                               ("confirmed", "refuted", "inconclusive", "error")))
        lines.append(grade_counts(results))
    return "\n".join(lines)


def certified_summary(results: Sequence[ClaimResult]) -> str:
    """One line per claim run with ``--certify``: status, stated/worst (the tightest
    instance tried), the instances and the seconds; out-of-scope claims counted."""
    lines = ["certified worst cases (performance estimation; exact certificates):"]
    skipped = 0
    for r in results:
        c = r.certified
        if c is None:
            continue
        if c["status"] == "out of scope":
            skipped += 1
            continue
        found = (f", found measured/stated {r.tightness['ratio']:.4g}" if r.tightness else "")
        lines.append(f"  {r.id}: {c['status']}, stated/worst {_ratio_text(c.get('ratio'))}{found} "
                     f"({len(c.get('instances', []))} instances, {c.get('seconds', 0):.1f} s)"
                     + (f"; {c['finding']}" if c.get("finding") else "")
                     + (f"; class: {c['function_class']}" if c.get("function_class") else "")
                     + (f" [{c.get('reason')}]" if c["status"] == "error" else ""))
    lines.append(f"  ({skipped} claim(s) out of scope: see each entry's reason)")
    return "\n".join(lines)


def power_summary(results: Sequence[ClaimResult]) -> str:
    """One line per claim run with ``--power``: its mutants' outcomes, the missed ones named."""
    lines = ["power (mutants of each claim's stated side):"]
    for r in results:
        if r.power is None:
            continue
        if r.verdict.value == "refuted":
            lines.append(f"  {r.id}: n/a (refuted: the statement already fails)")
            continue
        if not r.power:
            lines.append(f"  {r.id}: no stated side declared")
            continue
        counts = Counter(m["outcome"] for m in r.power)
        missed = [m["mutant"] for m in r.power if m["outcome"] in ("missed", "error")]
        unchanged = [m["mutant"] for m in r.power if m.get("statement_unchanged")]
        text = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        lines.append(f"  {r.id}: {text}"
                     + (f"; NOT CAUGHT: {', '.join(missed)}" if missed else "")
                     + (f"; caught where the mutant does not change the statement: "
                        f"{', '.join(unchanged)}" if unchanged else ""))
    return "\n".join(lines)
