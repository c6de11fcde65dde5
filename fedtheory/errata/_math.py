r"""Text with mathematics, for an HTML page (MathML) and for a LaTeX file.

The texts of a report come in four forms:

* a claim's ``statement``: LaTeX math without delimiters (:func:`math_html`, :func:`math_latex`);
* prose with ``$...$`` (or ``$$...$$``) math;
* a quote from a seed, which may mix prose and LaTeX commands without delimiters, as the seed
  texts do (``\left\lVert\tilde U\right\rVert is the j-th largest value``);
* the toolkit's own prose (findings, check details), where a ``\eta`` is the name of a symbol
  in a printed expression (``L*\eta*\sigma_G^2``): written as its character.

:func:`segments` cuts the last three into prose and math parts (a quote's undelimited LaTeX
by :func:`bare_math_runs`: maximal runs of words that carry LaTeX markup); :func:`rich_html`
renders them with every prose part escaped and every math part converted to MathML by
``latex2mathml``, so no LaTeX source is left on the page; :func:`rich_latex` escapes the prose
for LaTeX and delimits the math with ``\(...\)``.

>>> segments("a $x^2$ b")
[('text', 'a '), ('math', 'x^2'), ('text', ' b')]
>>> segments(r"bounded by 2K\exp(-\beta t/2).", quote=True)
[('text', 'bounded by '), ('math', '2K\\exp(-\\beta t/2)'), ('text', '.')]
>>> str(rich_html("a < b"))
'a &lt; b'
"""

from __future__ import annotations

import re
from functools import lru_cache

from latex2mathml.converter import convert as _convert
from markupsafe import Markup, escape

from fedtheory.safetext import terminal_text

