"""The datasets of the ``fdms`` experiment claims (:mod:`fedtheory.tasks`): seed 004's
experiment as the authors' code ran it (:mod:`fedtheory.experiments.fdms_paper`), its pieces
run as tasks. ``paper_data(ctx)`` in a check, ``paper_data(preset, seed)`` elsewhere."""

from __future__ import annotations

from typing import Any

from fedtheory.claimkit.core import Context
from fedtheory.experiments import fdms_paper
from fedtheory.tasks import Plan, dataset, task

__all__ = ["PAPER", "paper_data"]


@dataset(fdms_paper.CLAIM_ID)
def paper_data(ctx: Context) -> Plan:
    """Every setting's runs for the preset's seeds
    (:func:`~fedtheory.experiments.fdms_paper.paper_pieces`, each a task), joined by
    :func:`~fedtheory.experiments.fdms_paper.paper_combine`."""
    entropy = tuple(int(x) for x in ctx.seed_sequence("paper").generate_state(4))

    def combine(results: list[dict[str, Any]]) -> dict[str, Any]:
        return fdms_paper.paper_combine(ctx.preset, results)
    return Plan([task(name, fn, cost=cost, **kw)
                 for name, fn, kw, cost in fdms_paper.paper_pieces(ctx.preset, entropy)],
                combine)


#: The datasets of ``fdms.experiment`` and ``fdms.experiment.corrected``.
PAPER = (paper_data,)
