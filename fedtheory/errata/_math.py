r"""Text with mathematics, for an HTML page (MathML) and for a LaTeX file.

The texts of a report come in four forms:

* a claim's ``statement``: LaTeX math without delimiters (:func:`math_html`, :func:`math_latex`);
* prose with ``$...$`` (or ``$$...$$``) math;
* a quote from a seed, which may mix prose and LaTeX commands without delimiters, as the seed
  texts do (``\left\lVert\tilde U\right\rVert is the j-th largest value``);
* the toolkit's own prose (findings, check details), where a ``\eta`` is the name of a symbol
  in a printed expression (``L*\eta*\sigma_G^2``): written as its character.

:func:`segments` (:mod:`fedtheory.mathtext`, the one cutting report.md uses too) cuts the
last three into prose and math parts (a quote's undelimited LaTeX
by :func:`bare_math_runs`: maximal runs of words that carry LaTeX markup); :func:`rich_html`
renders them with every prose part escaped and every math part converted to MathML by
``latex2mathml``, so no LaTeX source is left on the page; :func:`rich_latex` escapes the prose
for LaTeX and delimits the math with ``\(...\)``.

>>> segments("a $x^2$ b")
[('text', 'a '), ('math', 'x^2'), ('text', ' b')]
>>> segments(r"bounded by 2K\exp(-\beta t/2).", quote=True)
[('text', 'bounded by '), ('math', '2K\\exp(-\\beta t/2)'), ('text', '.')]
>>> str(rich_html("no math & <b>"))
'no math &amp; &lt;b&gt;'
"""

from __future__ import annotations

import re
from functools import lru_cache

from latex2mathml.converter import convert as _convert
from markupsafe import Markup, escape

from fedtheory.errata._values import prose_segments

# the text cut into prose and math: a foundation (report.md uses it too); kept importable here
from fedtheory.mathtext import (  # noqa: F401
    _DOLLARS,
    SYMBOLS,
    _braces_ok,
    _merge,
    bare_math_runs,
    segments,
    symbols,
)
from fedtheory.safetext import terminal_text

__all__ = [
    "bare_math_runs",
    "latex_escape",
    "math_html",
    "display_html",
    "display_lines",
    "formula_width",
    "inline_html",
    "math_latex",
    "page_segments",
    "rich_html",
    "rich_latex",
    "segments",
]

# Commands latex2mathml does not know, rewritten to ones it renders the same way (or, for
# spacing and sizing commands that change nothing but the look, dropped).
_REWRITE = (
    (re.compile(r"\\coloneqq"), r":="),
    (re.compile(r"\\dfrac"), r"\\frac"),
    (re.compile(r"\\tfrac"), r"\\frac"),
    (re.compile(r"\\(?:textstyle|displaystyle|scriptstyle)\b"), ""),
    (re.compile(r"\\(?:[Bb]ig{1,2}|[Bb]igg)[lrm]?(?![A-Za-z])"), ""),
    (re.compile(r"\\!"), ""),
    (re.compile(r"\\rm(?![A-Za-z])"), r"\\mathrm"),
    (re.compile(r"\\lVert"), r"\\|"),
    (re.compile(r"\\rVert"), r"\\|"),
)


def _prepare(latex: str) -> str:
    r"""``latex`` with the commands latex2mathml lacks rewritten (:data:`_REWRITE`).

    >>> _prepare(r"\Big(\dfrac12\Big)")
    '(\\frac12)'
    """
    for pattern, repl in _REWRITE:
        latex = pattern.sub(repl, latex)
    return latex


_ROMAN_GROUP = re.compile(r"\{\\mathrm\s+([^{}]*)\}")


# The elements and attributes latex2mathml writes; anything else in its output is text.
_TAGS = ("math|semantics|annotation|menclose|merror|mfenced|mfrac|mi|mmultiscripts|mn|mo|"
         "mover|mpadded|mphantom|mprescripts|mroot|mrow|ms|mspace|msqrt|mstyle|msub|msubsup|"
         "msup|mtable|mtd|mtext|mtr|munder|munderover|none")
_ATTRS = ("xmlns|display|displaystyle|scriptlevel|mathvariant|fence|stretchy|form|minsize|"
          "maxsize|accent|accentunder|movablelimits|columnalign|columnlines|columnspacing|"
          "rowspacing|rowlines|width|height|depth|lspace|rspace|linethickness|notation|"
          "separator|symmetric|largeop|encoding|frame|class")
