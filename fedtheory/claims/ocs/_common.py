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
    "MULTIPLIED_BY_ETA",
    "ONE_STEP_RESTATEMENT",
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




#: How the one-step theorems (``ocs.dsgd_*`` and ``ocs.fedavg_*``, and their corrections) are
#: tested: the restatement they share.
ONE_STEP_RESTATEMENT = (
    "Tested as the one-step bound conditional on a fixed iterate x^k (the case k = 0 "
        "with x^0 deterministic, Monte Carlo replicas or every participation and noise "
        "pattern enumerated) rather than with full expectations over the iterates: the "
        "conditional bound for every x^k gives the stated one by the tower property, and "
        "a fixed x^0 that violates it violates the stated recursion at k = 0; gamma^k is "
        "exact in the exact checks and, in the Monte Carlo ones, taken at the end of its "
        "confidence interval least favourable to a refutation."
)
#: The FedAvg strongly convex recursion's restatement adds how (27) is read.
MULTIPLIED_BY_ETA = " (27) is multiplied by eta > 0, an equivalent upper bound on E||r^{k+1}||^2."
