"""How claims and their checks came out, in words: counts, grades, the verdict as shown."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["check_counts", "checks_summary", "grade_counts", "verdict_label"]


def check_counts(checks: Sequence[Any]) -> dict[str, int]:
    """How a claim's checks came out: ``checks`` (those that test: not a neutral figure or
    observation, unless it raised), ``passed``, ``failed``, ``undecided``, ``raised``, and the
    neutral ones: ``figures`` (kind ``figure``) and ``reported`` (other observations outside
    the verdict). ``checks`` may be :class:`~fedtheory.claimkit.core.CheckResult` values or
    their report entries.

    >>> check_counts([{"passed": True, "neutral": False, "error": None, "kind": "exact"},
    ...               {"passed": None, "neutral": True, "error": None, "kind": "figure"}])
    {'checks': 1, 'passed': 1, 'failed': 0, 'undecided': 0, 'raised': 0, 'figures': 1, \
'reported': 0}
    """
    def get(c: Any, key: str) -> Any:
        return c[key] if isinstance(c, Mapping) else getattr(c, key)

    tested = [c for c in checks if not get(c, "neutral") or get(c, "error") is not None]
    shown = [c for c in checks if get(c, "neutral") and get(c, "error") is None]
    return {
        "checks": len(tested),
        "passed": sum(get(c, "passed") is True for c in tested),
        "failed": sum(get(c, "passed") is False for c in tested),
        "undecided": sum(get(c, "passed") is None and get(c, "error") is None for c in tested),
        "raised": sum(get(c, "error") is not None for c in tested),
        "figures": sum(get(c, "kind") == "figure" for c in shown),
        "reported": sum(get(c, "kind") != "figure" for c in shown),
    }


def _plural(k: int, word: str) -> str:
    return f"{k} {word}" + ("" if k == 1 else "s")


def checks_summary(checks: Sequence[Any]) -> str:
    """The checks of a claim in words: ``"3 of 3 checks passed, 2 figures"``; figures and
    observations outside the verdict are not counted as checks (they show, they do not test).

    >>> ok = {"passed": True, "neutral": False, "error": None, "kind": "exact"}
    >>> bad = {**ok, "passed": False}
    >>> fig = {"passed": None, "neutral": True, "error": None, "kind": "figure"}
    >>> checks_summary([ok, ok, ok, fig, fig])
    '3 of 3 checks passed, 2 figures'
    >>> checks_summary([ok, bad, {**ok, "passed": None}, fig])
    '1 of 3 checks passed (1 failed, 1 undecided), 1 figure'
    """
    n = check_counts(checks)
    out = f"{n['passed']} of {_plural(n['checks'], 'check')} passed"
    rest = [f"{n[k]} {k}" for k in ("failed", "undecided", "raised") if n[k]]
    if rest:
        out += f" ({', '.join(rest)})"
    if n["figures"]:
        out += f", {_plural(n['figures'], 'figure')}"
    if n["reported"]:
        out += f", {n['reported']} reported outside the verdict"
    return out


def verdict_label(verdict: str, grade: str | None) -> str:
    """A verdict as shown: its grade where the grade says more than the verdict (a confirmed
    claim of low power is shown "consistent (low power)", never "confirmed"; an inconclusive
    one whose checks cannot discriminate, "not testable").

    >>> verdict_label("confirmed", "confirmed")
    'confirmed'
    >>> verdict_label("confirmed", "consistent (low power)")
    'consistent (low power)'
    >>> verdict_label("inconclusive", "not testable")
    'not testable'
    """
    return verdict if grade in (None, "confirmed") else grade


def grade_counts(items: Sequence[Any]) -> str:
    """How many claims (results or report entries) have each grade, and how many of their
    checks are not testable here (counted apart: never a refutation, never a confirmation).

    >>> ok = {"passed": True, "neutral": False, "error": None, "kind": "exact"}
    >>> nt = {**ok, "passed": None, "grade": "not testable"}
    >>> grade_counts([{"grade": "confirmed", "checks": [ok]},
    ...               {"grade": "consistent (low power)", "checks": [ok, nt]}])
    'grades: confirmed 1, consistent (low power) 1, not testable 0; checks not testable: 1'
    """
    def get(c: Any, key: str) -> Any:
        return c.get(key) if isinstance(c, Mapping) else getattr(c, key, None)

    counts = Counter(get(r, "grade") for r in items)
    untestable = sum(get(c, "grade") == "not testable" for r in items for c in get(r, "checks"))
    return ("grades: " + ", ".join(f"{g} {counts.get(g, 0)}" for g in
                                   ("confirmed", "consistent (low power)", "not testable"))
            + f"; checks not testable: {untestable}")


def _ratio_text(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.6g}"
