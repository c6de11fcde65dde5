r"""The checks of seed 002's Theorems 13, 15, 17 and 18 (``ocs`` family): the step from
computed samples, exact cases and searches to :class:`~fedtheory.claimkit.evidence.Evidence`.

The computing is done in :mod:`fedtheory.experiments.ocs_theorems` (one step from a fixed
iterate, the scenarios) and :mod:`fedtheory.experiments.ocs_theorem_exact` (exact cases, the
hill climbing search); this module draws their random streams from the claim's
:class:`~fedtheory.claimkit.core.Context`, reads the statement's constants through it, and turns
the results into the checks' evidence:

* :func:`dsgd_check` / :func:`fedavg_check`: one Monte Carlo check over a list of scenarios
  (one-sided test, Bonferroni over scenarios);
* :func:`exact_check`, :func:`adversarial_search`, :func:`proof_check`,
  :func:`register_exact_checks`: the exact instances, the search re-checked exactly and the
  symbolic proof chain;
* :func:`dsgd_strongly_convex_scenarios`, :func:`nonconvex_scenarios`,
  :func:`fedavg_strongly_convex_scenarios`: the scenarios on the claim's streams.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory import stats
from fedtheory.claimkit.core import Context
from fedtheory.claimkit.evidence import Evidence
from fedtheory.claims import checks
from fedtheory.experiments import ocs_theorems as xt
from fedtheory.experiments.ocs_theorem_exact import (
    ExactCase,
    SearchFamily,
    evaluate_case,
    exact_strings,
    hill_climb,
)
from fedtheory.experiments.ocs_theorems import INCREMENT_TEXT, FixedIterate
from fedtheory.theory.ocs_theorems import DsgdTheorem, FedavgTheorem

__all__ = [
    "adversarial_search",
    "dsgd_check",
    "dsgd_strongly_convex_scenarios",
    "exact_check",
    "fedavg_check",
    "fedavg_strongly_convex_scenarios",
    "nonconvex_scenarios",
    "proof_check",
    "register_exact_checks",
    "search_budget",
]


# ----------------------------------------------------------------------------- Monte Carlo
def _mc_evidence(ctx: Context, scenarios: Sequence[FixedIterate],
                 theorem: DsgdTheorem | FedavgTheorem, what: str) -> Evidence:
    """Run every scenario (:func:`~fedtheory.experiments.ocs_theorems.one_step_runs` on the
    claim's streams), then one-sided test of all recursions together (Bonferroni)."""
    alpha = stats.DEFAULT_ALPHA
    runs = xt.one_step_runs(scenarios, theorem, xt.REPLICAS[ctx.preset], ctx.rng, alpha)
    level_gamma, rows = runs.level_gamma, runs.rows
    undecided = [sc.name for sc, info in zip(scenarios, rows, strict=True)
                 if not info.get("steps_ok", True)]
    X, B = runs.samples, runs.bounds
    ci = stats.mean_interval(X, alpha / 2, "one")
    certified = [i for i, sc in enumerate(scenarios) if sc.name not in undecided]
    failing = [i for i in certified if ci.lower[i] > B[i] + 1e-12]
    for i, row in enumerate(rows):
        inc = row["increment"]
        row.update({"mean": float(ci.mean[i]), "lower_limit": float(ci.lower[i]),
                    "stderr": float(ci.stderr[i]), "bound": float(B[i]),
                    "ratio": (float((ci.mean[i] - B[i] + inc) / inc) if inc > 0 else None)})
    ce = None
    if failing:
        ce = {"seed": ctx.seed, "claim": ctx.claim_id, "alpha": alpha,
              "scenarios": [{**scenarios[i].describe(), **rows[i],
                             "streams": [scenarios[i].name + "/gamma",
                                         scenarios[i].name + "/step"]} for i in failing]}
    # only scenarios whose step sizes provably meet the theorem's conditions can refute it;
    # the Bonferroni correction still counts every scenario
    ev = checks.check_upper_bound(X, B, alpha=alpha / 2, counterexample=ce, what=what)
    ev.passed = not failing
    if not failing:
        ev.counterexample = None
    z90 = ci.z + stats.z_quantile(0.1, "one")
    ref = np.array([r.get("reference", 0.0) for r in rows])
    detectable = float(np.max(z90 * ci.stderr / np.maximum(np.abs(B - ref), 1e-300)))
    power_note = (
        f"Power: an excess of the mean over the bound of {z90:.1f} standard errors is "
        f"detected with probability 0.9; that is at most {detectable:.2%} of the bound "
        f"(measured from f(x^k) for function values) in every scenario."
    )
    table = "; ".join(
        f"{r['scenario']}: mean {r['mean']:.5g} (lower {r['lower_limit']:.5g}) vs bound "
        f"{r['bound']:.5g}, gamma in [{r['gamma_lower']:.4g}, {r['gamma_upper']:.4g}]"
        for r in rows
    )
    ev.detail = (
        f"{what} <= theorem's bound at fixed x^k, {len(scenarios)} scenarios, "
        f"{ci.replicas} replicas each; gamma intervals at level {level_gamma:.2g} each from "
        f"independent streams, bound and step sizes at the least favourable end; one-sided test "
        f"at {alpha / 2:g} (Bonferroni over scenarios; total false-alarm level {alpha:g}). "
        f"{power_note} Per scenario: {table}"
    )
    ev.data = {"scenarios": rows}
    ev.alpha = alpha  # gamma intervals (alpha/2 over all scenarios) + the bound test (alpha/2)
    rated = [i for i in certified if rows[i]["ratio"] is not None]
    if rated:
        top = max(rated, key=lambda i: rows[i]["ratio"])
        ev.ratio = rows[top]["ratio"]
        ev.instance = {**scenarios[top].describe(), "eta": rows[top]["eta"],
                       "gamma_lower": rows[top]["gamma_lower"]}
        ev.detail += (f". Tightness: (mean - bound + increment)/increment, the increment being "
                      f"{INCREMENT_TEXT}; largest {ev.ratio:.4f} ({scenarios[top].name})")
    if undecided:
        ev.detail += (f". Step-size conditions not certified (left out of the verdict) for: "
                      f"{', '.join(undecided)}")
        if not failing:
            ev.passed = None
    return ev


def dsgd_check(ctx: Context, scenarios: list[FixedIterate], theorem: DsgdTheorem) -> Evidence:
    """One Monte Carlo check of a DSGD ``theorem`` (e.g. ``THEOREM_13``) over ``scenarios``."""
    return _mc_evidence(ctx, scenarios, theorem, theorem.bounds.label)


def fedavg_check(ctx: Context, scenarios: list[FixedIterate], theorem: FedavgTheorem
                 ) -> Evidence:
    """One Monte Carlo check of a FedAvg ``theorem`` (e.g. ``THEOREM_17``) over ``scenarios``."""
    return _mc_evidence(ctx, scenarios, theorem, theorem.bounds.label)


def dsgd_strongly_convex_scenarios(ctx: Context, weights: str) -> list[FixedIterate]:
    """Theorem 13's scenarios (:func:`fedtheory.experiments.ocs_theorems.
    dsgd_strongly_convex_scenarios`) on the claim's stream ``problems/<weights>``."""
    return xt.dsgd_strongly_convex_scenarios(weights, ctx.rng("problems/" + weights), ctx.quick)


def nonconvex_scenarios(ctx: Context, R: int = 1) -> list[FixedIterate]:
    """Theorems 15 and 18's scenarios on the claim's stream ``problems``."""
    return xt.nonconvex_scenarios(ctx.rng("problems"), ctx.quick, R)


def fedavg_strongly_convex_scenarios(ctx: Context) -> list[FixedIterate]:
    """Theorem 17's scenarios on the claim's stream ``problems``."""
    return xt.fedavg_strongly_convex_scenarios(ctx.rng("problems"), ctx.quick)


# ----------------------------------------------------------------------------- exact
def exact_check(ctx: Context, theorem: DsgdTheorem | FedavgTheorem,
                cases: Sequence[ExactCase]) -> Evidence:
    r"""The theorem as the claim states it (:meth:`DsgdTheorem.restated`: under ``--power`` a
    mutant of it) on named instances, in exact rational arithmetic: it fails on the first case
    where the bounded quantity exceeds the right-hand side; ``ratio`` is the largest
    (lhs - rhs + increment)/increment (1 = the bound attained)."""
    thm = theorem.restated(ctx)
    rows, failing, best, stated = [], [], None, {}
    for case in cases:
        out = evaluate_case(thm, case)
        ratio = out["ratio"]
        stated[case.name] = str(out["rhs"])
        rows.append(f"{case.name}: {thm.bounds.label} = {float(out['lhs']):.6g} vs "
                    f"{float(out['rhs']):.6g} (ratio {float(ratio):.4f}, gamma = "
                    f"{float(out['gamma']):.4g})")
        if out.get("ok", True) and (best is None or ratio > best[0]):
            best = (ratio, case, out)
        if not out["holds"]:
            failing.append((case, out))
    ce = None
    if failing:
        case, out = failing[0]
        ce = {**case.describe(), "theorem": thm.label, "lhs": str(out["lhs"]),
              "rhs": str(out["rhs"]), "lhs_float": float(out["lhs"]),
              "rhs_float": float(out["rhs"]), "gamma": str(out["gamma"]),
              "eta": str(out["eta"]), "constants": {k: str(v) for k, v in thm.constants.items()}}
    ratio, case, out = best if best is not None else (None, None, {})
    return Evidence(
        passed=not failing, measured=None if ratio is None else float(ratio),
        # the statement's right-hand side on every case (what a mutant changes), beside the
        # ratio it must not exceed
        theoretical={"ratio": "<= 1", "stated rhs": stated},
        detail=(f"{thm.label}, exact rational arithmetic (every noise sign pattern and the "
                f"sampling's closed-form moments enumerated, gamma exact), {len(cases)} cases: "
                + "; ".join(rows) + f". Ratio = (lhs - rhs + increment)/increment, the increment "
                f"being {INCREMENT_TEXT}"),
        counterexample=ce, ratio=None if ratio is None else float(ratio),
        instance=None if case is None else {**case.describe(), **exact_strings(
            {k: out[k] for k in ("lhs", "rhs", "gamma", "eta")})},
        data={"cases": [c.name for c in cases]},
    )


def adversarial_search(ctx: Context, theorem: DsgdTheorem | FedavgTheorem,
                       family: SearchFamily, budget: tuple[int, int]) -> Evidence:
    r"""Seeded hill climbing (:func:`~fedtheory.experiments.ocs_theorem_exact.hill_climb`,
    stream ``adversarial-search/<theorem>``, ``budget = (restarts, steps)`` per preset's
    choice) for the instance that makes the stated bound tightest. The best instance found is
    re-checked in exact rational arithmetic, which alone decides: a ratio above 1 there is a
    counterexample.
    """
    thm = theorem.restated(ctx)
    found = hill_climb(thm, family, budget, ctx.rng("adversarial-search/" + theorem.name))
    restarts, evaluations = found.restarts, found.evaluations
    best = None if found.case is None else (found.float_ratio, found.case)
    if best is None:
        return Evidence(None, None, "<= 1", f"{thm.label}: no admissible instance found in "
                        f"{evaluations} evaluations")
    out = evaluate_case(thm, best[1])
    ratio = out["ratio"]
    ce = None
    if not out["holds"]:
        ce = {**best[1].describe(), "theorem": thm.label, "lhs": str(out["lhs"]),
              "rhs": str(out["rhs"]), "lhs_float": float(out["lhs"]),
              "rhs_float": float(out["rhs"]), "gamma": str(out["gamma"]),
              "eta": str(out["eta"]), "constants": {k: str(v) for k, v in thm.constants.items()}}
    return Evidence(
        passed=bool(out["holds"]), measured=float(ratio),
        theoretical={"ratio": "<= 1", "stated rhs at the instance": str(out["rhs"])},
        detail=(f"{thm.label}: adversarial search, {restarts} seeded hill-climbing restarts, "
                f"{evaluations} float evaluations over one-dimensional instances "
                f"({family.curvature} curvatures, n in {list(family.ns)}"
                + (f", R in {list(family.Rs)}" if family.Rs else "")
                + f"); the best (float ratio {best[0]:.6f}) re-checked exactly: ratio "
                f"{float(ratio):.6f} ({'holds' if out['holds'] else 'VIOLATED'}); ratio = "
                f"(lhs - rhs + increment)/increment, the increment being {INCREMENT_TEXT}"),
        counterexample=ce, ratio=float(ratio),
        instance={**best[1].describe(), **exact_strings(
            {k: out[k] for k in ("lhs", "rhs", "gamma", "eta")})},
        search=None if ce else (
            f"{thm.label}: {restarts} hill-climbing restarts, {evaluations} evaluations over "
            f"one-dimensional {family.curvature}-curvature instances (n in {list(family.ns)}"
            + (f", R in {list(family.Rs)}" if family.Rs else "")
            + f"), the best re-checked exactly: largest ratio {float(ratio):.4f} < 1"),
    )


def search_budget(ctx: Context, method: str) -> tuple[int, int]:
    """``(restarts, steps)`` of :func:`adversarial_search` for ``"dsgd"`` or ``"fedavg"``."""
    quick = {"dsgd": (6, 25), "fedavg": (40, 40)}
    full = {"dsgd": (30, 60), "fedavg": (300, 80)}
    return ctx.size(quick, full)[method]


def proof_check(ctx: Context, theorem: DsgdTheorem | FedavgTheorem,
                prove: Callable[..., Any], chain: str) -> Evidence:
    r"""A theorem's bound proved as an inequality from its proof's lemmas, with the constants,
    factors and step limit *as the claim states them* (a mutant under ``--power``).

    ``prove(constants, [step_scale=...], [factor=...])`` returns an object with ``proved``,
    ``proof`` and ``summary`` (:mod:`fedtheory.symbolic.ocs_dsgd_proofs`,
    :mod:`fedtheory.symbolic.ocs_fedavg_proofs`). Passed with the proof when proved;
    *unproven* (:meth:`Evidence.unproven`) otherwise: a point where the abstract chain fails is
    no instance of the theorem, so this check never refutes.
    """
    consts = {k: ctx.const(k) for k in theorem.constants}
    kw: dict[str, Any] = {}
    if theorem.step is not None:
        kw["step_scale"] = ctx.step_limit(Fraction(1))
    if theorem.factors:
        kw["factor"] = ctx.factor
    res = prove(consts, **kw)
    steps = (f"steps up to {kw['step_scale']} x the stated limit" if "step_scale" in kw
             else "every step")
    detail = (f"{theorem.label}, {chain}; constants "
              f"{ {k: str(v) for k, v in consts.items()} }, {steps}: {res.summary}. A "
              "statement the chain does not prove is left undecided by this check (no "
              "abstract point is an instance of the theorem)")
    if not res.proved:
        return Evidence.unproven("not proved", "slack >= 0", detail)
    return Evidence(passed=True, measured="proved", theoretical="slack >= 0", detail=detail,
                    proof=res.proof)


def register_exact_checks(claim: Any, theorem: DsgdTheorem | FedavgTheorem,
                          cases: Sequence[ExactCase], family: SearchFamily, method: str) -> None:
    """Add a theorem claim's checks ``exact_instances`` (:func:`exact_check` on ``cases``)
    and ``adversarial_search`` (:func:`adversarial_search` over ``family``, budget
    :func:`search_budget` of ``method``)."""

    def _exact_instances(ctx: Context) -> Evidence:
        """Exact rational evaluation on named one-dimensional instances (the tightest the
        statement admits, and its counterexamples)."""
        return exact_check(ctx, theorem, cases)

    def _adversarial_search(ctx: Context) -> Evidence:
        """Seeded hill climbing over one-dimensional instances for the largest ratio, the best
        re-checked exactly."""
        return adversarial_search(ctx, theorem, family, search_budget(ctx, method))

    claim.check("exact", "exact_instances")(_exact_instances)
    claim.check("exact", "adversarial_search")(_adversarial_search)
