"""``fdms.complexity_reduction`` (seed 004, Theorem 2): with the threshold
Theta_t = sqrt((2 ln(2 K^2 T B_max) - 2 ln p)/(beta t)) + delta_f, FL-FDMS's candidate
elimination removes no friend with probability at least 1 - p (so eq. 17 still holds).

The simulations are datasets (:mod:`fedtheory.tasks`), each run a task: the elimination runs
with the stated Theta_t and 0.5 Theta_t and the complexity runs are shared with
``fdms.complexity_reduction.corrected`` (a run computes them once for both); a mutant's
thresholds (``--power``) are simulated where its check runs.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np
import sympy as sp

from fedtheory.claims import Claim, ClaimKind, Context, Evidence
from fedtheory.claims.stated import Erratum, Stated
from fedtheory.experiments import fdms_friends as ff
from fedtheory.stats import check_proportion_upper_bound
from fedtheory.symbolic import fdms_bounds as fb
from fedtheory.tasks import Dataset, dataset, gather, task
from fedtheory.theory import fdms as th

from ._friends import (
    ALPHA,
    estimated_constants,
    negative_setting,
    orthogonal_setting,
)

CLAIM_ID = "fdms.complexity_reduction"
CORRECTED_ID = CLAIM_ID + ".corrected"
STATED = Stated({"log_coef": 2, "log_arg": 2, "log_p": 2, "delta_f": 1},
                factors=("K^2", "B_max", "beta"))
P_FAIL = 0.1
Q, GROUP, WARMUP = 0.6, 2, 3
#: The horizons of the elimination and the negative-gap instances.
T_ELIMINATION, T_NEGATIVE = 800, 2000
#: Rough seconds per replica x round of a run (full preset, one core): the tasks' cost
#: estimates (scheduling and time left only).
_SECONDS_PER_STEP = {"elimination": 1.2e-5, "complexity": 2.5e-5, "negative": 2e-6}

DERIVATION = (
    r"No proof is in the seed; the argument the threshold encodes: a friend $i$ of $k$ leaves "
    r"$\mathcal C^k$ in round $t$ only if $R^{k,\phi} - R^{k,i} \ge \Theta_t$ for the leader "
    r"$\phi$; since $\mu^{k,\phi} - \mu^{k,i} \le \delta_f$ (if $\phi$ is a friend by the "
    r"definition of $\delta_f$; if not, because $\delta_k \ge 0$), one of the two means is off "
    r"by $(\Theta_t - \delta_f)/2$, which Hoeffding ($N \ge \beta t$ scores in $[0, 1]$) bounds "
    r"by $e^{-\beta t(\Theta_t-\delta_f)^2/2}$; the union over $k$, $i\in\mathcal B_k$, $\phi$, "
    r"$t \le T$ and the two tails has $2K^2TB_{\max}$ events, and the stated $\Theta_t$ makes "
    r"each $p/(2K^2TB_{\max})$: total $p$. It needs $\delta_k \ge 0$ (a non-friend leader "
    r"with a higher mean than a friend breaks $\mu^{k,\phi} - \mu^{k,i} \le \delta_f$). Checks: "
    r"the threshold solved from the union bound (sympy) and compared with the stated one; "
    r"P(a friend is ever eliminated) simulated on an instance with $\delta_f = 0.4$ (groups "
    r"$e_i$ of 2 with friends $\pm e_i$, $q = 0.6$), one-sided Clopper–Pearson against $p$; "
    r"the similarity computations saved and the friends lost with $\Theta_t$ and "
    r"$0.5\Theta_t$ (20 clients in 5 Gaussian clusters), and whole-cluster dropout "
    r"(Assumption 5 fails: an observation, outside the theorem); the counterexample with "
    r"$\delta_{\min} < 0$.")


def theta_ctx(ctx: Context, t: Any, K: Any, T: Any, B: Any, beta: Any, p: Any,
              delta_f: Any) -> Any:
    r"""The stated :math:`\Theta_t` as the context states it (sympy or numpy)."""
    symb = isinstance(t, sp.Basic)
    c = {n: (sp.Rational(ctx.const(n)) if symb else float(ctx.const(n)))
         for n in ("log_coef", "log_arg", "log_p", "delta_f")}
    log, sqrt = (sp.log, sp.sqrt) if symb else (np.log, np.sqrt)
    num = c["log_coef"] * log(c["log_arg"] * ctx.factor("K^2", K**2) * T
                              * ctx.factor("B_max", B)) - c["log_p"] * log(p)
    with np.errstate(divide="ignore"):
        return sqrt(num / (ctx.factor("beta", beta) * t)) + c["delta_f"] * delta_f


def symbolic(ctx: Context) -> Evidence:
    """Theta_t solved from the union bound 2K^2TB exp(-beta t y^2/2) = p (sympy), its union
    sum, and the stated threshold against it (larger: still gives p; smaller: does not)."""
    S = fb.SYMBOLS
    y = sp.Symbol("y", positive=True)
    sol = sp.solve(sp.Eq(2 * S["K"] ** 2 * S["T"] * S["B"] * sp.exp(-S["beta"] * S["t"] * y**2
                                                                     / 2), S["p"]), y)
    derived = sol[0] + S["delta_f"]
    union = fb.theta_union_sum(derived)
    stated = theta_ctx(ctx, S["t"], S["K"], S["T"], S["B"], S["beta"], S["p"], S["delta_f"])
    grid = [{S["K"]: k, S["T"]: T, S["B"]: b, S["beta"]: be, S["p"]: p, S["delta_f"]: d,
             S["t"]: t} for k in (3, 20) for T in (10, 1000) for b in (2, 3)
            for be in (0.3, 1.0) for p in (0.01, 0.5) for d in (0.0, 0.2) for t in (1, 100)]
    res = fb.theta_dominance(stated, derived, grid)
    detail = (f"solved Theta_t = {derived}; union sum with it: {union}; stated {stated}: "
              f"{res['status']}")
    if sp.simplify(union - S["p"]) != 0:
        return Evidence(False, str(derived), str(stated), detail,
                        counterexample={"union": str(union)})
    if res["status"] == "proved":
        return Evidence(True, str(derived), str(stated), detail, proof=res["proof"])
    if res["status"] == "violated":
        return Evidence(False, str(derived), str(stated), detail + ": the stated threshold is "
                        "smaller than the union bound allows", counterexample={
                            **res["instance"], "difference": res["difference"],
                            "why": "not implied by the Hoeffding + union derivation"})
    return Evidence(None, str(derived), str(stated), detail)


@lru_cache(maxsize=8)
def _elimination_setting(T: int) -> dict[str, Any]:
    s = orthogonal_setting(Q, GROUP, T, WARMUP)
    return {**s, "beta": th.realised_beta(s["mask"])}


def _stated(ctx: Context) -> Context:
    """A context of ``ctx``'s preset and seed with the stated side as stated (no mutant): a
    shared dataset's (its own context carries no stated side)."""
    return Context(preset=ctx.preset, seed=ctx.seed, claim_id=ctx.claim_id, stated=STATED)


