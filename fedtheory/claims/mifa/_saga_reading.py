r"""The SAGA reading of seed 000's "U-MIFAm works better in practice" (its checks and
readings), beside the reading as printed (:func:`fedtheory.claims.mifa._runs.umifam_best_evidence`).

Per panel :math:`p`, U-MIFAm read as SAGA with heavy ball
(:mod:`fedtheory.experiments.mifa_readings`) is compared with FedAvg-IS, MIFA, U-MIFA (read
as SAGA, no momentum) and MIFAm at each β of
the declared range :data:`~fedtheory.experiments.mifa_readings.READING_BETAS`, with the claim's
own metric (tail :math:`\log_{10}(f - f^\star)` per seed), test (paired one-sided
:math:`t`), margin (0.1 decade) and level (:math:`10^{-6}` per comparison). A comparison is
"better" by the margin, "better, below the margin" (graded low power), a tie, or worse
(:mod:`fedtheory.claimkit.headroom`). The panel's verdict says where in the range the sentence
holds: confirmed when it holds at some β (the seed gives none: it holds for the authors' β
if it holds for one; the level of that union is the Bonferroni sum over the range), refuted
when it fails at every β, inconclusive otherwise, and **not testable** when the set-up
cannot separate the memory rules: the rules without momentum (FedAvg-IS, MIFA, SAGA) all
end within the margin of one another, so "works better" could only measure momentum.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedtheory.claimkit.evidence import all_of
from fedtheory.claimkit.headroom import graded_better, spread
from fedtheory.claimkit.readings import Reading
from fedtheory.claims import Claim, Context, Evidence, checks
from fedtheory.experiments import mifa_experiments as mx
from fedtheory.experiments import mifa_readings as mr
from fedtheory.tasks import Plan, dataset

from ._runs import ALPHA, BETTER_MARGIN_DECADES, add_per_p_checks, planned_runs, summary

__all__ = ["add_readings", "logistic_reading", "quadratic_reading", "saga_reading_evidence"]

#: The seed's lines behind each reading (000_170771278ac75f31.txt).
PRINTED_LINES = "22 and 47 (U-MIFA's and U-MIFAm's memory rows), 55"
SAGA_LINES = "115-121 (SAG, SAGA), 189 and 203 ('SAGA/U-MIFA'), 55"


def _plan(ctx: Context, kind: str) -> Plan:
    return planned_runs(mr.reading_specs(kind, quick=ctx.quick, seed=ctx.seed), "saga",
                        mr.run_reading, lambda given: mr.saga_reading(
                            kind, quick=ctx.quick, seed=ctx.seed, run_many=given))


@dataset("mifa.quadratic_experiment")
def quadratic_reading(ctx: Context) -> Plan:
    """Seed 000's quadratic experiment under the SAGA reading (33 tasks)."""
    return _plan(ctx, "quadratic")


@dataset("mifa.logistic_experiment")
def logistic_reading(ctx: Context) -> Plan:
    """Seed 000's logistic experiment under the SAGA reading (33 tasks)."""
    return _plan(ctx, "logistic")


def _at_beta(runs: dict[str, np.ndarray], b: float, ce: dict[str, Any]) -> Evidence:
    """U-MIFAm (SAGA + heavy ball β) against each other rule at β: paired one-sided t-tests
    graded by the margin (:func:`~fedtheory.claimkit.headroom.graded_better`)."""
    best = mx.tail_log10(runs[f"sagam@{b:g}"])
    others = {"FedAvg-IS": "fedavg_is", "MIFA": "mifa", "U-MIFA (SAGA)": "saga",
              "MIFAm": f"mifam@{b:g}"}
    parts = []
    for name, label in others.items():
        ev = checks.compare_paired(best, mx.tail_log10(runs[label]), "better",
                                   BETTER_MARGIN_DECADES, alpha=ALPHA, higher_is_better=False,
                                   counterexample={**ce, "beta": b, "other": name},
                                   what=f"tail log10 gap: U-MIFAm (SAGA, beta {b:g}) vs {name}")
        parts.append((f"better than {name}", graded_better(ev, BETTER_MARGIN_DECADES)))
    return all_of(parts)


