"""The cached experiment runs of the ``fedavg`` claims (seed 003), as their checks and figures
use them.

Each ``*_data(preset, seed)`` function fixes the parameters of one claim's experiments (sizes
from the preset) and runs them once per ``(preset, seed)``; the engine seeds come from the
claim's random streams (:meth:`fedtheory.claims.Context.seed_sequence` of the claim id and a
stream name), so the numbers do not depend on where the runs are called from. Each is a
:func:`~fedtheory.tasks.dataset` of its claim: its engine runs are cut into replica ranges of
about :data:`TASK_SECONDS` of work each (:func:`run_in_tasks`), tasks that a parallel run
spreads over its workers; concatenated, they have bitwise the iterates of the uncut runs.
Used by the claims in :mod:`fedtheory.claims.fedavg`, by ``paper_figures/fedavg_*.py`` and by
the notebook.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedtheory.claims.core import Context
from fedtheory.experiments import fedavg_experiments as fx
from fedtheory.tasks import dataset, gather_groups, replica_chunks, task

__all__ = [
    "engine_seed",
    "exact_exponent_windows",
    "heterogeneity_data",
    "local_steps_data",
    "partial_participation_data",
    "run_in_tasks",
]

HETEROGENEITY_ID = "fedavg.heterogeneity"
PARTIAL_PARTICIPATION_ID = "fedavg.partial_participation"
LOCAL_STEPS_ID = "fedavg.local_steps"


def engine_seed(ctx: Context, stream: str) -> int:
    """A non-negative int seed for the engine, derived from (seed, claim id, stream).

    >>> engine_seed(Context(claim_id="x.demo"), "a") == engine_seed(Context(claim_id="x.demo"), "a")
    True
    """
    return int(ctx.seed_sequence(stream).generate_state(1)[0])


#: Estimated seconds of work per task: an engine run is cut into replica ranges of about this
#: cost (a fixed function of the run's sizes, so of the preset: never of the executor).
TASK_SECONDS = 8.0

#: Rough seconds per replica x round x local step x client x coordinate (one core), for the
#: tasks' cost estimates (scheduling and time left only).
_SECONDS_PER_UNIT = 1e-8


def run_in_tasks(specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """:func:`~fedtheory.experiments.fedavg_experiments.run_final` for each keyword dict of
    ``specs`` (a :data:`~fedtheory.experiments.fedavg_experiments.RunMany`), its replicas cut
    into tasks of about :data:`TASK_SECONDS` each (``first_replica``; each spec by its own
    ``replicas`` and cost per replica), gathered
    (:func:`fedtheory.tasks.gather_groups`) and concatenated: the iterates bitwise the uncut runs
    (metrics to the last bits: reductions over other numbers of rows)."""
    groups = []
    for j, spec in enumerate(specs):
        prob = spec["problem"]
        per_replica = (spec["rounds"] * spec["local_steps"] * prob.n * prob.d
                       * _SECONDS_PER_UNIT)
        per_task = max(1, int(TASK_SECONDS / per_replica))
        groups.append([task(f"run{j}-r{first}", fx.run_final, cost=count * per_replica,
                            **{**spec, "replicas": count, "first_replica": first})
                       for first, count in replica_chunks(spec["replicas"], per_task)])
    return [fx.concat_runs(parts) for parts in gather_groups(groups)]


def _problem(params: dict[str, Any]) -> Any:
    """The experiment's problem: ``make_problem(params["zeta2"], **params["problem_kw"])``."""
    return fx.make_problem(params["zeta2"], **params["problem_kw"])


# ---------------------------------------------------------------------------- heterogeneity
def _floors_with_params(params: dict[str, Any], rules: tuple[str, ...]) -> dict[str, Any]:
    """:func:`~fedtheory.experiments.fedavg_experiments.floors_vs_heterogeneity` at ``params``
    (``participants`` optional: all clients), with ``params`` kept in the result."""
    data = fx.floors_vs_heterogeneity(
        params["levels"], rules, participants=params.get("participants"), lr=params["lr"],
        local_steps=params["local_steps"], rounds=params["rounds"],
        replicas=params["replicas"], sigma2=params["sigma2"], seed=params["seed"],
        problem_kw=params["problem_kw"], run_many=run_in_tasks)
    data["params"] = params
    return data


@dataset(HETEROGENEITY_ID)
def _het_drift_data(ctx: Context) -> dict[str, Any]:
    params = {
        "levels": ctx.size(quick=(0.0, 1.0, 4.0), full=(0.0, 0.5, 1.0, 2.0, 4.0, 8.0)),
        "lr": 0.1, "local_steps": 5, "sigma2": 0.25,
        "rounds": ctx.size(quick=100, full=200),
        "replicas": ctx.size(quick=300, full=4000),
        "problem_kw": {"n": 10, "d": 8, "mu": 0.2, "L": 1.0, "problem_seed": 0},
        "seed": engine_seed(ctx, "drift"),
    }
    return _floors_with_params(params, ("fedavg", "scaffold"))


