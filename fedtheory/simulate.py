r"""The vectorised federated-learning simulator: many independent replicas of a run at once.

One round :math:`t` of replica :math:`r` (all replicas advance together, as array axes):

1. the participation process draws the mask :math:`1_i^t` of active clients (a process that
   *sees the round*, :class:`~fedtheory.participation.RoundAwareProcess`, decides from a
   read-only view of it: :math:`x_t` and, only if it asks, the clients' updates of step 2, their
   norms and similarities, or the client losses; it may also set per-pair aggregation
   coefficients, e.g. OCS's :math:`w_i/p_i^t`, that ``"fedavg_is"`` applies; see
   :mod:`fedtheory.participation.base`);
2. every *active* client :math:`i` runs :math:`\tau_i` local steps from :math:`x_t` (one
   :math:`\tau` for all, or per client, or drawn per round: ``local_steps``),

   .. math:: y^{k+1} = y^k - \eta\,\big(\nabla f_i(y^k) + \xi^k + c_i\big),\qquad
       y^0 = x_t,

   with gradient noise :math:`\xi^k` from the noise model (none, additive Gaussian
   :math:`\mathbb E\|\xi\|^2 = \sigma^2`, or :math:`M\|\nabla f_i\|^2 + \sigma^2` as in seed
   002's Assumptions 7/8) and a drift correction :math:`c_i` asked from the rule (SCAFFOLD;
   0 otherwise), and reports the pseudo-gradient
   :math:`\Delta_i = (x_t - y^{\tau_i})/\eta = \sum_{k<\tau_i} (\nabla f_i(y^k) + \xi^k + c_i)`
   (the sum of its :math:`\tau_i` gradients whatever :math:`\tau_i`, not FedNova's
   :math:`\Delta_i/\tau_i`: a client with more steps weighs more, as in plain FedAvg with
   heterogeneous local work);
3. the rule aggregates the updates into :math:`G_t` (:mod:`fedtheory.algorithms`);
4. the server steps, with heavy-ball momentum :math:`\beta` (0 by default),

   .. math:: v_t = \beta v_{t-1} + G_t,\qquad x_{t+1} = x_t - \eta_g\,\eta\, v_t .

Work follows participation: the :math:`K` active (replica, client) pairs of a round are
flattened and only they compute gradients (:meth:`Problem.client_gradients`), so a round at
participation rate :math:`\bar p` costs about :math:`\bar p` of a full one; rules that need
every client's update (``needs_all``) get all pairs. The pairs stream through the rule in
blocks of about :data:`_BLOCK_BYTES` of updates (:meth:`Participants.blocks`: contiguous
ranges of the replica-sorted pairs; the rules' ``begin`` / ``accumulate`` / ``finish``), the
local update of a block computed into a work buffer that the rule then consumes in place;
work arrays are reused from round to round. Memory is :math:`O(Rd)` plus a block's updates,
and :math:`O(Rnd)` only for rules that keep a table.

The problem does the problem-specific work; the engine takes the fastest exact route the
problem *declares* in its ``capabilities`` (:class:`~fedtheory.problems.base.Capability`, one
small protocol each, checked when the engine is built;
:class:`~fedtheory.problems.QuadraticProblem` declares all of them):

- ``GRADIENTS_INTO_BUFFER``, ``client_gradients(y, clients, out=...)``: gradients into the
  engine's work buffer; ``y`` may be read-only (a tile or broadcast view of :math:`x_t`);
- ``LOCAL_STEPS``, ``local_steps(y, clients, lr, steps, correction=, add_noise=, out=)``: the
  :math:`\tau` local steps in the problem's own coordinates (a quadratic gathers
  :math:`a_i, c_i` once);
- ``FUSED_LOCAL_STEPS``, ``can_fuse_local_steps`` and
  ``fused_local_steps(..., normals=, noise_sd=, out=)``: the closed form of :math:`\tau`
  steps with additive Gaussian noise (or none). For a diagonal quadratic the steps are
  linear, :math:`e^{k+1} = m\odot e^k - \eta(\xi^k + c)` with :math:`e = y - c_i`,
  :math:`m = 1 - \eta a_i`, so

  .. math::

      \Delta_i = S_1\odot\big(a_i\odot(x_t - c_i) + c\big) + \sum_{k<\tau} m^{\tau-1-k}\odot
      \xi^k,\qquad S_1 = \sum_{j<\tau} m^j,

  and the noise sum is one Gaussian with per-coordinate variance
  :math:`\frac{\sigma^2}{d}\sum_{j<\tau} m^{2j}`: one normal per coordinate instead of
  :math:`\tau` (``fuse_local_steps``; used automatically when exact and :math:`\tau > 1`);
- ``EXACT_LOSS_GAP``, ``loss_gap(x)``: :math:`f(x) - f^\star` without the cancellation of
  ``loss(x) - f_star`` (the ``f_gap`` metric).

A problem that declares nothing (only the :class:`~fedtheory.problems.Problem` protocol) gets
repeated ``client_gradients`` and ``loss(x) - f_star``; undeclared methods are never called.

Per-client local work: with ``local_steps`` an ``(n,)`` array or a per-round draw
(:class:`~fedtheory.engine.LocalStepsDraw`, or a callable), the pairs of a block run together
and those with fewer steps drop out of the step loop by masking (the gradients of step
:math:`k` are computed for the pairs with :math:`\tau_i > k` only); on a diagonal quadratic
the closed form runs once per distinct :math:`\tau` (exact, one normal per coordinate per
pair). A constant array is the int run, bit for bit.

Determinism: replica :math:`r` draws its participation from the stream
``SeedSequence(seed, spawn_key=(r, 0))``, its gradient noise from ``(r, 1)`` and its drawn
local steps (if any) from ``(r, 2)``, with the bit
generator named by ``bit_generator`` (PCG64, numpy's default, unless asked otherwise). Each
replica's pairs are cut into the same pieces whichever replicas share its chunk (see
:meth:`Participants.blocks`), and its sums run in the same order. So a seed gives bitwise
the same trajectories whatever the chunking of replicas or the number of worker threads.

Threads: chunks of replicas run in worker threads (numpy releases the GIL inside its
loops). A block carries enough work (:data:`_BLOCK_BYTES`) that the Python between numpy
calls, which holds the GIL, stays a small share of it; with much smaller blocks two threads
mostly wait for each other.

Divergence: a run whose iterates overflow (too large a learning rate) goes on with inf and
NaN, but the engine raises no numpy floating-point warnings (it runs under
:func:`numpy.errstate`). Instead, once per call, :func:`simulate` emits a
:class:`DivergenceWarning` naming the first round at which an iterate became non-finite and
the replicas concerned, and records each replica's first such round in
:attr:`SimulationResult.diverged` (-1: finite throughout). The check is one reduction
per round over the ``(R, d)`` iterates (a row sum, non-finite exactly when the row is, or when
finite entries overflow it, which a second look rules out).

Examples
--------
>>> from fedtheory.problems import QuadraticProblem
>>> from fedtheory.participation import BernoulliParticipation
>>> prob = QuadraticProblem.heterogeneous(10, 5, L=1.0, mu=0.1, sigma_G2=1.0,
...                                       rng=np.random.default_rng(0))
>>> res = simulate(prob, "mifa", BernoulliParticipation(0.5, n=10), rounds=400,
...                replicas=4, lr=0.1, x0=np.ones(5))
>>> res.f_gap.mean.shape, res.x.shape, bool(res.f_gap.mean[-1] < 1e-4 * res.f_gap.mean[0])
((401,), (4, 5), True)
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import time
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from fedtheory.algorithms import Rule
from fedtheory.engine import (
    BIT_GENERATORS,
    METRICS,
    Engine,
    EngineConfig,
    Execution,
    LocalSteps,
    LocalStepsDraw,
    LocalWork,
    Metrics,
    MiniBatches,
    RoundRecord,
    Run,
    Server,
)
from fedtheory.engine.config import mean_local_steps
from fedtheory.engine.protocols import sees_the_round
from fedtheory.validation import integer_at_least

if TYPE_CHECKING:  # fedtheory.problems is imported only when a run needs it (it pulls scipy)
    from fedtheory.participation import ParticipationProcess
    from fedtheory.problems.base import Problem

__all__ = ["BIT_GENERATORS", "DEFAULT_MAX_THREADS", "KEYWORDS", "METRICS", "DivergenceWarning",
           "Execution", "LocalSteps", "LocalStepsDraw", "LocalWork", "Metrics", "MiniBatches",
           "RoundRecord", "Run", "Server", "SimulationResult", "Trace", "max_threads",
           "simulate"]


class DivergenceWarning(RuntimeWarning):
    """A simulated run diverged: some replica's iterate became non-finite (inf or NaN).

    Emitted at most once per :func:`simulate` call; the round at which each replica diverged
    is in :attr:`SimulationResult.diverged`. (Metrics that square the iterate, such as
    ``f_gap``, may reach inf a few rounds before the iterate itself does.)
    """


#: The most threads :func:`simulate` starts on its own (``workers=None``) unless a
#: :func:`max_threads` block (or ``thread_limit=``) says otherwise.
DEFAULT_MAX_THREADS = 2

#: The limit of the current context (a :class:`contextvars.ContextVar`: scoped to the
#: ``with`` block and to its thread or task, never a mutable module global).
_THREAD_LIMIT: contextvars.ContextVar[int] = contextvars.ContextVar(
    "fedtheory_simulate_thread_limit", default=DEFAULT_MAX_THREADS)


@contextlib.contextmanager
def max_threads(n: int) -> Iterator[None]:
    """Within the block, :func:`simulate` starts at most ``n`` threads on its own
    (``workers=None``; default 2). A worker process of a parallel run uses 1, so that the
    run's parallelism is its workers'. Never changes the numbers. The limit is a context
    variable: it holds in this thread (or asyncio task) until the block ends; ``simulate``'s
    ``thread_limit=`` argument says the same for one call."""
    n = integer_at_least("n", n)
    token = _THREAD_LIMIT.set(n)
    try:
        yield
    finally:
        _THREAD_LIMIT.reset(token)


#: Replicas named in a :class:`DivergenceWarning` before the list is shortened.
_LISTED_REPLICAS = 10

#: Step-size factors of a schedule listed in a result's ``config`` (a larger table: its shape).
_LISTED_FACTORS = 4096

#: Table elements (chunk * n * d) a table rule may hold at once when ``chunk`` is None.
_TABLE_BUDGET = 1 << 24

#: Expected pairs times d per round of a chunk of replicas when ``chunk`` is None (4 MiB of
#: float64): bounds a round's per-pair index arrays and masks relative to the work.
_CHUNK_BUDGET = 1 << 19


@dataclass
class Trace:
    """A metric per recorded round: mean and standard error over replicas.

    ``replicas`` holds the per-replica values, shape ``(R, rounds recorded)``, when the
    simulation was asked to keep them (``keep_replicas=True``), else None.
    """

    mean: np.ndarray
    se: np.ndarray
    replicas: np.ndarray | None = None


@dataclass
class SimulationResult:
    """What :func:`simulate` returns.

    Attributes
    ----------
    rounds
        The recorded rounds :math:`t` (0 is the initial point, the last is ``rounds``).
    f_gap, grad_norm2, dist2, bits
        :math:`f(x_t) - f^\\star`, :math:`\\|\\nabla f(x_t)\\|^2`, :math:`\\|x_t - x^\\star\\|^2`
        and the bits sent client -> master up to round :math:`t` (cumulative).
    extra
        The ``extra_metrics`` asked for, by name.
    x
        The final iterates, ``(R, d)``.
    grad_evals, client_rounds
        Client-gradient evaluations (rows of :meth:`client_gradients`) and client updates
        computed, summed over replicas and rounds.
    seconds
        Wall-clock time of the simulation.
    config
        The parameters of the run.
    diverged
        Per replica, ``(R,)`` integers: the first round :math:`t` whose iterate :math:`x_t`
        had a non-finite (inf or NaN) coordinate, or -1 when the iterates stayed finite (see
        :class:`DivergenceWarning`).
    """

    rounds: np.ndarray
    f_gap: Trace
    grad_norm2: Trace
    dist2: Trace
    bits: Trace
    x: np.ndarray
    replicas: int
    grad_evals: int
    client_rounds: int
    seconds: float
    extra: dict[str, Trace] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    diverged: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def metric(self, name: str) -> Trace:
        """A recorded metric by name (one of :data:`METRICS` or an extra metric)."""
        if name in METRICS:
            return getattr(self, name)
        if name in self.extra:
            return self.extra[name]
        raise ValueError(f"metric must be one of {list(METRICS) + list(self.extra)}, got {name!r}")


# ----------------------------------------------------------------------------- assembly
def _combine(chunks: list[dict[str, Any]], name: str, keep: bool) -> Trace:
    """Chan et al.'s pairwise update: exact mean and sum of squares over all replicas."""
    count = 0
    mean = m2 = None
    for c in chunks:
        nb, mb, sb = c["size"], c["acc"][name][0], c["acc"][name][1]
        if mean is None:
            count, mean, m2 = nb, mb.copy(), sb.copy()
            continue
        delta = mb - mean
        tot = count + nb
        mean = mean + delta * (nb / tot)
        m2 = m2 + sb + delta**2 * (count * nb / tot)
        count = tot
    se = np.sqrt(m2 / (count - 1) / count) if count > 1 else np.full_like(mean, np.nan)
    reps = np.concatenate([c["kept"][name] for c in chunks], axis=0) if keep else None
    return Trace(mean, se, reps)