_TAG = re.compile(rf'</?(?:{_TAGS})(?:\s+(?:{_ATTRS})="[^"<>&]*")*\s*/?>')
_ENTITY = re.compile(r"&(?:#x[0-9A-Fa-f]+|#[0-9]+|[A-Za-z][A-Za-z0-9]*);")


def _sanitise(mathml: str) -> str:
    """latex2mathml's output with its text escaped: it copies the text of ``\\text{...}`` and
    of some symbols (``&``) unescaped, so a formula holding ``<`` could write HTML. Only the
    MathML elements and attributes it writes (:data:`_TAGS`, :data:`_ATTRS`) are kept as
    markup; every other ``<``, ``>`` and ``&`` (not starting an entity) is escaped.

    >>> _sanitise('<math><mtext>a<b & <script></mtext></math>')
    '<math><mtext>a&lt;b &amp; &lt;script&gt;</mtext></math>'
    """
    out, pos = [], 0
    for m in _TAG.finditer(mathml):
        out.append(_escape_text(mathml[pos:m.start()]))
        out.append(m.group())
        pos = m.end()
    out.append(_escape_text(mathml[pos:]))
    return "".join(out)


def _escape_text(text: str) -> str:
    pieces, pos = [], 0
    for m in _ENTITY.finditer(text):
        pieces.append(str(escape(text[pos:m.start()])))
        pieces.append(m.group())
        pos = m.end()
    pieces.append(str(escape(text[pos:])))
    return "".join(pieces)


@lru_cache(maxsize=4096)
def _mathml(latex: str, display: bool) -> str:
    text = _prepare(latex.strip())
    text = _ROMAN_GROUP.sub(r"\\mathrm{\1}", text)  # {\rm ind} -> \mathrm{ind}
    return _sanitise(_convert(text, display="block" if display else "inline"))


def math_html(latex: str, display: bool = False) -> Markup:
    r"""The LaTeX math ``latex`` (no delimiters) as a MathML ``<math>`` element.

    ``ValueError`` naming the formula when it cannot be converted (unbalanced braces, say).

    >>> str(math_html("x<1"))  # doctest: +ELLIPSIS
    '<math ...><mrow><mi>x</mi><mo>&#x0003C;</mo><mn>1</mn></mrow></math>'
    """
    if not isinstance(latex, str):
        raise ValueError(f"latex must be a string, got {latex!r}")
    try:
        return Markup(_mathml(latex, bool(display)))
    except Exception as exc:  # noqa: BLE001 - latex2mathml raises many kinds; one message
        raise ValueError(f"formula {latex!r} cannot be rendered as MathML: {exc}") from None


# ------------------------------------------------------------------------------- segmentation

def page_segments(text: str, quote: bool = False,
                  shifts: frozenset[str] | None = None) -> list[tuple[str, str]]:
    """``text`` cut for a page: a seed's words (``quote``) by :func:`segments`; the toolkit's
    own prose with its ``$...$`` math as it is and its ASCII math found and translated
    (:func:`fedtheory.errata._values.prose_segments`, 0-based names of ``shifts`` 1-based)."""
    if quote:
        return segments(text, quote=True)
    out: list[tuple[str, str]] = []
    pos = 0
    for m in _DOLLARS.finditer(text):
        out += prose_segments(text[pos:m.start()].replace("\\$", "$"), shifts)
        out.append(("math", m.group(1) if m.group(1) is not None else m.group(2)))
        pos = m.end()
    out += prose_segments(text[pos:].replace("\\$", "$"), shifts)
    return [(k, p) for k, p in out if p]


def rich_html(text: str, quote: bool = False, shifts: frozenset[str] | None = None) -> Markup:
    """``text`` as HTML: prose escaped, math as MathML (:func:`page_segments`; ``quote`` for a
    seed's words). A formula that cannot be converted is shown in plain Unicode
    (:func:`fedtheory.errata._values.plain_text`; a test in a real browser holds every page to
    having no LaTeX left)."""
    from fedtheory.errata._values import plain_text

    parts = []
    for kind, piece in page_segments(text, quote, shifts):
        if kind == "text":
            parts.append(escape(piece))
            continue
        try:
            parts.append(inline_html(piece))
        except ValueError:
            parts.append(escape(plain_text(piece)))
    return Markup("").join(parts)