def _thetas(theta: np.ndarray) -> tuple[float, ...]:
    """The thresholds of a run as its argument (rounded: the key of its cached result)."""
    return tuple(np.round(theta, 12))


#: The instances whose friend eliminations are simulated: their setting of horizon T, their
#: replicas (quick, full) and the key of their generator (after the run's seed).
_INSTANCES: dict[str, tuple[Callable[[int], dict[str, Any]], tuple[int, int],
                            tuple[int, ...]]] = {
    "orthogonal": (_elimination_setting, (80, 2000), (4, 2, 2)),
    "negative": (negative_setting, (60, 1000), (4, 9)),
}


def elimination_run(*, instance: str, preset: str, seed: int,
                    thetas: tuple[float, ...]) -> np.ndarray:
    """First round a friend left a candidate set (-1: never) per replica, thresholds
    ``thetas`` (one per round: the horizon) on ``instance`` (:data:`_INSTANCES`; a task)."""
    setting, (quick, full), key = _INSTANCES[instance]
    s = setting(len(thetas))
    R = quick if preset == "quick" else full
    sim = ff.simulate_discovery(s["model"], s["mask"], R, np.random.default_rng([seed, *key]),
                                s["friends"], theta=np.array(thetas))
    return sim["eliminated"]


@lru_cache(maxsize=32)
def _eliminations_here(instance: str, preset: str, seed: int,
                       thetas: tuple[float, ...]) -> np.ndarray:
    return elimination_run(instance=instance, preset=preset, seed=seed, thetas=thetas)


