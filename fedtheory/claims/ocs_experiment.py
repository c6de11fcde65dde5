r"""Claim ``ocs.experiment``: seed 002's Section 5 experiment, re-run on a bundled data set.

FedAvg (Algorithm 3) with full participation, uniform(m), OCS(m) (Algorithm 1) and AOCS(m)
(Algorithm 2) on multinomial logistic regression over an unbalanced federated split of
scikit-learn's ``load_digits`` (the Section 5.2 recipe), and the :math:`m = O(\sqrt n)`
conjecture of Section 5.4. The simulation lives in :mod:`fedtheory.experiments.ocs_fedavg`;
this module states the claim, judges it with :mod:`fedtheory.stats`, and draws the figures
(the scripts ``paper_figures/ocs_vs_uniform.py`` and ``paper_figures/ocs_sqrt_n.py`` call the
plotting functions below).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from fedtheory import stats
from fedtheory.claims import Claim, ClaimKind, Context, Evidence, register
from fedtheory.claims.evidence import combined_alpha
from fedtheory.experiments import ocs_fedavg as ox

__all__ = ["EXPERIMENT", "experiment_run", "plot_ocs_vs_uniform", "plot_sqrt_n", "sweep_run"]

ALPHA = stats.DEFAULT_ALPHA

#: AOCS counts as equivalent to OCS when the paired difference of the per-round loss areas is
#: within this fraction of OCS's gain over uniform sampling.
AOCS_EQUIVALENCE_FRACTION = 0.1

EXPERIMENT = register(Claim(
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
Set-up (``fedtheory.experiments.ocs_fedavg``). Data: ``load_digits`` (1797 images, 64 pixels,
10 classes), 20% validation hold-out, features standardised plus a bias. Federation:
Dirichlet(0.5) label split into 32 clients, then the Section 5.2 unbalancing with s = 0.5, a =
ceil(mean size / 4), b = ceil(1.5 mean size) (medium clients removed or cut down to a examples;
20 clients remain for seed 0, of sizes 9-12 or 72-81). Model: multinomial logistic regression,
lambda = 1e-3, data-size weights w_i = s_i / sum s. FedAvg as Algorithm 3: each client runs one
epoch of local SGD (batch 20), eta_g = 1, x^0 = 0; m = 3 as in the seed (m in {3, 6} for n =
32), j_max = 4. Step size: the seed tunes eta_l per scheme on {2^-1..2^-5}, extending the grid
at a boundary. Here one step serves every scheme, so that comparisons are paired: eta_l = 2^0 =
1, the best step of *uniform* sampling on {2^2..2^-3} (area of f - f*, 30 rounds, seed-0 split:
4 replicas: uniform 0.86, 0.36, 0.25, 0.30, 0.41, 0.58 for 2^2..2^-3), which makes the
comparisons against the baseline conservative; full participation and OCS would prefer larger
steps (their best on that grid is 2^2 and 2^1), as the seed also observed ("our optimal
sampling strategy allows for larger step sizes"). Uniform sampling is independent with p_i =
m/n (Definition 11's baseline); OCS uses eq. (7) on the norms ||w_i U_i||; AOCS Algorithm 2.
All schemes share the mini-batch permutations and the uniforms deciding participation (common
random numbers; the seed: "the same random seed for all three methods in a single run"), so
every comparison is paired over replicas. Bits client -> master: 32 per float; an update is d =
650 floats; OCS adds one float (the norm) per client and round; AOCS adds the norm and two
floats (t_i = (1, p_i) or (0, 0)) per client and executed iteration of Algorithm 2. The loss is
the global training objective f(x^k) (the theory's quantity; the seed plots a "(local) training
loss"); accuracy is on the hold-out. Local training runs in float32 (twice as fast; aggregation
and metrics in float64). Quick preset: 30 rounds, 60 replicas; full: 151 rounds (the seed's
Appendix F), 100 replicas.

Readings and tests (alpha = 1e-6 per check, paired replicas):
* "between full and uniform per round": per replica, the per-round area A = (1/K) sum_{k=1..K}
  log(f(x^k) - f*), the mean of the loss curve on the log scale. The log is taken because
  uniform sampling's curves have rare large spikes (a big client drawn with weight w_i n/m):
  the per-replica linear area is heavy-tailed, which both ruins the power and makes the normal-
  approximation interval unreliable with tens of replicas; the log area is close to normal. OCS
  < uniform is tested with check_less (confirmed only if the whole interval of E[A_OCS -
  A_unif] is below 0); OCS >= full is a one-sided bound, refuted only if OCS is significantly
  *better* than full.
* "best per bit": per replica B = mean of log(f - f*) at 64 budgets evenly spread up to the
  largest budget every partial scheme reached (each scheme's value at budget b is that of its
  last round within b): the area under loss-against-bits. OCS and AOCS must each beat uniform
  and full (four check_less).
* "AOCS = OCS" (footnote 4: "their results are identical"): the fraction of (replica, round)
  pairs in which Algorithm 2's p equals eq. (7) on the same norms (max difference <= 1e-9) must
  exceed 1/2, and the paired per-round (log) areas must be equivalent: the two-sided interval
  of E[A_AOCS - A_OCS] within +-10% of OCS's gain E[A_unif - A_OCS] over uniform. Refuted if
  the fraction is below 1/2 or the interval lies outside that band.
* "m = O(sqrt n) suffices" (Section 5.4; drawn from Shakespeare, n = 32 needing m = 6 and n =
  128 needing m = 12): for each n of the sweep (Dirichlet(0.5) split into exactly n clients,
  naturally unbalanced, no removal step, as the Shakespeare data), OCS(m) "matches" full
  participation when the one-sided upper 1 - alpha limit of E[acc_full - acc_OCS(m)] (hold-out
  accuracy averaged over the last 20% of rounds) is at most 1 accuracy point; m*(n) is the
  smallest matching m of the grid. An O(.) statement cannot be proved by finitely many n, so
  the test is the seed's quantitative form with the seed's own constant c = 6/sqrt(32):
  confirmed if m*(n) <= ceil(c sqrt n) for every n tried; refuted if for some n OCS(ceil(c sqrt
  n)) is worse than full by more than the tolerance (lower limit above 1 point); inconclusive
  otherwise. The log-log slope of m*(n) is reported.
""",
))


