"""The trajectory engine behind :func:`fedtheory.simulate.simulate`.

A run is configured by a few typed, frozen objects, each validated when it is built (a
``ValueError`` naming the argument and its value):

* :class:`Run`: the sizes and the randomness (rounds, replicas, seed, first replica, dtype,
  bit generator);
* :class:`LocalWork`: what a client does in a round (step size, local steps, mini-batches,
  gradient noise, the closed form);
* :class:`Server`: the server's step (global step size, momentum, initial model);
* :class:`Metrics`: what is recorded (every how many rounds, extra metrics, per-replica
  values, bits per float, an ``observe`` callback);
* :class:`Execution`: how the replicas are cut and run (chunk, threads), never the numbers.

:class:`EngineConfig` holds them with the problem, rule and process (checked against each other
by ``simulate``); :class:`Engine` turns it into the per-run set-up and simulates blocks of
replicas (:meth:`Engine.run_chunk`), vectorised over replicas, clients and coordinates.
``simulate`` cuts the replicas into blocks, runs them (in threads when it pays) and assembles
the traces.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from fedtheory.algorithms import Participants, Rule
from fedtheory.algorithms.base import scratch, take_rows
from fedtheory.participation.base import RoundView, Selection
from fedtheory.validation import finite_array, integer_at_least, positive_reals

if TYPE_CHECKING:  # fedtheory.problems is imported when an engine is built (it pulls scipy)
    from fedtheory.participation import ParticipationProcess
    from fedtheory.problems.base import Capability, Problem
    from fedtheory.problems.noise import NoiseSampler

__all__ = ["BIT_GENERATORS", "METRICS", "Engine", "EngineConfig", "Execution", "LocalSteps",
           "LocalStepsDraw", "LocalWork", "Metrics", "MiniBatches", "RoundRecord", "Run",
           "Server", "resolve_local_steps"]

#: Bit generators a simulation may use (``bit_generator=``); PCG64 is numpy's default.
BIT_GENERATORS: dict[str, type[np.random.BitGenerator]] = {
    "pcg64": np.random.PCG64,
    "pcg64dxsm": np.random.PCG64DXSM,
    "sfc64": np.random.SFC64,
    "philox": np.random.Philox,
    "mt19937": np.random.MT19937,
}

#: The metrics every simulation records (besides ``extra_metrics``).
METRICS = ("f_gap", "grad_norm2", "dist2", "bits")

#: Bytes of updates (rows times d) a block of pairs aims at. Its work arrays stay in the
#: last-level cache, and a block is enough work that the Python between numpy calls (which
#: holds the GIL) is a few per cent of it: with L2-sized blocks (256 KiB) two worker threads
#: spent their time handing the GIL over, and one thread lost 15 % to call overhead.
_BLOCK_BYTES = 1 << 20

#: Fewest rows of a block (for very large d).
_MIN_BLOCK_ROWS = 8


@dataclass(frozen=True)
class LocalStepsDraw:
    r"""Per-round random local work: every round, each (replica, client) pair draws its
    :math:`\tau_{r,i}^t` uniformly from the integers :math:`\{\text{low}, \dots,
    \text{high}\}` (both included), replica :math:`r` from its own stream
    (``SeedSequence(seed, spawn_key=(r, 2))``, so chunking never changes the draws).

    >>> LocalStepsDraw(1, 4).draw([np.random.default_rng(0)], 1, 3).shape
    (1, 3)
    """

    low: int
    high: int

    def __post_init__(self) -> None:
        for name in ("low", "high"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"LocalStepsDraw.{name} must be an integer >= 1, got {v!r}")
        if self.high < self.low:
            raise ValueError(f"LocalStepsDraw.high must be >= low={self.low}, got {self.high!r}")

    @property
    def max(self) -> int:
        """The most steps a pair can take."""
        return int(self.high)

    @property
    def mean(self) -> float:
        """The expected number of steps."""
        return (self.low + self.high) / 2

    def draw(self, rngs: Sequence[np.random.Generator], replicas: int, n: int) -> np.ndarray:
        """``(replicas, n)`` step counts, row ``r`` from ``rngs[r]``."""
        out = np.empty((replicas, n), dtype=np.int64)
        for r in range(replicas):
            out[r] = rngs[r].integers(self.low, self.high + 1, size=n)
        return out


#: What ``local_steps`` may be: one int for every client, ``(n,)`` ints per client, a
#: :class:`LocalStepsDraw`, or ``callable(rngs, replicas, n) -> (replicas, n)`` ints (row
#: ``r`` drawn from ``rngs[r]``, one generator per replica, for chunk-independent results).
LocalSteps = int | np.ndarray | LocalStepsDraw | Callable[..., np.ndarray]


def _check_taus(taus: Any, shape: tuple[int, ...], name: str = "local_steps") -> np.ndarray:
    """Integer step counts >= 1 of the given shape, or a ``ValueError`` naming ``name``."""
    a = np.asarray(taus)
    if a.shape != shape or not np.issubdtype(a.dtype, np.integer) or (a.size and a.min() < 1):
        raise ValueError(f"{name} must be integers >= 1 of shape {shape}, got "
                         f"{a.dtype} array of shape {a.shape}"
                         + (f" with minimum {a.min()}" if a.size and a.dtype.kind in "iuf" else ""))
    return a.astype(np.int64, copy=False)


def resolve_local_steps(local_steps: Any, n: int) -> int | np.ndarray | Callable[..., np.ndarray]:
    r"""Validate ``local_steps``: an int :math:`\tau \ge 1` (returned as int), an ``(n,)``
    array of ints :math:`\ge 1` (returned as an int64 array; a constant array becomes its
    int, the same run), a :class:`LocalStepsDraw` or a callable (returned as is, checked each
    round). Otherwise a ``ValueError`` naming ``local_steps``."""
    if isinstance(local_steps, LocalStepsDraw) or (callable(local_steps)
                                                    and not isinstance(local_steps, np.ndarray)):
        return local_steps
    if isinstance(local_steps, (list, tuple, np.ndarray)):
        a = _check_taus(local_steps, (n,))
        if a.min() == a.max():
            return int(a[0])
        return a
    if isinstance(local_steps, bool) or not isinstance(local_steps, (int, np.integer)) \
            or local_steps < 1:
        raise ValueError(f"local_steps must be an integer >= 1, got {local_steps!r} (or an "
                         f"(n,) = ({n},) array of such integers, a LocalStepsDraw or a "
                         f"callable(rngs, replicas, n))")
    return int(local_steps)


@dataclass(frozen=True)
class MiniBatches:
    r"""Local mini-batch SGD: every round, each (replica, client) pair reads its :math:`s_i`
    samples in a fresh random order and takes each local step on a batch of them.

    The order is a uniform permutation per (replica, client, round), replica :math:`r`'s from
    its own stream ``SeedSequence(seed, spawn_key=(r, 3))``, drawn for *every* client every
    round whoever takes part: chunking never changes it, and runs on one seed with different
    processes or rules share it (common random numbers). With :math:`B = \min(\text{size},
    \max_i s_i)`, step :math:`k` of client :math:`i` reads the positions

    * ``wrap=False`` (epochs): :math:`bB, \dots, \min((b+1)B, s_i) - 1` of the order,
      :math:`b = k \bmod \lceil s_i/B\rceil` (the last batch of an epoch is partial;
      :meth:`epoch_steps` steps are one epoch);
    * ``wrap=True``: the :math:`\min(B, s_i)` positions :math:`kB, kB + 1, \dots` modulo
      :math:`s_i` (full batches, cycling through the order).

    The problem declares ``Capability.MINIBATCH_GRADIENTS`` (its ``sizes`` and
    ``minibatch_gradients``).

    >>> MiniBatches(20).epoch_steps(np.array([2, 20, 81])).tolist()
    [1, 1, 5]
    """

    size: int
    wrap: bool = False

    def __post_init__(self) -> None:
        integer_at_least("MiniBatches.size", self.size)
        if not isinstance(self.wrap, (bool, np.bool_)):
            raise ValueError(f"MiniBatches.wrap must be a bool, got {self.wrap!r}")

    def epoch_steps(self, sizes: np.ndarray) -> np.ndarray:
        r"""Local steps of one epoch per client, :math:`\lceil s_i / B\rceil` (``(n,)`` ints)."""
        sizes = np.asarray(sizes, dtype=np.int64)
        B = min(int(self.size), int(sizes.max()))
        return -(-sizes // B)


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
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) \
                or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
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
    refuses).

    >>> LocalWork(lr=0.1, steps=4).steps
    4
    """

    lr: float | np.ndarray
    steps: Any = 1
    batches: MiniBatches | None = None
    noise: NoiseSampler | None = None
    fuse: bool | None = None

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


