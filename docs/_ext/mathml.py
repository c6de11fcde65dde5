"""Math in the HTML pages as MathML, converted at build time: no script, nothing downloaded.

The conversion is the errata pages' (``fedtheory.errata._math.math_html``, on
``latex2mathml``): one converter of LaTeX to MathML for the whole project. A formula it cannot
convert is a warning naming it (an error under ``-W``) and is shown as its source.
"""

from __future__ import annotations

from docutils import nodes
from markupsafe import escape
from sphinx.application import Sphinx
from sphinx.util import logging

from fedtheory.errata._math import math_html

logger = logging.getLogger(__name__)


def _render(self, node: nodes.Element, latex: str, display: bool) -> None:
    try:
        html = str(math_html(latex, display=display))
    except ValueError as exc:
        logger.warning("%s", exc, location=node)
        html = f"<code>{escape(latex)}</code>"
    if display:
        html = f'<div class="math">{html}</div>'
    self.body.append(html)
    raise nodes.SkipNode


def visit_math(self, node: nodes.Element) -> None:
    _render(self, node, node.astext(), display=False)


def visit_displaymath(self, node: nodes.Element) -> None:
    _render(self, node, node.astext(), display=True)


def setup(app: Sphinx) -> dict[str, object]:
    app.add_html_math_renderer("mathml", (visit_math, None), (visit_displaymath, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
