"""What a page says once and what it shows only where it means something: rules over the
content of an errata page (:mod:`._content`), kept apart from how it is gathered.

* a hypothesis (or the passage a document relies on) shared by several errata is given once,
  and the later errata refer to the first (:func:`said_once`);
* a ``.corrected`` claim's figure drawn by a check of the same name as its refuted original's
  is the same drawing of the same runs: shown once (:func:`without_checks`);
* a place is the paper's (:func:`place`), a seed cited by its number in a claim's own account
  is cited by the paper's name (:func:`seeds_named`);
* a tightness ratio is a confirmed bound's; a Monte Carlo ratio above 1 whose check passed is
  the bound attained within Monte Carlo error, said so, with its interval (:func:`tightness_text`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from fedtheory.papers import PAPERS, claim_references
from fedtheory.vocabulary import kinds_where

__all__ = ["place", "said_once", "seeds_named", "tightness_text", "without_checks"]

# The evidence kinds judged at a stated level on samples (a passing ratio above 1 is "attained
# within Monte Carlo error").
_SAMPLED = kinds_where("sampled")


def said_once(errata: list[Any]) -> list[Any]:
    """The errata with a hypothesis (or the passage relied on) said once per page: a later
    erratum with the same one refers to the first."""
    seen: dict[tuple[str, str], int] = {}
    out = []
    for n, item in enumerate(errata, 1):
        er = dict(item.erratum)
        for name in ("hypothesis", "relied_on"):
            text = er.get(name)
            if not text:
                continue
            first = seen.setdefault((name, text), n)
            if first != n:
                er[name] = (f"the same as for erratum {first} above "
                            f"({errata[first - 1].id})" if name == "hypothesis" else None)
        out.append(dataclasses.replace(item, erratum=er))
    return out


_LIMIT = re.compile(r"lower limit (-?[0-9.eE+-]+) vs bound (-?[0-9.eE+-]+)")


def tightness_text(entry: Mapping[str, Any]) -> str:
    """A confirmed bound's tightness in words: the ratio of measured to stated value, and, when
    a Monte Carlo estimate's ratio exceeds 1 while its check passed, that the bound is attained
    within Monte Carlo error, with the ratio's interval (lower confidence limit / bound to the
    estimate) when the check's detail gives the limit.

    >>> chk = {"name": "w", "kind": "monte_carlo", "passed": True,
    ...        "detail": "mean 0.1267, lower limit 0.118675 vs bound 0.125 (one-sided)"}
    >>> tightness_text({"tightness": {"ratio": 1.0136, "check": "w"}, "checks": [chk]})
    'attained (within Monte Carlo error): 1.014, interval [0.9494, 1.014]'
    >>> tightness_text({"tightness": {"ratio": 0.5, "check": "w"}, "checks": [chk]})
    '0.5'
    """
    t = entry.get("tightness")
    if not t:
        return ""
    ratio = float(t["ratio"])
    check = next((c for c in entry["checks"] if c["name"] == t.get("check")), None)
    if ratio <= 1 or check is None or check["kind"] not in _SAMPLED or check["passed"] \
            is not True:
        return f"{ratio:.4g}"
    m = _LIMIT.search(str(check.get("detail") or ""))
    text = f"attained (within Monte Carlo error): {ratio:.4g}"
    if m is not None and float(m.group(2)) > 0:
        text += f", interval [{float(m.group(1)) / float(m.group(2)):.4g}, {ratio:.4g}]"
    return text


def without_checks(entry: Mapping[str, Any], names: set[str]) -> dict[str, Any]:
    """``entry`` without its checks named in ``names`` (whose figures are already shown).

    >>> without_checks({"id": "x", "checks": [{"name": "a"}, {"name": "b"}]}, {"a"})
    {'id': 'x', 'checks': [{'name': 'b'}]}
    """
    return {**entry, "checks": [c for c in entry["checks"] if c["name"] not in names]}


def place(entry: Mapping[str, Any], key: str) -> str:
    """Where in paper ``key`` the claim of ``entry`` is printed, as its ``seed_ref`` says."""
    try:
        refs = claim_references(entry["id"], entry["seed_ref"])
    except ValueError:  # a .corrected claim of the index citing no paper: as it is
        return entry["seed_ref"]
    places = [where for p, where in refs if p.key == key]
    return "; ".join(w for w in places if w) or entry["seed_ref"]


_SEED_CITED = re.compile(r"(?<![\w.,])(\d{3})(?=, )|\b[Ss]eed (\d{3})\b(?:'s)?|\bpaper (\d{3})\b")


def seeds_named(text: str) -> str:
    """``text`` with a seed cited by its number (``002, the paragraph after Lemma 1``,
    ``seed 000's experiments``) cited by the paper's short name (``OCS, the paragraph after
    Lemma 1``); a number naming no seed is left as it is.

    >>> seeds_named("as 002, Lemma 1 says; seed 000's code; 123, x")
    "as OCS, Lemma 1 says; MIFA notes' code; 123, x"
    """
    if not isinstance(text, str):
        return text

    def name(m: re.Match[str]) -> str:
        key = next(g for g in m.groups() if g is not None)
        if key not in PAPERS:
            return m.group()
        short = PAPERS[key].short
        return (short + ("'" if short.endswith("s") else "'s")) if m.group().endswith("'s") \
            else short
    return _SEED_CITED.sub(name, text)