# ---------------------------------------------------------------------------------- data
def _rng(preset: str, seed: int, stream: str) -> np.random.Generator:
    return Context(preset=preset, seed=seed, claim_id=EXPERIMENT.id).rng(stream)


@functools.lru_cache(maxsize=4)
def experiment_run(preset: str = "quick", seed: int = 0) -> ox.FedAvgRun:
    """The full / uniform / OCS / AOCS comparison for a preset and seed (cached)."""
    return ox.ocs_vs_uniform(preset, seed, rng=_rng(preset, seed, "ocs_vs_uniform"))


@functools.lru_cache(maxsize=4)
def sweep_run(preset: str = "quick", seed: int = 0) -> ox.SqrtNSweep:
    """The m = O(sqrt n) sweep for a preset and seed (cached)."""
    return ox.sqrt_n_sweep(preset, seed, alpha=ALPHA, rng=_rng(preset, seed, "sqrt_n"))


def _replay(ctx: Context, **extra: Any) -> dict[str, Any]:
    run = experiment_run(ctx.preset, ctx.seed)
    ce = {"preset": ctx.preset, "seed": ctx.seed,
          "rerun": f"fedtheory.claims.ocs_experiment.experiment_run({ctx.preset!r}, {ctx.seed})",
          "setup": {k: v for k, v in ox.SETUP.items() if not k.startswith("sweep")},
          "client_sizes": run.config["sizes"], "rounds": run.config["rounds"],
          "replicas": run.config["replicas"]}
    ce.update(extra)
    return ce


def _combine(parts: list[Evidence]) -> bool | None:
    if any(p.passed is False for p in parts):
        return False
    if all(p.passed is True for p in parts):
        return True
    return None


# ---------------------------------------------------------------------------------- checks
@EXPERIMENT.check("monte_carlo", "between_per_round")
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


@EXPERIMENT.check("monte_carlo", "best_per_bit")
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
    passed = _combine(parts)
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


@EXPERIMENT.check("monte_carlo", "aocs_matches_ocs")
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


