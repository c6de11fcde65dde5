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

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

__all__ = [
    "Participants",
    "Rule",
    "as_participants",
    "segment_sum",
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

    @property
    def counts(self) -> np.ndarray:
        """``(R,)`` number of participants of each replica."""
        return np.diff(self.starts)

    @property
    def flat_index(self) -> np.ndarray:
        """``(K,)`` index ``row * n + col`` into a table viewed as ``(R * n, d)``."""
        return self.rows * self.n + self.cols

    @property
    def mask(self) -> np.ndarray:
        """The dense ``(R, n)`` boolean mask."""
        out = np.zeros((self.replicas, self.n), dtype=bool)
        out[self.rows, self.cols] = True
        return out


def segment_sum(values: np.ndarray, part: Participants) -> np.ndarray:
    r"""Sum the ``(K, ...)`` rows of ``values`` per replica: ``(R, ...)``, zero where none.

    .. math:: S_r = \sum_{k:\ \text{rows}_k = r} v_k

    Uses :func:`numpy.add.reduceat` on the sorted pairs (no :func:`numpy.add.at`).

    >>> part = Participants.from_mask(np.array([[True, True], [False, False], [False, True]]))
    >>> segment_sum(np.array([1.0, 2.0, 5.0]), part).tolist()
    [3.0, 0.0, 5.0]
    """
    values = np.asarray(values)
    out = np.zeros((part.replicas,) + values.shape[1:], dtype=values.dtype)
    if part.size == 0:
        return out
    counts = part.counts
    nonempty = counts > 0
    if nonempty.all():
        return np.add.reduceat(values, part.starts[:-1], axis=0)
    out[nonempty] = np.add.reduceat(values, part.starts[:-1][nonempty], axis=0)
    return out


def validate_probabilities(p: Any, n: int, name: str = "p") -> np.ndarray:
    """Return ``p`` as a float array ``(n,)`` with entries in (0, 1], or raise ``ValueError``."""
    arr = np.asarray(p, dtype=float)
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise ValueError(f"{name} must be a scalar or have shape ({n},), got shape {arr.shape}")
    bad = ~(np.isfinite(arr) & (arr > 0.0) & (arr <= 1.0))
    if bad.any():
        raise ValueError(f"{name} must be in (0, 1], got {float(arr[bad][0])!r} in {name}={p!r}")
    return arr


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

    Subclasses set the class attributes and implement :meth:`_init` and :meth:`_step`;
    the public :meth:`init` and :meth:`step` validate and handle the dense form.

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
        G = self._step(state, part, upd, p)
        return (G[0] if single else G), state

    def correction(self, state: dict[str, Any], part: Participants) -> np.ndarray | None:
        """``(K, d)`` vector added to every local gradient of the active pairs, or None."""
        return None

    # -- for subclasses ---------------------------------------------------------------------
    def _init(self, state: dict[str, Any], initial: np.ndarray | None) -> None:
        """Add the rule's arrays to ``state``."""

    def _step(
        self, state: dict[str, Any], part: Participants, updates: np.ndarray, p: np.ndarray | None
    ) -> np.ndarray:
        raise NotImplementedError

    @staticmethod
    def _zeros(state: dict[str, Any], *shape: int) -> np.ndarray:
        return np.zeros((state["replicas"], *shape), dtype=state["dtype"])

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
        else:
            state["table"] = np.zeros((R, n, d), dtype=state["dtype"])
        state["total"] = self._weighted_sum(state)
        state["since_refresh"] = 0

    @staticmethod
    def _weighted_sum(state: dict[str, Any]) -> np.ndarray:
        w = state["weights"].astype(state["dtype"])
        return np.einsum("rnd,n->rd", state["table"], w)

    def _gather(self, state: dict[str, Any], part: Participants) -> tuple[np.ndarray, np.ndarray]:
        """The flat row index of each pair and the table's rows there, ``(K, d)`` copies."""
        flat = state["table"].reshape(-1, state["d"])
        idx = part.flat_index
        return idx, np.take(flat, idx, axis=0)

    @staticmethod
    def _pair_coef(values: np.ndarray, part: Participants, dtype: np.dtype) -> Any:
        """``values[cols]`` as a ``(K, 1)`` column, or one scalar when all values are equal
        (then a sum can be scaled after the reduction instead of every row before it)."""
        if values.min() == values.max():
            return dtype.type(values[0])
        return values[part.cols].astype(dtype)[:, None]

    @staticmethod
    def _scaled_sum(values: np.ndarray, part: Participants, coef: Any) -> np.ndarray:
        r""":math:`\sum_{k \in r} \text{coef}_k v_k` per replica."""
        if np.ndim(coef) == 0:
            out = segment_sum(values, part)
            out *= coef
            return out
        return segment_sum(values * coef, part)

    def _scatter(
        self, state: dict[str, Any], part: Participants, idx: np.ndarray, rows: np.ndarray,
        change: np.ndarray | None = None, change_sum: np.ndarray | None = None,
    ) -> None:
        r"""Write ``rows`` into the table and add :math:`\sum_k w_k\,\text{change}_k` per
        replica to the running total (``change_sum``: that sum, already computed)."""
        flat = state["table"].reshape(-1, state["d"])
        flat[idx] = rows
        state["since_refresh"] += 1
        if state["since_refresh"] >= state["n"]:
            state["total"] = self._weighted_sum(state)
            state["since_refresh"] = 0
        elif change_sum is not None:
            state["total"] += change_sum
        else:
            coef = self._pair_coef(state["weights"], part, change.dtype)
            state["total"] += self._scaled_sum(change, part, coef)