@dataset(HETEROGENEITY_ID)
def _het_sampling_data(ctx: Context) -> dict[str, Any]:
    params = {
        "levels": ctx.size(quick=(0.0, 1.0, 4.0), full=(0.0, 0.5, 1.0, 2.0, 4.0, 8.0)),
        "participants": 2, "lr": 0.2, "local_steps": 1, "sigma2": 0.25,
        "rounds": ctx.size(quick=100, full=300),
        "replicas": ctx.size(quick=200, full=3000),
        "problem_kw": {"n": 10, "d": 8, "mu": 0.2, "L": 1.0, "problem_seed": 0},
        "seed": engine_seed(ctx, "sampling"),
    }
    return _floors_with_params(params, ("fedavg", "saga"))


def heterogeneity_data(preset: str = "quick", seed: int = 0) -> tuple[dict[str, Any],
                                                                       dict[str, Any]]:
    """The two experiments of ``fedavg.heterogeneity`` (full participation with local steps;
    partial participation with one step), as its checks and figure use them."""
    return _het_drift_data(preset, seed), _het_sampling_data(preset, seed)


# ---------------------------------------------------------------------------- participation
@dataset(PARTIAL_PARTICIPATION_ID)
def _pp_update_data(ctx: Context) -> dict[str, Any]:
    params = {"participants": (1, 2, 5, 9, 10), "zeta2": 1.0, "lr": 0.05, "local_steps": 5,
              "sigma2": 1.0, "replicas": ctx.size(quick=4000, full=100_000),
              "problem_kw": {"n": 10, "d": 8, "mu": 0.2, "L": 1.0, "problem_seed": 1,
                             "identical_hessians": True},
              "x0": 1.0, "seed": engine_seed(ctx, "update")}
    prob = _problem(params)
    data = fx.server_update_samples(
        prob, params["participants"], lr=params["lr"], local_steps=params["local_steps"],
        sigma2=params["sigma2"], x0=np.full(prob.d, params["x0"]),
        replicas=params["replicas"], seed=params["seed"], run_many=run_in_tasks)
    data["params"] = params
    data["n"] = prob.n
    return data


@dataset(PARTIAL_PARTICIPATION_ID)
def _pp_floor_data(ctx: Context) -> dict[str, Any]:
    params = {"participants": ctx.size(quick=(1, 2, 5, 10), full=(1, 2, 3, 5, 7, 10)),
              "levels": (0.0, 1.0), "lr": 0.1, "local_steps": 2, "sigma2": 0.25,
              "rounds": ctx.size(quick=100, full=200),
              "replicas": ctx.size(quick=300, full=4000),
              "problem_kw": {"n": 10, "d": 8, "mu": 0.2, "L": 1.0, "problem_seed": 1,
                             "identical_hessians": True},
              "seed": engine_seed(ctx, "floor")}
    # every m's runs in one gather (one set of tasks), then FedAvg's exact error per m
    probs = [fx.make_problem(z, **params["problem_kw"]) for z in params["levels"]]
    x0 = np.zeros(probs[0].d)
    common = {"rule": "fedavg", "lr": params["lr"], "local_steps": params["local_steps"],
              "rounds": params["rounds"], "replicas": params["replicas"],
              "sigma2": params["sigma2"], "seed": params["seed"], "x0": x0,
              "metrics": ("dist2",)}
    runs = run_in_tasks([{"problem": prob, "participants": m, **common}
                         for m in params["participants"] for prob in probs])
    L = len(probs)
    rows = [[runs[i * L + j]["dist2"] for j in range(L)]
            for i in range(len(params["participants"]))]
    exact = [[fx.fedavg_moments(prob, lr=params["lr"], rounds=params["rounds"],
                                local_steps=params["local_steps"], participants=m,
                                sigma2=params["sigma2"], x0=x0).dist2[-1] for prob in probs]
             for m in params["participants"]]
    n = params["problem_kw"]["n"]
    m = np.array(params["participants"], dtype=float)
    return {"params": params, "dist2": np.array(rows), "exact": np.array(exact),
            "factor": (n - m) / (m * (n - 1)), "lecture_factor": (1 - m / n) / m}


def partial_participation_data(preset: str = "quick", seed: int = 0) -> tuple[dict[str, Any],
                                                                               dict[str, Any]]:
    """The two experiments of ``fedavg.partial_participation`` (one-round variance; error
    after R rounds against m), as its checks and figure use them."""
    return _pp_update_data(preset, seed), _pp_floor_data(preset, seed)


# ---------------------------------------------------------------------------- local steps
def _local_steps_runs(params: dict[str, Any], prob: Any, x0: np.ndarray) -> dict[str, Any]:
    """:func:`~fedtheory.experiments.fedavg_experiments.local_steps_runs` at ``params``, with
    ``params`` kept in the result."""
    data = fx.local_steps_runs(prob, params["rounds_grid"], local_steps=params["local_steps"],
                               c=params["c"], sigma2=params["sigma2"],
                               replicas=params["replicas"], seed=params["seed"], x0=x0,
                               run_many=run_in_tasks)
    data["params"] = params
    return data