def saga_reading_evidence(ctx: Context, kind: str, pv: float) -> Evidence:
    """p = ``pv``, SAGA reading: where in the β range U-MIFAm works better than every other
    rule (see the module docstring)."""
    build = quadratic_reading if kind == "quadratic" else logistic_reading
    res = build(ctx)
    runs = res["runs"][pv]
    med = summary(runs)
    ce = {"seed": ctx.seed, "p": pv, "eta": res["eta"], "replicas": res["replicas"],
          "rounds": int(res["rounds"][-1]), "problem": res["problem"],
          "median_tail_log10": med, "reading": "SAGA"}
    room = spread({k: med[k] for k in ("fedavg_is", "mifa", "saga")})
    per = {b: _at_beta(runs, b, ce) for b in res["betas"]}
    outcome = {f"{b:g}": {True: "holds", False: "fails", None: "undecided"}[ev.passed]
               for b, ev in per.items()}
    holds = [k for k, v in outcome.items() if v == "holds"]
    fails = [k for k, v in outcome.items() if v == "fails"]
    tests = [{**t, "beta": b} for b, ev in per.items() for t in ev.tests]
    n_tests = len(tests)
    where = (f"holds at beta in {{{', '.join(holds) or 'none'}}}, fails at "
             f"{{{', '.join(fails) or 'none'}}} of the declared range "
             f"{{{', '.join(f'{b:g}' for b in res['betas'])}}}")
    detail = (f"SAGA reading, p = {pv:g}: U-MIFAm (SAGA + heavy ball) works better than "
              f"FedAvg-IS, MIFA, U-MIFA (SAGA) and MIFAm (same beta) {where}; median tail "
              f"log10 gap per rule {', '.join(f'{k} {v:.3g}' for k, v in med.items())}; the "
              f"rules without momentum end within {room:.3g} decade of one another (margin "
              f"{BETTER_MARGIN_DECADES} decade); {n_tests} paired one-sided t-tests at alpha "
              f"= {ALPHA:g} each (level {n_tests * ALPHA:.2g} for the panel)")
    data = {"per_beta": outcome, "holds_at": holds, "spread_without_momentum": room,
            "median_tail_log10": med}
    measured = {"holds_at_beta": holds, "fails_at_beta": fails}
    theoretical = "U-MIFAm better than FedAvg-IS, MIFA, U-MIFA, MIFAm at some beta"
    if room < BETTER_MARGIN_DECADES:
        return Evidence.not_testable(
            measured, theoretical, detail,
            f"no headroom: FedAvg-IS, MIFA and U-MIFA (SAGA) end within {room:.3g} decade of "
            f"one another (< the margin {BETTER_MARGIN_DECADES}): this set-up cannot separate "
            "the memory rules, so 'works better' would only measure momentum",
            data=data, tests=tests)
    strong = [b for b, ev in per.items() if ev.passed is True and ev.grade is None]
    passed = True if holds else False if len(fails) == len(per) else None
    first_fail = next((ev for ev in per.values() if ev.passed is False), None)
    return Evidence(passed, measured, theoretical, detail, alpha=n_tests * ALPHA,
                    counterexample=(None if passed is not False or first_fail is None
                                    else first_fail.counterexample),
                    data=data, tests=tests,
                    undecided=None if passed is not None else "not resolved at any beta",
                    # better at some beta, but by the margin at none: below the margin
                    grade="consistent (low power)" if passed and not strong else None)


def add_readings(claim: Claim, kind: str, p_values: tuple[float, ...]) -> None:
    """Add the SAGA reading's checks (one per ``p``) and declare the two readings."""
    add_per_p_checks(claim, p_values, "saga_reading",
                     lambda ctx, pv: saga_reading_evidence(ctx, kind, pv),
                     "p = {p}, SAGA reading: where in the beta range U-MIFAm (SAGA with heavy "
                     "ball) works better than every other rule")
    claim.readings = (
        Reading("as printed", lines=PRINTED_LINES,
                text=("U-MIFA's row as printed, G_t^i = Δ_i/p_i - (1/p_i - 1) G_{t-1}^i: it "
                      "multiplies a client's memory error by -(1/p_i - 1) at each "
                      "participation, so U-MIFA(m) diverges for every p < 1/2"),
                checks=tuple(f"umifam_best_p{pv:g}" for pv in p_values)),
        Reading("SAGA", lines=SAGA_LINES,
                text=("U-MIFA is the SAGA step the document names (table of Δ_i, direction "
                      "ū + Σ_active (w_i/p_i)(Δ_i - u_i)); U-MIFAm adds the heavy ball; β "
                      "not given, run over " + ", ".join(f"{b:g}" for b in mr.READING_BETAS)),
                checks=tuple(f"saga_reading_p{pv:g}" for pv in p_values)),
    )