def _divergence_message(diverged: np.ndarray, rounds: int, lr: Any, global_lr: Any) -> str:
    """The text of the :class:`DivergenceWarning` for per-replica first non-finite rounds."""
    bad = np.flatnonzero(diverged >= 0)
    first = int(diverged[bad].min())
    shown = ", ".join(str(int(r)) for r in bad[:_LISTED_REPLICAS])
    if bad.size > _LISTED_REPLICAS:
        shown += f", ... and {bad.size - _LISTED_REPLICAS} more"
    def text(v: Any) -> str:  # one rate, or the diverged replicas' rates when per replica
        if np.ndim(v) == 0:
            return f"{float(v):g}"
        return "[" + ", ".join(f"{float(v[r]):g}" for r in bad[:_LISTED_REPLICAS]) + \
            (", ...]" if bad.size > _LISTED_REPLICAS else "]")

    step = (f"lr={text(lr)}" if np.ndim(global_lr) == 0 and global_lr == 1.0
            else f"lr={text(lr)} with global_lr={text(global_lr)}")
    return (
        f"the run diverged: the iterates of {bad.size} of {diverged.size} replicas became "
        f"non-finite (inf or NaN), first at round {first} of {rounds} (replica"
        f"{'s' if bad.size > 1 else ''} {shown}); their metrics are inf or NaN from then on "
        f"(SimulationResult.diverged holds each replica's first such round). Try a smaller "
        f"learning rate than {step}."
    )


