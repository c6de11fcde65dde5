r"""Local work as strategies, one file each, chosen once when the engine is built
(:func:`choose`): the fastest exact route the problem declares.

* :class:`PlainSteps` (``plain.py``): repeated ``client_gradients``, every problem;
* :class:`ProblemSteps` (``own_steps.py``): the problem's own ``local_steps``
  (``Capability.LOCAL_STEPS``, one lr, :math:`\tau > 1` somewhere);
* :class:`FusedSteps` (``fused.py``): the closed form (``Capability.FUSED_LOCAL_STEPS``, when
  exact: :meth:`~fedtheory.engine.EngineConfig.can_fuse`; by default when :math:`\tau > 1`);
* :class:`PerClientSteps` (``per_client.py``): per-client step counts by masking, the
  ``varied`` route of the gradient-step strategies;
* :class:`MiniBatchSteps` (``minibatch.py``): :class:`~fedtheory.engine.MiniBatches`.

A new strategy is one new file: a :class:`LocalWorkStrategy` subclass with ``uniform`` and
``varied`` (or its own ``updates``), and its case in :func:`choose`.
"""

from __future__ import annotations

from typing import Any

from fedtheory.engine.local_work.base import LocalWorkStrategy, subset
from fedtheory.engine.local_work.fused import FusedSteps
from fedtheory.engine.local_work.minibatch import MiniBatchSteps
from fedtheory.engine.local_work.own_steps import ProblemSteps
from fedtheory.engine.local_work.per_client import PerClientSteps
from fedtheory.engine.local_work.plain import PlainSteps

__all__ = ["FusedSteps", "LocalWorkStrategy", "MiniBatchSteps", "PerClientSteps",
           "PlainSteps", "ProblemSteps", "choose", "subset"]


def choose(engine: Any) -> LocalWorkStrategy:
    """The strategy of the engine's run (its configuration checked the combination)."""
    from fedtheory.problems.base import Capability

    local, caps = engine.local, engine.capabilities
    if local.batches is not None:
        return MiniBatchSteps(engine)
    fuse = ((engine.config.can_fuse and engine.tau_max > 1) if local.fuse is None
            else local.fuse)
    if fuse:
        return FusedSteps(engine)
    if (engine.tau_max > 1 and Capability.LOCAL_STEPS in caps
            and engine.lr_rows is None  # a problem's own steps take one lr
            and engine.factors is None):  # (and no schedule within the round)
        return ProblemSteps(engine)
    return PlainSteps(engine)
