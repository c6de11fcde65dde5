"""The API reference from docs/api.md, and the worked lemmas as its examples.

``.. api-reference::`` (docs/reference.rst) documents every name docs/api.md lists, under its
module's heading, with autodoc: a class with its public methods, a function, a module with its
members, anything else as data. The names are read from docs/api.md at each build, so the page
that lists the public API and the reference cannot drift apart (tests/test_docs_build.py holds
the built inventory to the page). ``.. worked-lemmas::`` (docs/examples.rst) shows every file
of docs/lemmas/ (the third lemma too, once it lands) as a listing.

The Markdown pages are read as written for GitHub, with two changes before they are parsed
(:func:`_markdown_for_sphinx`): docs/lemmas.md's inline math ``:math:`...```` (which GitHub shows
as code) becomes MyST's math role, and links to files outside docs/ become links to copies.
"""

from __future__ import annotations

import importlib
import inspect
import re
import warnings
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

DOCS = Path(__file__).resolve().parent.parent
API = DOCS / "api.md"
LEMMAS = DOCS / "lemmas"

_HEADING = re.compile(r"^##\s+`(fedtheory(?:\.\w+)*)`\s*$")
_ROW = re.compile(r"^\|\s*`(\w+)`\s*\|(.*)\|\s*$")
_RST_MATH = re.compile(r":math:`([^`]+)`")
_OUTSIDE_LINK = re.compile(r"\]\((\.\./[^)\s]+)\)")

logger = logging.getLogger(__name__)


def api_modules(text: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """The modules of docs/api.md in its order, each with its ``(name, what it is)`` rows
    (the tables under the ``## `module``` headings; "Moved names" is not one)."""
    out: list[tuple[str, list[tuple[str, str]]]] = []
    for line in text.splitlines():
        if line.startswith("## "):
            m = _HEADING.match(line)
            if m:
                out.append((m.group(1), []))
            elif out and out[-1][1]:
                out.append(("", []))  # a heading that is no module closes the last one
        elif out and out[-1][0] and (m := _ROW.match(line)):
            out[-1][1].append((m.group(1), m.group(2).strip()))
    return [(module, rows) for module, rows in out if module and rows]


def _load(module: str, name: str) -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        mod = importlib.import_module(module)
        if hasattr(mod, name):
            return getattr(mod, name)
        return importlib.import_module(f"{module}.{name}")


def autodoc_lines(module: str, name: str) -> list[str]:
    """The autodoc directive documenting ``module.name`` at that (public) place."""
    target = f"{module}.{name}"
    obj = _load(module, name)
    if inspect.ismodule(obj):
        return [f".. automodule:: {target}", "   :members:", ""]
    if inspect.isclass(obj):
        return [f".. autoclass:: {target}", "   :members:", ""]
    if inspect.isroutine(obj):
        return [f".. autofunction:: {target}", ""]
    return [f".. autodata:: {target}", "   :no-value:", ""]


class ApiReference(SphinxDirective):
    """Every name of docs/api.md, a section per module."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        self.env.note_dependency(str(API))
        out: list[nodes.Node] = []
        for module, rows in api_modules(API.read_text(encoding="utf-8")):
            section = nodes.section(ids=[nodes.make_id(f"api-{module}")])
            section += nodes.title(text=module)
            lines: list[str] = []
            for name, _what in rows:
                try:
                    lines += autodoc_lines(module, name)
                except Exception as exc:  # noqa: BLE001 - any import failure: one warning
                    logger.warning("docs/api.md lists %s.%s, which does not import: %s",
                                   module, name, exc, location=(self.env.docname, self.lineno))
            content = StringList(lines, source=str(API))
            self.state.nested_parse(content, self.content_offset, section)
            out.append(section)
        return out


class WorkedLemmas(SphinxDirective):
    """Every Python file of docs/lemmas/ (its folders too) as a listing, by folder, helpers
    (``_*.py``) after the claim files."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        files = sorted(LEMMAS.rglob("*.py"),
                       key=lambda p: (p.parent.parts, p.name.startswith("_"), p.name))
        out: list[nodes.Node] = []
        for path in files:
            self.env.note_dependency(str(path))
            rel = path.relative_to(DOCS).as_posix()
            section = nodes.section(ids=[nodes.make_id(f"lemma-{rel}")])
            section += nodes.title(text=f"docs/{rel}")
            lines = [f".. literalinclude:: {rel}", "   :language: python", ""]
            self.state.nested_parse(StringList(lines, source=str(path)), self.content_offset,
                                    section)
            out.append(section)
        return out


def _markdown_for_sphinx(app: Sphinx, docname: str, source: list[str]) -> None:
    """A Markdown page as Sphinx reads it: ``:math:`x``` as ``{math}`x```, and a link to a
    file of the repository outside docs/ (``../README.md``) as a link to a copy of that file
    (MyST's ``path:``; as a page name it would be a missing document)."""
    if Path(app.env.doc2path(docname)).suffix == ".md":
        text = _RST_MATH.sub(lambda m: "{math}`" + m.group(1) + "`", source[0])
        source[0] = _OUTSIDE_LINK.sub(lambda m: f"](path:{m.group(1)})", text)


def _always_reread(app: Sphinx, env, added: set[str], changed: set[str],
                   removed: set[str]) -> list[str]:
    """The pages of ``.. api-reference::`` are read at every build: Sphinx sees a change of
    docs/api.md, not of a docstring, and an incremental build would keep an old reference."""
    return [doc for doc in env.found_docs if doc == "reference"]


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("api-reference", ApiReference)
    app.add_directive("worked-lemmas", WorkedLemmas)
    app.connect("source-read", _markdown_for_sphinx)
    app.connect("env-get-outdated", _always_reread)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