@EXPERIMENT.check("monte_carlo", "sqrt_n_conjecture")
def _sqrt_n_conjecture(ctx: Context) -> Evidence:
    """For several n, the smallest m at which OCS(m) matches full participation, vs c sqrt n."""
    sw = sweep_run(ctx.preset, ctx.seed)
    rows, bad, undecided = [], [], []
    for n in sw.ns:
        budget = sw.seed_budget(n)
        j = sw.grids[n].index(min(budget, n - 1))
        ms = sw.m_star[n]
        rows.append({"n": n, "m_star": ms, "seed_budget": budget,
                     "upper_at_budget": sw.upper[n][j], "lower_at_budget": sw.lower[n][j]})
        if sw.lower[n][j] > sw.epsilon:
            bad.append(n)
        elif ms is None or ms > budget:
            undecided.append(n)
    found = [(n, sw.m_star[n]) for n in sw.ns if sw.m_star[n] is not None]
    slope = _slope([n for n, _ in found], [m for _, m in found])
    passed: bool | None = False if bad else (None if undecided else True)
    ce = None
    if bad:
        n = bad[0]
        j = sw.grids[n].index(min(sw.seed_budget(n), n - 1))
        ce = {"preset": ctx.preset, "seed": ctx.seed, "n": n, "m": sw.grids[n][j],
              "client_sizes": sw.sizes[n], "accuracy_gap_lower_limit": sw.lower[n][j],
              "epsilon": sw.epsilon, "rounds": sw.config["rounds"],
              "replicas": sw.config["replicas"],
              "rerun": f"fedtheory.claims.ocs_experiment.sweep_run({ctx.preset!r}, {ctx.seed})"}
    table = ", ".join(f"n={r['n']}: m*={r['m_star']} (c*sqrt n -> {r['seed_budget']})"
                      for r in rows)
    return Evidence(
        passed, {"m_star": {n: sw.m_star[n] for n in sw.ns}, "loglog_slope": slope,
                 "rows": rows},
        {"m_star <=": {n: sw.seed_budget(n) for n in sw.ns}, "slope": 0.5},
        detail=(f"OCS(m) matches full when the upper limit of E[acc_full - acc_OCS] <= "
                f"{sw.epsilon:g} (one-sided, alpha={sw.alpha:g}, {sw.config['replicas']} paired "
                f"replicas, {sw.config['rounds']} rounds): {table}; log-log slope of m*(n): "
                f"{'n/a' if slope is None else f'{slope:.2f}'} (sqrt n: 0.5). "
                + (f"OCS(ceil(c sqrt n)) clearly worse than full for n in {bad}. " if bad else "")
                + (f"Undecided for n in {undecided}." if undecided else "")),
        tolerance=sw.epsilon, alpha=ALPHA, counterexample=ce,
    )


@EXPERIMENT.check("figure", "ocs_vs_uniform_figure")
def _figure_curves(ctx: Context) -> Evidence:
    """Accuracy and loss against rounds and against bits, bands over replicas."""
    run = experiment_run(ctx.preset, ctx.seed)
    figures = plot_ocs_vs_uniform(run, ctx.figure_path("ocs_vs_uniform"))
    final = run.accuracy[..., -1].mean(axis=1)
    return Evidence.illustration(
        figures, {f"final_accuracy_{s}": final[i] for i, s in enumerate(run.schemes)},
        detail="figure of the Section 5.2 comparison" +
        (f": {figures[0]}" if figures else " (no figure directory given)"))


@EXPERIMENT.check("figure", "sqrt_n_figure")
def _figure_sqrt_n(ctx: Context) -> Evidence:
    """Accuracy gap to full participation against m for several n, and m*(n) against n."""
    sw = sweep_run(ctx.preset, ctx.seed)
    figures = plot_sqrt_n(sw, ctx.figure_path("sqrt_n"))
    return Evidence.illustration(
        figures, {"m_star": {n: sw.m_star[n] for n in sw.ns}},
        detail="figure of the m = O(sqrt n) sweep" +
        (f": {figures[0]}" if figures else " (no figure directory given)"))


# ---------------------------------------------------------------------------------- figures
_COLORS = {"full": "k", "uniform": "C3", "ocs": "C0", "aocs": "C2"}
_LABELS = {"full": "full", "uniform": "uniform", "ocs": "OCS", "aocs": "AOCS"}


