r"""How the toolkit's own prose, numbers and counterexamples read on a page and a terminal.

The checks write their details in ASCII mathematics (``E||r^{k+1}||^2 = 0.0454 vs 0.0399``,
``sum_i w_i^2 (f_i(x^k) - f_i(x*))``), sympy prints (``-q*(L - 2)/(2*L*(2*q + 1)**2)``,
``Matrix([[g_00/4 + g_10/4]])``) and Python values (``['2/3', '4/3']``, ``{'beta2': '72'}``,
``0.3333333333333333``). This module is the one place that turns them into what a person reads:

* :func:`ascii_latex` translates one ASCII or sympy formula into LaTeX (a tokeniser, never
  ``eval``: the text is a report's, hostile), with the indices of 0-based names (``p_0``,
  ``zeta_01``) written 1-based as the papers write them (:func:`index_shifts`);
* :func:`prose_segments` cuts a detail into prose and math, the math translated (Python lists
  and dicts written as tuples and ``name = value`` lists first, long floats shortened);
* :func:`value_segments` does the same for one counterexample value: fractions as fractions,
  a float of an exact check that is a small fraction as that fraction, floats to six digits;
* :func:`plain_text` writes LaTeX or ASCII math as plain Unicode for a terminal
  (``\delta_{1}`` as ``δ₁``).

>>> ascii_latex("E||r^{k+1}||^2")
'\\mathbb{E}\\|r^{k+1}\\|^{2}'
>>> ascii_latex("-q*(L - 2)/(2*L*(2*q + 1)**2)")
'-q\\,(L - 2)/(2\\,L\\,(2\\,q + 1)^{2})'
>>> plain_text(r"\eta L \le \delta_{1}, x^2")
'η L ≤ δ₁, x²'
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from fedtheory.mathtext import SYMBOLS, symbols

__all__ = [
    "SYMBOLS",
    "ascii_latex",
    "index_shifts",
    "plain_text",
    "prose_segments",
    "symbols",
    "value_segments",
]

_GREEK = ("alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda "
          "mu nu xi pi rho sigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda "
          "Xi Pi Sigma Upsilon Phi Psi Omega").split()
_FUNCTIONS = {"sqrt": r"\sqrt", "exp": r"\exp", "log": r"\log", "ln": r"\ln", "min": r"\min",
              "max": r"\max", "sum": r"\sum", "Abs": r"\operatorname{abs}", "sin": r"\sin",
              "cos": r"\cos", "inf": r"\inf", "sup": r"\sup", "E": r"\mathbb{E}",
              "grad": r"\nabla", "oo": r"\infty", "Var": r"\operatorname{Var}",
              "Prob": r"\operatorname{Prob}"}
_RELATIONS = {"<=": r"\le", ">=": r"\ge", "!=": r"\ne", "->": r"\to", "==": "="}
_TOKEN = re.compile(r"\\[A-Za-z]+|\\\||\s+|\d+(?:\.\d+)?(?:e[-+]?\d+)?|[A-Za-z][A-Za-z0-9]*|"
                    r"\*\*|\|\||<=|>=|!=|->|==|.", re.DOTALL)
_INDEXED = re.compile(r"\b([A-Za-z]+)_\{?(\d+)\}?")


# ------------------------------------------------------------------------------- indices


def index_shifts(texts: Iterable[str]) -> frozenset[str]:
    """The names that ``texts`` index from 0 (a ``p_0`` or ``zeta_01`` among them): their
    indices are shown 1-based, as the papers write them.

    >>> sorted(index_shifts(["p_0*p_1", "beta_1 + beta_2", "g_10"]))
    ['g', 'p']
    """
    zero: set[str] = set()
    for text in texts:
        for m in _INDEXED.finditer(text):
            if "0" in m.group(2) and len(m.group(2)) <= 2:
                zero.add(m.group(1))
    return frozenset(zero)


def _shifted(index: str) -> str:
    """A 0-based index written 1-based: each digit of a pair one more (``01`` is ``12``)."""
    if len(index) == 2:
        return "".join(str(int(ch) + 1) for ch in index)
    return str(int(index) + 1)


# ---------------------------------------------------------------------------- ASCII math


def _name(tok: str, shifts: frozenset[str]) -> str:
    if tok in _GREEK:
        return "\\" + tok
    if tok in _FUNCTIONS:
        return _FUNCTIONS[tok]
    m = re.fullmatch(r"([A-Za-z]+?)(1)", tok)  # beta1, delta1 (but sigma2, g2: squares)
    if m and m.group(1) in _GREEK:
        return f"{_name(m.group(1), shifts)}_{{{m.group(2)}}}"
    if len(tok) == 1:
        return tok
    return rf"\mathrm{{{tok}}}"


def _group(tokens: list[str], k: int, shifts: frozenset[str], base: str) -> tuple[str, int]:
    """The script after ``_`` or ``^`` at ``tokens[k]``: a brace group, a parenthesised group,
    or one token (a sign before one: ``2^-N``); returns its LaTeX and the next index.

    >>> ascii_latex("1 - 2^-N"), ascii_latex("e^{-t}"), ascii_latex("sqrt((a+b)/c) + 1")
    ('1 - 2^{-N}', 'e^{-t}', '\\\\sqrt{(a+b)/c} + 1')
    """
    while k < len(tokens) and tokens[k].isspace():
        k += 1
    if k >= len(tokens):
        return "", k
    tok = tokens[k]
    if tok in "{(":
        close = "}" if tok == "{" else ")"
        depth, j = 0, k
        while j < len(tokens):
            depth += tokens[j] == tok
            depth -= tokens[j] == close
            if depth == 0:
                break
            j += 1
        inner = _translate(tokens[k + 1:j], shifts)
        return (inner if tok == "{" else f"({inner})"), j + 1
    if tok.isdigit() and base in shifts:
        return _shifted(tok), k + 1
    if re.fullmatch(r"\d+(?:\.\d+)?|[A-Za-z]", tok):
        return tok, k + 1
    if re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", tok):
        return _name(tok, shifts), k + 1
    if tok == "*":
        return r"\star", k + 1
    if tok in "-+" and k + 1 < len(tokens) and not tokens[k + 1].isspace():  # 2^-N: 2^{-N}
        inner, j = _group(tokens, k + 1, shifts, base)
        if inner:
            return tok + inner, j
    return "", k


def _translate(tokens: list[str], shifts: frozenset[str]) -> str:
    out: list[str] = []
    k, last = 0, ""
    while k < len(tokens):
        tok = tokens[k]
        if tok in ("_", "^", "**"):
            script, k = _group(tokens, k + 1, shifts, last)
            out.append(("_" if tok == "_" else "^") + "{" + script + "}")
            continue
        if tok == "sqrt" and k + 1 < len(tokens) and tokens[k + 1] == "(":  # over its group
            inner, k = _group(tokens, k + 1, shifts, "")
            out.append(r"\sqrt{" + inner[1:-1] + "}")
            last = ""
            continue
        if tok == "not" and next((t for t in tokens[k + 1:] if not t.isspace()), "") == "in":
            out.append(r"\notin ")
            k = next(j for j in range(k + 1, len(tokens)) if tokens[j] == "in") + 1
            continue
        if tok == "in":
            out.append(r"\in ")
            k += 1
            continue
        if tok == "*":
            nxt = next((t for t in tokens[k + 1:] if not t.isspace()), "")
            follows = k + 1 < len(tokens) and not tokens[k + 1].isspace()
            if not nxt or nxt in ")],;" or (not follows and nxt in "=<>+-"):
                out.append(r"^{\star}")  # x*, f(x*): the optimum
            else:
                out.append(r"\,")
        elif tok == "||":
            out.append(r"\|")
        elif tok in _RELATIONS:
            out.append(_RELATIONS[tok] + (" " if _RELATIONS[tok][-1].isalpha() else ""))
        elif tok in "{}":
            out.append("\\" + tok)
        elif tok.startswith("\\") and len(tok) > 1:
            out.append(tok + (" " if tok[1:].isalpha() else ""))
        elif tok == "~" and out and last:  # U~: the tilde over the name before it
            out[-1] = rf"\tilde{{{out[-1]}}}"
        elif tok in "#$%&~\\":
            out.append("\\" + tok if tok != "\\" else r"\backslash ")
        elif tok == "E" and k + 1 < len(tokens) and tokens[k + 1] in ("^", "_", "**"):
            out.append("E")  # a name with a script (E^2: E local steps), not E[...] or E e^2
        elif re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", tok):
            out.append(_name(tok, shifts))
            if out[-1].startswith("\\") and out[-1][1:].isalpha() and k + 1 < len(tokens) \
                    and re.fullmatch(r"[A-Za-z0-9]", tokens[k + 1][:1]):
                out.append(" ")
        elif re.fullmatch(r"\d+\.\d+e[-+]?\d+|\d+e[-+]?\d+", tok):
            mant, exp = tok.split("e")
            out.append(rf"{mant}\times10^{{{int(exp)}}}")
        else:
            out.append(tok)
        last = tok if re.fullmatch(r"[A-Za-z]+", tok) else ""
        k += 1
    return "".join(out)


def ascii_latex(text: str, shifts: frozenset[str] | None = None) -> str:
    """One ASCII or sympy-printed formula as LaTeX (``**`` and ``^`` powers, ``_`` indices,
    ``||`` norms, ``<=``, Greek names, ``x*`` the optimum, ``*`` a product); the names of
    ``shifts`` (default: :func:`index_shifts` of ``text``) indexed 1-based.

    >>> ascii_latex("p_0*p_1 <= sigma_G^2"), ascii_latex("f_i(x*)")
    ('p_{1}\\\\,p_{2} \\\\le \\\\sigma_{G}^{2}', 'f_{i}(x^{\\\\star})')
    >>> ascii_latex("E||r||^2 <= (4/K) eta^2 E^2 G^2")  # E||.|| an expectation, E^2 a name
    '\\\\mathbb{E}\\\\|r\\\\|^{2} \\\\le (4/K) \\\\eta^{2} E^{2} G^{2}'
    """
    shifts = index_shifts([text]) if shifts is None else shifts
    return re.sub(r"  +", " ", _translate(_TOKEN.findall(text), shifts))


# ------------------------------------------------------------------------------ prose


_MATH_WORD = re.compile(r"\\[A-Za-z]|\^|\|\||\*\*|[A-Za-z0-9)\]]\*[A-Za-z0-9(]|"
                        r"[A-Za-z]\*(?:$|[),;])|^(?:<=|>=|!=|=|<|>|->)$|"
                        r"^[(\[]*(?:[A-Za-z]|" + "|".join(_GREEK)
                        + r")(?:_\w{1,3})?=[-\w.()/]+[,;)]*$")
_SCRIPTED = re.compile(r"([A-Za-z]*)_(?:\{|\(|[A-Za-z0-9](?![A-Za-z]{2})|\d)")
_NEUTRAL = re.compile(r"^[-+/()\[\],.;:0-9eE]*$|^[A-Za-z]$|^[-+(]*[A-Za-z][)\],;:]*$")
_MATH_NAME = re.compile(r"^[(\[]*(?:" + "|".join(_GREEK + ["sum", "sqrt", "exp", "log", "ln",
                                                            "oo"])
                        + r")[)\],;:]*$")
_LIST = re.compile(r"\[(?:'[^'\[\]{}]{0,60}'(?:, )?)+\]")
_DICT = re.compile(r"\{(?:'[^'{}]{1,40}': (?:'[^'{}]{0,60}'|[-0-9.e]+)(?:, )?)+\}")
_LONG_FLOAT = re.compile(r"(?<![\w.])-?\d+\.\d{9,}(?:e[-+]?\d+)?(?![\w.])")
_TRAIL = re.compile(r"[,.;:]+$")
# A symbol's name in prose (``1/eta``, ``tau_max``): math, wherever it stands.
_GREEK_WORD = re.compile(r"(?<![A-Za-z])(?:" + "|".join(_GREEK) + r")(?![A-Za-z])")


def _literals(text: str) -> str:
    """Python lists of strings and dicts in ``text`` written as a person would: a tuple, a
    ``name = value`` list; floats of more than eight decimals to ten significant digits."""
    def as_list(m: re.Match[str]) -> str:
        try:
            items = ast.literal_eval(m.group())
        except (ValueError, SyntaxError):
            return m.group()
        return "(" + ", ".join(str(x) for x in items) + ")"

    def as_dict(m: re.Match[str]) -> str:
        try:
            items = ast.literal_eval(m.group())
        except (ValueError, SyntaxError):
            return m.group()
        return "(" + ", ".join(f"{k} = {v}" for k, v in items.items()) + ")"

    text = _LIST.sub(as_list, text)
    text = _DICT.sub(as_dict, text)
    return _LONG_FLOAT.sub(lambda m: f"{float(m.group()):.10g}", text)


# A symbol with a min or max index (``B_max``, ``delta_min``).
_MIN_MAX = re.compile(r"(?<![A-Za-z])(?:[A-Za-z]|" + "|".join(_GREEK) + r")_(?:min|max)"
                      r"(?![A-Za-z])")
# A function applied (``sqrt((2``, ``ln(2``): math.
_CALL = re.compile(r"^[(\[]*(?:sqrt|ln|log|exp)\(")
# A program's name (a check's, ``umifam_best_p*``, ``saga_reading_p*``): words joined by
# ``_``, the first not a symbol's or a function's name.
_PROGRAM_NAME = re.compile(r"^[(\[`]*(?!(?:" + "|".join([*_GREEK, *_FUNCTIONS, "min", "max"])
                           + r")_)[a-z]{2,}(?:_[a-z0-9]+)+\*?[)\],.;:`]*$")
# An item's label before a formula (``(a) v_i = 1 - p_i``): prose.
_LABEL = re.compile(r"^\((?:[a-h]|i{1,3}|iv|v)\)$")
# A claim id or a dotted name (``fdms.psi_bound.corrected``): a name, never math.
_DOTTED = re.compile(r"^[(\[]*[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+[)\],.;:]*$")


def _kind(word: str) -> str:
    if _DOTTED.match(word) or _PROGRAM_NAME.match(word):
        return "prose"
    if _MATH_WORD.search(word) or any(len(m.group(1)) <= 1 or m.group(1) in _GREEK
                                      or m.group(1) in _FUNCTIONS
                                      for m in _SCRIPTED.finditer(word)) \
            or re.search(r"\b(?:Var|min|max|sum)_[A-Za-z]{1,4}\b", word) \
            or _GREEK_WORD.search(word) or _MIN_MAX.search(word) or _CALL.match(word):
        return "math"
    if _MATH_NAME.match(word):
        return "name"
    if _NEUTRAL.match(word) or not re.search(r"[A-Za-z]{2}", word):
        return "neutral"
    return "prose"


def prose_segments(text: str, shifts: frozenset[str] | None = None) -> list[tuple[str, str]]:
    """The toolkit's prose ``text`` cut into ``("text", ...)`` and ``("math", LaTeX)``: a
    run of words from one carrying ASCII math (``^``, ``_i``, ``||``, ``*``, ``<=``) through
    the numbers, single letters, operators and symbol names around it, translated by
    :func:`ascii_latex`.

    >>> prose_segments("checks umifam_best_p*, tau_max^2 and saga_p*")
    ... # doctest: +NORMALIZE_WHITESPACE
    [('text', 'checks umifam_best_p*, '), ('math', '\\\\tau_{\\\\max}^{2}'),
     ('text', ' and saga_p*')]
    >>> prose_segments("there, (a) v_i = 1 - p_i is")
    [('text', 'there, (a) '), ('math', 'v_{i} = 1 - p_{i}'), ('text', ' is')]
    >>> prose_segments("with delta_min < 0 a non-friend leads")
    [('text', 'with '), ('math', '\\\\delta_{\\\\min} < 0'), ('text', ' a non-friend leads')]
    >>> prose_segments("tends to 3 alpha^2: fdms.psi_bound.corrected.")
    [('text', 'tends to '), ('math', '3 \\\\alpha^{2}'), ('text', ': fdms.psi_bound.corrected.')]
    >>> prose_segments("so E||r||^2 = 0.5 vs w_i, in (optimal_p)")
    ... # doctest: +NORMALIZE_WHITESPACE
    [('text', 'so '), ('math', '\\\\mathbb{E}\\\\|r\\\\|^{2} = 0.5'), ('text', ' vs '),
     ('math', 'w_{i}'), ('text', ', in (optimal_p)')]
    """
    text = _literals(text)
    shifts = index_shifts([text]) if shifts is None else shifts
    words = re.split(r"(\s+)", text)
    tokens = words[0::2]
    kinds = [_kind(w) for w in tokens]
    in_math = [False] * len(tokens)
    for k, kind in enumerate(kinds):
        if kind != "math" or in_math[k]:
            continue
        start = k
        while start > 0 and kinds[start - 1] in ("neutral", "name") and tokens[start - 1] \
                and not tokens[start - 1].endswith(":") and not _article(tokens, start - 1) \
                and not _LABEL.match(tokens[start - 1]):
            start -= 1
        end = k
        while end + 1 < len(tokens) and tokens[end + 1] and (
                kinds[end + 1] != "prose" or _open_braces(tokens[start:end + 1]) > 0) \
                and not _article(tokens, end + 1):
            end += 1
        for j in range(start, end + 1):
            in_math[j] = True
    out: list[tuple[str, str]] = []
    k = 0
    while k < len(tokens):
        if not in_math[k]:
            out.append(("text", (words[2 * k - 1] if k else "") + tokens[k]))
            k += 1
            continue
        j = k
        while j + 1 < len(tokens) and in_math[j + 1]:
            j += 1
        run = "".join(words[2 * k: 2 * j + 1])
        lead = re.match(r"^[(\[]+(?=[A-Za-z0-9])", run) if run.count("(") > run.count(")") \
            else None
        tail = _TRAIL.search(run)
        head_text = lead.group() if lead else ""
        run = run[len(head_text):]
        tail_text = tail.group() if tail else ""
        run = run[: len(run) - len(tail_text)] if tail_text else run
        if run.count(")") > run.count("(") and run.endswith(")"):
            run, tail_text = run[:-1], ")" + tail_text
        out.append(("text", (words[2 * k - 1] if k else "") + head_text))
        if run.strip() and re.search(r"[A-Za-z0-9]", run):
            out.append(("math", ascii_latex(run, shifts)))
        else:
            out.append(("text", run))
        out.append(("text", tail_text))
        k = j + 1
    return _merge(out)


def _article(tokens: list[str], k: int) -> bool:
    """Whether ``tokens[k]`` is the article "a" (``a``, ``(a``) of the prose word after it
    (``with delta_min < 0 a non-friend leads``), not a symbol.

    >>> _article(["0", "(a", "non-friend"], 1), _article(["x", "a", "+", "b"], 1)
    (True, False)
    """
    return (bool(re.fullmatch(r"\(?[aA]", tokens[k])) and k + 1 < len(tokens)
            and _kind(tokens[k + 1]) == "prose")


def _open_braces(words: list[str]) -> int:
    text = "".join(words)
    return text.count("{") - text.count("}")


def _merge(parts: list[tuple[str, str]]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for kind, piece in parts:
        if not piece:
            continue
        if out and out[-1][0] == kind == "text":
            out[-1] = (kind, out[-1][1] + piece)
        else:
            out.append((kind, piece))
    return out


# ------------------------------------------------------------------------------ values

_FRACTION = re.compile(r"^(-?\d+)/(\d+)$")
_INTEGER = re.compile(r"^-?\d+$")
#: Longest numerator or denominator shown as a fraction; longer ones are digits that wrap.
MAX_FRACTION_DIGITS = 14


def number_latex(value: float, exact: bool = False) -> str:
    """A float as LaTeX: six significant digits, ``10^{k}`` for an exponent; with ``exact``
    (a check in exact arithmetic) a float that is a fraction of denominator at most 10^4 as
    that fraction.

    >>> number_latex(0.3333333333333333, exact=True), number_latex(1e-06), number_latex(2.0)
    ('\\\\frac{1}{3}', '1\\\\times10^{-6}', '2')
    """
    if exact and value == value and abs(value) != float("inf"):
        frac = Fraction(value).limit_denominator(10 ** 4)
        if float(frac) == value and frac.denominator > 1:
            sign = "-" if frac < 0 else ""
            return rf"{sign}\frac{{{abs(frac.numerator)}}}{{{frac.denominator}}}"
    text = f"{value:.6g}"
    if "e" in text:
        mant, exp = text.split("e")
        return (f"{mant}\\times" if mant != "1" else "1\\times") + f"10^{{{int(exp)}}}"
    return text.replace("inf", r"\infty").replace("nan", r"\mathrm{NaN}")


def value_segments(value: Any, exact: bool = False, shifts: frozenset[str] = frozenset(),
                   limit: int = 12) -> list[tuple[str, str]]:
    """A counterexample's value as ``("text", ...)`` and ``("math", LaTeX)`` parts: a string
    fraction ``"2/3"`` as a fraction, a float by :func:`number_latex`, a list as a tuple (at
    most ``limit`` entries), a mapping as ``name = value`` pairs, any other string as prose
    (:func:`prose_segments`).

    >>> value_segments(["2/3", 0.5])
    [('math', '\\\\left(\\\\frac{2}{3}, 0.5\\\\right)')]
    >>> value_segments("4188657889090042015833761/320714680")
    [('text', '4188657889090042015833761/320714680')]
    """
    latex = _value_latex(value, exact, shifts, limit)
    if latex is not None:
        return [("math", latex)]
    if isinstance(value, (list, tuple)):
        parts: list[tuple[str, str]] = [("text", "(")]
        for k, v in enumerate(value[:limit]):
            parts += ([("text", ", ")] if k else []) + value_segments(v, exact, shifts, limit)
        more = f", … ({len(value)} values)" if len(value) > limit else ""
        return _merge([*parts, ("text", more + ")")])
    if isinstance(value, Mapping):
        parts = []
        for k, (key, v) in enumerate(list(value.items())[:limit]):
            parts += [("text", ("; " if k else "") + f"{key}: ")]
            parts += value_segments(v, exact, shifts, limit)
        if len(value) > limit:
            parts.append(("text", f"; … ({len(value)} fields)"))
        return _merge(parts)
    if isinstance(value, str):
        return prose_segments(value, shifts)
    return [("text", str(value))]


def _value_latex(value: Any, exact: bool, shifts: frozenset[str], limit: int) -> str | None:
    """The LaTeX of a value that is one formula (a number, a fraction, a short list of
    them), or None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return str(value) if len(str(value)) <= 2 * MAX_FRACTION_DIGITS else None
    if isinstance(value, float):
        return number_latex(value, exact)
    if isinstance(value, str):
        m = _FRACTION.match(value.strip())
        if m and max(len(m.group(1)), len(m.group(2))) <= MAX_FRACTION_DIGITS:
            sign = "-" if m.group(1).startswith("-") else ""
            return rf"{sign}\frac{{{m.group(1).lstrip('-')}}}{{{m.group(2)}}}"
        if _INTEGER.match(value.strip()) and len(value) <= 2 * MAX_FRACTION_DIGITS:
            return value.strip()
        return None
    if isinstance(value, (list, tuple)) and 0 < len(value) <= limit:
        items = [_value_latex(v, exact, shifts, limit) for v in value]
        if all(x is not None for x in items) and not any(
                isinstance(v, (list, tuple)) and len(v) > 4 for v in value):
            return r"\left(" + ", ".join(items) + r"\right)"  # type: ignore[arg-type]
    return None


def field_latex(name: str, shifts: frozenset[str] = frozenset()) -> str | None:
    """A counterexample's field name that is a symbol (``zeta_00``, ``x_k``, ``m``, ``L``),
    as LaTeX; None for a word (``printed_p``), shown as the program names it.

    >>> field_latex("zeta_00", frozenset({"zeta"})), field_latex("printed_p")
    ('\\\\zeta_{11}', None)
    >>> field_latex("delta_min"), field_latex("x_star"), field_latex("mu_kf")
    ('\\\\delta_{\\\\min}', 'x^{\\\\star}', '\\\\mu_{kf}')
    >>> field_latex("sigma_F2"), field_latex("sigma2_kg")
    ('\\\\sigma_{F}^{2}', '\\\\sigma^{2}_{kg}')
    """
    greek = "|".join(_GREEK)
    if re.fullmatch(r"[A-Za-z]|(?:" + greek + r")", name):
        return _name(name, shifts)
    if re.fullmatch(r"(?:[A-Za-z]|" + greek + r")_(?:\d{1,2}|[A-Za-z])", name):
        return ascii_latex(name, shifts)
    m = re.fullmatch(r"([A-Za-z]|" + greek + r")_(min|max|star)", name)
    if m:  # delta_min, x_star: as the papers write them
        base = _name(m.group(1), shifts)
        return base + (r"^{\star}" if m.group(2) == "star" else rf"_{{\{m.group(2)}}}")
    m = re.fullmatch(r"(" + greek + r")_([A-Za-z]{1,2})", name)
    if m:  # mu_kf: an index of two clients
        return rf"\{m.group(1)}_{{{m.group(2)}}}"
    m = re.fullmatch(r"sigma(2?)_([A-Za-z]{1,2})(2?)", name)
    if m and bool(m.group(1)) != bool(m.group(3)):  # sigma_F2, sigma2_kf: a variance
        return (rf"\sigma_{{{m.group(2)}}}^{{2}}" if m.group(3)
                else rf"\sigma^{{2}}_{{{m.group(2)}}}")
    return None


# --------------------------------------------------------------------------- terminal

_SUB = str.maketrans("0123456789+-=()aeijklmnoprstuvx",
                     "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ")
_SUP = str.maketrans("0123456789+-=()in*", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁱⁿ*")
_SCRIPT = re.compile(r"([_^])(?:\{([^{}]*)\}|([A-Za-z0-9]))")
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")


def plain_text(text: str) -> str:
    r"""LaTeX or ASCII math in ``text`` written in plain Unicode for a terminal: symbol
    commands as characters, ``_{1}`` and ``^2`` as sub- and superscripts where Unicode has
    them (else ``_(...)``), ``\frac{a}{b}`` as ``(a)/(b)``, ``$`` delimiters dropped.

    >>> plain_text(r"$\frac{\eta^2}{2}$ and \|x\|_{ab}")
    '(η²)/(2) and ‖x‖_(ab)'
    """
    text = re.sub(r"(?<!\\)\$", "", text)
    text = re.sub(r"\*\*(\d+)", r"^{\1}", text)  # a sympy power
    for _ in range(3):
        text = _FRAC.sub(r"(\1)/(\2)", text)
    text = re.sub(r"\\(?:left|right|big|Big|bigg|Bigg)(?![A-Za-z])", "", text)
    text = re.sub(r"\\(?:mathrm|text|mathbf|mathbb|operatorname)\s*\{([^{}]*)\}", r"\1", text)
    text = re.sub(r"\\[,;!: ]", " ", text)
    text = symbols(text)

    def script(m: re.Match[str]) -> str:
        body = m.group(2) if m.group(2) is not None else m.group(3)
        table = _SUB if m.group(1) == "_" else _SUP
        keys = "0123456789+-=()aeijklmnoprstuvx" if m.group(1) == "_" else "0123456789+-=()in*"
        if body and all(ch in keys for ch in body):
            return body.translate(table)
        return f"{m.group(1)}({body})" if m.group(2) is not None else m.group()

    return _SCRIPT.sub(script, text)