#: The keyword form of :func:`simulate`: each keyword and the configuration object and field it
#: sets (``rounds=100`` is ``run=Run(rounds=100, ...)``).
KEYWORDS: dict[str, tuple[str, str]] = {
    "rounds": ("run", "rounds"), "replicas": ("run", "replicas"), "seed": ("run", "seed"),
    "first_replica": ("run", "first_replica"), "dtype": ("run", "dtype"),
    "bit_generator": ("run", "bit_generator"), "streams": ("run", "streams"),
    "lr": ("local", "lr"), "local_steps": ("local", "steps"), "batches": ("local", "batches"),
    "noise": ("local", "noise"), "fuse_local_steps": ("local", "fuse"),
    "lr_schedule": ("local", "schedule"),
    "global_lr": ("server", "global_lr"), "momentum": ("server", "momentum"),
    "x0": ("server", "x0"),
    "record_every": ("metrics", "every"), "record_rounds": ("metrics", "rounds"),
    "extra_metrics": ("metrics", "extra"), "keep_replicas": ("metrics", "keep_replicas"),
    "bits_per_float": ("metrics", "bits_per_float"), "observe": ("metrics", "observe"),
    "skip_metrics": ("metrics", "skip"),
    "chunk": ("execution", "chunk"), "workers": ("execution", "workers"),
    "thread_limit": ("execution", "thread_limit"),
}

