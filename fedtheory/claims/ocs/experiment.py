r"""Claim ``ocs.experiment``: seed 002's Section 5 experiment, re-run on a bundled data set.

FedAvg (Algorithm 3) with full participation, uniform(m), OCS(m) (Algorithm 1) and AOCS(m)
(Algorithm 2) on multinomial logistic regression over an unbalanced federated split of
scikit-learn's ``load_digits`` (the Section 5.2 recipe), and the :math:`m = O(\sqrt n)`
conjecture of Section 5.4. The simulation and its cached runs (``experiment_run``,
``sweep_run``) live in :mod:`fedtheory.experiments.ocs_fedavg` and
:mod:`fedtheory.experiments.ocs_runs`, the figures in
:mod:`fedtheory.plotting.ocs` (also used by ``paper_figures/ocs_vs_uniform.py`` and
``paper_figures/ocs_sqrt_n.py``); this module states the claim and judges it with
:mod:`fedtheory.stats`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedtheory import stats
from fedtheory.claims import Claim, ClaimKind, Context, Evidence, all_of, combined_alpha
from fedtheory.experiments import ocs_fedavg as ox
from fedtheory.experiments.ocs_runs import experiment_run, sweep_run

ALPHA = stats.DEFAULT_ALPHA

#: AOCS counts as equivalent to OCS when the paired difference of the per-round loss areas is
#: within this fraction of OCS's gain over uniform sampling.
AOCS_EQUIVALENCE_FRACTION = 0.1

#: The constant of the quantitative reading of "m = O(sqrt n) suffices": c = m(32)/sqrt(32)
#: with the seed's m(32) = 6 (m = 6 matched full participation at n = 32). Not declared as a
#: stated constant for ``--power``: its x 0.7 mutant is true on this data (see the derivation),
#: so no check could catch it; the sqrt-n check reports its own power instead.
M_AT_32 = 6

CLAIM = Claim(
    id="ocs.experiment",
    family="ocs",
    seed_ref="002, Section 5 (5.1, 5.2, 5.4, footnote 4), Appendix F",
    title="FedAvg + OCS/AOCS(m): between full and uniform(m) per round, best per bit; "
          "AOCS = OCS; m = O(sqrt n) matches full",
    statement=(
        r"\text{FedAvg (Alg. 3), unbalanced data: } \mathcal L_{\rm full}(k) \le "
        r"\mathcal L_{\rm OCS(m)}(k) \le \mathcal L_{\rm unif(m)}(k) \text{ per round } k;\ "
        r"\mathcal L_{\rm OCS/AOCS(m)}(b) < \mathcal L_{\rm unif(m)}(b),\ "
        r"\mathcal L_{\rm full}(b) \text{ per bit budget } b;\ "
        r"\text{AOCS} \equiv \text{OCS};\ "
        r"m = O(\sqrt n) \text{ suffices for OCS(m) to match full participation's accuracy}"
    ),
    kind=ClaimKind.QUALITATIVE,
    expected="confirmed",
    derivation=r"""
