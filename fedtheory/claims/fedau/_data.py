"""The datasets of the ``fedau`` claims (:mod:`fedtheory.tasks`): the runs of
:mod:`fedtheory.experiments.fedau_patterns` as tasks, combined into the claim's table."""

from __future__ import annotations

from typing import Any

from fedtheory.claimkit.core import Context
from fedtheory.experiments.fedau_patterns import patterns_calls, patterns_combine
from fedtheory.tasks import Plan, dataset, task

__all__ = ["patterns_data"]


@dataset("fedau.participation_patterns")
def patterns_data(ctx: Context) -> Plan:
    """:func:`~fedtheory.experiments.fedau_patterns.patterns_table` of the claim's preset and
    seed, each run a task."""
    calls = patterns_calls(ctx.preset, ctx.seed)

    def combine(results: list[Any]) -> dict[str, Any]:
        return patterns_combine(ctx.preset, ctx.seed, results)
    return Plan([task(name, fn, cost=cost, **kw) for name, fn, kw, cost in calls], combine)