def _eliminations(ctx: Context, shared: Dataset, instance: str,
                  thetas: tuple[float, ...]) -> np.ndarray:
    """The run of ``instance`` with ``thetas``: from the dataset ``shared`` (thetas -> result)
    when they are its thresholds (the stated side unmutated), else computed here (cached)."""
    if ctx.mutant is None:
        runs = shared(ctx.preset, ctx.seed)
        if thetas in runs:
            return runs[thetas]
    return _eliminations_here(instance, ctx.preset, ctx.seed, thetas)


def _elimination_theta(ctx: Context) -> np.ndarray:
    """Theta_t, t < 800, on the orthogonal instance, as ``ctx`` states it."""
    s = _elimination_setting(T_ELIMINATION)
    g = s["gaps"]
    t = np.arange(T_ELIMINATION, dtype=float)
    return theta_ctx(ctx, t, s["K"], T_ELIMINATION, g["B_max"], s["beta"], P_FAIL,
                     g["delta_f"])


@dataset(CLAIM_ID, CORRECTED_ID)
def elimination_runs(ctx: Context) -> dict[tuple[float, ...], np.ndarray]:
    """The elimination runs with the stated Theta_t and 0.5 Theta_t (each a task): thetas
    (:func:`_thetas`) -> :func:`elimination_run`."""
    theta = _elimination_theta(_stated(ctx))
    keys = [_thetas(theta), _thetas(0.5 * theta)]
    R = ctx.size(quick=80, full=2000)
    cost = R * T_ELIMINATION * _SECONDS_PER_STEP["elimination"]
    runs = gather([task(name, elimination_run, cost=cost, instance="orthogonal",
                        preset=ctx.preset, seed=ctx.seed, thetas=k)
                   for name, k in zip(("theta", "half-theta"), keys, strict=True)])
    return dict(zip(keys, runs, strict=True))


def elimination(ctx: Context) -> Evidence:
    """P(a true friend ever leaves a candidate set within T = 800 rounds), orthogonal instance
    q = 0.6, groups of 2 (K = 9, B_max = 2, delta_f = 0.4, delta_min = 0.1), p = 0.1:
    one-sided Clopper-Pearson against p."""
    s = _elimination_setting(T_ELIMINATION)
    g = s["gaps"]
    theta = _elimination_theta(ctx)
    elim = _eliminations(ctx, elimination_runs, "orthogonal", _thetas(theta))
    hits = int((elim >= 0).sum())
    inst = {"instance": f"orthogonal_instance({Q}, {GROUP}), rotation after {WARMUP}",
            "T": 800, "p": P_FAIL, "K": s["K"], "B_max": g["B_max"], "beta": s["beta"],
            "delta_f": g["delta_f"], "delta_min": g["delta_min"]}
    ev = check_proportion_upper_bound(np.array([hits]), np.array([elim.size]),
                                      np.array([P_FAIL]), ALPHA, "P(a friend is eliminated)",
                                      inst)
    if ctx.mutant is None:  # observation: the seed's 0.5 Theta_t (outside the theorem)
        half = _eliminations(ctx, elimination_runs, "orthogonal", _thetas(0.5 * theta))
        rate = float((half >= 0).mean())
        ev.data["half_theta_friend_eliminated"] = rate
        ev.detail += f"; observation: with 0.5 Theta_t a friend is eliminated in {rate:.0%} of runs"
    return ev


#: The complexity runs, in the order they use one generator: task name -> run.
_COMPLEXITY_RUNS = {"none": "none", "theta": "1 Theta_t", "half-theta": "0.5 Theta_t",
                    "whole-cluster": "whole_cluster"}