_CLASSES: dict[str, type] = {"run": Run, "local": LocalWork, "server": Server,
                             "metrics": Metrics, "execution": Execution}


def _configuration(objects: dict[str, Any], keywords: dict[str, Any]) -> dict[str, Any]:
    """The configuration objects of a :func:`simulate` call: those given, else built from its
    keywords (:data:`KEYWORDS`); a keyword together with its object is an error."""
    unknown = sorted(set(keywords) - set(KEYWORDS))
    if unknown:
        raise TypeError(f"simulate() got unexpected keyword argument(s) {unknown}")
    fields: dict[str, dict[str, Any]] = {name: {} for name in _CLASSES}
    for key, value in keywords.items():
        obj, attr = KEYWORDS[key]
        if objects[obj] is not None:
            raise ValueError(f"{key} must not be given together with {obj}= (set it in the "
                             f"{_CLASSES[obj].__name__}), got {key}={value!r}")
        fields[obj][attr] = value
    out = {}
    for name, cls in _CLASSES.items():
        given = objects[name]
        if given is not None:
            if not isinstance(given, cls):
                raise ValueError(f"{name} must be a {cls.__name__}, got {given!r}")
            out[name] = given
            continue
        if name == "run" and not {"rounds", "replicas"} <= set(fields[name]):
            raise ValueError("simulate needs run=Run(rounds, replicas, ...) or the keywords "
                             f"rounds= and replicas=, got {sorted(fields[name])}")
        if name == "local" and "lr" not in fields[name]:
            raise ValueError("simulate needs local=LocalWork(lr, ...) or the keyword lr=")
        out[name] = cls(**fields[name])
    return out