__all__ = [
    "bare_math_runs",
    "latex_escape",
    "math_html",
    "math_latex",
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

_DOLLARS = re.compile(r"(?<!\\)\$\$(.+?)(?<!\\)\$\$|(?<!\\)\$(.+?)(?<!\\)\$", re.DOTALL)
_MATHY = re.compile(r"[\\^_{}=<>]|^[+\-*/|]$")
_PROSE = re.compile(r"[A-Za-z]{2,}")
_LEAD = re.compile(r"^[A-Za-z0-9]$|^\d+(?:\.\d+)?$")
_TRAIL = re.compile(r"[,.;:]+$")
_COMMAND = re.compile(r"\\[A-Za-z]")


def _is_math_word(word: str) -> bool:
    return bool(_MATHY.search(word))


def _is_prose_word(word: str) -> bool:
    return not _is_math_word(word) and bool(_PROSE.search(word))


def bare_math_runs(text: str) -> list[tuple[str, str]]:
    r"""Cut prose mixed with undelimited LaTeX into ``("text", ...)`` and ``("math", ...)``.

    A word is math when it carries LaTeX markup (a backslash, ``^``, ``_``, a brace, ``=``,
    ``<``, ``>``) or is an operator; prose when it has two letters in a row and no markup;
    anything else (``p``, ``(0,1),``) is neutral. A math run is a maximal sequence of math
    and neutral words that starts with a math word (or one letter or number just before it)
    and does not cross prose; trailing punctuation stays prose.

    >>> bare_math_runs(r"For any p \in (0,1), by setting \Theta_t = \sqrt{x}, it holds")
    ... # doctest: +NORMALIZE_WHITESPACE
    [('text', 'For any '), ('math', 'p \\in (0,1)'), ('text', ', by setting '),
     ('math', '\\Theta_t = \\sqrt{x}'), ('text', ', it holds')]
    >>> bare_math_runs("plain words only")
    [('text', 'plain words only')]
    """
    words = re.split(r"(\s+)", text)  # words at even places, the spaces between at odd ones
    tokens = words[0::2]
    kinds = ["math" if _is_math_word(w) else "prose" if _is_prose_word(w) else "neutral"
             for w in tokens]
    in_math = [False] * len(tokens)
    k = 0
    while k < len(tokens):
        if kinds[k] != "math":
            k += 1
            continue
        if k > 0 and _LEAD.match(tokens[k - 1]):
            in_math[k - 1] = True
        end = k
        while end + 1 < len(tokens) and kinds[end + 1] != "prose" and tokens[end + 1]:
            end += 1
        for j in range(k, end + 1):
            in_math[j] = True
        k = end + 1
    parts: list[tuple[str, str]] = []
    for j, token in enumerate(tokens):
        space = words[2 * j - 1] if j > 0 else ""
        joined = in_math[j] and j > 0 and in_math[j - 1]
        parts.append(("math" if joined else "text", space))
        parts.append(("math" if in_math[j] else "text", token))
    out: list[tuple[str, str]] = []
    for kind, piece in _merge(parts):
        tail = _TRAIL.search(piece) if kind == "math" else None
        if tail and _braces_ok(piece[: tail.start()]):  # trailing punctuation is prose
            out += [("math", piece[: tail.start()]), ("text", tail.group())]
        else:
            out.append((kind, piece))
    return _merge(out)


def _braces_ok(latex: str) -> bool:
    depth = 0
    for k, ch in enumerate(latex):
        if ch in "{}" and k > 0 and latex[k - 1] == "\\":
            continue
        depth += 1 if ch == "{" else -1 if ch == "}" else 0
        if depth < 0:
            return False
    return depth == 0


def _merge(parts: list[tuple[str, str]]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for kind, piece in parts:
        if not piece:
            continue
        if out and out[-1][0] == kind:
            out[-1] = (kind, out[-1][1] + piece)
        else:
            out.append((kind, piece))
    return out


def segments(text: str, quote: bool = False) -> list[tuple[str, str]]:
    r"""``text`` cut into prose and math: ``$...$`` and ``$$...$$`` are math; outside them,
    with ``quote`` (a seed's words, which print formulas without delimiters) the undelimited
    LaTeX that :func:`bare_math_runs` finds is math too; without it (the toolkit's own prose,
    where a ``\eta`` is a symbol's name in a printed expression) the known symbol commands
    become their characters (:func:`symbols`) and the rest stays prose.

    >>> segments(r"the floor $\eta L c\sigma^2$, not $$\frac{\eta^2}{2}$$")
    ... # doctest: +NORMALIZE_WHITESPACE
    [('text', 'the floor '), ('math', '\\eta L c\\sigma^2'), ('text', ', not '),
     ('math', '\\frac{\\eta^2}{2}')]
    >>> segments(r"floor L*\eta*\sigma_G^2"), segments(r"by 2K\exp(-t)", quote=True)
    ([('text', 'floor L*η*σ_G^2')], [('text', 'by '), ('math', '2K\\exp(-t)')])
    >>> segments("")
    []
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {text!r}")
    out: list[tuple[str, str]] = []
    pos = 0
    for m in _DOLLARS.finditer(text):
        out += _prose(text[pos:m.start()], quote)
        out.append(("math", m.group(1) if m.group(1) is not None else m.group(2)))
        pos = m.end()
    out += _prose(text[pos:], quote)
    return _merge(out)


def _prose(text: str, quote: bool) -> list[tuple[str, str]]:
    """Text outside ``$...$``: undelimited LaTeX found (``quote``) or its symbols written as
    characters; ``\\$`` unescaped."""
    if quote and _COMMAND.search(text):
        parts = bare_math_runs(text)
    else:
        parts = [("text", symbols(text))]
    return [(k, p.replace("\\$", "$") if k == "text" else p) for k, p in parts]


_GREEK = dict(zip(("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi "
                   "rho sigma tau upsilon phi chi psi omega").split(),
                  "αβγδεζηθικλμνξπρστυφχψω", strict=True))
_CAPITAL = dict(zip("Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega".split(),
                    "ΓΔΘΛΞΠΣΥΦΨΩ", strict=True))
#: The symbol commands :func:`symbols` writes as characters.
SYMBOLS: dict[str, str] = {
    **_GREEK, **_CAPITAL,
    "varepsilon": "ε", "vartheta": "ϑ", "varphi": "φ", "varrho": "ϱ", "ell": "ℓ",
    "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "approx": "≈",
    "infty": "∞", "sum": "Σ", "prod": "Π", "nabla": "∇", "partial": "∂", "cdot": "·",
    "times": "×", "in": "∈", "notin": "∉", "to": "→", "rightarrow": "→", "pm": "±",
    "star": "⋆", "ldots": "…", "dots": "…", "|": "‖",
}
_SYMBOL = re.compile(r"\\([A-Za-z]+|\|)")


def symbols(text: str) -> str:
    r"""``text`` with the symbol commands of :data:`SYMBOLS` written as their characters; any
    other command is left as it is.

    >>> symbols(r"\eta L \le 1, \Sigma_i, \|x\|, \foo")
    'η L ≤ 1, Σ_i, ‖x‖, \\foo'
    """
    return _SYMBOL.sub(lambda m: SYMBOLS.get(m.group(1), m.group()), text)


def rich_html(text: str, quote: bool = False) -> Markup:
    """``text`` as HTML: prose escaped, math as MathML (:func:`segments`; ``quote`` for a
    seed's words). A formula that cannot be converted is shown as its escaped source in
    ``<code>`` (a test in a real browser holds every page to having none)."""
    parts = []
    for kind, piece in segments(text, quote):
        if kind == "text":
            parts.append(escape(piece))
            continue
        try:
            parts.append(math_html(piece))
        except ValueError:
            parts.append(Markup('<code class="latex">{}</code>').format(piece))
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
