"""The datasets of the ``fedavg`` claims (seed 003, :mod:`fedtheory.tasks`), as their checks
and figures read them: ``heterogeneity_data(ctx)`` in a check, ``heterogeneity_data(preset,
seed)`` elsewhere.

Each fixes the parameters of one of its claim's experiments (sizes from the preset); the
engine seeds come from the claim's random streams (:func:`engine_seed`), so the numbers do not
depend on where the data is read from. Every engine run is cut into replica ranges
(:func:`fedtheory.experiments.fedavg_runs.replica_pieces`), each a task; concatenated they
have bitwise the iterates of the uncut runs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedtheory.claimkit.core import Context
from fedtheory.experiments import fedavg_experiments as fx
from fedtheory.experiments import fedavg_lecture_tables as lt
from fedtheory.experiments import fedavg_runs as fr
from fedtheory.tasks import Plan, Task, dataset, task

__all__ = ["RATE_REPLICAS", "ablation_data", "engine_seed", "exact_exponent_windows",
           "heterogeneity_data",
           "local_steps_data", "partial_participation_data", "run_tasks_plan",
           "table_data"]

HETEROGENEITY_ID = "fedavg.heterogeneity"
PARTIAL_PARTICIPATION_ID = "fedavg.partial_participation"
LOCAL_STEPS_ID = "fedavg.local_steps"


def engine_seed(ctx: Context, stream: str) -> int:
    """A non-negative int seed for the engine, derived from (seed, claim id, stream).

    >>> engine_seed(Context(claim_id="x.demo"), "a") == engine_seed(Context(claim_id="x.demo"), "a")
    True
    """
    return int(ctx.seed_sequence(stream).generate_state(1)[0])


def run_tasks_plan(specs: list[dict[str, Any]], combine: Any) -> Plan:
    """A plan running each spec (of :func:`~fedtheory.experiments.fedavg_experiments.
    run_final`) cut into replica ranges as tasks; ``combine`` receives the concatenated runs,
    in the order of ``specs``."""
    groups: list[list[Task]] = [[task(name, fx.run_final, cost=cost, **kw)
                                 for name, kw, cost in pieces]
                                for pieces in fr.replica_pieces(specs, fr.TASK_SECONDS)]
    return Plan.grouped(groups, lambda parts: combine([fx.concat_runs(p) for p in parts]))


def _given(runs: list[dict[str, Any]]) -> Any:
    """A ``run_many`` that hands back ``runs`` (computed as tasks) for the same specs."""
    def run_many(specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if len(specs) != len(runs):
            raise ValueError(f"specs must be the {len(runs)} runs planned, got {len(specs)}")
        return runs
    return run_many


# ---------------------------------------------------------------------------- heterogeneity
def _floors_plan(params: dict[str, Any], rules: tuple[str, ...]) -> Plan:
    """:func:`~fedtheory.experiments.fedavg_experiments.floors_vs_heterogeneity` at ``params``
    (``participants`` optional: all clients), with ``params`` kept in the result."""
    kw = {"participants": params.get("participants"), "lr": params["lr"],
          "local_steps": params["local_steps"], "rounds": params["rounds"],
          "replicas": params["replicas"], "sigma2": params["sigma2"], "seed": params["seed"],
          "problem_kw": params["problem_kw"]}

    def combine(runs: list[dict[str, Any]]) -> dict[str, Any]:
        data = fx.floors_vs_heterogeneity(params["levels"], rules, run_many=_given(runs), **kw)
        data["params"] = params
        return data
    return run_tasks_plan(fx.floors_specs(params["levels"], rules, **kw), combine)


@dataset(HETEROGENEITY_ID)
def _het_drift_data(ctx: Context) -> Plan:
    params = {
        "levels": ctx.size(quick=(0.0, 1.0, 4.0), full=(0.0, 0.5, 1.0, 2.0, 4.0, 8.0)),
        "lr": 0.1, "local_steps": 5, "sigma2": 0.25,
        "rounds": ctx.size(quick=100, full=200),
        "replicas": ctx.size(quick=300, full=4000),
        "problem_kw": {"n": 10, "d": 8, "mu": 0.2, "L": 1.0, "problem_seed": 0},
        "seed": engine_seed(ctx, "drift"),
    }
    return _floors_plan(params, ("fedavg", "scaffold"))


@dataset(HETEROGENEITY_ID)
def _het_sampling_data(ctx: Context) -> Plan:
    params = {
        "levels": ctx.size(quick=(0.0, 1.0, 4.0), full=(0.0, 0.5, 1.0, 2.0, 4.0, 8.0)),
        "participants": 2, "lr": 0.2, "local_steps": 1, "sigma2": 0.25,
        "rounds": ctx.size(quick=100, full=300),
        "replicas": ctx.size(quick=200, full=3000),
        "problem_kw": {"n": 10, "d": 8, "mu": 0.2, "L": 1.0, "problem_seed": 0},
        "seed": engine_seed(ctx, "sampling"),
    }
    return _floors_plan(params, ("fedavg", "saga"))


#: The datasets of ``fedavg.heterogeneity`` (declared by the claim).
HETEROGENEITY = (_het_drift_data, _het_sampling_data)


def heterogeneity_data(where: Context | str = "quick", seed: int | None = None
                       ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The two experiments of ``fedavg.heterogeneity`` (full participation with local steps;
    partial participation with one step), as its checks (``where`` the context) and figure
    (``where`` the preset) read them."""
    return _het_drift_data(where, seed), _het_sampling_data(where, seed)


