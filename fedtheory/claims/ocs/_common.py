"""Claim-side glue shared by the claims of family ``ocs`` (not discovered: ``_`` prefix)."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from fedtheory.claims import Evidence

__all__ = ["exact_evidence", "instance_evidence", "statuses"]


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


def exact_evidence(out: dict[str, Fraction], setting: str, expect_hold: bool,
                   extra: dict[str, Any] | None = None) -> Evidence:
    """A theorem's recursion in exact arithmetic: ``out`` holds ``lhs``, ``rhs``, ``gamma``,
    ``eta`` (rationals) from :mod:`fedtheory.theory.ocs_theorems`."""
    lhs, rhs = out["lhs"], out["rhs"]
    holds = lhs <= rhs
    ce = None
    if not holds:
        ce = {"setting": setting, **{k: (str(v) if isinstance(v, Fraction) else
                                        [str(x) for x in v]) for k, v in out.items()},
              "lhs_float": float(lhs), "rhs_float": float(rhs), **(extra or {})}
    return Evidence(
        passed=holds, measured=float(lhs), theoretical=float(rhs),
        detail=(f"exact rational arithmetic, all participation patterns enumerated; {setting}: "
                f"E||r^(k+1)||^2 = {lhs} ~ {float(lhs):.6g} vs bound {rhs} ~ {float(rhs):.6g} "
                f"(ratio {float(lhs / rhs):.4f}); gamma = {out['gamma']}, eta = {out['eta']}"),
        counterexample=ce,
        data={"lhs": str(lhs), "rhs": str(rhs), "expected_to_hold": expect_hold},
    )

