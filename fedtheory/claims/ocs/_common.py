"""Claim-side glue shared by the claims of family ``ocs`` (not discovered: ``_`` prefix)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fedtheory.claimkit.evidence import derivation_evidence, identity_evidence
from fedtheory.claims import Evidence

__all__ = [
    "BUDGET_FACTOR",
    "CLOSED_FORM_FACTORS",
    "CONDITION_FACTOR",
    "closed_form_parts",
    "derivation_evidence",
    "identity_evidence",
    "instance_evidence",
    "statuses",
]


def statuses(cmps: Sequence[dict[str, Any]]) -> str:
    """Count the cvxpy statuses of comparison rows, e.g. ``"optimal: 3, trivial: 1"``."""
    counts: dict[str, int] = {}
    for c in cmps:
        counts[c["status"]] = counts.get(c["status"], 0) + 1
    return ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))


def instance_evidence(total: int, failures: Sequence[Any], detail: str, agree: str = "",
                      theoretical: str | None = None, **fields: Any) -> Evidence:
    """A statement tested instance by instance: it holds when no instance fails.

    ``measured`` counts the instances that hold out of ``total`` (``"k/N agree"`` with
    ``agree="agree"``), ``theoretical`` defaults to ``"all agree"``; the first failure is the
    counterexample unless ``fields`` (other :class:`Evidence` fields) gives one.
    """
    fields.setdefault("counterexample", failures[0] if failures else None)
    measured = f"{total - len(failures)}/{total} {agree}".rstrip()
    return Evidence(passed=not failures, measured=measured,
                    theoretical=theoretical or f"all {agree}".rstrip(), detail=detail, **fields)


#: The stated factors of the closed-form claims (``ocs.closed_form``, its ``.corrected`` and
#: ``ocs.kkt_derivation``): the two places where :math:`m + l - n` multiplies a norm in eq. (7).
BUDGET_FACTOR = "(m+l-n) in p_i"
CONDITION_FACTOR = "(m+l-n) in the condition on l"
CLOSED_FORM_FACTORS = (BUDGET_FACTOR, CONDITION_FACTOR)


def closed_form_parts(ctx: Any) -> dict[str, Any]:
    """The keyword arguments of :func:`fedtheory.theory.ocs.stated_closed_form` that read the
    claim's stated factors through ``ctx`` (so that ``--power`` can drop them)."""
    return {"budget": lambda c: ctx.factor(BUDGET_FACTOR, c),
            "condition": lambda c: ctx.factor(CONDITION_FACTOR, c)}