#: Replicas per R of the rate experiment's grid (quick (20, 80, 320), full (50, 200, 800,
#: 3200)). A replica costs K R steps, so the largest R costs 16x (quick) / 64x (full) the
#: smallest. The per-replica coefficient of variation of the final ||grad f||^2 is about the
#: same at every R (~0.36), so the fitted slope's variance is CV^2 / sum_j N_j (x_j - xbar_N)^2
#: (x = log R): moving replicas from the largest R to the smallest raises that sum. Full:
#: 1.24x the sum of 3000 at every R (standard error x 0.90) at 56% of the replica-steps;
#: quick: each count >= 300 (the delta method), 1.98x the sum of 300 at every R at 1.27x.
RATE_REPLICAS = {"quick": (2000, 300, 300), "full": (20_000, 3000, 3000, 1000)}


@dataset(LOCAL_STEPS_ID)
def _ls_rate_data(ctx: Context) -> dict[str, Any]:
    params = {"rounds_grid": ctx.size(quick=(20, 80, 320), full=(50, 200, 800, 3200)),
              "local_steps": 5, "c": 0.5, "sigma2": 1.0, "zeta2": 1.0,
              "replicas": ctx.size(quick=RATE_REPLICAS["quick"], full=RATE_REPLICAS["full"]),
              "problem_kw": {"n": 10, "d": 16, "mu": 0.5, "L": 1.0, "problem_seed": 2},
              "x0": "x_star", "seed": engine_seed(ctx, "rate")}
    prob = _problem(params)
    x0 = prob.x_star.copy()
    data = _local_steps_runs(params, prob, x0)
    dense = np.unique(np.geomspace(params["rounds_grid"][0], params["rounds_grid"][-1], 12)
                      .round().astype(int))
    K, c, sigma2 = params["local_steps"], params["c"], params["sigma2"]
    exact = np.array([fx.fedavg_and_sgd_final(prob, rounds=int(R), local_steps=K, c=c,
                                              sigma2=sigma2, x0=x0) for R in dense])
    data["exact_grid"] = {"rounds": dense, "fedavg": exact[:, 0], "sgd": exact[:, 1]}
    data["curves"] = fx.local_steps_curves(prob, rounds=params["rounds_grid"][-1],
                                           local_steps=K, c=c, sigma2=sigma2,
                                           x0=np.ones(prob.d))
    return data


@dataset(LOCAL_STEPS_ID)
def _ls_equal_data(ctx: Context) -> dict[str, Any]:
    params = {"rounds_grid": ctx.size(quick=(10, 40), full=(10, 40, 160)), "local_steps": 5,
              "c": 0.5, "sigma2": 1.0, "zeta2": 1.0,
              "replicas": ctx.size(quick=1000, full=10_000),
              "problem_kw": {"n": 10, "d": 16, "mu": 0.5, "L": 1.0, "problem_seed": 3,
                             "identical_hessians": True},
              "x0": 1.0, "seed": engine_seed(ctx, "equal")}
    prob = _problem(params)
    return _local_steps_runs(params, prob, np.full(prob.d, params["x0"]))


def local_steps_data(preset: str = "quick", seed: int = 0) -> tuple[dict[str, Any],
                                                                     dict[str, Any]]:
    """The two experiments of ``fedavg.local_steps`` (rates over a grid of R; equal errors
    with equal Hessians), as its checks and figure use them."""
    return _ls_rate_data(preset, seed), _ls_equal_data(preset, seed)


def exact_exponent_windows(preset: str = "quick", seed: int = 0, windows: int = 8
                           ) -> dict[str, np.ndarray]:
    """Exact exponents of the final E||grad f||^2 in R over windows [R, 16 R], R = R_0 4^j, for
    FedAvg and parallel SGD on the rate experiment's problem (closed-form moments), and the
    exact ratio FedAvg / SGD at the window ends."""
    p = _ls_rate_data(preset, seed)["params"]
    prob = _problem(p)

    def final(R: int) -> tuple[float, float]:
        return fx.fedavg_and_sgd_final(prob, rounds=R, local_steps=p["local_steps"], c=p["c"],
                                       sigma2=p["sigma2"], x0=prob.x_star)

    lo = np.array([p["rounds_grid"][0] * 4**j for j in range(windows)])
    a = np.array([final(int(r)) for r in lo])
    b = np.array([final(int(16 * r)) for r in lo])
    out: dict[str, np.ndarray] = {"R": lo}
    for j, key in enumerate(("fedavg", "sgd")):
        out[key] = np.log(b[:, j] / a[:, j]) / np.log(16.0)
        out[f"{key}_end"] = b[:, j]
    out["ratio"] = out["fedavg_end"] / out["sgd_end"]
    return out
