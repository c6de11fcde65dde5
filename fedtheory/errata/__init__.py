"""The errata sheet a referee sends: one offline HTML page and one LaTeX file per seed paper.

``fedtheory errata --from REPORT.json --out DIR [--paper ID]`` (:func:`write_errata`) reads a
finished ``fedtheory verify --json`` report as untrusted input (:func:`load_errata_report`)
and writes, for each seed paper the report's claims cite (or the one ``--paper`` names),
``DIR/<key>-<name>.html`` and ``DIR/<key>-<name>.tex``:

* per **refuted** claim: the statement as printed (the seed's words, quoted, with its place),
  the statement as tested, the erratum kind and what is wrong, the smallest exact counterexample
  (the failing check of the most exact kind: symbolic, exact, convex, then Monte Carlo), the
  corrected statement (the ``.corrected`` claim) with its verdict and evidence, the figures, the
  command that re-runs the counterexample and, where ``verify --certify`` ran, the certified
  ratio;
* the claim's **other** claims (confirmed, inconclusive) in one table, with their evidence,
  tightness and power;
* the **provenance** of the report (version, commit, preset, seed, the report's SHA-256).

The pages need no network: formulas are MathML, figures ``data:`` URIs, and a
Content-Security-Policy forbids everything else (:data:`CSP`). Nothing of the report is inserted
unescaped. The report is hostile input: every entry's id must be a claim loaded here (built in,
an installed entry point, or a ``--claims`` file whose SHA-256 is the entry's origin's) whose
definition the entry repeats; a figure is embedded only from the run's own ``--report``
directory (``provenance.report_dir``; a relative path, no ``..``, no link out of it, a regular
file whose magic bytes are a PNG or an SVG, at most
:data:`~fedtheory.errata._content.MAX_FIGURE_BYTES`, at most
:data:`~fedtheory.errata._content.MAX_FIGURES_PER_PAGE` per page); the LaTeX escapes every
character a report chooses; the re-run commands are rebuilt and quoted.

>>> page_name("002")
'002-ocs'
"""

from __future__ import annotations

import ast
import dataclasses
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fedtheory.errata._content import (
    ERRATUM_MEANING,
    Erratum,
    PaperErrata,
    Row,
    check_paper,
    load_errata_report,
    paper_errata,
    papers_in,
)
from fedtheory.errata._html import CSP, render_html
from fedtheory.errata._latex import render_latex
from fedtheory.errata._math import latex_escape, math_html, rich_html, rich_latex, segments
from fedtheory.papers import Paper, check_paper_fields, declare, known_papers
from fedtheory.report import atomic_write_text
from fedtheory.safefiles import check_output_dir, check_output_file, read_bounded

__all__ = [
    "CSP",
    "ERRATUM_MEANING",
    "Erratum",
    "PaperErrata",
    "Row",
    "check_paper",
    "declare_papers",
    "latex_escape",
    "load_errata_report",
    "math_html",
    "page_name",
    "paper_errata",
    "papers_in",
    "render_html",
    "render_latex",
    "rich_html",
    "rich_latex",
    "segments",
    "write_errata",
]


def page_name(key: str) -> str:
    """The file name (without suffix) of paper ``key``'s page: its key and short name (a
    declared paper's key alone when its short name adds nothing but the key)."""
    key = check_paper(key)
    short = re.sub(r"[^a-z0-9]+", "-", known_papers()[key].short.lower()).strip("-")[:40]
    return f"{key}-{short}" if short and short != key else key


#: The names a claim file (or the ``_paper.py`` beside it) declares its paper by.
PAPER_NAME, PAPER_FILE = "PAPER", "_paper.py"