@dataclass(frozen=True)
class EngineConfig:
    """Everything fixed for a run: the problem, rule and process and the configuration objects
    (checked against each other by :func:`fedtheory.simulate.simulate`: ``local.steps``
    resolved for ``problem.n`` by :func:`resolve_local_steps`, ``server.x0`` of the problem's
    dimension). ``p``: the stationary probabilities the rule uses (None: some are 0)."""

    problem: Problem
    rule: Rule
    participation: ParticipationProcess
    run: Run
    local: LocalWork
    server: Server = field(default_factory=Server)
    metrics: Metrics = field(default_factory=Metrics)
    p: np.ndarray | None = None


@dataclass(frozen=True)
class RoundRecord:
    r"""What an ``observe`` callback sees of round :math:`t` of a block of replicas
    (read-only arrays, valid during the call only).

    Attributes
    ----------
    start
        Index (within the run) of the block's first replica: rows are replicas
        ``start, start + 1, ...``.
    t
        The round, :math:`1 \le t \le T`.
    x
        :math:`x_{t-1}`, the iterates the round started from, ``(R_b, d)``.
    mask
        Who took part, bool ``(R_b, n)`` (every pair for a rule that ``needs_all``).
    G
        The rule's direction :math:`G_t`, ``(R_b, d)``, before the server's momentum.
    rule_state
        The rule's state after the round (e.g. a table rule's ``table``), to be read, never
        written (copy what must outlive the call).
    selection
        The :class:`~fedtheory.participation.Selection` of a process that sees the round
        (its coefficients, e.g. OCS's :math:`w_i/p_i^t`, and extra floats), else None.
    participation_state
        The process's state after the round (e.g. AOCS's ``iterations``,
        :class:`~fedtheory.participation.FDMSFriendChoice`'s friends and candidate sets), to
        be read, never written (copy what must outlive the call).
    """

    start: int
    t: int
    x: np.ndarray
    mask: np.ndarray
    G: np.ndarray
    rule_state: dict[str, Any]
    selection: Selection | None = None
    participation_state: dict[str, Any] | None = None