def _plan(config: EngineConfig, execution: Execution) -> tuple[int, int]:
    """``(chunk, workers)`` of a run: those asked, else as many replicas per chunk as keep a
    round's expected updates under :data:`_CHUNK_BUDGET` numbers (a table rule's table under
    :data:`_TABLE_BUDGET`), and 2 threads when the work pays for them (at most the thread
    limit: ``execution.thread_limit``, else the enclosing :func:`max_threads` block's)."""
    problem, rule, local_steps = config.problem, config.rule, config.local.steps
    replicas, n, d = config.run.replicas, int(problem.n), int(problem.d)
    expected_k = config.expected_participants
    limit = _THREAD_LIMIT.get() if execution.thread_limit is None else execution.thread_limit
    chunk, workers = execution.chunk, execution.workers
    if chunk is None:
        chunk = max(1, min(replicas, int(_CHUNK_BUDGET // (expected_k * d))))
        if rule.table:  # one chunk's (chunk, n, d) table stays under 128 MiB of float64
            chunk = max(1, min(chunk, _TABLE_BUDGET // (n * d)))
        if workers is None:
            tau_work = mean_local_steps(local_steps)
            if sees_the_round(config.participation):
                expected_k = float(n)  # a process may ask for every client's update
            work = replicas * expected_k * d * tau_work
            workers = 2 if (work >= 1 << 16 and replicas >= 2) else 1
            workers = max(1, min(workers, os.cpu_count() or 1, limit))
        if workers > 1:
            chunk = min(chunk, -(-replicas // workers))
    return chunk, 1 if workers is None else workers


def _run_blocks(engine: Engine, chunk: int, workers: int) -> list[dict[str, Any]]:
    """The engine's blocks of ``chunk`` replicas, run in ``workers`` threads when several."""
    replicas = engine.run.replicas
    blocks = [(s, min(chunk, replicas - s)) for s in range(0, replicas, chunk)]
    if workers > 1 and len(blocks) > 1:
        # the workers run in copies of the caller's context (its context variables, e.g.
        # fedtheory.compiled's switch; a thread otherwise starts with the defaults)
        context = contextvars.copy_context()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(lambda b: context.copy().run(engine.run_chunk, *b), blocks))
    return [engine.run_chunk(*b) for b in blocks]


def _listed(v: Any) -> Any:
    """A rate as recorded: a list when per replica."""
    return v.tolist() if isinstance(v, np.ndarray) else v


def _result(engine: Engine, chunks: list[dict[str, Any]], chunk: int, workers: int,
            seconds: float) -> SimulationResult:
    """The :class:`SimulationResult` of a run's blocks (warning once if it diverged)."""
    cfg = engine.config
    run, local, server, metrics = cfg.run, cfg.local, cfg.server, cfg.metrics
    steps = local.steps
    with np.errstate(over="ignore", invalid="ignore"):  # inf and NaN of diverged replicas
        traces = {k: _combine(chunks, k, metrics.keep_replicas)
                  for k in list(METRICS) + list(metrics.extra)}
    diverged = np.concatenate([c["diverged"] for c in chunks])
    if np.any(diverged >= 0):
        warnings.warn(_divergence_message(diverged, run.rounds, local.lr, server.global_lr),
                      DivergenceWarning, stacklevel=3)
    config = {
        "problem": repr(cfg.problem), "rule": repr(cfg.rule),
        "participation": repr(cfg.participation), "rounds": run.rounds,
        "replicas": run.replicas, "lr": _listed(local.lr),
        "local_steps": (steps if isinstance(steps, int) else steps.tolist()
                        if isinstance(steps, np.ndarray) else repr(steps)),
        "global_lr": _listed(server.global_lr),
        "momentum": server.momentum, "noise": repr(local.noise),
        "seed": run.seed, "dtype": run.dtype.name, "chunk": chunk, "workers": workers,
        "bit_generator": run.bit_generator, "fused_local_steps": engine.fused,
        "bits_per_float": metrics.bits_per_float, "record_every": metrics.every,
        "first_replica": run.first_replica,
    }
    if run.streams is not None:
        config["streams"] = list(run.streams)
    if local.batches is not None:
        config["batches"] = repr(local.batches)
    if local.schedule is not None:  # the factors within a round, (E,) or (T, E)
        table = local.schedule
        config["lr_schedule"] = (table.tolist() if table.size <= _LISTED_FACTORS
                                 else f"{table.shape} step-size factors")
    return SimulationResult(
        rounds=np.asarray(engine.record),
        f_gap=traces["f_gap"], grad_norm2=traces["grad_norm2"], dist2=traces["dist2"],
        bits=traces["bits"], extra={k: traces[k] for k in metrics.extra},
        x=np.concatenate([c["x"] for c in chunks], axis=0), replicas=run.replicas,
        grad_evals=int(sum(c["grad_evals"] for c in chunks)),
        client_rounds=int(sum(c["client_rounds"] for c in chunks)),
        seconds=seconds, config=config, diverged=diverged,
    )


def simulate(
    problem: Problem | str,
    rule: str | Rule,
    participation: ParticipationProcess,
    run: Run | None = None,
    local: LocalWork | None = None,
    *,
    server: Server | None = None,
    metrics: Metrics | None = None,
    execution: Execution | None = None,
    max_work: float | None = None,
    **keywords: Any,
) -> SimulationResult:
    r"""Simulate ``run.replicas`` independent runs of federated optimisation for
    ``run.rounds`` rounds (see the module docstring for a round, the determinism and the
    threads).

    The run is configured by a few typed objects (:mod:`fedtheory.engine`; each documents its
    fields and is validated when built), checked against the problem, rule and process by
    :class:`~fedtheory.engine.EngineConfig`::

        simulate(problem, "fedavg_is", process,
                 Run(rounds=100, replicas=500, seed=0),
                 LocalWork(lr=0.1, steps=5, batches=MiniBatches(20)),
                 server=Server(momentum=0.9), metrics=Metrics(every=10),
                 execution=Execution(workers=1))

    or, equivalently, by keywords, each setting one field of one object (:data:`KEYWORDS`;
    a keyword together with its object is an error): ``rounds, replicas, seed,
    first_replica, dtype, bit_generator, streams`` (:class:`Run`); ``lr, local_steps,
    batches, noise, fuse_local_steps, lr_schedule`` (:class:`LocalWork`; the step sizes
    within a round, :mod:`fedtheory.engine.schedule`); ``global_lr, momentum, x0``
    (:class:`Server`); ``record_every, record_rounds, extra_metrics, keep_replicas,
    bits_per_float, observe, skip_metrics`` (:class:`Metrics`); ``chunk, workers,
    thread_limit`` (:class:`Execution`, never the numbers: by default chunks keep a round's
    expected updates under :math:`2^{19}` numbers and a table under :math:`2^{24}`, and up to
    2 threads, at most :func:`max_threads`, run them when the work pays).

    ``problem`` is a :class:`fedtheory.problems.Problem` (or its name, or a
    :class:`~fedtheory.problems.ProblemStack`: replica :math:`r` on its own problem);
    ``rule`` an aggregation rule or its name (:func:`fedtheory.algorithms.get_rule`, or a
    :class:`~fedtheory.algorithms.RuleStack`); ``participation`` a process over
    ``problem.n`` clients (its stationary probabilities are the :math:`p_i` the rule uses; a
    :class:`~fedtheory.participation.ProcessStack` gives each replica its own).

    ``max_work``: the ceiling on the run's element operations (None: ``FEDTHEORY_MAX_WORK``
    or :data:`fedtheory.budget.MAX_WORK`; ``inf`` for none); a run whose estimated work or
    memory does not fit is refused before it starts (:meth:`EngineConfig.check_budget
    <fedtheory.engine.EngineConfig.check_budget>`, a ``ValueError`` stating the estimate).

    Returns a :class:`SimulationResult`. Warns a :class:`DivergenceWarning`, once, when some
    replica's iterate became non-finite (the round and the replicas named; see
    :attr:`SimulationResult.diverged`); no numpy floating-point warnings come out of the
    engine.
    """
    t0 = time.perf_counter()
    cfg = _configuration({"run": run, "local": local, "server": server, "metrics": metrics,
                          "execution": execution}, keywords)
    config = EngineConfig(problem=problem, rule=rule, participation=participation,
                          run=cfg["run"], local=cfg["local"], server=cfg["server"],
                          metrics=cfg["metrics"])
    chunk, workers = _plan(config, cfg["execution"])
    config.check_budget(chunk, workers, max_work)
    engine = Engine(config)
    chunks = _run_blocks(engine, chunk, workers)
    return _result(engine, chunks, chunk, workers, time.perf_counter() - t0)
