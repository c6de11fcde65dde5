"""One self-contained HTML page per seed paper: its errata, its confirmed claims, the provenance.

The page needs nothing from the network: the styles are inline, the formulas MathML
(:mod:`._math`), the figures ``data:`` URIs; its Content-Security-Policy allows nothing else
(no script, no remote image, font or style), so a page opened offline looks the same and a
report's text cannot make it fetch or run anything. The page is laid out by the template
``page.html.j2`` beside this module; every text of the report is escaped by the template engine
(Jinja2 with autoescaping); only MathML made from it by :func:`._math.math_html` (escaped
there) is inserted as markup.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from importlib.resources import files
from typing import Any

from jinja2 import Environment, StrictUndefined
from markupsafe import Markup, escape

from fedtheory.errata._content import (
    CHECK_EVIDENCE,
    ERRATUM_MEANING,
    Figure,
    PaperErrata,
    certified_text,
    flatten,
    setup_rows,
)
from fedtheory.errata._math import display_html, inline_html, math_html, rich_html
from fedtheory.errata._rules import seeds_named
from fedtheory.errata._values import field_latex, index_shifts, value_segments
from fedtheory.vocabulary import kinds_where

__all__ = ["CSP", "TEMPLATE", "render_html"]

#: The page's template (Jinja2, autoescaping), a file of this package.
TEMPLATE = "page.html.j2"

#: The page's Content-Security-Policy: inline styles and data: images, nothing else.
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"

_STYLE = """
body { font: 16px/1.5 Georgia, 'DejaVu Serif', serif; color: #1b1b1b; max-width: 66rem;
       margin: 2rem auto; padding: 0 1.2rem; overflow-wrap: break-word; }
