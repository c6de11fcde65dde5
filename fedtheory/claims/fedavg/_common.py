"""Claim-side glue of the ``fedavg`` claims: the level, how a symbolic check and a combination
of sub-checks report, and the part of the set-up cards the three claims share (not discovered:
the name starts with ``_``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fedtheory import stats
from fedtheory.claims import Evidence, SetupRow, all_of

ALPHA = stats.DEFAULT_ALPHA

#: Where seed 003 (the lecture) states things: its text file, by line.
WHERE = "the lecture's slides"

#: Every fedavg card says the same about the lecture's silence on code and set-ups.
NOTES = ("Seed 003 is a lecture: it states the rates (Theorems 1-3, citing Karimireddy et al. "
         "2020) and shows results of other papers (Mendieta et al. 2022; SCAFFOLD's table) "
         "without their set-ups; it has no code. The set-up here is this toolkit's own "
         "construction: quadratics, on which FedAvg's iterates are affine in the noise, so "
         "that every expectation the checks compare with is exact (fedtheory.theory.fedavg), "
         "and the quantity an O-rate speaks about (a floor, a variance, an exponent) can be "
         "varied with everything else fixed.")


def data_row(run: str | dict[str, str]) -> SetupRow:
    """The card's data row: the lecture names no data set for its theorems."""
    return SetupRow(
        "data", paper="not stated (the theorems are for any L-smooth f_i; the tables the "
                      "lecture shows are other papers' results, without their set-up)",
        paper_where=f"{WHERE}, Theorems 1-3 (lines 136-146, 300-311, 355-362); tables at lines "
                    "153-160 and 313-323",
        run=run,
        deviation=("the lecture is silent: synthetic quadratics, where every expectation is "
                   "exact and the heterogeneity can be set without changing anything else"))


def hyper_row(run: str | dict[str, str], deviation: str | None = None) -> SetupRow:
    """The card's hyper-parameter row: "set properly" is all the lecture says."""
    return SetupRow(
        "hyper-parameters",
        paper="'by setting local learning rate and global learning rate properly'",
        paper_where=f"{WHERE}, Theorem 1 (line 138), Theorem 2 (line 302), Theorem 3 (line 357)",
        run=run,
        deviation=deviation or ("the lecture gives no values: fixed steps small enough for the "
                                "moments to converge (γ_ℓ L ≤ 0.2), global step 1 (the γ_g of "
                                "Algorithms 1-3)"))


def combine(evidence: Sequence[Evidence], detail: str,
            names: Sequence[str] | None = None) -> Evidence:
    """All of several sub-checks (:func:`fedtheory.claims.all_of`: failed if one failed,
    undecided if one could not decide, Bonferroni level, the largest tightness ratio and its
    instance kept), reported as a list of the parts' measured and theoretical values after
    ``detail``; ``names`` label the parts (default: their positions)."""
    labels = [str(i) for i in range(len(evidence))] if names is None else list(names)
    if len(labels) != len(evidence):
        raise ValueError(f"names must label every part: {len(labels)} names for "
                         f"{len(evidence)} parts")
    ev = all_of(list(zip(labels, evidence, strict=True)))
    ev.measured = [e.measured for e in evidence]
    ev.theoretical = [e.theoretical for e in evidence]
    ev.detail = f"{detail} | " + "; ".join(e.detail for e in evidence)
    return ev


def symbolic(ok: bool, measured: Any, theoretical: Any, detail: str,
             counterexample: dict[str, Any]) -> Evidence:
    """A symbolic check's evidence: the counterexample only when it failed."""
    return Evidence(ok, measured, theoretical, detail,
                    counterexample=None if ok else counterexample)