# ---------------------------------------------------------------------------- participation
@dataset(PARTIAL_PARTICIPATION_ID)
def _pp_update_data(ctx: Context) -> Plan:
    params = {"participants": (1, 2, 5, 9, 10), "zeta2": 1.0, "lr": 0.05, "local_steps": 5,
              "sigma2": 1.0, "replicas": ctx.size(quick=4000, full=100_000),
              "problem_kw": {"n": 10, "d": 8, "mu": 0.2, "L": 1.0, "problem_seed": 1,
                             "identical_hessians": True},
              "x0": 1.0, "seed": engine_seed(ctx, "update")}
    prob = fr.problem(params)
    kw = {"lr": params["lr"], "local_steps": params["local_steps"], "sigma2": params["sigma2"],
          "x0": np.full(prob.d, params["x0"]), "replicas": params["replicas"],
          "seed": params["seed"]}

    def combine(runs: list[dict[str, Any]]) -> dict[str, Any]:
        data = fx.server_update_samples(prob, params["participants"], run_many=_given(runs),
                                        **kw)
        data["params"] = params
        data["n"] = prob.n
        return data
    return run_tasks_plan(fx.server_update_specs(prob, params["participants"], **kw), combine)


@dataset(PARTIAL_PARTICIPATION_ID)
def _pp_floor_data(ctx: Context) -> Plan:
    params = {"participants": ctx.size(quick=(1, 2, 5, 10), full=(1, 2, 3, 5, 7, 10)),
              "levels": (0.0, 1.0), "lr": 0.1, "local_steps": 2, "sigma2": 0.25,
              "rounds": ctx.size(quick=100, full=200),
              "replicas": ctx.size(quick=300, full=4000),
              "problem_kw": {"n": 10, "d": 8, "mu": 0.2, "L": 1.0, "problem_seed": 1,
                             "identical_hessians": True},
              "seed": engine_seed(ctx, "floor")}
    # every m's runs in one plan (one set of tasks), then FedAvg's exact error per m
    probs = [fx.make_problem(z, **params["problem_kw"]) for z in params["levels"]]
    x0 = np.zeros(probs[0].d)
    common = {"rule": "fedavg", "lr": params["lr"], "local_steps": params["local_steps"],
              "rounds": params["rounds"], "replicas": params["replicas"],
              "sigma2": params["sigma2"], "seed": params["seed"], "x0": x0,
              "metrics": ("dist2",)}

    def combine(runs: list[dict[str, Any]]) -> dict[str, Any]:
        L = len(probs)
        rows = [[runs[i * L + j]["dist2"] for j in range(L)]
                for i in range(len(params["participants"]))]
        exact = [[fx.fedavg_moments(prob, lr=params["lr"], rounds=params["rounds"],
                                    local_steps=params["local_steps"], participants=m,
                                    sigma2=params["sigma2"], x0=x0).dist2[-1]
                  for prob in probs]
                 for m in params["participants"]]
        n = params["problem_kw"]["n"]
        m = np.array(params["participants"], dtype=float)
        return {"params": params, "dist2": np.array(rows), "exact": np.array(exact),
                "factor": (n - m) / (m * (n - 1)), "lecture_factor": (1 - m / n) / m}
    return run_tasks_plan([{"problem": prob, "participants": m, **common}
                           for m in params["participants"] for prob in probs], combine)