def _paper_literal(path: Path) -> Any:
    """The ``PAPER = {...}`` (or ``PAPER = Paper(key=..., ...)``) of the file ``path``, read as
    literals and never run; None when the file assigns no ``PAPER``."""
    try:
        tree = ast.parse(read_bounded(path, "paper file", 1024 * 1024), filename=str(path))
    except (OSError, SyntaxError, ValueError) as exc:
        raise ValueError(f"paper file {path}: cannot be read ({type(exc).__name__}: "
                         f"{exc})") from None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == PAPER_NAME
                                                for t in node.targets):
            value = node.value
            try:
                if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
                        and value.func.id == "Paper" and not value.args:
                    return {k.arg: ast.literal_eval(k.value) for k in value.keywords}
                return ast.literal_eval(value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                raise ValueError(f"paper file {path}: PAPER must be written with literals "
                                 "only (strings, numbers, lists, a dict of quotes): "
                                 "Paper(key='...', title='...', ...) or a dict") from None
    return None


def _as_paper(value: Any, where: str) -> Paper:
    """A declared paper from a :class:`~fedtheory.papers.Paper` or a dict of its fields,
    checked (:func:`fedtheory.papers.check_paper_fields`); ``ValueError`` naming ``where``."""
    if isinstance(value, Paper):
        try:
            check_paper_fields(value)  # again: its fields may have been changed since
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        return value
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise ValueError(f"{where}: PAPER must be a fedtheory Paper or a dict of its fields, "
                         f"got {type(value).__name__}")
    fields = {f.name for f in dataclasses.fields(Paper)} - {"seed_file"}
    unknown = sorted(set(value) - fields)
    if unknown:
        raise ValueError(f"{where}: PAPER has unknown field(s) {', '.join(map(ascii, unknown))}"
                         f" (known: {', '.join(sorted(fields))})")
    try:
        return Paper(**value)
    except TypeError as exc:  # a missing field
        raise ValueError(f"{where}: PAPER: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def declare_papers(doc: Mapping[str, Any]) -> list[Paper]:
    """Declare the papers of the report's claims that come from claim files
    (:func:`fedtheory.papers.declare`): the file's ``PAPER``, else the ``PAPER`` of a
    ``_paper.py`` in its folder (read as literals, never run). Returns them, in order."""
    from fedtheory.claims.registry import origin_of

    out: list[Paper] = []
    for entry in doc["claims"]:
        origin = origin_of(entry["id"])
        if origin is None or origin.kind != "file" or not origin.path:
            continue
        path = Path(origin.path)
        value = getattr(sys.modules.get(origin.module), PAPER_NAME, None)
        where = f"claim file {path}"
        if value is None and (path.parent / PAPER_FILE).is_file():
            where = f"paper file {path.parent / PAPER_FILE}"
            value = _paper_literal(path.parent / PAPER_FILE)
        if value is None:
            continue
        paper = declare(_as_paper(value, where), [entry["id"]])
        if paper not in out:
            out.append(paper)
    return out


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} exists and is not a directory")
    check_output_dir(out, "--out")
    for parent in out.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ValueError(f"--out {out}: {parent} is not a directory")
            if not out.exists() and not os.access(parent, os.W_OK | os.X_OK):
                raise ValueError(f"--out {out}: cannot create it in {parent}")
            break
    if out.exists() and not os.access(out, os.W_OK | os.X_OK):
        raise ValueError(f"--out {out}: directory is not writable")


def write_errata(report: Path | str, out: Path | str,
                 paper: str | None = None) -> list[Path]:
    """Write the errata pages (``.html``) and LaTeX snippets (``.tex``) of the report at
    ``report`` into the folder ``out``: one pair per seed paper its claims cite, or only for
    ``paper`` (a key, ``"002"``, or a short name, ``"ocs"``). Returns the paths written (none
    for a report without claims).

    ``ValueError`` before anything is written when ``paper`` is not a seed, ``out`` cannot be
    written, the report does not hold up (:func:`load_errata_report`: the message names the
    file, the claim and the field) or has no claim of ``paper``.
    """
    from fedtheory import __version__

    if not isinstance(report, (str, os.PathLike)) or str(report) == "":
        raise ValueError(f"--from must be the path of a JSON report, got {report!r}")
    if not isinstance(out, (str, os.PathLike)) or not str(out).strip():
        raise ValueError(f"--out must be a directory path, got {out!r}")
    key = check_paper(paper) if paper is not None else None
    out = Path(out)
    _check_out(out)
    doc = load_errata_report(report)
    declare_papers(doc)  # your own paper: declared by its claim files
    keys = papers_in(doc)
    if key is not None:
        if key not in keys:
            raise ValueError(f"--paper {paper}: report {report} has no claim citing seed {key} "
                             f"({known_papers()[key].short}); it covers "
                             f"{', '.join(keys) or 'no seed'}")
        keys = [key]
    targets = [out / f"{page_name(k)}.{ext}" for k in keys for ext in ("html", "tex")]
    for target in targets:  # an existing link, device, FIFO or folder there: before any work
        check_output_file(target, "--out")
    pages = [paper_errata(doc, k, source=report) for k in keys]
    written: list[Path] = []
    for k, e in zip(keys, pages, strict=True):
        html, tex = render_html(e, __version__), render_latex(e, __version__)
        name = page_name(k)
        written.append(atomic_write_text(out / f"{name}.html", html, "--out"))
        written.append(atomic_write_text(out / f"{name}.tex", tex, "--out"))
    return written