# ------------------------------------------------------------------------------------ LaTeX

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
    "^": r"\^{}", "_": r"\_", "%": r"\%", "~": r"\textasciitilde{}",
}
# Characters of the reports' prose that pdfLaTeX does not take in text mode.
_LATEX_UNICODE = {
    "α": r"\(\alpha\)", "β": r"\(\beta\)", "γ": r"\(\gamma\)", "δ": r"\(\delta\)",
    "ε": r"\(\varepsilon\)", "ζ": r"\(\zeta\)", "η": r"\(\eta\)", "θ": r"\(\theta\)",
    "λ": r"\(\lambda\)", "μ": r"\(\mu\)", "ρ": r"\(\rho\)", "σ": r"\(\sigma\)",
    "τ": r"\(\tau\)", "φ": r"\(\phi\)", "ψ": r"\(\psi\)", "Ψ": r"\(\Psi\)", "Θ": r"\(\Theta\)",
    "∇": r"\(\nabla\)", "≤": r"\(\le\)", "≥": r"\(\ge\)", "≈": r"\(\approx\)",
    "×": r"\(\times\)", "−": "-", "→": r"\(\to\)", "∞": r"\(\infty\)", "‖": r"\(\|\)",
    "∈": r"\(\in\)", "√": r"\(\surd\)", "±": r"\(\pm\)", "·": r"\(\cdot\)",
    "–": "--", "—": "---", "…": r"\dots{}", "‘": "`", "’": "'", "“": "``", "”": "''",
}


def latex_escape(text: str) -> str:
    r"""Plain ``text`` for LaTeX's text mode: its special characters escaped, the Greek
    letters and symbols of the reports' prose as math.

    >>> print(latex_escape("50% of a_b & {c} ~ η ≤ 1"))
    50\% of a\_b \& \{c\} \textasciitilde{} \(\eta\) \(\le\) 1
    """
    out = []
    for ch in terminal_text(text):  # no control character (TeX reads some as markup)
        out.append(_LATEX_SPECIAL.get(ch) or _LATEX_UNICODE.get(ch) or ch)
    return "".join(out)


def math_latex(latex: str) -> str:
    r"""A formula for pasting into a LaTeX document: its source with lines joined.

    >>> math_latex("a +\n  b")
    'a + b'
    """
    return " ".join(latex.split())


def rich_latex(text: str, quote: bool = False) -> str:
    r"""``text`` for LaTeX's text mode: prose escaped (:func:`latex_escape`), math as
    ``\(...\)`` (:func:`segments`; ``quote`` for a seed's words).

    >>> print(rich_latex(r"holds for $x_1$ & bounded by 2K\exp(-t).", quote=True))
    holds for \(x_1\) \& bounded by \(2K\exp(-t)\).
    >>> print(rich_latex(r"floor \eta c"))
    floor \(\eta\) c
    """
    return "".join(latex_escape(piece) if kind == "text" else f"\\({math_latex(piece)}\\)"
                   for kind, piece in segments(text, quote))


# ---------------------------------------------------------------------- display formulas

#: The width a display line may take, in the units of :func:`formula_width` (about an em):
#: a printed A4 column (180 mm) at the page's size of type.
LINE_WIDTH = 40.0

_RELATION_CMDS = {"le", "leq", "ge", "geq", "ne", "neq", "approx", "to", "Rightarrow", "iff",
                  "implies", "equiv", "sim", "coloneqq", "leftarrow", "Longrightarrow"}
_SEPARATOR_CMDS = {"quad", "qquad"}
_LATEX_TOKEN = re.compile(r"\\[A-Za-z]+\*?|\\.|\s+|.", re.DOTALL)
_NARROW = {"quad": 1.0, "qquad": 2.0, ",": 0.2, ";": 0.3, " ": 0.3, "!": 0.0, ":": 0.25}
_INVISIBLE = {"left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr",
              "biggl", "biggr", "Biggl", "Biggr", "displaystyle", "textstyle", "limits",
              "mathrm", "mathbf", "mathbb", "mathcal", "mathit", "boldsymbol", "operatorname",
              "rm", "tilde", "hat", "bar", "overline", "widetilde", "widehat", "vec", "dot",
              "begin", "end"}


