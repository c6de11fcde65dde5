r"""Text with mathematics cut into prose and math, and written for Markdown as GitHub renders it.

One source for every formula (issue 30): the errata pages (:mod:`fedtheory.errata`, MathML and
LaTeX) and report.md (:mod:`fedtheory.report`, ``$...$``) cut a text the same way here. The
texts come in three forms:

* prose with ``$...$`` (or ``$$...$$``) math;
* a quote from a seed, which may mix prose and LaTeX commands without delimiters, as the seed
  texts do (``\left\lVert\tilde U\right\rVert is the j-th largest value``);
* the toolkit's own prose (findings, check details), where a ``\eta`` is the name of a symbol
  in a printed expression (``L*\eta*\sigma_G^2``): written as its character.

:func:`segments` cuts them into prose and math parts (a quote's undelimited LaTeX by
:func:`bare_math_runs`: maximal runs of words that carry LaTeX markup); :func:`markdown_math`
writes them for Markdown, every formula as ``$...$`` on one line; :func:`markdown_display`
writes a display formula (a claim's statement) as a ``$$`` block. Pure text: no import of
the package (a foundation).

>>> segments("a $x^2$ b")
[('text', 'a '), ('math', 'x^2'), ('text', ' b')]
>>> segments(r"bounded by 2K\exp(-\beta t/2).", quote=True)
[('text', 'bounded by '), ('math', '2K\\exp(-\\beta t/2)'), ('text', '.')]
>>> print(markdown_math(r"For any p \in (0,1), set \Theta_t = \sqrt{x}, it holds", quote=True))
For any $p \in (0,1)$, set $\Theta_t = \sqrt{x}$, it holds
"""

from __future__ import annotations

import re

__all__ = ["SYMBOLS", "bare_math_runs", "markdown_display", "markdown_math", "segments",
           "symbols"]

_GREEK_CHARS = dict(zip(("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu "
                         "xi pi rho sigma tau upsilon phi chi psi omega").split(),
                        "αβγδεζηθικλμνξπρστυφχψω", strict=True))
_CAPITAL = dict(zip("Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega".split(),
                    "ΓΔΘΛΞΠΣΥΦΨΩ", strict=True))
#: The symbol commands :func:`symbols` writes as characters.
SYMBOLS: dict[str, str] = {
    **_GREEK_CHARS, **_CAPITAL,
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


# ------------------------------------------------------------------------------- Markdown


def markdown_math(text: str, quote: bool = False) -> str:
    r"""``text`` for Markdown as GitHub renders it, each paragraph on one line: its math
    (:func:`segments`; ``quote`` for a seed's words, whose undelimited LaTeX is found) as
    ``$...$``, its prose as it is with a ``$`` of it escaped (it would open a formula); the
    commands of its symbols in prose as their characters. A ``|`` is left as it is: in a
    table cell the caller escapes it (a formula's ``\|`` too, which GitHub's table parser
    gives back to the formula).

    >>> print(markdown_math(r"floor $\eta L c$ and \sigma^2, for \$5"))
    floor $\eta L c$ and σ^2, for \$5
    >>> print(markdown_math(r"E \left\| x \right\|^2 \le 1 holds", quote=True))
    $E \left\| x \right\|^2 \le 1$ holds
    >>> markdown_math("one\n  line\n\ntwo")
    'one line\n\ntwo'
    """
    if re.search(r"\n\s*\n", text):
        return "\n\n".join(markdown_math(p, quote) for p in re.split(r"\n\s*\n", text)
                             if p.strip())
    out = []
    for kind, piece in segments(text, quote):
        piece = " ".join(piece.split()) if kind == "math" else piece
        if kind == "math" and piece:
            out.append(f"${piece}$")
        elif kind == "text":
            out.append(piece.replace("$", "\\$"))
    return " ".join("".join(out).split())


def markdown_display(latex: str) -> list[str]:
    r"""The display formula ``latex`` (LaTeX math, no delimiters) as the lines of a GitHub
    ``$$`` block: its source on one line (a blank line would end the block).

    >>> markdown_display("a +\n\n  b")
    ['$$', 'a + b', '$$']
    """
    return ["$$", " ".join(latex.split()), "$$"]