Set-up (`fedtheory.experiments.ocs_fedavg`). Data: `load_digits` (1797 images, 64 pixels,
10 classes), 20% validation hold-out, features standardised plus a bias. Federation:
Dirichlet(0.5) label split into 32 clients, then the Section 5.2 unbalancing with $s = 0.5$,
$a = \lceil\text{mean size}/4\rceil$, $b = \lceil 1.5\,\text{mean size}\rceil$ (medium clients
removed or cut down to $a$ examples; 20 clients remain for seed 0, of sizes 9–12 or 72–81).
Model: multinomial logistic regression, $\lambda = 10^{-3}$, data-size weights
$w_i = s_i/\sum_j s_j$. FedAvg as Algorithm 3: each client runs one epoch of local SGD
(batch 20), $\eta_g = 1$, $x^0 = 0$; $m = 3$ as in the seed ($m \in \{3, 6\}$ for $n = 32$),
$j_{\max} = 4$. Step size: the seed tunes $\eta_l$ per scheme on $\{2^{-1}, \dots, 2^{-5}\}$,
extending the grid at a boundary. Here one step serves every scheme, so that comparisons are
paired: $\eta_l = 2^0 = 1$, the best step of *uniform* sampling on $\{2^2, \dots, 2^{-3}\}$ (area
of $f - f^\star$, 30 rounds, seed-0 split: 4 replicas: uniform 0.86, 0.36, 0.25, 0.30, 0.41,
0.58 for $2^2, \dots, 2^{-3}$), which makes the comparisons against the baseline conservative;
full participation and OCS would prefer larger steps (their best on that grid is $2^2$ and
$2^1$), as the seed also observed ("our optimal sampling strategy allows for larger step
sizes"). Uniform sampling is independent with $p_i = m/n$ (Definition 11's baseline); OCS uses
eq. (7) on the norms $\|w_i U_i\|$; AOCS Algorithm 2. All schemes share the mini-batch
permutations and the uniforms deciding participation (common random numbers; the seed: "the same
random seed for all three methods in a single run"), so every comparison is paired over
replicas. Bits client → master: 32 per float; an update is $d = 650$ floats; OCS adds one float
(the norm) per client and round; AOCS adds the norm and two floats ($t_i = (1, p_i)$ or
$(0, 0)$) per client and executed iteration of Algorithm 2. The loss is the global training
objective $f(x^k)$ (the theory's quantity; the seed plots a "(local) training loss"); accuracy is
on the hold-out. Local training runs in float32 (twice as fast; aggregation and metrics in
float64). Quick preset: 30 rounds, 60 replicas; full: 151 rounds (the seed's Appendix F),
100 replicas.

Readings and tests ($\alpha = 10^{-6}$ per check, paired replicas):

* "between full and uniform per round": per replica, the per-round area
  $A = \frac1K\sum_{k=1}^{K}\log(f(x^k) - f^\star)$, the mean of the loss curve on the log scale.
  The log is taken because uniform sampling's curves have rare large spikes (a big client drawn
  with weight $w_i n/m$): the per-replica linear area is heavy-tailed, which both ruins the power
  and makes the normal-approximation interval unreliable with tens of replicas; the log area is
  close to normal. OCS $<$ uniform is tested with `check_less` (confirmed only if the whole
  interval of $\mathbb E[A_{\rm OCS} - A_{\rm unif}]$ is below 0); OCS $\ge$ full is a one-sided
  bound, refuted only if OCS is significantly *better* than full.
* "best per bit": per replica $B$ = mean of $\log(f - f^\star)$ at 64 budgets evenly spread up to
  the largest budget every partial scheme reached (each scheme's value at budget $b$ is that of
  its last round within $b$): the area under loss-against-bits. OCS and AOCS must each beat
  uniform and full (four `check_less`).
* "AOCS = OCS" (footnote 4: "their results are identical"): the fraction of (replica, round)
  pairs in which Algorithm 2's $p$ equals eq. (7) on the same norms (max difference
  $\le 10^{-9}$) must exceed 1/2, and the paired per-round (log) areas must be equivalent: the
  two-sided interval of $\mathbb E[A_{\rm AOCS} - A_{\rm OCS}]$ within ±10% of OCS's gain
  $\mathbb E[A_{\rm unif} - A_{\rm OCS}]$ over uniform. Refuted if the fraction is below 1/2 or
  the interval lies outside that band.
* "$m = O(\sqrt n)$ suffices" (Section 5.4; drawn from Shakespeare, $n = 32$ needing $m = 6$ and
  $n = 128$ needing $m = 12$): for each $n$ of the sweep (Dirichlet(0.5) split into exactly $n$
  clients, naturally unbalanced, no removal step, as the Shakespeare data), OCS($m$) "matches"
  full participation when the one-sided upper $1 - \alpha$ limit of
  $\mathbb E[\mathrm{acc}_{\rm full} - \mathrm{acc}_{{\rm OCS}(m)}]$ (hold-out accuracy averaged
  over the last 20% of rounds) is at most 1 accuracy point; $m^\star(n)$ is the smallest matching
  $m$ of the grid. An $O(\cdot)$ statement cannot be proved by finitely many $n$, so the test is
  the seed's quantitative form with the seed's own constant $c = 6/\sqrt{32}$: confirmed if
  $m^\star(n) \le \lceil c\sqrt n\rceil$ for every $n$ tried; refuted if for some $n$
  OCS($\lceil c\sqrt n\rceil$) is worse than full by more than the tolerance (lower limit above
  1 point); inconclusive otherwise. The log-log slope of $m^\star(n)$ is reported. The grid
  holds every $m \le 4$ (quick; the full grid 1, 2, 3, 4, 6, 8, 12, ...) and the budget
  $\lceil c\sqrt n\rceil$; a budget that is not on the grid (a smaller constant) is judged at
  the smallest grid $m$ above it (more clients never hurt: if that $m$ is clearly worse than
  full, so is the budget).

Power of the $\sqrt n$ check (the constant is $m(32) = 6$, $c = m(32)/\sqrt{32}$; a referee's
mutant would scale it by 0.7). It cannot refute $0.7c$, nor $0.4c$, on this data, because those
statements are true here: in the quick preset $m^\star(n) = 2, 3, 4$ for $n = 8, 16, 32$ while
$\lceil 0.7c\sqrt n\rceil = 3, 3, 5$ (each matched by the same equivalence test, at
$\alpha = 10^{-6}$), and in the full preset $m^\star(n) = 1, 2, 2, 3, 3$ for
$n = 8, \dots, 128$ against $\lceil 0.4c\sqrt n\rceil = 2, 2, 3, 4, 5$. OCS on `load_digits`
needs fewer clients than on Shakespeare, where the seed read off its constant; the gap to full
participation exceeds the 1-point tolerance only at $m = 1$ (2.4 and 3.5 points at $n = 16, 32$
in the quick preset), so the check can refute constants up to about $0.24c$ only. The check
reports both numbers (the smallest constant the data supports, $\max_n m^\star(n)/\sqrt n$, and
the largest it could refute) and the outcome for $0.7c$ and $0.4c$ (in its data: `power`).
The constant is therefore not declared as a stated constant for `--power`: its mutant $0.7c$
would be confirmed, a true statement that no Monte Carlo check can prove exactly, and so
"missed" by construction; the check's own report above is the evidence instead.
""",
)

def _replay(ctx: Context, **extra: Any) -> dict[str, Any]:
    run = experiment_run(ctx.preset, ctx.seed)
    ce = {"preset": ctx.preset, "seed": ctx.seed,
          "rerun": f"fedtheory.experiments.ocs_runs.experiment_run({ctx.preset!r}, {ctx.seed})",
          "setup": {k: v for k, v in ox.SETUP.items() if not k.startswith("sweep")},
          "client_sizes": run.config["sizes"], "rounds": run.config["rounds"],
          "replicas": run.config["replicas"]}
    ce.update(extra)
    return ce


@CLAIM.check("monte_carlo", "between_per_round")
def _between_per_round(ctx: Context) -> Evidence:
    """Per round, OCS(m) beats uniform(m) and is not better than full (paired areas)."""
    run = experiment_run(ctx.preset, ctx.seed)
    area = ox.area_per_round(run, np.log(run.loss - run.f_star))
    f, u, o = (run.index(s) for s in ("full", "uniform", "ocs"))
    vs_uniform = stats.check_less(area[o], area[u], ALPHA, _replay(ctx, comparison="OCS<unif"),
                                  what="E[A_OCS - A_unif] (A: mean over rounds of log(f - f*))")
    vs_full = stats.check_less(area[o], area[f], ALPHA, what="E[A_OCS - A_full]")
    # "OCS >= full" is a one-sided bound: refuted only when OCS is significantly better
    lower_ok = vs_full.passed is not True
    passed = False if (vs_uniform.passed is False or not lower_ok) else vs_uniform.passed
    ce = None
    if passed is False:
        ce = vs_uniform.counterexample or _replay(
            ctx, comparison="OCS better than full", mean_difference=vs_full.measured)
    means = area.mean(axis=1)
    return Evidence(
        passed,
        {"area_full": means[f], "area_uniform": means[u], "area_ocs": means[o],
         "ocs_minus_uniform": vs_uniform.measured, "ocs_minus_full": vs_full.measured},
        "A_full <= A_OCS < A_unif",
        detail=(f"n = {run.config['n']}, m = {ox.SETUP['m']}, K = {run.config['rounds']}: mean "
                f"over rounds of log(f - f*): full {means[f]:.4g}, OCS {means[o]:.4g}, uniform "
                f"{means[u]:.4g}. {vs_uniform.detail}. {vs_full.detail} (only a significantly "
                f"negative difference would contradict OCS >= full)."),
        alpha=combined_alpha([vs_uniform, vs_full]), counterexample=ce,
    )


@CLAIM.check("monte_carlo", "best_per_bit")
def _best_per_bit(ctx: Context) -> Evidence:
    """Per bit sent client -> master, OCS(m) and AOCS(m) beat uniform(m) and full."""
    run = experiment_run(ctx.preset, ctx.seed)
    area = ox.area_per_bit(run, np.log(run.loss - run.f_star))
    acc_area = ox.area_per_bit(run, run.accuracy)
    f, u, o, a = (run.index(s) for s in ("full", "uniform", "ocs", "aocs"))
    parts, lines = [], []
    for name, i in (("OCS", o), ("AOCS", a)):
        for other, j in (("unif", u), ("full", f)):
            ev = stats.check_less(area[i], area[j], ALPHA,
                                  _replay(ctx, comparison=f"{name}<{other} per bit"),
                                  what=f"E[B_{name} - B_{other}]")
            parts.append(ev)
            lines.append(f"{name} vs {other}: {ev.passed} ({ev.detail})")
    passed = all_of([(f"part {k}", ev) for k, ev in enumerate(parts)]).passed
    failed = [p for p in parts if p.passed is False]
    means = area.mean(axis=1)
    budget = ox.common_budget(run)
    return Evidence(
        passed,
        {s: means[i] for i, s in enumerate(run.schemes)}
        | {f"accuracy_{s}": acc_area.mean(axis=1)[i] for i, s in enumerate(run.schemes)},
        "B_OCS, B_AOCS < B_unif, B_full",
        detail=(f"B: mean of log(f - f*) over 64 bit budgets up to the common budget (median "
                f"{np.median(budget):.3g} bits): " + "; ".join(lines)),
        alpha=combined_alpha(parts), counterexample=failed[0].counterexample if failed else None,
    )


@CLAIM.check("monte_carlo", "aocs_matches_ocs")
def _aocs_matches_ocs(ctx: Context) -> Evidence:
    """AOCS reaches eq. (7) in most rounds and its results are equivalent to OCS's."""
    run = experiment_run(ctx.preset, ctx.seed)
    area = ox.area_per_round(run, np.log(run.loss - run.f_star))
    u, o, a = (run.index(s) for s in ("uniform", "ocs", "aocs"))
    frac = float(run.aocs_equals_ocs.mean())
    iters = np.bincount(run.aocs_iterations.ravel(), minlength=ox.SETUP["j_max"] + 1)[1:]
    gain = float(np.mean(area[u] - area[o]))
    delta = AOCS_EQUIVALENCE_FRACTION * abs(gain)
    ci = stats.mean_interval(area[a] - area[o], ALPHA, "two")
    lo, hi = float(ci.lower), float(ci.upper)
    inside = -delta <= lo and hi <= delta
    outside = lo > delta or hi < -delta
    if frac < 0.5 or outside:
        passed: bool | None = False
    elif inside:
        passed = True
    else:
        passed = None
    ce = None if passed is not False else _replay(
        ctx, fraction_identical=frac, interval=[lo, hi], band=delta)
    return Evidence(
        passed, {"fraction_identical_p": frac, "iterations_histogram": iters.tolist(),
                 "mean_difference": float(ci.mean), "interval": [lo, hi]},
        {"fraction_identical_p": "> 1/2", "band": [-delta, delta]},
        detail=(f"Algorithm 2 (j_max = {ox.SETUP['j_max']}) gave eq. (7)'s probabilities in "
                f"{frac:.1%} of {run.aocs_equals_ocs.size} (replica, round) pairs; iterations "
                f"executed 1..j_max: {iters.tolist()}. E[A_AOCS - A_OCS] = {ci.mean:.3g}, "
                f"interval [{lo:.3g}, {hi:.3g}] (two-sided, alpha={ALPHA:g}) vs the band "
                f"+-{delta:.3g} (10% of OCS's gain {gain:.3g} over uniform)."),
        tolerance=delta, alpha=ALPHA, counterexample=ce,
    )


def _slope(ns: list[int], ms: list[int]) -> float | None:
    if len(ns) < 2:
        return None
    return float(np.polyfit(np.log(ns), np.log(ms), 1)[0])


@CLAIM.check("monte_carlo", "sqrt_n_conjecture")
def _sqrt_n_conjecture(ctx: Context) -> Evidence:
    """For several n, the smallest m at which OCS(m) matches full participation, vs c sqrt n."""
    sw = sweep_run(ctx.preset, ctx.seed)
    m32 = float(M_AT_32)
    dec = sw.decide(m32)
    rows, bad, undecided = dec["rows"], dec["failed"], dec["undecided"]
    found = [(n, sw.m_star[n]) for n in sw.ns if sw.m_star[n] is not None]
    slope = _slope([n for n, _ in found], [m for _, m in found])
    passed: bool | None = False if bad else (None if undecided else True)
    ce = None
    if bad:
        row = next(r for r in rows if r["n"] == bad[0])
        ce = {"preset": ctx.preset, "seed": ctx.seed, "n": row["n"], "m": row["tested_m"],
              "stated_budget": row["budget"], "m_at_32": m32,
              "client_sizes": sw.sizes[row["n"]],
              "accuracy_gap_lower_limit": row["lower_at_budget"], "epsilon": sw.epsilon,
              "rounds": sw.config["rounds"], "replicas": sw.config["replicas"],
              "rerun": f"fedtheory.experiments.ocs_runs.sweep_run({ctx.preset!r}, {ctx.seed})"}
    table = ", ".join(f"n={r['n']}: m*={r['m_star']} (c*sqrt n -> {r['budget']}: {r['status']})"
                      for r in rows)
    # the power of this check: which constants could it tell from the stated one?
    others = {f: sw.decide(f * m32) for f in (0.7, 0.4)}
    power = "; ".join(
        f"{f} x c (budgets {[r['budget'] for r in d['rows']]}): "
        + ("refuted" if d["failed"] else "undecided" if d["undecided"] else
           "holds as well (true on this data)")
        for f, d in others.items())
    refutable = dec["m32_refutable"] / m32
    data_ratio = None if dec["m32_data"] is None else dec["m32_data"] / m32
    worst = max(found, key=lambda x: x[1] / np.sqrt(x[0]), default=(None, None))
    return Evidence(
        passed, {"m_star": {n: sw.m_star[n] for n in sw.ns}, "loglog_slope": slope,
                 "rows": rows},
        {"m_star <=": {r["n"]: r["budget"] for r in rows}, "slope": 0.5},
        detail=(f"c = m(32)/sqrt 32 with m(32) = {m32:g}. OCS(m) matches full when the upper "
                f"limit of E[acc_full - acc_OCS] <= {sw.epsilon:g} (one-sided, "
                f"alpha={sw.alpha:g}, {sw.config['replicas']} paired replicas, "
                f"{sw.config['rounds']} rounds): {table}; log-log slope of m*(n): "
                f"{'n/a' if slope is None else f'{slope:.2f}'} (sqrt n: 0.5). "
                + (f"OCS(ceil(c sqrt n)) clearly worse than full for n in {bad}. " if bad else "")
                + (f"Undecided for n in {undecided}. " if undecided else "")
                + f"Power: the smallest constant this data supports is "
                f"{'n/a' if data_ratio is None else f'{data_ratio:.2f}'} x c (max_n m*(n)/sqrt n, "
                f"no ceiling); a constant can be refuted here only up to {refutable:.2f} x c "
                f"(where OCS(m) is clearly worse than full); {power}."
                + (" So no check on this data can refute 0.7 x c: the statement with 0.7 x c is "
                   "itself established by the same equivalence test, i.e. true here (the "
                   "seed's constant comes from Shakespeare, where matching needs more clients)."
                   if not (others[0.7]["failed"] or others[0.7]["undecided"]) else "")),
        tolerance=sw.epsilon, alpha=ALPHA, counterexample=ce,
        ratio=data_ratio, instance=None if worst[0] is None else {
            "n": worst[0], "m_star": worst[1], "c_sqrt_n": m32 * float(np.sqrt(worst[0] / 32))},
        data={"decision": dec, "power": {str(f): d for f, d in others.items()},
              "refutable_fraction_of_c": refutable, "supported_fraction_of_c": data_ratio},
    )


@CLAIM.check("figure", "ocs_vs_uniform_figure")
def _figure_curves(ctx: Context) -> Evidence:
    """Accuracy and loss against rounds and against bits, bands over replicas."""
    run = experiment_run(ctx.preset, ctx.seed)
    from fedtheory.plotting.ocs import plot_ocs_vs_uniform

    figures = plot_ocs_vs_uniform(run, ctx.figure_path("ocs_vs_uniform"))
    final = run.accuracy[..., -1].mean(axis=1)
    return Evidence.illustration(
        figures, {f"final_accuracy_{s}": final[i] for i, s in enumerate(run.schemes)},
        detail="figure of the Section 5.2 comparison" +
        (f": {figures[0]}" if figures else " (no figure directory given)"))


@CLAIM.check("figure", "sqrt_n_figure")
def _figure_sqrt_n(ctx: Context) -> Evidence:
    """Accuracy gap to full participation against m for several n, and m*(n) against n."""
    sw = sweep_run(ctx.preset, ctx.seed)
    from fedtheory.plotting.ocs import plot_sqrt_n

    figures = plot_sqrt_n(sw, ctx.figure_path("sqrt_n"))
    return Evidence.illustration(
        figures, {"m_star": {n: sw.m_star[n] for n in sw.ns}},
        detail="figure of the m = O(sqrt n) sweep" +
        (f": {figures[0]}" if figures else " (no figure directory given)"))
