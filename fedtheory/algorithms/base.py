r"""What every aggregation rule shares: the compressed participants of a round, segment sums,
validation, and the :class:`Rule` base class.

A round of ``R`` replicas of an ``n``-client federation is represented by its :math:`K`
active (replica, client) pairs, flattened and sorted by replica (:class:`Participants`); the
clients' updates arrive as a ``(K, d)`` array aligned with those pairs. A rule turns them into
the aggregate direction :math:`G_t` of every replica, shape ``(R, d)``:

.. math:: G, \text{state} = \text{rule.step}(\text{state}, \text{active}, \Delta, p).

The update :math:`\Delta_i` of client :math:`i` is the pseudo-gradient of seed 000,
:math:`\Delta_i = (w_t - w_{t,\tau}^{(i)})/\eta`, which is the client gradient when
:math:`\tau = 1`; the server then steps :math:`w_{t+1} = w_t - \eta_g \eta\, G_t`.

For small examples a dense form is accepted too: a boolean mask ``(R, n)`` (or ``(n,)`` for a
single replica) with updates ``(R, n, d)`` (or ``(n, d)``); the result then has the mask's
leading shape.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, ClassVar

import numpy as np
from scipy import sparse as _sparse

from fedtheory.validation import probabilities

__all__ = [
    "Participants",
    "Rule",
    "TableRule",
    "add_scaled_sums",
    "as_participants",
    "cached_coef",
    "client_coef",
    "pair_coef",
    "scaled_sum",
    "scratch",
    "segment_sum",
    "rows_coef",
    "take_rows",
    "validate_probabilities",
    "validate_weights",
]


@dataclass(frozen=True)
class Participants:
    r"""The :math:`K` active (replica, client) pairs of one round, sorted by replica.

    Attributes
    ----------
    replicas, n
        The shape ``(R, n)`` of the participation mask this was built from.
    rows, cols
        ``(K,)`` replica and client index of each pair; ``rows`` is non-decreasing.
    starts
        ``(R + 1,)`` offsets: the pairs of replica ``r`` are ``starts[r]:starts[r + 1]``.

    Examples
    --------
    >>> part = Participants.from_mask(np.array([[True, False, True], [False, False, False]]))
    >>> part.rows.tolist(), part.cols.tolist(), part.counts.tolist()
    ([0, 0], [0, 2], [2, 0])
    """

    replicas: int
    n: int
    rows: np.ndarray
    cols: np.ndarray
    starts: np.ndarray

    @classmethod
    def from_mask(cls, mask: np.ndarray) -> Participants:
        """Compress a boolean participation mask of shape ``(R, n)``."""
        mask = np.asarray(mask)
        if mask.ndim != 2 or mask.dtype != bool:
            raise ValueError(
                f"mask must be a boolean array of shape (replicas, n), got dtype {mask.dtype} "
                f"and shape {mask.shape}"
            )
        rows, cols = np.nonzero(mask)
        counts = np.count_nonzero(mask, axis=1)
        starts = np.zeros(mask.shape[0] + 1, dtype=np.intp)
        np.cumsum(counts, out=starts[1:])
        return cls(mask.shape[0], mask.shape[1], rows, cols, starts)

    @classmethod
    def full(cls, replicas: int, n: int) -> Participants:
        """Every client of every replica."""
        rows = np.repeat(np.arange(replicas, dtype=np.intp), n)
        cols = np.tile(np.arange(n, dtype=np.intp), replicas)
        starts = np.arange(0, replicas * n + 1, n, dtype=np.intp)
        return cls(replicas, n, rows, cols, starts)

    @property
    def size(self) -> int:
        """:math:`K`, the number of active pairs."""
        return int(self.rows.shape[0])

    # derived arrays, computed on first use and kept (plain dict caching: cheaper than
    # functools.cached_property, which takes a lock on every access in Python 3.11)
    @property
    def counts(self) -> np.ndarray:
        """``(R,)`` number of participants of each replica."""
        val = self.__dict__.get("_counts")
        if val is None:
            val = self.__dict__["_counts"] = np.diff(self.starts)
        return val

    @property
    def present(self) -> np.ndarray:
        """The replicas with at least one participant, increasing."""
        val = self.__dict__.get("_present")
        if val is None:
            val = self.__dict__["_present"] = np.flatnonzero(self.counts)
        return val

    @property
    def only(self) -> int | None:
        """The replica of every pair when they all belong to one replica, else None."""
        cache = self.__dict__
        if "_only" not in cache:
            rows = self.rows
            cache["_only"] = (int(rows[0]) if rows.shape[0] and rows[0] == rows[-1]
                              else None)
        return cache["_only"]

    @property
    def flat_index(self) -> np.ndarray:
        """``(K,)`` index ``row * n + col`` into a table viewed as ``(R * n, d)``."""
        val = self.__dict__.get("_flat_index")
        if val is None:
            r = self.only
            if r == 0:
                val = self.cols
            elif r is not None:
                val = self.cols + r * self.n
            else:
                val = self.rows * self.n + self.cols
            self.__dict__["_flat_index"] = val
        return val

    def blocks(self, size: int) -> Iterator[Participants]:
        """Split the pairs into consecutive blocks of at most ``2 * size - 1`` pairs.

        Each replica's pairs are cut into pieces at its local positions ``0, size,
        2 size, ...``; a piece goes to block ``floor(global start / size)``. Consecutive pieces
        of a replica start ``size`` apart, so a block holds at most one piece of each replica,
        and the pieces do not depend on the other replicas present: blockwise per-replica
        sums, and hence the trajectories, do not depend on the chunking of replicas. Blocks
        are contiguous ranges of the pairs (no reordering); a replica with many pairs spreads
        over blocks of ``size`` pairs, replicas with few share blocks.

        >>> part = Participants.from_mask(np.array([[1, 1, 1], [0, 1, 0]], dtype=bool))
        >>> [(b.rows.tolist(), b.cols.tolist()) for b in part.blocks(2)]
        [([0, 0], [0, 1]), ([0, 1], [2, 1])]
        """
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
            raise ValueError(f"size must be a positive integer, got {size!r}")
        K = self.size
        if K <= size:
            yield self
            return
        rows, cols, R, n = self.rows, self.cols, self.replicas, self.n
        r = self.only
        if r is not None:  # one replica: consecutive pieces of `size` pairs
            full = np.zeros(R + 1, dtype=np.intp)
            full[r + 1:] = size
            for s in range(0, K, size):
                e = min(s + size, K)
                if e - s == size:
                    starts = full
                else:
                    starts = np.zeros(R + 1, dtype=np.intp)
                    starts[r + 1:] = e - s
                block = Participants(R, n, rows[s:e], cols[s:e], starts)
                block.__dict__["_only"] = r
                yield block
            return
        pieces = -(-self.counts // size)
        first = np.cumsum(pieces) - pieces
        local = np.arange(int(first[-1] + pieces[-1])) - np.repeat(first, pieces)
        start = np.repeat(self.starts[:-1], pieces) + size * local
        cuts = np.concatenate(([0], start[np.flatnonzero(np.diff(start // size)) + 1], [K]))
        # every block's starts at once: (blocks, R + 1), clipped to the block's range
        lo = cuts[:-1, None]
        starts = np.minimum(np.maximum(self.starts, lo), cuts[1:, None]) - lo
        for j, (s, e) in enumerate(pairwise(cuts.tolist())):
            yield Participants(R, n, rows[s:e], cols[s:e], starts[j])

    @property
    def mask(self) -> np.ndarray:
        """The dense ``(R, n)`` boolean mask."""
        out = np.zeros((self.replicas, self.n), dtype=bool)
        out[self.rows, self.cols] = True
        return out


#: Up to this many non-empty replicas, :func:`segment_sum` loops over them (same numbers).
_FEW_SEGMENTS = 4


def segment_sum(values: np.ndarray, part: Participants,
                coef: np.ndarray | None = None) -> np.ndarray:
    r"""Sum the ``(K, ...)`` rows of ``values`` per replica: ``(R, ...)``, zero where none.

    .. math:: S_r = \sum_{k:\ \text{rows}_k = r} c_k\, v_k \qquad (c_k = 1 \text{ by default})

    Computed as the product of the sparse ``(R, K)`` selector with ``values`` (compiled, no
    :func:`numpy.add.at`), or for a few replicas (and more than one column) by a loop of
    :func:`numpy.sum`: either way each replica's rows are added one after the other, in
    order, so a replica's sum does not depend on which other replicas share the call
    (chunking).

    >>> part = Participants.from_mask(np.array([[True, True], [False, False], [False, True]]))
    >>> segment_sum(np.array([1.0, 2.0, 5.0]), part).tolist()
    [3.0, 0.0, 5.0]
    >>> segment_sum(np.array([1.0, 2.0, 5.0]), part, coef=np.array([1.0, 0.5, 2.0])).tolist()
    [2.0, 0.0, 10.0]
    """
    values = np.asarray(values)
    tail = values.shape[1:]
    flat = values.reshape(part.size, math.prod(tail))
    c = None if coef is None else np.asarray(coef, dtype=values.dtype).reshape(part.size)
    # one column: numpy sums a contiguous axis pairwise, so only the (sequential) sparse
    # product keeps the sums independent of the chunking
    nonempty = part.present if flat.shape[1] > 1 else None
    if nonempty is not None and len(nonempty) <= _FEW_SEGMENTS:
        # the same sequential sums without the sparse matrix's set-up cost
        out = np.zeros((part.replicas, flat.shape[1]), dtype=values.dtype)
        for r in nonempty:
            s, e = part.starts[r], part.starts[r + 1]
            seg = flat[s:e] if c is None else flat[s:e] * c[s:e, None]
            np.sum(seg, axis=0, out=out[r])
    else:
        data = np.ones(part.size, dtype=values.dtype) if c is None else c
        sel = _sparse.csr_array((data, np.arange(part.size), part.starts),
                                shape=(part.replicas, part.size))
        out = np.asarray(sel @ flat)
    return out.reshape((part.replicas,) + tail)


def validate_probabilities(p: Any, n: int, name: str = "p") -> np.ndarray:
    """Return ``p`` as a float array ``(n,)`` with entries in (0, 1], or raise ``ValueError``
    (:func:`fedtheory.validation.probabilities`)."""
    return probabilities(name, p, n)


def validate_weights(weights: Any, n: int) -> np.ndarray:
    """Return the objective weights ``(n,)`` (uniform ``1/n`` when None), or raise."""
    if weights is None:
        return np.full(n, 1.0 / n)
    w = np.asarray(weights, dtype=float)
    if w.shape != (n,):
        raise ValueError(f"weights must have shape ({n},), got shape {w.shape}")
    if not (np.isfinite(w).all() and (w >= 0).all() and w.sum() > 0):
        raise ValueError(f"weights must be finite, non-negative and not all 0, got {weights!r}")
    return w


def pair_coef(values: np.ndarray, part: Participants, dtype: Any) -> Any:
    """``values[cols]`` as a ``(K, 1)`` column, or one scalar when all ``values`` are equal
    (then a sum is scaled after the reduction instead of every row before it).

    >>> part = Participants.from_mask(np.array([[True, True]]))
    >>> pair_coef(np.array([0.5, 0.5]), part, np.float64)
    np.float64(0.5)
    """
    dtype = np.dtype(dtype)
    if values.min() == values.max():
        return dtype.type(values[0])
    return values[part.cols].astype(dtype)[:, None]


def scaled_sum(values: np.ndarray, part: Participants, coef: Any) -> np.ndarray:
    r""":math:`\sum_{k:\ \text{rows}_k = r} \text{coef}_k\, v_k` per replica, ``(R, d)``;
    ``coef`` from :func:`pair_coef` (a scalar is applied after the sum)."""
    if np.ndim(coef) == 0:
        out = segment_sum(values, part)
        out *= coef
        return out
    return segment_sum(values, part, coef=coef)


def client_coef(values: np.ndarray, dtype: Any) -> Any:
    """Per-client coefficients in ``dtype``: one scalar when all are equal, else ``(n,)``.

    Computed once per round (or run), so that a block only indexes it (:func:`rows_coef`)
    instead of testing uniformity every time (:func:`pair_coef`); the same numbers.

    >>> client_coef(np.array([0.5, 0.5]), np.float32)
    np.float32(0.5)
    """
    dtype = np.dtype(dtype)
    values = np.asarray(values)
    if values.min() == values.max():
        return dtype.type(values[0])
    return values.astype(dtype)


def cached_coef(state: dict[str, Any], name: str, p: np.ndarray | None,
                fn: Any) -> Any:
    """``client_coef(fn(p))``, computed once per run when ``p`` is the state's own
    probabilities (the engine's case), else every call (``p`` given to a step)."""
    if p is None or p is not state["p"]:
        return client_coef(fn(p), state["dtype"])
    cache = state.setdefault("_coef", {})
    if name not in cache:
        cache[name] = client_coef(fn(p), state["dtype"])
    return cache[name]


def rows_coef(coef: Any, part: Participants) -> Any:
    """A :func:`client_coef` for the pairs of ``part``: the scalar, or a ``(K, 1)`` column."""
    if isinstance(coef, np.ndarray) and coef.ndim:
        return coef[part.cols][:, None]
    return coef


def add_scaled_sums(target: np.ndarray, values: np.ndarray, part: Participants,
                    coef: Any) -> None:
    r"""``target[r] +=`` :math:`\sum_{k:\ \text{rows}_k = r} \text{coef}_k v_k` for every
    replica, in place; ``coef`` from :func:`rows_coef`. The same numbers as
    ``target += scaled_sum(values, part, coef)``, without the ``(R, d)`` temporaries when the
    pairs belong to one replica.
    """
    r = part.only
    if (r is None or (isinstance(coef, np.ndarray) and coef.ndim) or values.ndim != 2
            or values.shape[1] < 2):
        target += scaled_sum(values, part, coef)
        return
    s = np.add.reduce(values, axis=0)  # = np.sum, without its Python wrapper
    s *= coef
    target[r] += s


def take_rows(src: np.ndarray, idx: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``src[idx]`` (rows) written into ``out``; ``idx`` must be valid (``mode="clip"``, which
    lets numpy write ``out`` directly instead of through a buffer)."""
    return src.take(idx, axis=0, out=out, mode="clip")


def scratch(store: dict[str, Any], name: str, rows: int, cols: int, dtype: Any) -> np.ndarray:
    """A ``(rows, cols)`` work array kept in ``store`` and reused from round to round.

    Fresh multi-megabyte temporaries cost a page fault per 4 KiB page every round (the
    allocator returns them to the system); reusing buffers avoids that. The buffer grows by a
    quarter when too small. Its contents are valid until the next call with the same name.
    """
    buffers = store.setdefault("_scratch", {})
    buf = buffers.get(name)
    if buf is None or buf.shape[0] < rows or buf.shape[1] != cols or buf.dtype != dtype:
        grow = 0 if buf is None or buf.shape[1] != cols else buf.shape[0] + buf.shape[0] // 4
        buf = np.empty((max(rows, grow), cols), dtype=dtype)
        buffers[name] = buf
    return buf[:rows]


def as_participants(
    active: Participants | np.ndarray, updates: np.ndarray, n: int
) -> tuple[Participants, np.ndarray, bool]:
    """Bring ``(active, updates)`` to the compressed form ``(Participants, (K, d))``.

    Returns the participants, the compressed updates and whether the caller passed a single
    replica (a mask of shape ``(n,)``), in which case results should drop the replica axis.
    """
    if isinstance(active, Participants):
        updates = np.asarray(updates)
        if active.n != n:
            raise ValueError(f"active has n={active.n} clients, the state has n={n}")
        if updates.ndim != 2 or updates.shape[0] != active.size:
            raise ValueError(
                f"updates must have shape (K, d) = ({active.size}, d) for {active.size} active "
                f"pairs, got shape {updates.shape}"
            )
        return active, updates, False
    mask = np.asarray(active)
    if mask.dtype != bool:
        raise ValueError(f"active must be a boolean mask or Participants, got dtype {mask.dtype}")
    single = mask.ndim == 1
    if single:
        mask = mask[None]
    if mask.ndim != 2 or mask.shape[1] != n:
        raise ValueError(f"active must have shape (replicas, {n}) or ({n},), got {mask.shape}")
    updates = np.asarray(updates)
    dense = updates[None] if single else updates
    if dense.ndim != 3 or dense.shape[:2] != mask.shape:
        want = f"({n}, d)" if single else f"({mask.shape[0]}, {n}, d)"
        raise ValueError(f"updates must have shape {want} with this mask, got {updates.shape}")
    part = Participants.from_mask(mask)
    return part, dense[part.rows, part.cols], single


class Rule:
    r"""Base class of aggregation rules: explicit state in, direction and state out.

    Subclasses set the class attributes and implement :meth:`_init` and the blockwise
    :meth:`begin` / :meth:`accumulate` / :meth:`finish`; the public :meth:`init` and
    :meth:`step` validate and handle the dense form.

    Attributes
    ----------
    name
        The registry name.
    table
        Keeps an ``(R, n, d)`` memory table (memory :math:`O(Rnd)`; others :math:`O(Rd)`).
    needs_all
        Asks the engine for every client's update each round, whatever the mask.
    importance_weighted
        Divides by :math:`p_i`: every stationary probability must be positive.
    floats_per_update
        Vectors of :math:`d` floats a participant sends to the master (SCAFFOLD: 2).
    own_momentum
        Applies its own heavy-ball momentum (the engine's ``momentum`` must then be 0).
    """

    name: ClassVar[str] = ""
    table: ClassVar[bool] = False
    needs_all: ClassVar[bool] = False
    importance_weighted: ClassVar[bool] = False
    floats_per_update: ClassVar[int] = 1
    own_momentum: ClassVar[bool] = False
    #: "zeros" or "full" (tables filled with every client's update at the initial point).
    memory_init: str = "zeros"

    def __repr__(self) -> str:
        params = {k: v for k, v in vars(self).items() if not k.startswith("_")}
        args = ", ".join(f"{k}={v!r}" for k, v in params.items())
        return f"{type(self).__name__}({args})"

    # -- public API -------------------------------------------------------------------------
    def init(
        self,
        replicas: int,
        n: int,
        d: int,
        *,
        p: Any = None,
        weights: Any = None,
        dtype: Any = np.float64,
        initial: np.ndarray | None = None,
        local_steps: int = 1,
    ) -> dict[str, Any]:
        """The rule's state for ``replicas`` runs of ``n`` clients in dimension ``d``.

        ``p``: participation probabilities (needed by importance-weighted rules);
        ``weights``: objective weights :math:`w_i` (default :math:`1/n`);
        ``initial``: ``(replicas, n, d)`` every client's update at the initial point, used by
        rules whose ``memory_init`` is ``"full"``; ``local_steps``: :math:`\tau` (SCAFFOLD
        divides by it).
        """
        for label, v in (("replicas", replicas), ("n", n), ("d", d), ("local_steps", local_steps)):
            if not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{label} must be a positive integer, got {v!r}")
        state: dict[str, Any] = {
            "replicas": int(replicas),
            "n": int(n),
            "d": int(d),
            "dtype": np.dtype(dtype),
            "weights": validate_weights(weights, n),
            "p": None,
            "local_steps": int(local_steps),
        }
        state["w_coef"] = client_coef(state["weights"], state["dtype"])
        if p is not None:
            state["p"] = validate_probabilities(p, n)
        elif self.importance_weighted:
            raise ValueError(f"p must be given for the importance-weighted rule {self.name!r}")
        if initial is not None:
            initial = np.asarray(initial, dtype=dtype)
            if initial.shape != (replicas, n, d):
                raise ValueError(
                    f"initial must have shape ({replicas}, {n}, {d}), got {initial.shape}"
                )
        elif self.memory_init == "full" and self.table:
            raise ValueError(
                f"rule {self.name!r} has memory_init='full': pass initial=(replicas, n, d) updates"
            )
        self._init(state, initial)
        return state

    def step(
        self,
        state: dict[str, Any],
        active: Participants | np.ndarray,
        updates: np.ndarray,
        p: Any = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """One aggregation: the direction ``G`` (``(R, d)``, or ``(d,)`` for one replica).

        Table and momentum rules update ``state``'s arrays in place and return it.
        """
        part, upd, single = as_participants(active, updates, state["n"])
        if part.replicas != state["replicas"]:
            raise ValueError(
                f"active has {part.replicas} replicas, the state has {state['replicas']}"
            )
        if upd.shape[1] != state["d"]:
            raise ValueError(f"updates must have d={state['d']} columns, got {upd.shape[1]}")
        if p is None:
            p = state["p"]
        elif p is not state["p"]:
            p = validate_probabilities(p, state["n"])
        if p is None and self.importance_weighted:
            raise ValueError(f"p must be given for the importance-weighted rule {self.name!r}")
        acc = self.begin(state, part, p)
        self.accumulate(state, acc, part, upd)
        G = self.finish(state, acc)
        return (G[0] if single else G), state

    # -- the blockwise form of a step (what the engine calls) -------------------------------
    def begin(self, state: dict[str, Any], part: Participants,
              p: np.ndarray | None = None) -> dict[str, Any]:
        """Start a round whose participants are ``part``; returns the round's accumulator.

        A step is ``begin``, then :meth:`accumulate` on blocks of the participants (each pair
        exactly once; the engine uses blocks so that a round's temporaries stay in cache),
        then :meth:`finish`. ``p`` defaults to the probabilities given to :meth:`init`.
        """
        if p is None:
            p = state["p"]
        if p is None and self.importance_weighted:
            raise ValueError(f"p must be given for the importance-weighted rule {self.name!r}")
        return {"p": p, "size": part.size}

    def accumulate(self, state: dict[str, Any], acc: dict[str, Any], block: Participants,
                   updates: np.ndarray, consume: bool = False) -> None:
        """Take in the updates ``(k, d)`` of a block of this round's participants.

        ``consume``: the caller no longer needs ``updates`` (the engine's work buffer), so the
        rule may overwrite it instead of using a buffer of its own (one array less in cache).
        """
        raise NotImplementedError

    def finish(self, state: dict[str, Any], acc: dict[str, Any]) -> np.ndarray:
        """End the round: the direction :math:`G_t`, ``(R, d)``."""
        raise NotImplementedError

    def correction(self, state: dict[str, Any], part: Participants) -> np.ndarray | None:
        """``(K, d)`` vector added to every local gradient of the active pairs, or None
        (called between :meth:`begin` and :meth:`accumulate`)."""
        return None

    # -- for subclasses ---------------------------------------------------------------------
    def _init(self, state: dict[str, Any], initial: np.ndarray | None) -> None:
        """Add the rule's arrays to ``state``."""

    @staticmethod
    def _zeros(state: dict[str, Any], *shape: int) -> np.ndarray:
        return np.zeros((state["replicas"], *shape), dtype=state["dtype"])

    @staticmethod
    def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
        """``num / den`` per replica, 0 where ``den`` is 0 (a round without participants)."""
        out = np.zeros_like(num)
        np.divide(num, den[:, None], out=out, where=den[:, None] > 0)
        return out

    @staticmethod
    def _check_beta(beta: float) -> float:
        beta = float(beta)
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"beta must be in [0, 1), got {beta!r}")
        return beta

    @staticmethod
    def _check_memory_init(memory_init: str) -> str:
        if memory_init not in ("zeros", "full"):
            raise ValueError(f"memory_init must be 'zeros' or 'full', got {memory_init!r}")
        return memory_init


class TableRule(Rule):
    r"""A rule with a memory table :math:`T \in \mathbb R^{R\times n\times d}` and its weighted
    row sum :math:`\bar T_r = \sum_i w_i T_{r,i}` kept incrementally.

    The running sum is refreshed exactly from the table every ``n`` rounds so that rounding
    errors cannot accumulate; between refreshes a round costs :math:`O(Kd)`, not
    :math:`O(Rnd)`.
    """

    table: ClassVar[bool] = True

    def _init(self, state: dict[str, Any], initial: np.ndarray | None) -> None:
        R, n, d = state["replicas"], state["n"], state["d"]
        if self.memory_init == "full" and initial is not None:
            state["table"] = np.array(initial, dtype=state["dtype"], copy=True)
            state["total"] = self._weighted_sum(state)
        else:
            # no pass over the fresh table: reading its untouched pages would map them to
            # the zero page, and every first write would then fault a second time
            state["table"] = np.zeros((R, n, d), dtype=state["dtype"])
            state["total"] = np.zeros((R, d), dtype=state["dtype"])
        state["since_refresh"] = 0

    @staticmethod
    def _weighted_sum(state: dict[str, Any]) -> np.ndarray:
        w = state["weights"].astype(state["dtype"])
        return np.einsum("rnd,n->rd", state["table"], w)

    @staticmethod
    def _rows_view(state: dict[str, Any]) -> np.ndarray:
        """The table viewed as ``(R * n, d)`` rows (kept; rebuilt if the table was replaced)."""
        flat = state.get("_rows_view")
        if flat is None or flat.base is not state["table"]:
            flat = state["_rows_view"] = state["table"].reshape(-1, state["d"])
        return flat

    def _gather(self, state: dict[str, Any], part: Participants) -> tuple[np.ndarray, np.ndarray]:
        """The flat row index of each pair and a copy of the table's rows there, ``(K, d)``
        (in a scratch buffer of ``state``, valid until the next step)."""
        flat = self._rows_view(state)
        idx = part.flat_index
        out = scratch(state, "gather", part.size, state["d"], state["dtype"])
        return idx, take_rows(flat, idx, out)

    def _scatter(
        self, state: dict[str, Any], block: Participants, idx: np.ndarray, rows: np.ndarray,
        change: np.ndarray | None = None, change_sum: np.ndarray | None = None,
    ) -> None:
        r"""Write ``rows`` into the table and add :math:`\sum_k w_k\,\text{change}_k` per
        replica to the running total (``change_sum``: that sum, already computed)."""
        self._rows_view(state)[idx] = rows
        if change_sum is None:
            add_scaled_sums(state["total"], change, block, rows_coef(state["w_coef"], block))
        else:
            state["total"] += change_sum

    def _end_round(self, state: dict[str, Any]) -> None:
        """Count the round; every ``n`` rounds recompute the running total from the table."""
        state["since_refresh"] += 1
        if state["since_refresh"] >= state["n"]:
            state["total"] = self._weighted_sum(state)
            state["since_refresh"] = 0
