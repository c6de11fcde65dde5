"""Claim-side glue of the ``fedavg`` claims: the level, and how a symbolic check and a
combination of sub-checks report (not discovered: the name starts with ``_``)."""

from __future__ import annotations

from typing import Any

from fedtheory import stats
from fedtheory.claims import Evidence, all_of

ALPHA = stats.DEFAULT_ALPHA


def combine(evidence: list[Evidence], detail: str) -> Evidence:
    """All of several sub-checks (:func:`fedtheory.claims.all_of`: failed if one failed,
    undecided if one could not decide, Bonferroni level), reported as a list of the parts'
    measured and theoretical values after ``detail``."""
    ev = all_of([(str(i), e) for i, e in enumerate(evidence)])
    return Evidence(
        ev.passed,
        [e.measured for e in evidence],
        [e.theoretical for e in evidence],
        detail=f"{detail} | " + "; ".join(e.detail for e in evidence),
        alpha=ev.alpha,
        counterexample=ev.counterexample,
    )


def symbolic(ok: bool, measured: Any, theoretical: Any, detail: str,
             counterexample: dict[str, Any]) -> Evidence:
    """A symbolic check's evidence: the counterexample only when it failed."""
    return Evidence(ok, measured, theoretical, detail,
                    counterexample=None if ok else counterexample)