def complexity_run(*, preset: str, seed: int, run: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """One run of the complexity observation (a task): ``"none"``, ``"1 Theta_t"``,
    ``"0.5 Theta_t"`` (:func:`~fedtheory.experiments.fdms_friends.complexity_runs`) or
    ``"whole_cluster"``; the runs follow one another on one generator (the dropout mask
    first), so the runs before this one are skipped, not simulated
    (:func:`~fedtheory.experiments.fdms_friends.skip_discovery`): the numbers of the whole
    sequence. Returns (the setting: beta, T, R, alpha, delta_f_upper; the run's numbers)."""
    c = estimated_constants("twenty", 20000, seed)
    rng = np.random.default_rng([seed, 4, 5])
    T = 800 if preset == "quick" else 3000
    R = 6 if preset == "quick" else 40
    mask = ff.random_friend_dropout(rng, R, T, c["friends"], 0.3, warmup=5)
    beta = th.realised_beta(mask)
    df_hi = c["gaps"]["delta_f"][1]
    setting = {"beta": beta, "T": T, "R": R, "alpha": th.realised_alpha(mask),
               "delta_f_upper": df_hi}
    runs = ff.complexity_runs(c["model"], c["friends"], mask, rng, p=P_FAIL, beta=beta,
                              delta_f=df_hi, only=() if run == "whole_cluster" else (run,))
    if run != "whole_cluster":
        return setting, {**runs[run], "computations_per_round": runs[run]["per_round"]}
    whole = ff.whole_cluster_dropout(20, 200, np.arange(4), 5, 10)
    sim = ff.simulate_discovery(c["model"], whole, R, rng, c["friends"])
    rounds = np.nonzero(~whole[:, 0])[0]
    return setting, {"nonfriend_rate": float(sim["nonfriend"][:, rounds, :4].mean()),
                     "e2": float(sim["e2"][:, rounds].mean())}


@dataset(CLAIM_ID, CORRECTED_ID)
def complexity_data(ctx: Context) -> dict[str, Any]:
    """The complexity observation's runs (each a task, :func:`complexity_run`): the setting
    (beta, T, R, alpha, delta_f_upper) and each run's numbers by name."""
    T, R = ctx.size(quick=800, full=3000), ctx.size(quick=6, full=40)
    cost = R * T * _SECONDS_PER_STEP["complexity"]
    out = gather([task(name, complexity_run, cost=cost if run != "whole_cluster" else cost / 3,
                       preset=ctx.preset, seed=ctx.seed, run=run)
                  for name, run in _COMPLEXITY_RUNS.items()])
    data: dict[str, Any] = dict(out[0][0])
    for run, (_, numbers) in zip(_COMPLEXITY_RUNS.values(), out, strict=True):
        data[run] = numbers
    return data


def complexity(ctx: Context) -> Evidence:
    """Observation (no verdict): similarity computations per round without the reduction and
    with Theta_t and 0.5 Theta_t (20 clients in 5 Gaussian clusters, random dropout keeping a
    friend, p = 0.1), the friends lost and the non-friend rate; whole-cluster dropout
    (Assumption 5 fails, outside the theorem): the dropped cluster always gets non-friends."""
    d = complexity_data(ctx.preset, ctx.seed)
    full = d["none"]["total"]
    rows = {k: {"total": d[k]["total"], "saved": 1 - d[k]["total"] / full,
                "friend_eliminated": d[k]["friend_eliminated"],
                "nonfriend_rate": d[k]["nonfriend_rate"]}
            for k in ("none", "1 Theta_t", "0.5 Theta_t")}
    detail = "; ".join(f"{k}: {v['total']:.0f} scores ({100 * v['saved']:.1f}% saved), friend "
                       f"eliminated in {100 * v['friend_eliminated']:.0f}% of runs, non-friend "
                       f"rate {v['nonfriend_rate']:.3g}" for k, v in rows.items())
    wc = d["whole_cluster"]["nonfriend_rate"]
    detail += f"; whole-cluster dropout: non-friend rate {wc:.3g} (Assumption 5 fails)"
    return Evidence.illustration([], measured=rows, detail=detail, data={
        "T": d["T"], "beta": d["beta"], "alpha": d["alpha"], "whole_cluster": d["whole_cluster"],
        "computations_per_round": {k: d[k]["computations_per_round"].tolist()
                                   for k in ("none", "1 Theta_t", "0.5 Theta_t")}})


def _negative_theta(ctx: Context) -> np.ndarray:
    """Theta_t, t < 2000, on the negative-gap instance, as ``ctx`` states it."""
    s = negative_setting(T_NEGATIVE)
    g = s["gaps"]
    return theta_ctx(ctx, np.arange(T_NEGATIVE, dtype=float), 3, T_NEGATIVE, g["B_max"],
                     s["beta"], P_FAIL, g["delta_f"])


@dataset(CLAIM_ID)
def negative_runs(ctx: Context) -> dict[tuple[float, ...], np.ndarray]:
    """The negative-gap run with the stated Theta_t (a task): thetas ->
    :func:`elimination_run`."""
    key = _thetas(_negative_theta(_stated(ctx)))
    cost = ctx.size(quick=60, full=1000) * T_NEGATIVE * _SECONDS_PER_STEP["negative"]
    run, = gather([task("theta", elimination_run, cost=cost, instance="negative",
                        preset=ctx.preset, seed=ctx.seed, thetas=key)])
    return {key: run}


def negative_gap(ctx: Context) -> Evidence:
    """Counterexample (delta_min = -1/2, delta_f = 0): the non-friend g = 3 leads k's candidate
    set with mean 1, the friend f = +-1 has mean 1/2, and once Theta_t < 1/2 f is eliminated,
    almost surely (T = 2000, p = 0.1)."""
    T = T_NEGATIVE
    s = negative_setting(T)
    g = s["gaps"]
    theta = _negative_theta(ctx)
    elim = _eliminations(ctx, negative_runs, "negative", _thetas(theta))
    inst = {"instance": "negative_gap_instance(1/2, 3), k active only in rounds t % 4 == 0",
            "T": T, "p": P_FAIL, "K": 3, "B_max": g["B_max"], "beta": s["beta"],
            "delta_f": g["delta_f"], "delta_min": g["delta_min"]}
    return check_proportion_upper_bound(np.array([int((elim >= 0).sum())]),
                                        np.array([elim.size]), np.array([P_FAIL]), ALPHA,
                                        "P(a friend is eliminated)", inst)


CLAIM = Claim(
    id=CLAIM_ID, family="fdms", seed_ref="004, Section 5.3, Theorem 2",
    title="Theorem 2: with Theta_t, no friend is eliminated with probability >= 1 - p",
    statement=(r"\Theta_t = \sqrt{\frac{2\ln(2K^2TB_{\max}) - 2\ln p}{\beta t}} + \delta_f"
               r"\ \Longrightarrow\ P(\text{a friend leaves some }\mathcal C^k_t,\ t < T)"
               r" \le p\ \text{(and eq. (17) holds)}"),
    kind=ClaimKind.UPPER_BOUND, expected="refuted", stated=STATED, derivation=DERIVATION,
    finding=("False as stated, for Lemma 2's reason: with delta_min < 0 a non-friend leads a "
             "candidate set by more than delta_f, and the friend is eliminated almost surely "
             "once Theta_t falls below the gap. With delta_min > 0 it holds "
             "(fdms.complexity_reduction.corrected); the threshold is the one the union bound "
             "gives, and very conservative."),
    erratum=Erratum("false statement", "Theorem 2: needs delta_min >= 0 (a non-friend leader "
                    "must not beat a friend's mean by more than delta_f)", intended_holds=True),
)

CLAIM.check("symbolic", "union_threshold")(symbolic)
CLAIM.check("monte_carlo", "elimination")(elimination)
CLAIM.check("figure", "complexity")(complexity)
CLAIM.check("monte_carlo", "negative_gap")(negative_gap)
