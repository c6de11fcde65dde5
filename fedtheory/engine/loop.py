"""The round loop: :class:`Engine` (everything fixed for a run, from an
:class:`~fedtheory.engine.EngineConfig`) and a block of replicas simulated round after round
(:class:`Block`, one per :meth:`Engine.run_chunk`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from fedtheory.algorithms import Participants, Rule
from fedtheory.algorithms.base import scratch, take_rows
from fedtheory.engine.config import (
    BIT_GENERATORS,
    EngineConfig,
    LocalWork,
    Metrics,
    Run,
    Server,
    _one_if_equal,
    hot_problem,
)
from fedtheory.engine.local_work import LocalWorkStrategy, MiniBatchSteps, choose
from fedtheory.engine.measure import METRICS, Measure, Recorder, RoundRecord
from fedtheory.engine.noise import GradientNoise
from fedtheory.engine.protocols import ClientLosses, PerReplicaParts, sees_the_round
from fedtheory.engine.schedule import round_factors
from fedtheory.engine.steps import LocalStepsDraw, MiniBatches, _check_taus
from fedtheory.engine.streams import Stream, replica_streams
from fedtheory.participation.base import RoundView

if TYPE_CHECKING:
    from fedtheory.participation import ParticipationProcess
    from fedtheory.problems.base import Capability, Problem
    from fedtheory.problems.noise import NoiseSampler

__all__ = ["Block", "Engine"]


class Engine:
    """Everything fixed for a run, from an :class:`EngineConfig`; :meth:`run_chunk` simulates a
    block of replicas. The configuration objects are read where they are needed
    (``self.run.rounds``, ``self.local.lr``); what the engine derives from them (sizes, noise,
    the local-work strategy) is set once here; per-chunk state lives in the chunk (a
    :class:`Block`), never on the engine, so chunks can run in threads.

    The problem's optional fast paths are those it declares (:attr:`capabilities`, read by
    :func:`~fedtheory.problems.base.declared_capabilities`: configuring a run fails with a
    ``ValueError`` when a declared capability's method is missing); :attr:`work` is the
    local-work strategy they give (:mod:`fedtheory.engine.local_work`)."""

    # the configuration
    config: EngineConfig
    problem: Problem
    rule: Rule
    participation: ParticipationProcess
    run: Run
    local: LocalWork
    server: Server
    metrics: Metrics
    # derived once from it
    dtype: np.dtype
    lr: float | np.ndarray
    noise: NoiseSampler | None
    noise_route: GradientNoise
    local_steps: Any
    x0: np.ndarray
    record: list[int]
    n: int
    d: int
    step_size: float | np.ndarray
    bits_per_update: int
    block_rows: int
    capabilities: frozenset[Capability]
    stack: Any  # the ProblemStack of a run whose replicas have their own problems, or None
    hot: Any  # the problem the hot path calls
    lr_rows: np.ndarray | None
    factors: np.ndarray | None
    work: LocalWorkStrategy
    measure: Measure
    loss_gap: Any  # the problem's exact f - f*, or None
    x_star: np.ndarray
    f_star: Any

    def __init__(self, config: EngineConfig) -> None:
        from fedtheory import engine as package  # its block sizes (set there, patchable)
        from fedtheory.problems.base import Capability

        if not isinstance(config, EngineConfig):
            raise TypeError(f"Engine takes an EngineConfig, got {type(config).__name__}")
        self.config = config
        self.problem, self.rule = config.problem, config.rule
        self.participation = config.participation
        self.run, self.local = config.run, config.local
        self.server, self.metrics = config.server, config.metrics
        prob = self.problem
        self.stack, self.hot, self.capabilities = hot_problem(prob)
        self.n, self.d = int(prob.n), int(prob.d)
        # read on the hot path
        self.dtype, self.noise = self.run.dtype, self.local.noise
        self.lr = _one_if_equal(self.local.lr)
        self.local_steps = self.local.steps  # resolved by the configuration
        self.x0 = (np.zeros(self.d) if self.server.x0 is None
                   else np.asarray(self.server.x0, dtype=float))
        self.record = self.metrics.record_rounds(self.run.rounds)
        #: the replicas' learning rates when they differ, ``(R,)``, else None (``self.lr``)
        self.lr_rows = self.lr if isinstance(self.lr, np.ndarray) else None
        #: the step-size factors within a round, ``(E,)`` or ``(T, E)`` in the run's dtype
        #: (:mod:`fedtheory.engine.schedule`), else None
        self.factors = (None if self.local.schedule is None
                        else np.asarray(self.local.schedule, dtype=self.dtype))
        # (R,) when either rate is per replica
        self.step_size = _one_if_equal(self.server.global_lr) * self.lr
        self.bits_per_update = self.d * self.metrics.bits_per_float * self.rule.floats_per_update
        self.block_rows = max(package._MIN_BLOCK_ROWS,
                              package._BLOCK_BYTES // (self.d * self.dtype.itemsize))
        loss_gap = prob.loss_gap if Capability.EXACT_LOSS_GAP in self.capabilities else None
        self.measure = Measure(prob, self.stack, loss_gap, self.metrics.skip,
                               self.metrics.extra)
        self.loss_gap, self.x_star, self.f_star = loss_gap, self.measure.x_star, \
            self.measure.f_star
        self.noise_route = GradientNoise(self.noise, self.d, self.dtype)
        self._setup_steps()
        self.grads_take_out = Capability.GRADIENTS_INTO_BUFFER in self.capabilities
        self.work = choose(self)

    def _setup_steps(self) -> None:
        """The local-step schedule: per-client counts, a per-round draw, or one int."""
        tau = self.local_steps
        self.tau_clients = tau if isinstance(tau, np.ndarray) else None
        self.tau_draw = None
        if isinstance(tau, LocalStepsDraw):
            self.tau_draw, self.tau_max = tau.draw, tau.max
        elif callable(tau) and not isinstance(tau, np.ndarray):
            self.tau_draw, self.tau_max = tau, 2  # unknown: assume local work happens
        elif self.tau_clients is not None:
            self.tau_max = int(self.tau_clients.max())
        else:
            self.tau_max = int(tau)
        #: the one int every pair runs, or None when the steps vary by client or round
        self.tau_fixed = int(tau) if isinstance(tau, (int, np.integer)) else None

    # -- what the strategies ask -------------------------------------------------------------
    @property
    def fused(self) -> bool:
        """Whether the local steps run in the problem's closed form."""
        return self.work.fused

    @property
    def batches(self) -> MiniBatches | None:
        """The run's mini-batches, or None."""
        return self.local.batches

    @property
    def noise_sd(self) -> float:
        """The per-coordinate standard deviation of additive Gaussian noise (else 0)."""
        return self.noise_route.sd

    @property
    def noise_kind(self) -> str:
        """``"none"``, ``"additive"``, ``"relative"`` (Gaussian) or ``"generic"``."""
        return self.noise_route.kind.value

    def client_ids(self, part: Participants, work: dict[str, Any]) -> np.ndarray:
        r"""The hot path's client of each pair: ``part.cols``, or for a
        :class:`~fedtheory.problems.stack.ProblemStack` the flat problem's client
        :math:`u_rn + i` of the pair's replica :math:`r` in the run (``work["first"]``: the
        block's first replica; :meth:`~fedtheory.problems.stack.ProblemStack.client_ids`)."""
        if self.stack is None:
            return part.cols
        return self.stack.client_ids(part.rows + work["first"], part.cols)

    def pair_lr(self, part: Participants, work: dict[str, Any]) -> Any:
        r"""The local step size of the pairs: the one :math:`\eta` (a scalar of the run's
        dtype), or with per-replica rates a ``(K, 1)`` column of their replicas'."""
        if self.lr_rows is None:
            return self.dtype.type(self.lr)
        return self.lr_rows[part.rows + work["first"]].astype(self.dtype)[:, None]

    def step_factors(self, work: dict[str, Any]) -> np.ndarray | None:
        r"""The factors :math:`s_{t,k}` of this round's local steps (``work["round"]``
        :math:`= t + 1`), ``(E,)`` in the run's dtype, or None without a schedule."""
        return round_factors(self.factors, int(work.get("round", 1)) - 1)

    def round_lr(self, work: dict[str, Any]) -> tuple[Any, Any]:
        r"""The closed form's step size of this round and the factor its update is scaled
        by: :math:`(\eta s_t, s_t)` for a schedule of one factor per round, else
        :math:`(\eta, \text{None})`."""
        s = self.step_factors(work)
        if s is None:
            return self.lr, None
        return self.lr * float(s[0]), s[0]

    def pair_steps(self, part: Participants, work: dict[str, Any]) -> np.ndarray | None:
        """``(K,)`` local steps of the pairs of ``part`` this round, or None when every pair
        runs the configuration's one :math:`\tau` (``work["taus"]``: the round's ``(R, n)``
        draw)."""
        if self.tau_fixed is not None:
            return None
        if self.tau_clients is not None:
            return self.tau_clients[part.cols]
        return work["taus"][part.rows, part.cols]

    def _shared_draws(self, start: int, size: int) -> np.ndarray | None:
        """For replicas ``start .. start + size - 1``: the first replica of the block with the
        same stream index and problem (whose sample-order keys are the same numbers), or None
        when no two share both (``Run(streams=...)`` with methods side by side)."""
        if self.run.streams is None:
            return None
        idx = self.run.stream_indices(start, size)
        slot = (self.stack.slots[start:start + size] if self.stack is not None
                else np.zeros(size, np.intp))
        key = idx * (int(slot.max()) + 1) + slot
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        if first.size == size:
            return None
        return first[inverse.ravel()]


    def sample_keys(self, rngs: Sequence[np.random.Generator], first: int = 0,
                    leaders: np.ndarray | None = None) -> np.ndarray:
        """This round's sort keys of the sample orders (:meth:`MiniBatchSteps.sample_keys`)."""
        assert isinstance(self.work, MiniBatchSteps)
        return self.work.sample_keys(rngs, first, leaders)

    @staticmethod
    def sample_orders(keys: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """The sample orders of the pairs (:meth:`MiniBatchSteps.sample_orders`)."""
        return MiniBatchSteps.sample_orders(keys, rows, cols)

    def local_updates(self, x: np.ndarray, part: Participants, corr: np.ndarray | None,
                      rngs: list[np.random.Generator], work: dict[str, Any],
                      taus: np.ndarray | None = None,
                      orders: np.ndarray | None = None) -> tuple[np.ndarray, int]:
        r"""The active pairs' pseudo-gradients ``(K, d)`` and the gradient rows evaluated.

        ``taus``: ``(K,)`` local steps per pair (None: the configuration's one :math:`\tau`).
        A pair with :math:`\tau_k` steps reports :math:`\Delta_k = \sum_{j<\tau_k}(\nabla
        f_{c_k}(y^j_k) + \xi^j_k + u_k)` (the sum of its gradients, not FedNova's normalised
        :math:`\Delta_k/\tau_k`), by the run's strategy (:attr:`work`).

        With :class:`MiniBatches`, ``orders`` are the round's sort keys of the block's
        replicas' sample orders (:meth:`sample_keys`) and every step is taken on a
        mini-batch.

        The result lives in a work buffer of ``work`` (the caller may overwrite it), valid
        until the next call.
        """
        if part.size == 0:
            return np.empty((0, self.d), dtype=self.dtype), 0
        if taus is None and self.tau_fixed is None:
            raise ValueError("taus must give the pairs' local steps: this engine's local_steps "
                             f"vary by client or round ({self.local_steps!r}); see pair_steps")
        return self.work.updates(x, part, corr, rngs, work, taus, orders)

    def streams(self, start: int, size: int, which: Stream) -> list[np.random.Generator]:
        """The generators of job ``which`` of replicas ``start .. start + size - 1``."""
        return replica_streams(self.run.seed, self.run.stream_indices(start, size),
                               BIT_GENERATORS[self.run.bit_generator], which)

    def run_chunk(self, start: int, size: int) -> dict[str, Any]:
        """Simulate replicas ``start, ..., start + size - 1``; the arithmetic of a diverging
        replica (overflow, then inf and NaN) raises no numpy warnings: :func:`simulate`
        reports it once, as a :class:`DivergenceWarning`."""
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return Block(self, start, size).run()


class Block:
    """A block of the run's replicas ``start .. start + size - 1`` and its per-round state
    (its streams, iterates, rule and process states, work buffers); :meth:`run` simulates it
    round after round."""

    def __init__(self, engine: Engine, start: int, size: int) -> None:
        e = self.engine = engine
        self.start, self.size = start, size
        self.part_rngs = e.streams(start, size, Stream.PARTICIPATION)
        # the noise streams exist only when there is noise (creating one costs microseconds
        # per replica: a noise-free run of many small replicas paid more for them than for
        # its arithmetic); standard normals only: drawn ahead
        self.noise_rngs: Any = (e.noise_route.streams(e.streams(start, size, Stream.NOISE))
                                if e.noise_route.present else [])
        self.x = np.array(np.broadcast_to(e.x0[start : start + size] if e.x0.ndim == 2
                                          else e.x0, (size, e.d)), dtype=e.dtype)
        # components with per-replica parameters give those of this block's replicas
        self.rule = e.rule.for_replicas(start, start + size)
        proc = e.participation
        if isinstance(proc, PerReplicaParts):  # (a duck-typed process may lack it)
            proc = proc.for_replicas(start, start + size)
        self.proc = proc
        self.grad_evals = self.client_rounds = 0
        # scratch buffers reused from round to round; "first": the block's first replica
        self.work: dict[str, Any] = {"first": start}
        self.view_work: dict[str, Any] = {"first": start}
        self.tau_rngs = (e.streams(start, size, Stream.LOCAL_STEPS)
                         if e.tau_draw is not None else None)
        self.order_rngs = (e.streams(start, size, Stream.SAMPLE_ORDERS)
                           if e.batches is not None else None)
        self.key_leaders = (e._shared_draws(start, size) if self.order_rngs is not None
                            else None)
        self.every = Participants.full(size, e.n)  # every pair (read-only, built once)
        self.evals = 0  # gradient rows evaluated in this round's blocks
        self.seen: dict[str, Any] = {}  # this round's updates, when the process asked for them
        self.bits = np.zeros(size, dtype=np.int64)
        # what a process that sees the round sees besides x_t (fixed for the block)
        self.weights = np.asarray(e.problem.weights, dtype=float)
        self.sizes = getattr(e.problem, "sizes", None)  # optional: a problem without samples
        if e.stack is not None and self.sizes is not None:
            self.sizes = self.sizes[start:start + size]  # (R_b, n): this block's replicas'
        # (a flag, not the bound method: a block holds no reference cycle, so its work
        # buffers are freed when it ends)
        self.has_losses = e.stack is not None or isinstance(e.problem, ClientLosses)

    def draw_taus(self) -> None:
        """This round's ``(R, n)`` local steps and sample-order keys, where they are drawn."""
        e, work = self.engine, self.work
        if self.tau_rngs is not None:
            work["taus"] = _check_taus(e.tau_draw(self.tau_rngs, self.size, e.n),
                                       (self.size, e.n), "local_steps (the round's draw)")
        if self.order_rngs is not None:
            work["orders"] = e.sample_keys(self.order_rngs, self.start, self.key_leaders)

    def updates(self, some: Participants, corr: np.ndarray | None,
                work: dict[str, Any]) -> tuple[np.ndarray, int]:
        """The local updates of the pairs ``some`` this round."""
        return self.engine.local_updates(self.x, some, corr, self.noise_rngs, work,
                                         self.engine.pair_steps(some, self.work),
                                         self.work.get("orders"))

    def losses(self) -> np.ndarray:
        """The clients' losses at the block's iterates (a round-aware process's view)."""
        e, x64 = self.engine, self.x.astype(float, copy=False)
        if e.stack is not None:
            return e.stack.client_losses(x64, np.arange(self.start, self.start + self.size))
        return np.asarray(e.problem.client_losses(x64))

    def round_updates(self, only: np.ndarray | None) -> np.ndarray:
        """The clients' updates of this round (all, or the pairs ``only``), for the
        process's view: counted, and reused by the aggregation."""
        rule, proc, size, e = self.rule, self.proc, self.size, self.engine
        if type(rule).correction is not Rule.correction:
            raise ValueError(f"participation {proc.name!r} reads the clients' updates, which "
                             f"rule {rule.name!r} corrects during the local work: not "
                             "supported together")
        some = self.every if only is None else Participants.from_mask(only)
        upd, ge = self.updates(some, None, self.view_work)
        self.evals += ge
        if only is None:
            dense = upd.reshape(size, e.n, e.d)
        else:
            dense = np.zeros((size, e.n, e.d), dtype=e.dtype)
            dense[some.rows, some.cols] = upd
        seen = self.seen
        seen["updates"], seen["only"], seen["count"] = dense.reshape(-1, e.d), only, some.size
        return dense

    def block_updates(self, block: Participants, corr: np.ndarray | None) -> np.ndarray:
        """The updates of a block of pairs for the rule (those of the process's view, when it
        computed them: the same numbers)."""
        upd_all = self.seen.get("updates")
        if upd_all is not None:
            only = self.seen["only"]
            if only is not None and not only[block.rows, block.cols].all():
                raise ValueError(f"participation {self.proc.name!r} selected clients whose "
                                 "updates it did not ask for (RoundView.updates(only=))")
            return take_rows(upd_all, block.flat_index,
                             scratch(self.work, "upd_seen", block.size, self.engine.d,
                                     self.engine.dtype))
        upd, ge = self.updates(block, corr, self.work)
        self.evals += ge
        return upd

    def _initial(self) -> np.ndarray | None:
        """A table rule's table of every client's first update (``memory_init="full"``)."""
        rule, e, size = self.rule, self.engine, self.size
        if not (rule.table and rule.memory_init == "full"):
            return None
        full = Participants.full(size, e.n)
        self.draw_taus()
        # a one-off round of every client (its work arrays are not kept)
        upd, ge = self.updates(full, None, {"first": self.start})
        self.grad_evals += ge
        self.client_rounds += full.size
        self.bits += e.n * e.bits_per_update
        return upd.reshape(size, e.n, e.d)

    def _view(self, t: int) -> RoundView:
        """What a process that sees the round sees of round ``t``."""
        return RoundView(t, self.x, self.weights, self.round_updates,
                         self.losses if self.has_losses else None, self.sizes)

    def run(self) -> dict[str, Any]:
        """Simulate the block's rounds: its traces' sums, final iterates and counts."""
        e, size, n, d, dt = self.engine, self.size, self.engine.n, self.engine.d, \
            self.engine.dtype
        rule, proc, x, bits, work, seen = self.rule, self.proc, self.x, self.bits, self.work, \
            self.seen
        initial = self._initial()
        rstate = rule.init(size, n, d, p=e.config.p, weights=e.problem.weights, dtype=dt,
                           initial=initial,
                           local_steps=e.tau_fixed if e.tau_fixed is not None else 1)
        pstate = proc.init(self.part_rngs, size)
        v = np.zeros((size, d), dtype=dt) if e.server.momentum else None
        rec = Recorder(list(METRICS) + list(e.metrics.extra), size, len(e.record),
                       e.metrics.keep_replicas)
        j = 0
        if e.record[0] == 0:
            rec.record(0, e.measure(x, bits, self.start))
            j = 1
        all_pairs = self.every if rule.needs_all else None
        sees_round = sees_the_round(proc)
        step = (dt.type(e.step_size) if np.ndim(e.step_size) == 0
                else np.asarray(e.step_size, dtype=dt)[self.start:self.start + size, None])
        beta = dt.type(e.server.momentum)
        diverged = np.full(size, -1, dtype=np.int64)  # first round with a non-finite x_t
        watch = True  # some replica is still finite
        for t in range(1, e.run.rounds + 1):
            work["round"] = self.view_work["round"] = t  # (the x_t tiles are per round)
            self.draw_taus()
            extra_floats = sel = None
            if sees_round:
                seen.clear()
                sel, pstate = proc.select(pstate, self.part_rngs, self._view(t))
                extra_floats = sel.extra_floats
                part = all_pairs if all_pairs is not None else Participants.from_mask(
                    np.asarray(sel.mask), sel.coef)
            else:
                mask, pstate = proc.step(pstate, self.part_rngs)
                part = all_pairs if all_pairs is not None else Participants.from_mask(mask)
            G = rule.run_round(rstate, part, self.block_updates, e.block_rows)
            self.grad_evals += self.evals
            self.evals = 0
            self.client_rounds += seen["count"] if seen.get("updates") is not None \
                else part.size
            if e.metrics.observe is not None:
                xv, Gv = x.view(), G.view()
                xv.flags.writeable = Gv.flags.writeable = False
                e.metrics.observe(RoundRecord(self.start, t, xv, part.mask, Gv, rstate, sel,
                                              pstate))
            if v is not None:
                v *= beta
                v += G
                G = v
            x -= step * G
            if watch:  # one (R,) reduction per round: a row sum is finite if the row is
                hit = ~np.isfinite(x.sum(axis=1))
                if hit.any():
                    rows = np.flatnonzero(hit & (diverged < 0))
                    # confirmed entry-wise: finite entries may overflow their sum
                    rows = rows[~np.isfinite(x[rows]).all(axis=1)]
                    diverged[rows] = t
                    watch = bool(np.any(diverged < 0))
            bits += part.counts * e.bits_per_update
            if extra_floats is not None:
                bits += np.rint(np.asarray(extra_floats, dtype=float)
                                * e.metrics.bits_per_float).astype(np.int64)
            if j < len(e.record) and e.record[j] == t:
                rec.record(j, e.measure(x, bits, self.start))
                j += 1
        return {"size": size, "acc": rec.acc, "kept": rec.kept, "x": x, "diverged": diverged,
                "grad_evals": self.grad_evals, "client_rounds": self.client_rounds}