h1 { font-size: 1.7rem; line-height: 1.25; margin: 0.2rem 0; }
h2 { font-size: 1.3rem; border-bottom: 1px solid #bbb; margin-top: 2.5rem; }
h3 { font-size: 1.1rem; margin-bottom: 0.2rem; }
.kicker, .meta, .claim-id, .where, figcaption, .note { color: #555; font-size: 0.9rem; }
.summary { font-size: 1.05rem; }
code, pre { font: 0.85rem/1.4 'DejaVu Sans Mono', monospace; }
code { overflow-wrap: anywhere; }
pre { background: #f4f4f4; padding: 0.5rem 0.7rem; white-space: pre-wrap;
      overflow-wrap: anywhere; }
blockquote { margin: 0.3rem 0; padding: 0.2rem 0.9rem; border-left: 3px solid #999;
             background: #fafafa; }
dl.erratum { display: grid; grid-template-columns: 10.5rem minmax(0, 1fr); gap: 0.5rem 1rem; }
dl.erratum dt { font-weight: bold; }
dl.erratum dd { margin: 0; min-width: 0; }
article, .claim { border-top: 1px solid #ddd; padding-top: 0.6rem; margin-top: 1.6rem; }
.kind { font: bold 0.8rem sans-serif; background: #eee; border-radius: 3px;
        padding: 0.1rem 0.4rem; vertical-align: middle; }
table { border-collapse: collapse; margin: 0.4rem 0; font-size: 0.88rem; max-width: 100%; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.45rem; text-align: left;
         vertical-align: top; }
th { background: #f0f0f0; }
td.num { text-align: right; white-space: nowrap; }
table.counterexample td:first-child { white-space: nowrap; }
table.counterexample td math { math-style: normal; }
.digits { overflow-wrap: anywhere; word-break: break-all; }
.formula { margin: 0.4rem 0; }
.formula math[display="block"] { margin: 0.15rem 0; width: fit-content; }
.formula math[display="block"] + math[display="block"] { padding-left: 2.5em; }
math[display="block"] { max-width: 100%; }
dl.setup { margin: 0.3rem 0; }
dl.setup > dt { font-weight: bold; margin-top: 0.5rem; }
dl.setup > dd { margin: 0 0 0 1rem; }
dl.setup dl { display: grid; grid-template-columns: 8.5rem minmax(0, 1fr); gap: 0.1rem 0.8rem;
              margin: 0.1rem 0; font-size: 0.92rem; }
dl.setup dl dt { color: #555; } dl.setup dl dd { margin: 0; min-width: 0; }
figure { margin: 0.5rem 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #ddd; box-sizing: border-box; }
ul.checks { margin: 0.2rem 0; padding-left: 1.2rem; }
summary { cursor: pointer; color: #333; }
.verdict-refuted { color: #8a1c1c; } .verdict-confirmed { color: #1c5e2a; }
.verdict-inconclusive, .verdict-error { color: #7a5a00; }
@page { size: A4; margin: 15mm; }
@media print {
  body { max-width: none; margin: 0; padding: 0; font-size: 11pt; }
  dl.erratum { display: block; } dl.erratum dd { margin: 0 0 0.6rem 0; }
  details > * { display: block; }
  figure, .formula, table { break-inside: avoid; }
}
"""


#: The provenance fields a page shows (missing ones are left out).
_PROVENANCE = ("fedtheory_version", "commit", "dirty", "preset", "seed", "executor", "time",
               "argv", "python", "platform", "packages")

_HOLDS = {True: "The intended statement holds.", False: "The intended statement is false too.",
          None: "Whether the intended statement holds is not established here."}


def _data_uri(figure: Figure) -> str:
    """The figure's bytes as read and checked when the page's content was collected (never
    the file again: it may have changed since)."""
    assert figure.data is not None and figure.media_type is not None
    data = base64.b64encode(figure.data).decode("ascii")
    return f"data:{figure.media_type};base64,{data}"


def _shifts(item: Any) -> frozenset[str]:
    """The names an item's counterexample and checks index from 0 (shown 1-based)."""
    texts = [str(dict(getattr(item, "counterexample", None) or {}))]
    texts += [x.detail for x in getattr(item, "evidence", ())]
    return index_shifts(texts)


def _html_of(parts: list[tuple[str, str]]) -> Markup:
    out = []
    for kind, piece in parts:
        if kind == "math":
            try:
                out.append(inline_html(piece))
                continue
            except ValueError:
                from fedtheory.errata._values import plain_text
                piece = plain_text(piece)
        cls = "digits" if any(ch.isdigit() for ch in piece) and len(piece) > 40 else ""
        out.append(Markup('<span class="{}">{}</span>').format(cls, piece) if cls
                   else escape(piece))
    return Markup("").join(out)


def _counterexample_rows(item: Any) -> list[tuple[Markup, Markup]]:
    """The counterexample of ``item`` as (field, value) rows: a field that is a symbol as a
    formula, every value by :func:`fedtheory.errata._values.value_segments` (exact values of
    an exact or symbolic check as fractions); nested objects one level deep as
    ``outer.inner``."""
    check = item.counterexample_check
    exact = check is not None and check.kind in kinds_where("exact_values")
    shifts = _shifts(item)
    rows: list[tuple[Markup, Markup]] = []

    def name_html(name: str) -> Markup:
        latex = field_latex(name, shifts)
        return math_html(latex) if latex else Markup("<code>{}</code>").format(name)

    for key, value in item.counterexample.items():
        if isinstance(value, Mapping):
            for k2, v2 in value.items():
                if k2 in ("replay", "seed", "preset", "check"):
                    continue
                rows.append((Markup("{}.{}").format(name_html(str(key)), name_html(str(k2))),
                             _html_of(value_segments(v2, exact, shifts))))
        else:
            rows.append((name_html(str(key)), _html_of(value_segments(value, exact, shifts))))
    return rows


def _has_figure_checks(item: Any) -> bool:
    return any(x.kind in kinds_where("shows") for x in item.evidence)


def _summary(e: PaperErrata) -> str:
    n = sum(e.counts.values())
    parts = [f"{e.counts[v]} {v}" for v in ("refuted", "confirmed", "inconclusive", "error")
             if e.counts.get(v)]
    graded = [f"{e.grades[g]} {g}" for g in ("consistent (low power)", "not testable")
              if e.grades.get(g)]
    if graded:  # the grades say which confirmations could have failed, which checks could not
        parts.append("of these " + " and ".join(graded))
    return (f"{n} statement{'s' if n != 1 else ''} of this document checked: "
            + ", ".join(parts) + ".") if n else "No statement of this document is in the report."


_ENV: list[Environment] = []


def _env() -> Environment:
    if not _ENV:
        env = Environment(autoescape=True, undefined=StrictUndefined, trim_blocks=True,
                          lstrip_blocks=True)
        # the toolkit's prose (a seed cited by its number there by the paper's name)
        env.filters["rich"] = lambda text, shifts=None: rich_html(seeds_named(text),
                                                                  shifts=shifts)
        env.filters["quote"] = lambda text: rich_html(text, quote=True)
        env.filters["display"] = display_html
        _ENV.append(env)
    return _ENV[0]


_TEMPLATES: list[Any] = []


def _template() -> Any:
    """The page's template, compiled once."""
    if not _TEMPLATES:
        _TEMPLATES.append(_env().from_string(files("fedtheory.errata").joinpath(TEMPLATE)
                                             .read_text(encoding="utf-8")))
    return _TEMPLATES[0]


def render_html(e: PaperErrata, version: str) -> str:
    """The page of ``e`` (:func:`fedtheory.errata.paper_errata`) as a complete HTML document;
    ``version`` is the fedtheory version that writes it."""
    prov: Mapping[str, Any] = {
        **{k: None for k in _PROVENANCE}, "fedtheory_version": "?", "preset": "?", "seed": "?",
        "time": "?", **{k: v for k, v in e.provenance.items() if v is not None}}
    packages = ", ".join(f"{k} {v}" for k, v in (prov.get("packages") or {}).items() if v)
    template = _template()
    return template.render(
        e=e, paper=e.paper, prov=prov, version=version, csp=CSP, style=Markup(_STYLE),
        summary=_summary(e), meaning=ERRATUM_MEANING, evidence_kind=CHECK_EVIDENCE,
        holds=_HOLDS, flatten=flatten, certified=certified_text, setup_rows=setup_rows,
        data_uri=_data_uri, has_figure_checks=_has_figure_checks, packages=packages,
        counterexample_rows=_counterexample_rows, shifts_of=_shifts,
        any_certified=any(r.certified is not None for r in e.rows),
        any_power=any(r.power != "not run" for r in e.rows),
    )
