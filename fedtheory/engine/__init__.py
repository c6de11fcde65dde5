"""The trajectory engine behind :func:`fedtheory.simulate.simulate`, one room per job:

* :mod:`~fedtheory.engine.config`: the typed, frozen configuration objects (:class:`Run`,
  :class:`LocalWork`, :class:`Server`, :class:`Metrics`, :class:`Execution`) and
  :class:`EngineConfig`, which holds them with the problem, rule and process and checks them
  against each other (the one compatibility check of a run, and its budget);
* :mod:`~fedtheory.engine.steps`: what local work may be asked (:data:`LocalSteps`,
  :class:`LocalStepsDraw`, :class:`MiniBatches`, :func:`resolve_local_steps`);
* :mod:`~fedtheory.engine.schedule`: the step sizes within a round (``LocalWork(schedule=)``);
* :mod:`~fedtheory.engine.protocols`: what the engine asks of the components, declared;
* :mod:`~fedtheory.engine.streams`: the per-replica random streams, named (:class:`Stream`),
  and the normals drawn ahead (:class:`NormalStreams`);
* :mod:`~fedtheory.engine.noise`: the gradient noise's route, chosen once;
* :mod:`~fedtheory.engine.local_work`: the local work as strategies, one file each, chosen
  once (plain steps, the problem's own steps, the fused closed form, per-client step counts,
  mini-batches);
* :mod:`~fedtheory.engine.measure`: the metrics and what an ``observe`` callback sees;
* :mod:`~fedtheory.engine.loop`: :class:`Engine` (the per-run set-up) and the round loop of a
  block of replicas (:meth:`Engine.run_chunk`), vectorised over replicas, clients and
  coordinates.

``simulate`` cuts the replicas into blocks, runs them (in threads when it pays) and assembles
the traces.
"""

from __future__ import annotations

from fedtheory.engine.config import (
    BIT_GENERATORS,
    EngineConfig,
    Execution,
    LocalSteps,
    LocalStepsDraw,
    LocalWork,
    Metrics,
    MiniBatches,
    Run,
    Server,
    resolve_local_steps,
)
from fedtheory.engine.loop import Engine
from fedtheory.engine.measure import METRICS, RoundRecord
from fedtheory.engine.streams import NormalStreams, Stream

__all__ = ["BIT_GENERATORS", "METRICS", "Engine", "EngineConfig", "Execution", "LocalSteps",
           "LocalStepsDraw", "LocalWork", "Metrics", "MiniBatches", "NormalStreams",
           "RoundRecord", "Run", "Server", "Stream", "resolve_local_steps"]

#: Bytes of updates (rows times d) a block of pairs aims at. Its work arrays stay in the
#: last-level cache, and a block is enough work that the Python between numpy calls (which
#: holds the GIL) is a few per cent of it: with L2-sized blocks (256 KiB) two worker threads
#: spent their time handing the GIL over, and one thread lost 15 % to call overhead. Read
#: when an :class:`Engine` is built (from here: a test may set it).
_BLOCK_BYTES = 1 << 20

#: Fewest rows of a block (for very large d).
_MIN_BLOCK_ROWS = 8
