"""The datasets of ``ocs.experiment`` (:mod:`fedtheory.tasks`): its full / uniform / OCS /
AOCS comparison and its :math:`m = O(\\sqrt n)` sweep, the pieces of
:mod:`fedtheory.experiments.ocs_runs` run as tasks with generators spawned from the claim's
streams. ``experiment_run(ctx)`` in a check, ``experiment_run(preset, seed)`` elsewhere."""

from __future__ import annotations

from typing import Any

from fedtheory.claimkit.core import Context
from fedtheory.experiments import ocs_runs
from fedtheory.experiments.ocs_fedavg import FedAvgRun
from fedtheory.tasks import Plan, dataset, task

__all__ = ["EXPERIMENT", "experiment_run", "sweep_run"]

#: The claim whose random streams the runs use (seed, claim id and stream name).
CLAIM_ID = "ocs.experiment"


@dataset(CLAIM_ID)
def experiment_run(ctx: Context) -> Plan:
    """The full / uniform / OCS / AOCS comparison of ``ocs.experiment`` for a preset and seed
    (the same run the claim's checks judge): replica ranges as tasks, each with a generator
    spawned from the claim's stream."""
    pieces = ocs_runs.experiment_pieces(ctx.preset, ctx.seed,
                                        ctx.seed_sequence("ocs_vs_uniform"))

    def combine(runs: list[FedAvgRun]) -> FedAvgRun:
        return ocs_runs.experiment_combine(ctx.preset, ctx.seed, runs)
    return Plan([task(name, fn, cost=cost, **kw) for name, fn, kw, cost in pieces], combine)


@dataset(CLAIM_ID)
def sweep_run(ctx: Context) -> Plan:
    """The m = O(sqrt n) sweep of ``ocs.experiment`` for a preset and seed: each :math:`n`'s
    replica ranges as tasks, each with a generator spawned from the claim's stream of that
    :math:`n`."""
    groups = ocs_runs.sweep_pieces(ctx.preset, ctx.seed,
                                   lambda n: ctx.seed_sequence(f"sqrt_n/{n}"))

    def combine(parts: list[list[dict[str, Any]]]) -> ocs_runs.SqrtNSweep:
        return ocs_runs.sweep_combine(ctx.preset, ctx.seed, parts)
    return Plan.grouped([[task(name, fn, cost=cost, **kw) for name, fn, kw, cost in g]
                         for g in groups], combine)


#: The datasets of ``ocs.experiment`` (declared by the claim).
EXPERIMENT = (experiment_run, sweep_run)
