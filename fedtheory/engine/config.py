"""The configuration of a run: a few typed, frozen objects, each validated when it is built
(a ``ValueError`` naming the argument and its value), and :class:`EngineConfig`, which holds
them with the problem, rule and process and checks them against each other (the one
compatibility check of a run, :meth:`EngineConfig.__post_init__`):

* :class:`Run`: the sizes and the randomness (rounds, replicas, seed, first replica, dtype,
  bit generator);
* :class:`LocalWork`: what a client does in a round (step size, local steps, mini-batches,
  gradient noise, the closed form);
* :class:`Server`: the server's step (global step size, momentum, initial model);
* :class:`Metrics`: what is recorded (every how many rounds, extra metrics, per-replica
  values, bits per float, an ``observe`` callback);
* :class:`Execution`: how the replicas are cut and run (chunk, threads), never the numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from fedtheory.algorithms import Rule, get_rule
from fedtheory.budget import check_simulation
from fedtheory.engine.measure import METRICS
from fedtheory.engine.noise import NoiseKind
from fedtheory.engine.protocols import sees_the_round
from fedtheory.engine.schedule import check_schedule, fusable, resolve_schedule
from fedtheory.engine.steps import (
    LocalSteps,
    LocalStepsDraw,
    MiniBatches,
    _check_taus,
    mean_local_steps,
    resolve_local_steps,
)
from fedtheory.validation import finite_array, integer_at_least, nonnegative_integer, positive_reals

if TYPE_CHECKING:  # fedtheory.problems is imported when a run is configured (it pulls scipy)
    from fedtheory.engine.measure import RoundRecord
    from fedtheory.participation import ParticipationProcess
    from fedtheory.problems.base import Capability, Problem
    from fedtheory.problems.noise import NoiseSampler

__all__ = ["BIT_GENERATORS", "EngineConfig", "Execution", "LocalSteps", "LocalStepsDraw",
           "LocalWork", "Metrics", "MiniBatches", "Run", "Server", "hot_problem",
           "mean_local_steps", "resolve_local_steps"]

#: Bit generators a simulation may use (``bit_generator=``); PCG64 is numpy's default.
BIT_GENERATORS: dict[str, type[np.random.BitGenerator]] = {
    "pcg64": np.random.PCG64,
    "pcg64dxsm": np.random.PCG64DXSM,
    "sfc64": np.random.SFC64,
    "philox": np.random.Philox,
    "mt19937": np.random.MT19937,
}



def _one_if_equal(rates: float | np.ndarray) -> float | np.ndarray:
    """Per-replica rates that are all equal as their one value (the same run, by the route of
    one rate: closed-form local steps and all)."""
    if isinstance(rates, np.ndarray) and rates.min() == rates.max():
        return float(rates[0])
    return rates


def _check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a bool, got {value!r}")
    return bool(value)


@dataclass(frozen=True)
class Run:
    r"""The sizes and the randomness of a run: :math:`T` ``rounds``, :math:`R` ``replicas``,
    the ``seed`` of every stream, the index of the ``first_replica`` (a run cut into
    consecutive ranges of replicas has bitwise the iterates of the whole), the floating
    ``dtype`` of iterates, updates and noise (float32 or float64; metrics in float64) and the
    ``bit_generator`` (one of :data:`BIT_GENERATORS`).

    Replica :math:`r` draws from the streams of index ``first_replica + r``, or of index
    ``streams[r]`` when ``streams`` is given (``(R,)`` non-negative integers, repeats allowed):
    replicas that share an index share every draw (participation, noise, local steps,
    mini-batches), so methods run side by side in one call see common random numbers.

    >>> Run(rounds=10, replicas=4).dtype
    dtype('float64')
    >>> Run(rounds=10, replicas=4, streams=[0, 1, 0, 1]).stream_indices(2, 2).tolist()
    [0, 1]
    """

    rounds: int
    replicas: int
    seed: int = 0
    first_replica: int = 0
    dtype: Any = np.float64
    bit_generator: str = "pcg64"
    streams: Any = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # normalised values on a frozen instance
        set_(self, "rounds", integer_at_least("rounds", self.rounds, minimum=0))
        set_(self, "replicas", integer_at_least("replicas", self.replicas))
        nonnegative_integer("seed", self.seed)
        set_(self, "seed", int(self.seed))
        set_(self, "first_replica", integer_at_least("first_replica", self.first_replica,
                                                     minimum=0))
        try:
            dt = np.dtype(self.dtype)
        except TypeError:
            dt = None
        if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise ValueError(f"dtype must be float32 or float64, got {self.dtype!r}")
        set_(self, "dtype", dt)
        if self.bit_generator not in BIT_GENERATORS:
            raise ValueError(f"bit_generator must be one of {sorted(BIT_GENERATORS)}, "
                             f"got {self.bit_generator!r}")
        if self.streams is not None:
            a = np.asarray(self.streams)
            if (a.shape != (self.replicas,) or not np.issubdtype(a.dtype, np.integer)
                    or a.min() < 0):
                raise ValueError(f"streams must be {self.replicas} non-negative integers (one "
                                 f"stream index per replica), got {self.streams!r}")
            if self.first_replica:
                raise ValueError(f"streams and first_replica={self.first_replica} exclude each "
                                 f"other (streams name every replica's index)")
            set_(self, "streams", tuple(int(v) for v in a))  # hashable, like every field

    def stream_indices(self, start: int, size: int) -> np.ndarray:
        """The stream indices of replicas ``start .. start + size - 1``."""
        if self.streams is not None:
            return np.array(self.streams[start:start + size], dtype=np.int64)
        return np.arange(self.first_replica + start, self.first_replica + start + size)


@dataclass(frozen=True, eq=False)
class LocalWork:
    r"""What an active client does in a round: :math:`\tau` local ``steps`` of size
    ``lr`` :math:`= \eta > 0` (one for every replica, or ``(R,)``: replica :math:`r`'s
    :math:`\eta_r`, e.g. a learning-rate sweep in one run) (:data:`LocalSteps`: one int,
    ``(n,)`` ints per client, a
    :class:`LocalStepsDraw` or a callable), on its full data (``batches=None``) or on
    :class:`MiniBatches`, with gradient ``noise`` (a noise model, or None) and, when exact,
    the problem's closed form of the steps (``fuse``: None decides, True insists, False
    refuses); ``schedule``: the step sizes within a round, ``lr`` times its factors (an
    ``(E,)`` or ``(T, E)`` array or a callable ``(t, k) -> float``: :mod:`fedtheory.engine.
    schedule`; None: ``lr`` at every step).

    >>> LocalWork(lr=0.1, steps=4).steps
    4
    """

    lr: float | np.ndarray
    steps: Any = 1
    batches: MiniBatches | None = None
    noise: NoiseSampler | None = None
    fuse: bool | None = None
    schedule: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "lr", positive_reals("lr", self.lr))
        steps = self.steps
        if not (isinstance(steps, LocalStepsDraw) or callable(steps)):
            if isinstance(steps, (list, tuple, np.ndarray)):
                a = np.asarray(steps)
                if a.ndim != 1:
                    raise ValueError(f"local_steps must be an int, (n,) ints, a "
                                     f"LocalStepsDraw or a callable, got an array of shape "
                                     f"{a.shape}")
                _check_taus(a, a.shape)
            else:
                resolve_local_steps(steps, 1)
        if self.batches is not None and not isinstance(self.batches, MiniBatches):
            raise ValueError(f"batches must be a MiniBatches or None, got {self.batches!r}")
        if self.noise is not None and not callable(getattr(self.noise, "sample", None)):
            raise ValueError(f"noise must be a noise model with .sample(), got {self.noise!r}")
        if self.fuse is not None:
            _check_bool("fuse_local_steps", self.fuse)
        object.__setattr__(self, "schedule", check_schedule(self.schedule))


@dataclass(frozen=True, eq=False)
class Server:
    r"""The server's step :math:`v_t = \beta v_{t-1} + G_t`, :math:`x_{t+1} = x_t -
    \eta_g\eta v_t`: ``global_lr`` :math:`\eta_g > 0` (or ``(R,)``, one per replica),
    heavy-ball ``momentum``
    :math:`\beta \in [0, 1)`, and the initial model ``x0`` (``(d,)`` or one per replica
    ``(R, d)``; None: zeros).

    >>> Server(momentum=0.5).global_lr
    1.0
    """

    global_lr: float | np.ndarray = 1.0
    momentum: float = 0.0
    x0: np.ndarray | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "global_lr", positive_reals("global_lr", self.global_lr))
        try:
            beta = float(self.momentum)
        except (TypeError, ValueError):
            raise ValueError(f"momentum must be in [0, 1), got {self.momentum!r}") from None
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"momentum must be in [0, 1), got {self.momentum!r}")
        object.__setattr__(self, "momentum", beta)
        if self.x0 is not None:
            try:
                shape = np.shape(self.x0)
            except (TypeError, ValueError):
                shape = ()  # finite_array names the error
            if len(shape) not in (1, 2):
                finite_array("x0", self.x0, [(-1,)], shape_text="(d,) or (R, d)")
            object.__setattr__(self, "x0", finite_array("x0", self.x0, [shape]).copy())


@dataclass(frozen=True, eq=False)
class Metrics:
    r"""What a run records: :data:`METRICS` and the ``extra`` ones (``name -> f((R, d)
    iterates) -> (R,)``) every ``every`` rounds and at the first and the last, or at the
    given ``rounds`` (increasing, in :math:`[0, T]`; then ``every`` is not used); every
    replica's values too when ``keep_replicas``; ``bits_per_float`` bits per transmitted
    float; ``observe(record)`` called every round of every block with a :class:`RoundRecord`
    (never changes the numbers); ``skip``, built-in metrics not computed (their traces NaN:
    ``grad_norm2`` costs a full gradient per replica and recorded round).

    >>> Metrics(every=10).keep_replicas
    False
    """

    every: int = 1
    rounds: tuple[int, ...] | None = None
    extra: Mapping[str, Callable[[np.ndarray], np.ndarray]] = field(default_factory=dict)
    keep_replicas: bool = False
    bits_per_float: int = 32
    observe: Callable[[RoundRecord], None] | None = None
    skip: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        skip = (self.skip,) if isinstance(self.skip, str) else tuple(self.skip)
        if not set(skip) <= {"f_gap", "grad_norm2", "dist2"}:
            raise ValueError(f"skip_metrics must name metrics of ('f_gap', 'grad_norm2', "
                             f"'dist2'), got {self.skip!r}")
        set_(self, "skip", skip)
        set_(self, "every", integer_at_least("record_every", self.every))
        set_(self, "bits_per_float", integer_at_least("bits_per_float", self.bits_per_float))
        if self.rounds is not None:
            r = np.asarray(self.rounds)
            if (r.ndim != 1 or r.size == 0 or not np.issubdtype(r.dtype, np.integer)
                    or r.min() < 0 or np.any(np.diff(r) <= 0)):
                raise ValueError(f"record_rounds must be increasing integers >= 0, "
                                 f"got {self.rounds!r}")
            set_(self, "rounds", tuple(int(t) for t in r))
        extra = dict(self.extra or {})
        clash = set(extra) & set(METRICS)
        if clash:
            raise ValueError(f"extra_metrics must not redefine {sorted(clash)}")
        bad = [k for k, f in extra.items() if not (isinstance(k, str) and callable(f))]
        if bad:
            raise ValueError(f"extra_metrics must map names to callables, got {bad[0]!r}: "
                             f"{extra[bad[0]]!r}")
        set_(self, "extra", extra)
        set_(self, "keep_replicas", _check_bool("keep_replicas", self.keep_replicas))
        if self.observe is not None and not callable(self.observe):
            raise ValueError(f"observe must be callable(RoundRecord) or None, "
                             f"got {self.observe!r}")

    def record_rounds(self, rounds: int) -> list[int]:
        """The rounds recorded in a run of ``rounds`` rounds."""
        if self.rounds is not None:
            if self.rounds[-1] > rounds:
                raise ValueError(f"record_rounds must be within [0, rounds={rounds}], "
                                 f"got {self.rounds!r}")
            return list(self.rounds)
        return sorted(set(range(0, rounds + 1, self.every)) | {rounds})


@dataclass(frozen=True)
class Execution:
    """How a run is cut and run, never its numbers: ``chunk`` replicas simulated together,
    ``workers`` threads, at most ``thread_limit`` threads when ``workers`` is None (None:
    decided by :func:`fedtheory.simulate.simulate`).

    >>> Execution(workers=1).chunk is None
    True
    """

    chunk: int | None = None
    workers: int | None = None
    thread_limit: int | None = None

    def __post_init__(self) -> None:
        for name in ("chunk", "workers", "thread_limit"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, integer_at_least(name, getattr(self, name)))


def hot_problem(problem: Any) -> tuple[Any, Any, frozenset[Capability]]:
    """``(stack, hot, capabilities)`` of a run's problem: the
    :class:`~fedtheory.problems.stack.ProblemStack` when its replicas have their own problems
    (else None), the problem the hot path calls (the stack's flat problem, else the problem)
    and the fast paths it declares (:func:`~fedtheory.problems.base.declared_capabilities`;
    a stack's hot-path ones and its own)."""
    from fedtheory.problems.base import declared_capabilities
    from fedtheory.problems.stack import ProblemStack

    if isinstance(problem, ProblemStack):
        return problem, problem.flat, problem.hot_capabilities | problem.capabilities
    return None, problem, declared_capabilities(problem)


def _resolve_problem(problem: Any) -> Problem:
    from fedtheory import problems as _problems

    if isinstance(problem, str):
        return _problems.get_problem(problem)
    if isinstance(problem, _problems.ProblemStack):  # its problems were checked when built
        return problem
    return _problems.check_problem(problem)


@dataclass(frozen=True)
class EngineConfig:
    """Everything fixed for a run: the problem (or its name), rule (or its name) and process
    and the configuration objects, checked against each other when built (the one place of
    a run's compatibility checks): ``local.steps`` resolved for ``problem.n`` by
    :func:`resolve_local_steps` (once), ``server.x0`` of the problem's dimension (zeros when
    None), the process over ``problem.n`` clients, per-replica parts and rates of the run's
    ``replicas``, and the local work the problem can do (mini-batches, the closed form).
    ``p``: the stationary probabilities the rule uses (None: derived from the process; None
    after it when some are 0). ``expected_participants``: the expected number of pairs that
    work in a round (``n`` for a rule that ``needs_all``)."""

    problem: Problem
    rule: Rule
    participation: ParticipationProcess
    run: Run
    local: LocalWork
    server: Server = field(default_factory=Server)
    metrics: Metrics = field(default_factory=Metrics)
    p: np.ndarray | None = None
    expected_participants: float = field(default=0.0, init=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        problem = _resolve_problem(self.problem)
        rule = get_rule(self.rule)
        set_(self, "problem", problem)
        set_(self, "rule", rule)
        run, local, server, participation = self.run, self.local, self.server, self.participation
        replicas, n, d = run.replicas, int(problem.n), int(problem.d)
        local_steps = resolve_local_steps(local.steps, n)
        if not isinstance(local_steps, int) and type(rule).correction is not Rule.correction:
            raise ValueError(f"local_steps must be one integer with rule {rule.name!r} (its drift "
                             f"correction divides by tau), got {local_steps!r}")
        if server.momentum and rule.own_momentum:
            raise ValueError(f"momentum must be 0 with rule {rule.name!r}, which applies its own "
                             f"beta={rule.beta}")
        if getattr(participation, "n", None) != n:  # anything may be passed: checked here
            raise ValueError(
                f"participation must be a process over problem.n={n} clients, got "
                f"{participation!r} with n={getattr(participation, 'n', None)!r}"
            )
        if getattr(participation, "sets_coefficients", False) and not rule.needs_all \
                and not rule.pair_coefficients:
            raise ValueError(
                f"participation {participation!r} sets its own aggregation coefficients (e.g. "
                f"w_i/p_i of this round): the rule must apply them (one with pair_coefficients, "
                f"such as 'fedavg_is'), got rule {rule.name!r}")
        for label, rates in (("lr", local.lr), ("global_lr", server.global_lr)):
            if np.ndim(rates) and np.shape(rates) != (replicas,):
                raise ValueError(f"{label} must be one rate or one per replica ({replicas}), got "
                                 f"{np.shape(rates)[0]} rates")
        for label, comp in (("problem", problem), ("participation", participation),
                            ("rule", rule)):
            own = getattr(comp, "replicas", None)  # a component with one part per replica
            if own is not None and own != replicas:
                raise ValueError(f"replicas must be {label}'s {own} (it holds one {label} per "
                                 f"replica: {comp!r}), got {replicas}")
        given = self.p
        self._stationary(participation, rule, replicas, n)
        if given is not None:  # the caller's probabilities
            set_(self, "p", given)
        x0 = np.zeros(d) if server.x0 is None else finite_array(
            "x0", server.x0, [(d,), (replicas, d)], shape_text=f"({d},) or ({replicas}, {d})")
        set_(self, "local", replace(local, steps=local_steps,
                                    schedule=self._schedule(local, local_steps, rule)))
        set_(self, "server", replace(server, x0=x0))
        self._local_work(local_steps)

    def _schedule(self, local: LocalWork, steps: Any, rule: Rule) -> np.ndarray | None:
        """The run's step-size factors within a round (:func:`~fedtheory.engine.schedule.
        resolve_schedule`), checked against the local work it applies to."""
        if local.schedule is None:
            return None
        if isinstance(steps, LocalStepsDraw):
            most = steps.max
        elif isinstance(steps, np.ndarray):
            most = int(steps.max())
        elif isinstance(steps, int):
            most = steps
        else:
            raise ValueError(f"lr_schedule needs the most local steps known before the run: "
                             f"local_steps must be an int, (n,) ints or a LocalStepsDraw, got "
                             f"{steps!r}")
        if type(rule).correction is not Rule.correction:
            raise ValueError(f"lr_schedule is not supported with rule {rule.name!r} (its drift "
                             f"correction assumes one step size within a round)")
        return resolve_schedule(local.schedule, self.run.rounds, most)

    def _stationary(self, participation: Any, rule: Rule, replicas: int, n: int) -> None:
        """Set ``p`` and ``expected_participants`` from the process's stationary law."""
        p = np.asarray(participation.stationary, dtype=float)
        per_replica_k = None  # expected participants per round, when the replicas' laws differ
        if getattr(participation, "replicas", None) is not None and p.shape == (replicas, n):
            if np.all(p == p[0]):
                p = p[0].copy()  # a stack of processes of one law: their common probabilities
            else:
                if not np.isfinite(p).all() or (p < 0).any() or (p > 1).any():
                    raise ValueError(f"participation.stationary must be probabilities, "
                                     f"got {p!r}")
                if rule.importance_weighted:
                    raise ValueError(
                        f"participation {participation!r} has per-replica stationary "
                        f"probabilities {p.shape}: the importance-weighted rule {rule.name!r} "
                        f"takes one (n,) vector (give per-replica weights to a rule that takes "
                        f"them, e.g. FedAvgWeighted(omega=(R, n)))")
                per_replica_k = float(p.sum(axis=1).mean())
                p = None
        if p is not None:
            if p.shape != (n,) or not np.isfinite(p).all() or (p < 0).any() or (p > 1).any():
                raise ValueError(f"participation.stationary must be n={n} probabilities, "
                                 f"got {p!r}")
            if (p == 0).any():
                if rule.importance_weighted:
                    i = int(np.flatnonzero(p == 0)[0])
                    raise ValueError(
                        f"participation.stationary must be positive for the importance-"
                        f"weighted rule {rule.name!r}: client {i} has p = 0.0"
                    )
                p = None
        if rule.needs_all or (p is None and per_replica_k is None):
            expected = float(n)
        else:
            expected = max(per_replica_k if per_replica_k is not None else float(p.sum()), 1.0)
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "expected_participants", expected)

    def _local_work(self, steps: Any) -> None:
        """The local work the problem can do: mini-batches need its declared
        ``MINIBATCH_GRADIENTS`` (and ``(n,)`` positive sizes); the closed form
        (``fuse=True``) its ``FUSED_LOCAL_STEPS``, noise it can fuse and one lr."""
        from fedtheory.problems.base import Capability

        _, prob, caps = hot_problem(self.problem)
        local = self.local
        NoiseKind.of(local.noise)  # a ValueError for what is not a noise model
        if local.batches is not None:
            if Capability.MINIBATCH_GRADIENTS not in caps:
                raise ValueError(f"batches={local.batches!r} needs a problem that declares "
                                 f"Capability.MINIBATCH_GRADIENTS (sizes, minibatch_gradients), "
                                 f"got {type(prob).__name__}")
            if local.fuse:
                raise ValueError("fuse_local_steps=True is a closed form of full-gradient "
                                 f"steps, not of mini-batch steps (batches={local.batches!r})")
            # per client of the hot path: (n,), or (U n,) for a stack's U distinct problems
            sizes = np.asarray(prob.sizes, dtype=np.int64)
            if sizes.shape != (int(prob.n),) or sizes.min() < 1:
                raise ValueError(f"problem.sizes must be (n,) = ({prob.n},) positive integers, "
                                 f"got {prob.sizes!r}")
            return
        if local.fuse and not fusable(local.schedule):
            raise ValueError("fuse_local_steps=True needs one step size within each round: "
                             "lr_schedule's factors vary within a round (the closed form "
                             "fuses a schedule with one factor per round only)")
        if local.fuse and not self.can_fuse:
            raise ValueError(
                "fuse_local_steps=True needs a problem with closed-form local steps (declared "
                "Capability.FUSED_LOCAL_STEPS and can_fuse_local_steps true: a diagonal "
                "QuadraticProblem), additive Gaussian noise (or none) and one lr for every "
                f"replica, got problem {type(prob).__name__}, noise {local.noise!r} and lr "
                f"{_one_if_equal(local.lr)!r}"
            )

    @property
    def can_fuse(self) -> bool:
        """Whether the closed form of the local steps is exact for this run: the problem
        declares it and can, the noise is additive Gaussian (or none), one lr, and no
        schedule or one factor per round."""
        from fedtheory.problems.base import Capability

        _, prob, caps = hot_problem(self.problem)
        return (Capability.FUSED_LOCAL_STEPS in caps and bool(prob.can_fuse_local_steps)
                and NoiseKind.of(self.local.noise) in (NoiseKind.NONE, NoiseKind.ADDITIVE)
                and not isinstance(_one_if_equal(self.local.lr), np.ndarray)
                and fusable(self.local.schedule))

    def check_budget(self, chunk: int, workers: int, max_work: float | None = None) -> None:
        """Refuse the run, before it allocates anything, when its estimated work or memory in
        ``workers`` threads of ``chunk`` replicas does not fit
        (:func:`fedtheory.budget.check_simulation`; ``max_work``: its ceiling, None for the
        default). The recorded rounds are checked after it (their list is :math:`O(T)`)."""
        run, metrics, rule = self.run, self.metrics, self.rule
        n, d = int(self.problem.n), int(self.problem.d)
        sees_all = rule.needs_all or sees_the_round(self.participation)
        check_simulation(
            rounds=run.rounds, replicas=run.replicas, n=n, d=d,
            pairs=float(n) if sees_all else self.expected_participants,
            steps=mean_local_steps(self.local.steps), metrics=len(METRICS) + len(metrics.extra),
            recorded=(len(metrics.rounds) if metrics.rounds is not None
                      else run.rounds // metrics.every + 2),
            chunk=chunk, workers=workers, float_bytes=run.dtype.itemsize, table=bool(rule.table),
            keep_replicas=metrics.keep_replicas, max_work=max_work)
        metrics.record_rounds(run.rounds)
