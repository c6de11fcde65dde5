"""Reports: the JSON document and the Markdown report of a verification run, and the cache
of the last verdict per claim that ``fedtheory show`` reads."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fedtheory.claims.core import ClaimResult

__all__ = [
    "cache_path",
    "load_last_results",
    "save_last_results",
    "to_json",
    "verdict_table",
    "write_json",
    "write_markdown",
]

REPORT_VERSION = "1"


def to_json(results: Sequence[ClaimResult], seed: int, preset: str) -> dict[str, Any]:
    """The report document: ``{"version", "seed", "preset", "claims": [...]}``."""
    from fedtheory import __version__

    return {
        "version": REPORT_VERSION,
        "fedtheory_version": __version__,
        "seed": seed,
        "preset": preset,
        "summary": dict(Counter(r.verdict.value for r in results)),
        "claims": [r.to_dict() for r in results],
    }


def write_json(path: Path | str, results: Sequence[ClaimResult], seed: int, preset: str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_json(results, seed, preset), indent=2, allow_nan=False) + "\n")
    return path


def verdict_table(results: Sequence[ClaimResult]) -> str:
    """A plain-text table: id, verdict, checks passed, seconds."""
    rows = [("claim", "verdict", "checks", "seconds")]
    for r in results:
        n_ok = sum(c.passed is True for c in r.checks)
        rows.append((r.id, r.verdict.value, f"{n_ok}/{len(r.checks)}", f"{r.seconds:.1f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = []
    for k, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    counts = Counter(r.verdict.value for r in results)
    lines.append("")
    lines.append(", ".join(f"{v}: {counts.get(v, 0)}" for v in
                           ("confirmed", "refuted", "inconclusive", "error")))
    return "\n".join(lines)


def _md_value(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, list) and len(v) > 8:
        return f"[{', '.join(_md_value(x) for x in v[:8])}, ...] ({len(v)} values)"
    if isinstance(v, list):
        return "[" + ", ".join(_md_value(x) for x in v) + "]"
    return str(v)


def write_markdown(directory: Path | str, results: Sequence[ClaimResult], seed: int,
                   preset: str) -> Path:
    """Write ``report.md`` in ``directory``: a summary table, then a section per claim."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    out = [f"# fedtheory report (preset `{preset}`, seed {seed})", ""]
    counts = Counter(r.verdict.value for r in results)
    out.append(", ".join(f"**{k}**: {v}" for k, v in sorted(counts.items())))
    out += ["", "| claim | seed | kind | verdict | checks |", "|---|---|---|---|---|"]
    for r in results:
        n_ok = sum(c.passed is True for c in r.checks)
        out.append(f"| [{r.id}](#{r.id.replace('.', '')}) | {r.seed_ref} | {r.kind} | "
                   f"**{r.verdict.value}** | {n_ok}/{len(r.checks)} |")
    for r in results:
        out += ["", f"## {r.id}", "", f"*{r.seed_ref}*, {r.kind}: **{r.verdict.value}**", "",
                "$$", r.statement.strip(), "$$", ""]
        out += ["| check | kind | passed | measured | theory | detail |",
                "|---|---|---|---|---|---|"]
        for c in r.checks:
            detail = (c.detail or "").replace("|", "\\|").replace("\n", " ")
            out.append(f"| {c.name} | {c.kind} | {c.passed} | {_md_value(c.measured)} | "
                       f"{_md_value(c.theoretical)} | {detail} |")
        if r.counterexample:
            out += ["", "**Counterexample** (re-run with these inputs):", "", "```json",
                    json.dumps(r.counterexample, indent=2)[:6000], "```"]
        for c in r.checks:
            for fig in c.figures:
                rel = os.path.relpath(fig, directory)
                out += ["", f"![{c.name}]({rel})"]
    path = directory / "report.md"
    path.write_text("\n".join(out) + "\n")
    return path


def cache_path() -> Path:
    """Where the last verdict of each claim is kept (``$FEDTHEORY_CACHE`` or the XDG cache)."""
    env = os.environ.get("FEDTHEORY_CACHE")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "fedtheory" / "last_results.json"


def load_last_results() -> dict[str, Any]:
    path = cache_path()
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return {}


def save_last_results(results: Sequence[ClaimResult]) -> None:
    """Merge these results into the cache (best effort: a read-only home is not an error)."""
    data = load_last_results()
    for r in results:
        data[r.id] = r.to_dict()
    path = cache_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1, allow_nan=False))
    except OSError:
        pass