def _groups(tokens: list[str], k: int) -> tuple[list[str], int]:
    """The brace group (or single token) at ``tokens[k]``: its tokens and the next index."""
    while k < len(tokens) and tokens[k].isspace():
        k += 1
    if k >= len(tokens):
        return [], k
    if tokens[k] != "{":
        return [tokens[k]], k + 1
    depth, j = 0, k
    while j < len(tokens):
        depth += tokens[j] == "{"
        depth -= tokens[j] == "}"
        if depth == 0:
            return tokens[k + 1:j], j + 1
        j += 1
    return tokens[k + 1:], len(tokens)


def _width(tokens: list[str]) -> float:
    w, k = 0.0, 0
    while k < len(tokens):
        tok = tokens[k]
        if tok.isspace() or tok in "{}&":
            k += 1
            continue
        name = tok[1:] if tok.startswith("\\") else None
        if name in ("frac", "dfrac", "tfrac", "binom"):
            a, k = _groups(tokens, k + 1)
            b, k = _groups(tokens, k)
            w += max(_width(a), _width(b)) + 0.4
            continue
        if tok in ("^", "_"):
            a, k = _groups(tokens, k + 1)
            w += 0.7 * _width(a)
            continue
        if name in ("text", "mbox", "textrm", "textbf", "textit"):
            a, k = _groups(tokens, k + 1)
            w += 0.5 * sum(len(t) for t in a)
            continue
        if name == "begin":  # an environment: its widest row
            _, k = _groups(tokens, k + 1)
            depth, j = 1, k
            while j < len(tokens) and depth:
                depth += tokens[j] == "\\begin"
                depth -= tokens[j] == "\\end"
                j += 1
            body = tokens[k:j - 1]
            rows, row = [], []
            for t in body:
                if t == "\\\\":
                    rows.append(row)
                    row = []
                else:
                    row.append(t)
            rows.append(row)
            w += max(_width(r) for r in rows) + 1.5
            _, k = _groups(tokens, j)
            continue
        if name is not None:
            w += _NARROW.get(name, 0.0 if name in _INVISIBLE else
                             1.6 if name in _RELATION_CMDS else 1.1)
        elif tok in "=<>":
            w += 1.6
        elif tok in "+-":
            w += 1.4
        elif tok in ",;":
            w += 0.5
        elif tok in "()[]|.":
            w += 0.4
        else:
            w += 0.62
        k += 1
    return w


def formula_width(latex: str) -> float:
    r"""An estimate of how wide ``latex`` is set, in ems (a letter about 0.6, a relation with
    its spaces 1.6, a fraction its wider part, scripts 0.7 of their size).

    >>> formula_width("x") < formula_width(r"\frac{a+b}{c}") < formula_width("a+b+c")
    True
    """
    return _width(_LATEX_TOKEN.findall(_prepare(latex)))


def _top_level(tokens: list[str], parens: bool = False) -> list[int]:
    """The depth (braces, ``\\left``/``\\right``, environments; with ``parens`` plain
    parentheses and set braces ``\\{...\\}`` too, when they balance) before each token."""
    pairs = [(o, c) for o, c in (("(", ")"), ("\\{", "\\}"))
             if parens and tokens.count(o) == tokens.count(c)]
    opens, closes = {o for o, _ in pairs}, {c for _, c in pairs}
    depths, depth = [], 0
    for tok in tokens:
        if tok in ("}", "\\right", "\\end") or tok in closes:
            depth -= 1
        depths.append(depth)
        if tok in ("{", "\\left", "\\begin") or tok in opens:
            depth += 1
    return depths


def _pieces(tokens: list[str], breaks: set[int]) -> list[list[str]]:
    out, start = [], 0
    for k in sorted(breaks):
        if k > start:
            out.append(tokens[start:k])
            start = k
    out.append(tokens[start:])
    return [p for p in out if "".join(p).strip()]


def _pack(pieces: list[list[str]], width: float) -> list[list[str]]:
    lines: list[list[str]] = []
    for piece in pieces:
        if lines and _width(lines[-1] + piece) <= width:
            lines[-1] = lines[-1] + piece
        else:
            lines.append(piece)
    return lines


def _strip_spacing(tokens: list[str]) -> str:
    text = "".join(tokens)  # not stripped first: "\\ " is a space, its "\\" alone is not
    spacing = r"(?:\\quad|\\qquad|\\[,;: ]|~|\s)+"
    text = re.sub(rf"^{spacing}", "", text)
    return re.sub(rf"{spacing}$", "", text)