def plot_ocs_vs_uniform(run: ox.FedAvgRun, path: Any) -> list[str]:
    """Validation accuracy and f - f* against rounds and against bits, bands over replicas.

    Accuracy: mean +- std over replicas; f - f*: geometric mean with a band of +- one standard
    deviation of log(f - f*) (the quantity the checks compare). Returns the saved paths (none
    when ``path`` is None)."""
    from fedtheory.plotting import plt, save_figure

    if path is None:
        return []
    fig, axes = plt.subplots(2, 2, figsize=(10.5, 7.5))
    rounds = np.arange(run.loss.shape[-1])
    positive = run.bits[run.bits > 0]
    budgets = np.geomspace(float(positive.min()), float(run.bits.max()), 200)
    ms = np.atleast_1d(run.config["m"])
    metrics = (run.accuracy, np.log(run.loss - run.f_star))
    per_bit = [ox.curves_per_bit(run, vals, budgets) for vals in metrics]  # (S, R, G)
    for i, s in enumerate(run.schemes):
        label = _LABELS[s] + ("" if s == "full" else f" (m={ms[i]:g})")
        style = {"color": _COLORS[s], "ls": "--" if s == "aocs" else "-"}
        keep = budgets <= float(run.bits[i, :, -1].min())  # budgets every replica reached
        for row in (0, 1):
            for col, xs, vals in ((0, rounds, metrics[row][i]),
                                  (1, budgets[keep], per_bit[row][i][:, keep])):
                mean, sd = vals.mean(axis=0), vals.std(axis=0)
                lo, hi = mean - sd, mean + sd
                if row == 1:
                    mean, lo, hi = np.exp(mean), np.exp(lo), np.exp(hi)
                ax = axes[row, col]
                ax.plot(xs, mean, label=label, **style)
                ax.fill_between(xs, lo, hi, color=_COLORS[s], alpha=0.15)
    axes[0, 0].set_ylabel("validation accuracy")
    axes[1, 0].set_ylabel(r"$f(x^k) - f^\star$")
    for ax in axes[:, 1]:
        ax.set_xscale("log")
    for ax in axes[1]:
        ax.set_yscale("log")
    axes[1, 0].set_xlabel("communication round")
    axes[1, 1].set_xlabel("bits sent client -> master")
    axes[0, 0].legend(fontsize=8)
    cfg = run.config
    fig.suptitle(f"FedAvg on unbalanced digits (n = {cfg['n']}, d = {cfg['d']}, "
                 f"{cfg['replicas']} replicas; accuracy: mean +- std, loss: geometric mean, "
                 f"x/÷ exp(std of log))", fontsize=10)
    return save_figure(fig, path)


def plot_sqrt_n(sw: ox.SqrtNSweep, path: Any) -> list[str]:
    """Accuracy gap full - OCS(m) against m per n (upper limits), and m*(n) against n.

    Returns the saved paths (none when ``path`` is None)."""
    from fedtheory.plotting import plt, save_figure

    if path is None:
        return []
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10.5, 4.2))
    for k, n in enumerate(sw.ns):
        grid = np.array(sw.grids[n])
        mean = sw.acc_gap[n].mean(axis=1)
        ax0.errorbar(grid, mean, yerr=[np.zeros_like(mean), sw.upper[n] - mean], fmt="o-",
                     ms=4, capsize=3, color=f"C{k}", label=f"n = {n}")
    ax0.axhline(sw.epsilon, color="gray", ls="--", lw=1, label="tolerance")
    ax0.set_xscale("log", base=2)
    ax0.set_xlabel("m (expected participants)")
    ax0.set_ylabel("accuracy(full) - accuracy(OCS(m))")
    ax0.set_title(f"mean and one-sided upper limit (alpha = {sw.alpha:g})", fontsize=9)
    ax0.legend(fontsize=8)
    ns = np.array(sw.ns, dtype=float)
    found = [(n, m) for n, m in sw.m_star.items() if m is not None]
    if found:
        ax1.plot(*zip(*found, strict=True), "o", color="C0", label="m*(n), this sweep")
    fine = np.geomspace(ns.min(), max(ns.max(), 128), 100)
    ax1.plot(fine, ox.SETUP["sweep_m_seed_constant"] * np.sqrt(fine), "--", color="gray",
             label=r"$c\sqrt{n}$, $c = 6/\sqrt{32}$")
    ax1.plot([32, 128], [6, 12], "s", color="C3", label="seed 002 (Shakespeare)")
    ax1.set_xscale("log", base=2)
    ax1.set_yscale("log", base=2)
    ax1.set_xlabel("n (clients)")
    ax1.set_ylabel("smallest m matching full participation")
    ax1.legend(fontsize=8)
    fig.suptitle(f"m = O(sqrt n)? ({sw.config['replicas']} replicas, {sw.config['rounds']} "
                 f"rounds, tolerance {sw.epsilon:g})", fontsize=10)
    return save_figure(fig, path)