#: The datasets of ``fedavg.partial_participation`` (declared by the claim).
PARTIAL_PARTICIPATION = (_pp_update_data, _pp_floor_data)


def partial_participation_data(where: Context | str = "quick", seed: int | None = None
                               ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The two experiments of ``fedavg.partial_participation`` (one-round variance; error
    after R rounds against m), as its checks and figure read them."""
    return _pp_update_data(where, seed), _pp_floor_data(where, seed)


# ---------------------------------------------------------------------------- local steps
def _local_steps_plan(params: dict[str, Any], prob: Any, x0: np.ndarray,
                      then: Any = None) -> Plan:
    """:func:`~fedtheory.experiments.fedavg_experiments.local_steps_runs` at ``params``, with
    ``params`` kept in the result (and ``then(data)`` applied)."""
    kw = {"local_steps": params["local_steps"], "c": params["c"], "sigma2": params["sigma2"],
          "replicas": params["replicas"], "seed": params["seed"], "x0": x0}

    def combine(runs: list[dict[str, Any]]) -> dict[str, Any]:
        data = fx.local_steps_runs(prob, params["rounds_grid"], run_many=_given(runs), **kw)
        data["params"] = params
        return then(data) if then is not None else data
    return run_tasks_plan(fx.local_steps_specs(prob, params["rounds_grid"], **kw), combine)


#: Replicas per R of the rate experiment's grid (quick (20, 80, 320), full (50, 200, 800,
#: 3200)). A replica costs K R steps, so the largest R costs 16x (quick) / 64x (full) the
#: smallest. The per-replica coefficient of variation of the final ||grad f||^2 is about the
#: same at every R (~0.36), so the fitted slope's variance is CV^2 / sum_j N_j (x_j - xbar_N)^2
#: (x = log R): moving replicas from the largest R to the smallest raises that sum. Full:
#: 1.24x the sum of 3000 at every R (standard error x 0.90) at 56% of the replica-steps;
#: quick: each count >= 300 (the delta method), 1.98x the sum of 300 at every R at 1.27x.
RATE_REPLICAS = {"quick": (2000, 300, 300), "full": (20_000, 3000, 3000, 1000)}


def _rate_params(ctx: Context) -> dict[str, Any]:
    return {"rounds_grid": ctx.size(quick=(20, 80, 320), full=(50, 200, 800, 3200)),
            "local_steps": 5, "c": 0.5, "sigma2": 1.0, "zeta2": 1.0,
            "replicas": ctx.size(quick=RATE_REPLICAS["quick"], full=RATE_REPLICAS["full"]),
            "problem_kw": {"n": 10, "d": 16, "mu": 0.5, "L": 1.0, "problem_seed": 2},
            "x0": "x_star", "seed": engine_seed(ctx, "rate")}


@dataset(LOCAL_STEPS_ID)
def _ls_rate_data(ctx: Context) -> Plan:
    params = _rate_params(ctx)
    prob = fr.problem(params)
    x0 = prob.x_star.copy()

    def exact(data: dict[str, Any]) -> dict[str, Any]:
        dense = np.unique(np.geomspace(params["rounds_grid"][0], params["rounds_grid"][-1], 12)
                          .round().astype(int))
        K, c, sigma2 = params["local_steps"], params["c"], params["sigma2"]
        ex = np.array([fx.fedavg_and_sgd_final(prob, rounds=int(R), local_steps=K, c=c,
                                               sigma2=sigma2, x0=x0) for R in dense])
        data["exact_grid"] = {"rounds": dense, "fedavg": ex[:, 0], "sgd": ex[:, 1]}
        data["curves"] = fx.local_steps_curves(prob, rounds=params["rounds_grid"][-1],
                                               local_steps=K, c=c, sigma2=sigma2,
                                               x0=np.ones(prob.d))
        return data
    return _local_steps_plan(params, prob, x0, then=exact)


@dataset(LOCAL_STEPS_ID)
def _ls_equal_data(ctx: Context) -> Plan:
    params = {"rounds_grid": ctx.size(quick=(10, 40), full=(10, 40, 160)), "local_steps": 5,
              "c": 0.5, "sigma2": 1.0, "zeta2": 1.0,
              "replicas": ctx.size(quick=1000, full=10_000),
              "problem_kw": {"n": 10, "d": 16, "mu": 0.5, "L": 1.0, "problem_seed": 3,
                             "identical_hessians": True},
              "x0": 1.0, "seed": engine_seed(ctx, "equal")}
    prob = fr.problem(params)
    return _local_steps_plan(params, prob, np.full(prob.d, params["x0"]))


#: The datasets of ``fedavg.local_steps`` (declared by the claim).
LOCAL_STEPS = (_ls_rate_data, _ls_equal_data)


def local_steps_data(where: Context | str = "quick", seed: int | None = None
                     ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The two experiments of ``fedavg.local_steps`` (rates over a grid of R; equal errors
    with equal Hessians), as its checks and figure read them."""
    return _ls_rate_data(where, seed), _ls_equal_data(where, seed)


def exact_exponent_windows(where: Context | str = "quick", seed: int | None = None,
                           windows: int = 8) -> dict[str, np.ndarray]:
    """:func:`fedtheory.experiments.fedavg_runs.exact_exponent_windows` on the rate
    experiment's parameters (no runs needed: its problem and grid only)."""
    if isinstance(where, Context):
        preset, s = where.preset, where.seed
    else:
        preset, s = where, 0 if seed is None else seed
    return fr.exact_exponent_windows(
        _rate_params(Context(preset=preset, seed=s, claim_id=LOCAL_STEPS_ID)), windows)


# ---------------------------------------------------------------------------- the lecture's tables
ABLATION_ID = "fedavg.heterogeneity_ablation"
TABLE_ID = "fedavg.scaffold_table"


@dataset(ABLATION_ID)
def ablation_data(ctx: Context) -> Plan:
    """:mod:`fedtheory.experiments.fedavg_lecture_tables`' heterogeneity ablation (line 153)
    of the claim's preset and seed, a task per (level, chunk of seeds)."""
    entropy = (engine_seed(ctx, "ablation"),)
    pieces = lt.ablation_pieces(ctx.preset, entropy)

    def combine(results: list[Any]) -> dict[str, Any]:
        return lt.ablation_combine(ctx.preset, results)
    return Plan([task(name, fn, cost=cost, **kw) for name, fn, kw, cost in pieces], combine)


@dataset(TABLE_ID)
def table_data(ctx: Context) -> Plan:
    """:mod:`fedtheory.experiments.fedavg_lecture_tables`' SCAFFOLD table (lines 313-322) of
    the claim's preset and seed, a task per (similarity, chunk of seeds)."""
    entropy = (engine_seed(ctx, "table"),)
    pieces = lt.table_pieces(ctx.preset, entropy)

    def combine(results: list[Any]) -> dict[str, Any]:
        return lt.table_combine(ctx.preset, results)
    return Plan([task(name, fn, cost=cost, **kw) for name, fn, kw, cost in pieces], combine)
