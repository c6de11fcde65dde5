"""The API reference (docs/index.md) builds, with warnings as errors, and documents every name
docs/api.md lists at its documented place.

* the reference's generator (docs/_ext/api_reference.py) reads the same names from docs/api.md
  as tests/test_public_api.py does;
* (slow) ``python -m sphinx -W`` builds the pages into a temporary folder; its inventory
  (objects.inv) holds every ``module.name`` of docs/api.md; no page loads anything from outside
  (no script, style sheet, image or frame from another host: the math is MathML).
"""

from __future__ import annotations

import posixpath
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_public_api import API, API_NAMES

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _generator():
    pytest.importorskip("sphinx", reason="the docs extra is not installed: pip install '.[docs]'")
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        import api_reference
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    return api_reference


def test_the_reference_documents_the_names_of_the_public_api_page() -> None:
    gen = _generator()
    listed = {(module, name) for module, rows in gen.api_modules(API.read_text(encoding="utf-8"))
              for name, _ in rows}
    assert listed == set(API_NAMES)


def test_a_listed_name_becomes_its_autodoc_directive() -> None:
    gen = _generator()
    assert gen.autodoc_lines("fedtheory.claims", "Claim")[0] == (
        ".. autoclass:: fedtheory.claims.Claim")
    assert gen.autodoc_lines("fedtheory", "stats")[0] == ".. automodule:: fedtheory.stats"
    assert gen.autodoc_lines("fedtheory.simulate", "simulate")[0] == (
        ".. autofunction:: fedtheory.simulate.simulate")
    assert gen.autodoc_lines("fedtheory.algorithms", "RULES")[0] == (
        ".. autodata:: fedtheory.algorithms.RULES")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("sphinx", reason="the docs extra is not installed: pip install '.[docs]'")
    pytest.importorskip("myst_parser", reason="the docs extra is not installed")
    out = tmp_path_factory.mktemp("docs")
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(out / "doctrees"), str(DOCS), str(out / "html")],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode == 0, f"the docs build warns or fails:\n{proc.stderr[-4000:]}"
    return out / "html"


def inventory(path: Path) -> set[str]:
    """Every object name of a built objects.inv, whatever its role."""
    from sphinx.util.inventory import InventoryFile

    with path.open("rb") as stream:
        data = InventoryFile.load(stream, "", posixpath.join)
    return {name for entries in data.values() for name in entries}


@pytest.mark.slow
@pytest.mark.xdist_group("docs_build")  # one worker, one build for both
def test_every_name_of_the_public_api_is_in_the_built_reference(built: Path) -> None:
    names = inventory(built / "objects.inv")
    missing = sorted(f"{m}.{n}" for m, n in API_NAMES if f"{m}.{n}" not in names)
    assert not missing, f"docs/api.md lists names the reference does not document: {missing}"


_EXTERNAL = re.compile(r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=\"(?:https?:)?//",
                       re.I)


@pytest.mark.slow
@pytest.mark.xdist_group("docs_build")
def test_no_page_loads_anything_from_outside(built: Path) -> None:
    pages = sorted(built.rglob("*.html"))
    assert len(pages) >= 8
    loading = [str(p.relative_to(built)) for p in pages
               if _EXTERNAL.search(p.read_text(encoding="utf-8"))]
    assert not loading, f"pages that load from another host: {loading}"
    reference = (built / "reference.html").read_text(encoding="utf-8")
    assert "<math" in reference and "mathjax" not in reference.lower()
