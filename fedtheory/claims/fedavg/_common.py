"""Claim-side glue of the ``fedavg`` claims: the level, how a symbolic check and a combination
of sub-checks report, and the part of the set-up cards the three claims share (not discovered:
the name starts with ``_``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fedtheory import stats
from fedtheory.claims import Evidence, SetupRow, all_of, checks

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


#: Outcomes of :func:`by_margin`, by their ``passed`` value.
BY_MARGIN = {True: "better by more than the margin", None: "not resolved",
             False: "not better by the margin"}


def by_margin(a: Any, b: Any, margin: float, alpha: float, *, higher_is_better: bool = True,
              what: str = "A - B", counterexample: dict[str, Any] | None = None) -> Evidence:
    """"A is better than B by the margin" from paired per-seed values (the one-sided paired
    t-test of :func:`fedtheory.claims.checks.compare_paired`, hypothesis "better", its
    limits each at level ``alpha``), decided on the margin, not on 0:

    * confirmed when the lower limit of the gain is above ``margin``;
    * refuted when the upper limit is below ``margin`` (worded "worse" when below 0, a "tie"
      when the interval includes 0, "better, below the margin" when it lies in
      ``(0, margin)``);
    * otherwise undecided ("better, not shown to exceed the margin" when the lower limit is
      above 0, else "not resolved").

    The record (:attr:`Evidence.tests`) keeps the test, its limits, the margin, the smallest
    detectable effect and this outcome.

    >>> import numpy as np
    >>> base = np.random.default_rng(0).normal(size=40)
    >>> by_margin(base + 1.0, base, 0.5, 1e-6).passed
    True
    >>> ev = by_margin(base + 0.001 * np.random.default_rng(1).normal(size=40), base, 0.5, 1e-6)
    >>> ev.passed, ev.data["outcome"]
    (False, 'tie (the interval includes 0, below the margin 0.5)')
    """
    ev = checks.compare_paired(a, b, "better", margin, alpha=alpha,
                               higher_is_better=higher_is_better, what=what)
    rec = dict(ev.data)
    lower, upper = rec["lower"], rec["upper"]
    passed: bool | None
    if lower > margin:
        passed, why = True, f"better by more than the margin {margin:g}"
    elif upper < margin:
        passed = False
        why = ("worse" if upper < 0 else
               f"tie (the interval includes 0, below the margin {margin:g})" if lower <= 0
               else f"better, below the margin {margin:g}")
    else:
        passed = None
        why = (f"better, not shown to exceed the margin {margin:g}" if lower > 0
               else "not resolved")
    rec["outcome"] = why
    rec["hypothesis"] = "better by the margin"
    detail = (f"{what}: better by the margin {margin:g}: mean gain {rec['mean_gain']:.4g}, "
              f"one-sided limits [{lower:.4g}, {upper:.4g}] (one-sided paired t-test, "
              f"alpha={alpha:g} each side, {rec['pairs']} paired seeds): {why}; smallest "
              f"detectable effect {rec['detectable_effect']:.3g} at power {rec['power']:g}")
    ce = None if passed is not False else {
        **(counterexample or {}), **{k: rec[k] for k in ("hypothesis", "margin", "mean_gain",
                                                          "lower", "upper", "pairs",
                                                          "outcome")}}
    return Evidence(passed, rec["mean_gain"], f"gain > {margin:g}", detail, tolerance=ev.tolerance,
                    alpha=alpha, counterexample=ce, data=rec, tests=[rec],
                    undecided=None if passed is not None else why)