class NormalStreams:
    """Standard normals from one generator per replica, drawn ahead in blocks.

    numpy draws normals one after another from the bit stream, so ``k`` then ``l`` normals are
    the first ``k + l`` of one draw: handing replica ``r``'s normals out of a buffer filled
    ahead gives bitwise the numbers of drawing each request from its generator on demand, with
    one generator call per replica every few rounds instead of one per round (that call, not
    the drawing, dominated the noise of many small replicas). ``streams[r]`` is replica
    ``r``'s generator (not to be drawn from directly once this has read ahead of it).
    """

    #: Requests of the largest size read ahead, as far as :attr:`BUDGET` allows.
    AHEAD = 8
    #: At least this many normals per replica read ahead (small requests, e.g. a scalar per
    #: client, would otherwise call every replica's generator every few rounds).
    MIN_AHEAD = 1024
    #: Numbers held ahead for all replicas together (8 MiB of float64) beyond one request: a
    #: one-off large request (a table rule's first round of every client) is not multiplied.
    BUDGET = 1 << 20

    def __init__(self, streams: list[np.random.Generator], dtype: np.dtype) -> None:
        self.streams, self.dtype = streams, np.dtype(dtype)
        self.cap = 0
        self.buf = np.empty((len(streams), 0), dtype=self.dtype)
        self.pos = np.zeros(len(streams), dtype=np.intp)  # next unread, per replica

    def __getitem__(self, r: int) -> np.random.Generator:
        return self.streams[r]

    def __len__(self) -> int:
        return len(self.streams)

    def _refill(self, replicas: np.ndarray, cap: int) -> None:
        """Move the unread normals of ``replicas`` to the front (into a buffer of ``cap`` per
        replica) and draw the rest."""
        if cap != self.cap:  # a larger buffer; the unread normals go to the end of each row
            new = np.empty((len(self.streams), cap), dtype=self.dtype)
            keep = self.cap - self.pos
            for r in np.flatnonzero(keep).tolist():
                new[r, cap - keep[r] :] = self.buf[r, self.pos[r] :]
            self.buf, self.cap = new, cap
            self.pos = cap - keep
        for r in replicas.tolist():
            left = self.cap - self.pos[r]
            row = self.buf[r]
            if left:
                row[:left] = row[self.pos[r] :].copy()
            self.streams[r].standard_normal(out=row[left:], dtype=self.dtype)
            self.pos[r] = 0

    def fill(self, part: Participants, z: np.ndarray) -> None:
        """Fill ``z`` (``(K, d)``, contiguous) with normals: the rows of replica ``r``
        (``part.starts[r]:part.starts[r + 1]``) with its next ones, in order."""
        present, starts = part.present, part.starts
        d = z.shape[1]
        need = (starts[present + 1] - starts[present]) * d
        if not need.size:
            return
        top = int(need.max())
        if top > self.cap:  # grow: room for up to AHEAD such requests
            ahead = min(max(self.AHEAD * top, self.MIN_AHEAD),
                        self.BUDGET // max(len(self.streams), 1))
            self._refill(np.empty(0, dtype=np.intp), max(top, ahead))
        pos = self.pos[present]
        short = pos + need > self.cap
        if short.any():
            self._refill(present[short], self.cap)
            pos = self.pos[present]
        flat = z.reshape(-1)
        if need[0] == top and need.min() == top and pos.min() == pos.max():
            # every replica takes as many from the same position: one strided copy
            flat.reshape(-1, top)[:] = self.buf[present, pos[0] : pos[0] + top]
        else:
            src = np.repeat(present * self.cap + pos - starts[present] * d, need)
            src += np.arange(flat.size)
            np.take(self.buf.reshape(-1), src, out=flat)
        self.pos[present] = pos + need


def _subset(part: Participants, idx: np.ndarray) -> Participants:
    """The pairs ``idx`` (increasing) of ``part``, still sorted by replica."""
    rows = part.rows[idx]
    starts = np.zeros(part.replicas + 1, dtype=np.intp)
    np.cumsum(np.bincount(rows, minlength=part.replicas), out=starts[1:])
    return Participants(part.replicas, part.n, rows, part.cols[idx], starts)


class Engine:
    """Everything fixed for a run, from an :class:`EngineConfig`; :meth:`run_chunk` simulates a
    block of replicas. The configuration objects are read where they are needed
    (``self.run.rounds``, ``self.local.lr``); what the engine derives from them (sizes, noise,
    local-step and mini-batch set-up) is set once here; per-chunk state lives in the chunk,
    never on the engine, so chunks can run in threads.

    The problem's optional fast paths are those it declares (:attr:`capabilities`, read by
    :func:`~fedtheory.problems.base.declared_capabilities`: building an engine fails with a
    ``ValueError`` when a declared capability's method is missing)."""

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
    local_steps: Any
    x0: np.ndarray
    record: list[int]
    n: int
    d: int
    x_star: np.ndarray
    f_star: float
    step_size: float | np.ndarray
    bits_per_update: int
    block_rows: int
    capabilities: frozenset[Capability]
    loss_gap: Callable[[np.ndarray], np.ndarray] | None
    noise_kind: str  # "none", "additive", "relative" (Gaussian NoiseModel) or "generic"
    noise_sd: float
    fused: bool
    stepper: Callable[..., np.ndarray] | None
    grads_take_out: bool
    batches: MiniBatches | None
    stack: Any  # the ProblemStack of a run whose replicas have their own problems, or None
    hot: Any  # the problem the hot path calls
    lr_rows: np.ndarray | None

    def __init__(self, config: EngineConfig) -> None:
        if not isinstance(config, EngineConfig):
            raise TypeError(f"Engine takes an EngineConfig, got {type(config).__name__}")
        self.config = config
        self.problem, self.rule = config.problem, config.rule
        self.participation = config.participation
        self.run, self.local = config.run, config.local
        self.server, self.metrics = config.server, config.metrics
        prob = self.problem
        from fedtheory.problems.base import Capability, declared_capabilities
        from fedtheory.problems.stack import ProblemStack

        #: the ProblemStack of a run whose replicas have their own problems, else None
        self.stack = prob if isinstance(prob, ProblemStack) else None
        #: the problem the hot path calls: the stack's flat problem (see :meth:`client_ids`),
        #: else the problem
        self.hot = prob.flat if self.stack is not None else prob
        self.n, self.d = int(prob.n), int(prob.d)
        # read on the hot path
        self.dtype, self.noise = self.run.dtype, self.local.noise
        self.lr = _one_if_equal(self.local.lr)
        self.local_steps = resolve_local_steps(self.local.steps, self.n)
        self.x0 = (np.zeros(self.d) if self.server.x0 is None
                   else np.asarray(self.server.x0, dtype=float))
        self.record = self.metrics.record_rounds(self.run.rounds)
        self.x_star = np.asarray(prob.x_star, dtype=float)  # (R, d) for a stack
        self.f_star = (np.asarray(prob.f_star, dtype=float) if self.stack is not None
                       else float(prob.f_star))
        #: the replicas' learning rates when they differ, ``(R,)``, else None (``self.lr``)
        self.lr_rows = self.lr if isinstance(self.lr, np.ndarray) else None
        # (R,) when either rate is per replica
        self.step_size = _one_if_equal(self.server.global_lr) * self.lr
        self.bits_per_update = self.d * self.metrics.bits_per_float * self.rule.floats_per_update
        self.block_rows = max(_MIN_BLOCK_ROWS, _BLOCK_BYTES // (self.d * self.dtype.itemsize))
        if self.stack is not None:  # the hot path's from the flat problem, loss_gap the stack's
            self.capabilities = self.stack.hot_capabilities | self.stack.capabilities
        else:
            self.capabilities = declared_capabilities(prob)
        self.loss_gap = prob.loss_gap if Capability.EXACT_LOSS_GAP in self.capabilities else None
        self._setup_noise()
        self._setup_local_work()

    # -- noise ----------------------------------------------------------------------------
    def _setup_noise(self) -> None:
        from fedtheory.problems.noise import NoiseModel, NoiseSampler

        noise = self.noise
        self.noise_kind = "none"
        self.noise_sd = 0.0
        if noise is None:
            return
        if not isinstance(noise, NoiseSampler):
            raise ValueError(f"noise must be a noise model with .sample(), got {noise!r}")
        if isinstance(noise, NoiseModel) and noise.distribution == "gaussian":
            # xi = s z / sqrt(d), s^2 = M ||g||^2 + sigma^2: the normals are drawn here,
            # per replica, into one buffer, and scaled for all rows at once
            self.noise_kind = "additive" if noise.M == 0 else "relative"
            if self.noise_kind == "additive":
                self.noise_sd = math.sqrt(noise.sigma2 / self.d)
        else:
            self.noise_kind = "generic"

    def _normals(self, part: Participants,
                 rngs: NormalStreams | Sequence[np.random.Generator],
                 work: dict[str, Any]) -> np.ndarray:
        """Standard normals ``(K, d)``: replica r's rows from its own noise stream (drawn
        ahead by a :class:`NormalStreams`, or on demand from a list of generators)."""
        z = scratch(work, "z", part.size, self.d, self.dtype)
        if isinstance(rngs, NormalStreams):
            rngs.fill(part, z)
            return z
        starts = part.starts
        for r in part.present.tolist():
            rngs[r].standard_normal(out=z[starts[r] : starts[r + 1]], dtype=self.dtype)
        return z

    def _add_noise(self, g: np.ndarray, part: Participants, rngs: list[np.random.Generator],
                   work: dict[str, Any]) -> None:
        """Add one noise draw to every row of the gradients ``g`` in place."""
        if self.noise_kind == "generic":
            starts = part.starts
            for r in part.present.tolist():
                s, e = starts[r], starts[r + 1]
                g[s:e] += self.noise.sample(g[s:e], rngs[r], dtype=self.dtype)
            return
        z = self._normals(part, rngs, work)
        if self.noise_kind == "additive":
            z *= self.dtype.type(self.noise_sd)
        else:
            scale = np.sqrt(self.noise.variance(g) / self.d).astype(self.dtype)
            z *= scale[:, None]
        g += z

    # -- how the problem does the local work -------------------------------------------------
    def _setup_local_work(self) -> None:
        """Pick the fastest exact route the problem declares (:attr:`capabilities`):
        ``fused_local_steps`` (closed form of the tau steps, where the problem's
        ``can_fuse_local_steps`` and the noise allow), ``local_steps`` (its own step loop),
        else repeated ``client_gradients``, into work buffers when it declares ``out=``."""
        from fedtheory.problems.base import Capability

        prob, caps = self.hot, self.capabilities
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
        self.batches = self.local.batches
        if self.batches is not None:
            if Capability.MINIBATCH_GRADIENTS not in caps:
                raise ValueError(f"batches={self.batches!r} needs a problem that declares "
                                 f"Capability.MINIBATCH_GRADIENTS (sizes, minibatch_gradients), "
                                 f"got {type(prob).__name__}")
            if self.local.fuse:
                raise ValueError("fuse_local_steps=True is a closed form of full-gradient "
                                 f"steps, not of mini-batch steps (batches={self.batches!r})")
            # per client of the hot path: (n,), or (U n,) for a stack's U distinct problems
            self.sizes = np.asarray(prob.sizes, dtype=np.int64)
            if self.sizes.shape != (int(prob.n),) or self.sizes.min() < 1:
                raise ValueError(f"problem.sizes must be (n,) = ({prob.n},) positive integers, "
                                 f"got {prob.sizes!r}")
            self.s_max = int(self.sizes.max())
            self.batch_rows = min(int(self.batches.size), self.s_max)  # B
            #: per hot-path client its problem's B = min(size, its largest client's samples)
            #: (they differ only in a stack whose problems' largest clients are below
            #: MiniBatches.size), and its batches per epoch
            tops = self.sizes.reshape(-1, self.n).max(axis=1)
            self.batch_of = np.repeat(np.minimum(int(self.batches.size), tops), self.n)
            self.epoch_batches = -(-self.sizes // self.batch_of)
            self.fused, self.stepper = False, None
            self.grads_take_out = Capability.GRADIENTS_INTO_BUFFER in caps
            return
        can_fuse = (Capability.FUSED_LOCAL_STEPS in caps and bool(prob.can_fuse_local_steps)
                    and self.noise_kind in ("none", "additive") and self.lr_rows is None)
        if self.local.fuse is None:
            self.fused = can_fuse and self.tau_max > 1
        elif self.local.fuse and not can_fuse:
            raise ValueError(
                "fuse_local_steps=True needs a problem with closed-form local steps (declared "
                "Capability.FUSED_LOCAL_STEPS and can_fuse_local_steps true: a diagonal "
                "QuadraticProblem), additive Gaussian noise (or none) and one lr for every "
                f"replica, got problem {type(prob).__name__}, noise {self.noise!r} and lr "
                f"{self.lr!r}"
            )
        else:
            self.fused = bool(self.local.fuse)
        self.stepper = None
        if (not self.fused and self.tau_max > 1 and Capability.LOCAL_STEPS in caps
                and self.lr_rows is None):  # a problem's own steps take one lr
            self.stepper = prob.local_steps
        self.grads_take_out = Capability.GRADIENTS_INTO_BUFFER in caps

    def _gradients(self, y: np.ndarray, cols: np.ndarray, work: dict[str, Any]) -> np.ndarray:
        """The problem's gradient rows at ``y``, in a work buffer the engine may overwrite."""
        if self.grads_take_out:
            out = scratch(work, "g", y.shape[0], self.d, self.dtype)
            return self.hot.client_gradients(y, cols, out=out)
        return np.array(self.hot.client_gradients(y, cols), dtype=self.dtype)

    def _start_points(self, x: np.ndarray, part: Participants,
                      work: dict[str, Any]) -> np.ndarray:
        """:math:`x_t` of each pair's replica, ``(K, d)``, read-only for the caller.

        Gathered rows when the pairs belong to several replicas. For one replica (the usual
        block when ``d`` is large): rows of a contiguous tile of :math:`x_t`, filled once per
        replica and round, so that the problem's first pass runs as one loop over the block
        (a broadcast view would cost one inner loop per row); a broadcast view beyond the
        tile's rows."""
        r, K = part.only, part.size
        if r is None:
            return take_rows(x, part.rows, scratch(work, "x", K, self.d, self.dtype))
        if K > self.block_rows:
            return np.broadcast_to(x[r], (K, self.d))
        key = (work.get("round"), r)
        tile = work.get("x_tile")
        filled = work["x_tile_rows"] if work.get("x_tile_key") == key else 0
        if tile is None or tile.shape[0] < K:  # grow (the rows filled so far are lost)
            rows = K if tile is None else max(K, tile.shape[0] + tile.shape[0] // 4)
            tile = work["x_tile"] = np.empty((min(rows, self.block_rows), self.d), self.dtype)
            filled = 0
        if filled < K:  # rows of this replica and round not written yet
            tile[filled:K] = x[r]
            work["x_tile_key"], work["x_tile_rows"] = key, K
        return tile[:K]

    # -- one round's local work -----------------------------------------------------------
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
        """This round's sort keys of :class:`MiniBatches`' sample orders, ``(R, n, s_max)``: row
        ``r`` from ``rngs[r]``, uniforms in the first ``sizes[i]`` places of ``[r, i]`` and 2
        in the padding after them (for a stack, the sizes of the run's replicas ``first,
        first + 1, ...``). A pair's order is the stable argsort of its row
        (:meth:`sample_orders`): a uniform permutation of its samples (the keys are distinct
        almost surely, so whatever the sort), then the padding in place order. Only the pairs
        that work this round are sorted; every pair's keys are drawn, so chunking never
        changes them. ``leaders`` (:meth:`_shared_draws`): replicas whose stream and problem
        are another's copy its keys (the same numbers) instead of drawing them."""
        R = len(rngs)
        sizes = (self.stack.sizes[first:first + R] if self.stack is not None
                 else np.broadcast_to(self.sizes, (R, self.n)))
        tops = sizes.max(axis=1)
        keys = np.empty((R, self.n, self.s_max))
        own = range(R) if leaders is None else np.flatnonzero(leaders == np.arange(R)).tolist()
        for r in own:  # (n, its problem's largest size) keys, as a run of its problem alone
            if tops[r] == self.s_max:
                rngs[r].random(out=keys[r])
            else:
                keys[r, :, :tops[r]] = rngs[r].random((self.n, int(tops[r])))
        if leaders is not None:
            copies = np.flatnonzero(leaders != np.arange(R))
            keys[copies] = keys[leaders[copies]]
        keys[np.arange(self.s_max) >= sizes[..., None]] = 2.0
        return keys

    @staticmethod
    def sample_orders(keys: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """The sample orders ``(K, s_max)`` of the pairs ``(rows, cols)`` from the round's keys
        (:meth:`sample_keys`)."""
        return np.argsort(keys[rows, cols], axis=-1, kind="stable")

    def local_updates(self, x: np.ndarray, part: Participants, corr: np.ndarray | None,
                      rngs: list[np.random.Generator], work: dict[str, Any],
                      taus: np.ndarray | None = None,
                      orders: np.ndarray | None = None) -> tuple[np.ndarray, int]:
        r"""The active pairs' pseudo-gradients ``(K, d)`` and the gradient rows evaluated.

        ``taus``: ``(K,)`` local steps per pair (None: the configuration's one :math:`\tau`).
        A pair with :math:`\tau_k` steps reports :math:`\Delta_k = \sum_{j<\tau_k}(\nabla
        f_{c_k}(y^j_k) + \xi^j_k + u_k)` (the sum of its gradients, not FedNova's normalised
        :math:`\Delta_k/\tau_k`); pairs with fewer steps stop early by masking (no loop over
        clients), and replica :math:`r` draws its noise for its still-running pairs, step
        after step, so the draws do not depend on the other replicas of the block.

        With :class:`MiniBatches`, ``orders`` are the round's sort keys of the block's
        replicas' sample orders (:meth:`sample_keys`) and every step is taken on a
        mini-batch.

        The result lives in a work buffer of ``work`` (the caller may overwrite it), valid
        until the next call.
        """
        K, d, dt = part.size, self.d, self.dtype
        if K == 0:
            return np.empty((0, d), dtype=dt), 0
        cols = self.client_ids(part, work)
        if taus is None and self.tau_fixed is None:
            raise ValueError("taus must give the pairs' local steps: this engine's local_steps "
                             f"vary by client or round ({self.local_steps!r}); see pair_steps")
        if self.batches is not None:
            if orders is None:
                raise ValueError("orders must give the round's sample-order keys with batches="
                                 f"{self.batches!r} (see sample_keys)")
            return self._minibatch_updates(x, part, corr, rngs, work, taus, orders)
        tau: int = self.tau_fixed if taus is None else 0  # type: ignore[assignment]
        if taus is not None:
            lo, hi = int(taus.min()), int(taus.max())
            if lo == hi:  # one tau for the block: the uniform path
                tau = lo
            else:
                return self._varied_updates(x, part, corr, rngs, work, taus)
        y0 = self._start_points(x, part, work)
        if self.fused:
            z = self._normals(part, rngs, work) if self.noise_sd > 0 else None
            upd = self.hot.fused_local_steps(
                y0, cols, self.lr, tau, correction=corr, normals=z, noise_sd=self.noise_sd,
                out=scratch(work, "upd", K, d, dt))
            return upd, K
        if tau == 1:
            g = self._gradients(y0, cols, work)
            if self.noise_kind != "none":
                self._add_noise(g, part, rngs, work)
            if corr is not None:
                g += corr
            return g, K
        if self.stepper is not None:
            add_noise = None
            if self.noise_kind != "none":
                def add_noise(g: np.ndarray) -> None:
                    self._add_noise(g, part, rngs, work)
            upd = self.stepper(y0, cols, self.lr, tau, correction=corr, add_noise=add_noise,
                               out=scratch(work, "upd", K, d, dt))
            return upd, K * tau
        y = scratch(work, "y", K, d, dt)
        y[...] = y0
        total = scratch(work, "total", K, d, dt)
        lr = self.pair_lr(part, work)
        for k in range(tau):
            g = self._gradients(y, cols, work)
            if self.noise_kind != "none":
                self._add_noise(g, part, rngs, work)
            if corr is not None:
                g += corr
            if k == 0:
                total[...] = g
            else:
                total += g
            if k + 1 < tau:
                g *= lr
                y -= g
        return total, K * tau

    def _varied_updates(self, x: np.ndarray, part: Participants, corr: np.ndarray | None,
                        rngs: Any, work: dict[str, Any],
                        taus: np.ndarray) -> tuple[np.ndarray, int]:
        """:meth:`local_updates` when the pairs' steps differ: the closed form per distinct
        :math:`\tau` (fused: one normal per coordinate per pair, drawn for all pairs at once,
        as in the uniform case), else the step loop with the finished pairs masked out."""
        K, d, dt = part.size, self.d, self.dtype
        cols = self.client_ids(part, work)
        y0 = self._start_points(x, part, work)
        if self.fused:
            z = self._normals(part, rngs, work) if self.noise_sd > 0 else None
            upd = scratch(work, "upd", K, d, dt)
            for tv in np.unique(taus).tolist():
                idx = np.flatnonzero(taus == tv)
                upd[idx] = self.hot.fused_local_steps(
                    y0[idx], cols[idx], self.lr, int(tv),
                    correction=None if corr is None else corr[idx],
                    normals=None if z is None else z[idx], noise_sd=self.noise_sd)
            return upd, K
        y = scratch(work, "y", K, d, dt)
        y[...] = y0
        total = scratch(work, "total", K, d, dt)
        lr = self.pair_lr(part, work)
        top = int(taus.max())
        for k in range(top):
            if k == 0:  # every pair runs at least one step
                g = self._gradients(y, cols, work)
                if self.noise_kind != "none":
                    self._add_noise(g, part, rngs, work)
                if corr is not None:
                    g += corr
                total[...] = g
                if top > 1:
                    g *= lr
                    y -= g
                continue
            idx = np.flatnonzero(taus > k)
            sub = _subset(part, idx)
            yk = y[idx]
            g = self._gradients(yk, cols[idx], work)
            if self.noise_kind != "none":
                self._add_noise(g, sub, rngs, work)
            if corr is not None:
                g += corr[idx]
            total[idx] += g
            if k + 1 < top:
                g *= lr if np.ndim(lr) == 0 else lr[idx]
                y[idx] = yk - g
        return total, int(taus.sum())

    def _minibatch_updates(self, x: np.ndarray, part: Participants, corr: np.ndarray | None,
                           rngs: Any, work: dict[str, Any], taus: np.ndarray | None,
                           orders: np.ndarray) -> tuple[np.ndarray, int]:
        r""":meth:`local_updates` with :class:`MiniBatches`: step :math:`k` of every pair still
        running (:math:`\tau > k`; the others drop out by masking) on its batch of the
        pair's sample order, all pairs in one call of ``minibatch_gradients``."""
        K, d, dt = part.size, self.d, self.dtype
        cols = self.client_ids(part, work)  # the hot path's clients (sizes, gradients)
        steps = np.full(K, self.tau_fixed, dtype=np.int64) if taus is None else taus
        top = int(steps.max())
        if self.noise_kind == "none" and int(steps.min()) < top:
            return self._minibatch_sorted(x, part, corr, work, steps, orders)
        B = self.batch_rows
        j = np.arange(B)
        order = self.sample_orders(orders, part.rows, part.cols)  # (K, s_max)
        size = self.sizes[cols]
        y = scratch(work, "y", K, d, dt)
        y[...] = self._start_points(x, part, work)
        total = scratch(work, "total", K, d, dt)
        lr = self.pair_lr(part, work)
        every = np.arange(K)
        for k in range(top):
            idx = every if k == 0 or steps.min() > k else np.flatnonzero(steps > k)
            s_k = size[idx, None]
            pos, valid = self._batch_positions(k, cols[idx], s_k, j)
            samples = np.take_along_axis(order[idx], pos, axis=1)
            yk = y if idx is every else y[idx]
            g = np.asarray(self.hot.minibatch_gradients(yk, cols[idx], samples, valid),
                           dtype=dt)
            if self.noise_kind != "none":
                self._add_noise(g, part if idx is every else _subset(part, idx), rngs, work)
            if corr is not None:
                g += corr if idx is every else corr[idx]
            if k == 0:
                total[...] = g
            elif idx is every:
                total += g
            else:
                total[idx] += g
            if k + 1 < top:
                g *= lr if np.ndim(lr) == 0 or idx is every else lr[idx]
                if idx is every:
                    y -= g
                else:
                    y[idx] = yk - g
        return total, int(steps.sum())

    def _batch_positions(self, k: int, cols: np.ndarray, s_k: np.ndarray,
                         j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Step ``k``'s positions in the pairs' sample orders and which are read, ``(K, B)``
        each (see :class:`MiniBatches`), for the hot path's clients ``cols`` of sizes ``s_k``
        ``(K, 1)``, each pair with its problem's :math:`B` (``batch_of``)."""
        Bc = self.batch_of[cols][:, None]
        if self.batches.wrap:
            pos = (k * Bc + j[None, :]) % s_k
            valid = j[None, :] < np.minimum(s_k, Bc)
        else:
            pos = (k % self.epoch_batches[cols])[:, None] * Bc + j[None, :]
            valid = (pos < s_k) & (j[None, :] < Bc)
            pos = np.where(valid, pos, 0)
        return pos, valid

    def _minibatch_sorted(self, x: np.ndarray, part: Participants, corr: np.ndarray | None,
                          work: dict[str, Any], steps: np.ndarray,
                          orders: np.ndarray) -> tuple[np.ndarray, int]:
        r""":meth:`_minibatch_updates` without noise when the pairs' steps differ: the pairs
        sorted by decreasing steps, so that those still running at step :math:`k` are a prefix
        (slices, not gathered rows), then put back in order. Row by row the same arithmetic,
        so the same numbers."""
        K, d, dt = part.size, self.d, self.dtype
        perm = np.argsort(-steps, kind="stable")
        cols, st = self.client_ids(part, work)[perm], steps[perm]
        active = np.searchsorted(-st, -np.arange(int(st[0])), side="left")  # (steps > k).sum()
        B = self.batch_rows
        j = np.arange(B)
        order = self.sample_orders(orders, part.rows[perm], part.cols[perm])  # (K, s_max)
        size = self.sizes[cols][:, None]
        y = scratch(work, "y", K, d, dt)
        np.take(self._start_points(x, part, work), perm, axis=0, out=y)
        cs = None if corr is None else corr[perm]
        total = scratch(work, "total_sorted", K, d, dt)
        lr = self.pair_lr(part, work)
        if np.ndim(lr):
            lr = lr[perm]
        top = int(st[0])
        for k in range(top):
            c = K if k == 0 else int(active[k])
            s_k = size[:c]
            pos, valid = self._batch_positions(k, cols[:c], s_k, j)
            samples = np.take_along_axis(order[:c], pos, axis=1)
            yk = y[:c]
            g = np.asarray(self.hot.minibatch_gradients(yk, cols[:c], samples, valid),
                           dtype=dt)
            if cs is not None:
                g += cs[:c]
            if k == 0:
                total[...] = g
            else:
                total[:c] += g
            if k + 1 < top:
                g *= lr if np.ndim(lr) == 0 else lr[:c]
                yk -= g
        out = scratch(work, "total", K, d, dt)
        out[perm] = total
        return out, int(steps.sum())

    # -- metrics --------------------------------------------------------------------------
    def _f_gap(self, x64: np.ndarray, reps: np.ndarray) -> np.ndarray:
        r""":math:`f(x) - f^\star`: the problem's ``loss_gap`` when it has one (exact, without
        the cancellation of ``loss(x) - f_star`` near :math:`x^\star`), else that
        difference; for a stack, each row on its replica's problem (``reps``)."""
        if self.stack is not None:
            return self.stack.loss_gap(x64, reps)
        if self.loss_gap is not None:
            return np.asarray(self.loss_gap(x64), dtype=float)
        return np.asarray(self.problem.loss(x64), dtype=float) - self.f_star

    def measure(self, x: np.ndarray, bits: np.ndarray, first: int = 0) -> dict[str, np.ndarray]:
        """The metrics at the iterates ``x`` ``(R_b, d)`` of the run's replicas ``first,
        first + 1, ...`` (a skipped built-in one: NaN). With a
        :class:`~fedtheory.problems.stack.ProblemStack` every row is measured on its replica's
        problem, and an extra metric is called as ``fn(x, replicas=...)`` (the rows' replicas
        in the run)."""
        x64 = x.astype(float, copy=False)
        reps = np.arange(first, first + x.shape[0])
        skip = self.metrics.skip
        out = {"bits": bits.astype(float)}
        out["f_gap"] = (np.full(x.shape[0], np.nan) if "f_gap" in skip
                        else self._f_gap(x64, reps))
        if "grad_norm2" in skip:
            out["grad_norm2"] = np.full(x.shape[0], np.nan)
        else:
            g = np.asarray(self.problem.grad(x64) if self.stack is None
                           else self.stack.grad(x64, reps), dtype=float)
            out["grad_norm2"] = np.einsum("rd,rd->r", g, g)
        if "dist2" in skip:
            out["dist2"] = np.full(x.shape[0], np.nan)
        else:
            diff = x64 - (self.x_star if self.stack is None else self.x_star[reps])
            out["dist2"] = np.einsum("rd,rd->r", diff, diff)
        for name, fn in self.metrics.extra.items():
            val = np.asarray(fn(x64) if self.stack is None else fn(x64, replicas=reps),
                             dtype=float)
            if val.shape != (x.shape[0],):
                raise ValueError(
                    f"extra metric {name!r} must map (R, d) iterates to (R,), got {val.shape}"
                )
            out[name] = val
        return out

    # -- a block of replicas --------------------------------------------------------------
    def _streams(self, start: int, size: int, which: int) -> list[np.random.Generator]:
        bg = BIT_GENERATORS[self.run.bit_generator]
        return [
            np.random.Generator(bg(np.random.SeedSequence(self.run.seed, spawn_key=(r, which))))
            for r in self.run.stream_indices(start, size).tolist()
        ]

    def run_chunk(self, start: int, size: int) -> dict[str, Any]:
        """Simulate replicas ``start, ..., start + size - 1``; the arithmetic of a diverging
        replica (overflow, then inf and NaN) raises no numpy warnings: :func:`simulate`
        reports it once, as a :class:`DivergenceWarning`."""
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return self._run_chunk(start, size)

    def _run_chunk(self, start: int, size: int) -> dict[str, Any]:
        part_rngs = self._streams(start, size, 0)
        # the noise streams exist only when there is noise (creating one costs microseconds
        # per replica: a noise-free run of many small replicas paid more for them than for
        # its arithmetic)
        noise_rngs: Any = self._streams(start, size, 1) if self.noise_kind != "none" else []
        if self.noise_kind in ("additive", "relative"):  # standard normals only: drawn ahead
            noise_rngs = NormalStreams(noise_rngs, self.dtype)
        dt = self.dtype
        x = np.array(np.broadcast_to(self.x0[start : start + size] if self.x0.ndim == 2
                                     else self.x0, (size, self.d)), dtype=dt)
        # components with per-replica parameters give those of this block's replicas
        rule = self.rule.for_replicas(start, start + size)
        proc = self.participation
        if hasattr(proc, "for_replicas"):  # (a duck-typed process may lack it: one for all)
            proc = proc.for_replicas(start, start + size)
        n, d = self.n, self.d
        grad_evals = client_rounds = 0
        # scratch buffers reused from round to round; "first": the block's first replica
        work: dict[str, Any] = {"first": start}
        tau_rngs = self._streams(start, size, 2) if self.tau_draw is not None else None
        order_rngs = self._streams(start, size, 3) if self.batches is not None else None
        key_leaders = self._shared_draws(start, size) if order_rngs is not None else None

        def draw_taus() -> None:  # this round's (R, n) local steps (and sample orders), if drawn
            if tau_rngs is not None:
                work["taus"] = _check_taus(self.tau_draw(tau_rngs, size, n), (size, n),
                                           "local_steps (the round's draw)")
            if order_rngs is not None:
                work["orders"] = self.sample_keys(order_rngs, start, key_leaders)

        initial = None
        if rule.table and rule.memory_init == "full":
            full = Participants.full(size, n)
            draw_taus()
            # a one-off round of every client (its work arrays are not kept)
            upd, ge = self.local_updates(x, full, None, noise_rngs, {"first": start},
                                         self.pair_steps(full, work), work.get("orders"))
            initial = upd.reshape(size, n, d)
            grad_evals += ge
            client_rounds += full.size
        rstate = rule.init(size, n, d, p=self.config.p, weights=self.problem.weights, dtype=dt,
                           initial=initial,
                           local_steps=self.tau_fixed if self.tau_fixed is not None else 1)
        pstate = proc.init(part_rngs, size)
        bits = np.zeros(size, dtype=np.int64)
        if initial is not None:
            bits += n * self.bits_per_update
        v = np.zeros((size, d), dtype=dt) if self.server.momentum else None
        names = list(METRICS) + list(self.metrics.extra)
        T_rec = len(self.record)
        acc = {k: (np.zeros(T_rec), np.zeros(T_rec)) for k in names}
        kept = {k: np.empty((size, T_rec)) for k in names} if self.metrics.keep_replicas else None

        def record(j: int) -> None:
            vals = self.measure(x, bits, start)
            for k in names:
                mean = vals[k].mean()
                acc[k][0][j] = mean
                acc[k][1][j] = np.sum((vals[k] - mean) ** 2)
                if kept is not None:
                    kept[k][:, j] = vals[k]

        j = 0
        if self.record[0] == 0:
            record(0)
            j = 1
        every = Participants.full(size, n)  # every pair of the chunk (read-only, built once)
        all_pairs = every if rule.needs_all else None
        evals = [0]  # gradient rows evaluated in this round's blocks
        sees_round = bool(getattr(proc, "sees_round", False))
        seen: dict[str, Any] = {}  # this round's updates, when the process asked for them
        view_work: dict[str, Any] = {"first": start}
        weights = np.asarray(self.problem.weights, dtype=float)
        sizes = getattr(self.problem, "sizes", None)
        losses = None
        if self.stack is not None:
            if sizes is not None:
                sizes = sizes[start:start + size]  # (R_b, n): this block's replicas'
            reps = np.arange(start, start + size)

            def losses() -> np.ndarray:
                return self.stack.client_losses(x.astype(float, copy=False), reps)
        elif hasattr(self.problem, "client_losses"):
            def losses() -> np.ndarray:
                return np.asarray(self.problem.client_losses(x.astype(float, copy=False)))

        def round_updates(only: np.ndarray | None) -> np.ndarray:
            """The clients' updates of this round (all, or the pairs ``only``), for the
            process's view: counted, and reused by the aggregation."""
            if type(rule).correction is not Rule.correction:
                raise ValueError(f"participation {proc.name!r} reads the clients' updates, which "
                                 f"rule {rule.name!r} corrects during the local work: not "
                                 "supported together")
            some = every if only is None else Participants.from_mask(only)
            upd, ge = self.local_updates(x, some, None, noise_rngs, view_work,
                                         self.pair_steps(some, work), work.get("orders"))
            evals[0] += ge
            if only is None:
                dense = upd.reshape(size, n, d)
            else:
                dense = np.zeros((size, n, d), dtype=dt)
                dense[some.rows, some.cols] = upd
            seen["updates"], seen["only"], seen["count"] = dense.reshape(-1, d), only, some.size
            return dense

        def block_updates(block: Participants, corr: np.ndarray | None) -> np.ndarray:
            upd_all = seen.get("updates")
            if upd_all is not None:  # the process's view computed them: the same numbers
                only = seen["only"]
                if only is not None and not only[block.rows, block.cols].all():
                    raise ValueError(f"participation {proc.name!r} selected clients whose "
                                     "updates it did not ask for (RoundView.updates(only=))")
                return take_rows(upd_all, block.flat_index,
                                 scratch(work, "upd_seen", block.size, d, dt))
            upd, ge = self.local_updates(x, block, corr, noise_rngs, work,
                                         self.pair_steps(block, work), work.get("orders"))
            evals[0] += ge
            return upd

        step = (dt.type(self.step_size) if np.ndim(self.step_size) == 0
                else np.asarray(self.step_size, dtype=dt)[start:start + size, None])
        beta = dt.type(self.server.momentum)
        diverged = np.full(size, -1, dtype=np.int64)  # first round with a non-finite x_t
        watch = True  # some replica is still finite
        for t in range(1, self.run.rounds + 1):
            work["round"] = view_work["round"] = t  # (the x_t tiles are per round)
            draw_taus()
            extra_floats = sel = None
            if sees_round:
                seen.clear()
                view = RoundView(t, x, weights, round_updates, losses, sizes)
                sel, pstate = proc.select(pstate, part_rngs, view)
                extra_floats = sel.extra_floats
                part = all_pairs if all_pairs is not None else Participants.from_mask(
                    np.asarray(sel.mask), sel.coef)
            else:
                mask, pstate = proc.step(pstate, part_rngs)
                part = all_pairs if all_pairs is not None else Participants.from_mask(mask)
            G = rule.run_round(rstate, part, block_updates, self.block_rows)
            grad_evals += evals[0]
            evals[0] = 0
            client_rounds += seen["count"] if seen.get("updates") is not None else part.size
            if self.metrics.observe is not None:
                xv, Gv = x.view(), G.view()
                xv.flags.writeable = Gv.flags.writeable = False
                self.metrics.observe(RoundRecord(start, t, xv, part.mask, Gv, rstate, sel,
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
            bits += part.counts * self.bits_per_update
            if extra_floats is not None:
                bits += np.rint(np.asarray(extra_floats, dtype=float)
                                * self.metrics.bits_per_float).astype(np.int64)
            if j < T_rec and self.record[j] == t:
                record(j)
                j += 1
        return {"size": size, "acc": acc, "kept": kept, "x": x, "diverged": diverged,
                "grad_evals": grad_evals, "client_rounds": client_rounds}
