"""Sphinx configuration of the API reference (docs/index.md; README, "A short tour").

Build it with ``python -m sphinx -W --keep-going -b html docs docs/_build/html`` after
``pip install ".[docs]"``. Nothing is downloaded at build or reading time: the mathematics
is MathML, converted at build time by the converter the errata pages use (``latex2mathml``,
a dependency of the package), which browsers render without a script (docs/_ext/mathml.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))  # this checkout's fedtheory, not an installed copy
sys.path.insert(0, str(DOCS / "_ext"))

project = "fedtheory"
author = "the fedtheory authors"
copyright = "the fedtheory authors (MIT)"  # noqa: A001 - Sphinx's name

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "myst_parser",
    "api_reference",  # the reference from docs/api.md, the worked lemmas as examples
    "mathml",  # math as MathML at build time (no MathJax, no download)
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "lemmas"]

# Markdown pages: $...$ math (docs/api.md), anchors of headings for links between pages
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
napoleon_google_docstring = True
napoleon_numpy_docstring = True

html_theme = "alabaster"
html_math_renderer = "mathml"
html_title = "fedtheory"
html_static_path: list[str] = []
html_show_sourcelink = False