def display_lines(latex: str, width: float = LINE_WIDTH) -> list[str]:
    r"""``latex`` set on lines no wider than ``width`` (:func:`formula_width`): broken before a
    relation (``=``, ``\le``, ...) or after a separator (``,\quad``, ``;``) at the top level,
    and where a part is still wider, before a ``+`` or ``-`` of its top level; never inside
    braces, ``\left...\right`` or an environment.

    >>> display_lines("a = b", width=40)
    ['a = b']
    >>> display_lines(r"x_1 + x_2 = y_1 + y_2,\quad z \le w", width=8)
    ['x_1 + x_2', '= y_1 + y_2,\\quad z', '\\le w']
    >>> display_lines(r"P(\text{a friend leaves},\ t < T) + a_1 + a_2 \le p", width=14)
    ['P(\\text{a friend leaves},\\ t < T)', '+ a_1 + a_2', '\\le p']
    """
    if _width(_LATEX_TOKEN.findall(_prepare(latex))) <= width:
        return [latex.strip()]
    # outside parentheses first (``P(a friend leaves, t < T)`` is not cut at its ``<``); where
    # that leaves a line too wide, inside them too
    lines = _broken(latex, width, parens=True)
    if any(_width(_LATEX_TOKEN.findall(_prepare(x))) > width for x in lines):
        lines = _broken(latex, width, parens=False)
    return lines


def _broken(latex: str, width: float, parens: bool) -> list[str]:
    """:func:`display_lines`' cuts, at the top level of braces (and with ``parens`` of
    parentheses)."""
    tokens = _LATEX_TOKEN.findall(latex.strip())
    depths = _top_level(tokens, parens)
    breaks: set[int] = set()
    for k, tok in enumerate(tokens):
        if depths[k] != 0 or k == 0:
            continue
        name = tok[1:] if tok.startswith("\\") else None
        prev = next((t for t in reversed(tokens[:k]) if not t.isspace()), "")
        if (tok in "=<>" or name in _RELATION_CMDS) and prev not in ("=", "<", ">", ":",
                                                                     "\\left", "\\right"):
            breaks.add(k)
        elif name in _SEPARATOR_CMDS or (tok == ";" and prev != "\\"):
            breaks.add(k + 1)
    lines = _pack(_pieces(tokens, breaks), width)
    out: list[list[str]] = []
    for line in lines:
        if _width(line) <= width:
            out.append(line)
            continue
        depths = _top_level(line, parens)
        signs = {k for k, t in enumerate(line) if k > 0 and depths[k] == 0 and t in "+-"
                 and next((x for x in reversed(line[:k]) if not x.isspace()), "")
                 not in ("=", "(", "{", "^", "_", ",", "+", "-", "\\le", "\\ge")}
        out += _pack(_pieces(line, signs), width)
    return [s for s in (_strip_spacing(x) for x in out) if s]


#: The widest inline formula set as one piece (:func:`formula_width`); a wider one is cut
#: where :func:`display_lines` would break it, so that the line can wrap between its pieces.
INLINE_WIDTH = 24.0


def inline_html(latex: str, width: float = INLINE_WIDTH) -> Markup:
    """The inline formula ``latex`` as MathML: one ``<math>``, or when it is wider than
    ``width`` several, cut before its relations, ``+`` and ``-`` signs, between which a line
    of text may wrap. ``ValueError`` as :func:`math_html`."""
    lines = display_lines(latex, width) if formula_width(latex) > width else [latex]
    try:
        return Markup(" ").join(math_html(line) for line in lines)
    except ValueError:  # a cut the converter cannot take: the formula whole
        return math_html(latex)


def display_html(latex: str, width: float = LINE_WIDTH) -> Markup:
    """The display formula ``latex`` as MathML on as many lines as it needs
    (:func:`display_lines`): one ``<math display="block">`` per line in a
    ``<div class="formula">``, the lines after the first indented. ``ValueError`` as
    :func:`math_html` when a line cannot be converted."""
    lines = display_lines(latex, width)
    try:
        parts = [math_html(line, display=True) for line in lines]
    except ValueError:  # a break the converter cannot take: the formula whole
        parts = [math_html(latex, display=True)]
    return Markup('<div class="formula">{}</div>').format(Markup("").join(parts))
