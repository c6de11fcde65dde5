r"""What every aggregation rule shares: the :class:`Rule` base class, its validation, and (from
:mod:`fedtheory.algorithms.participants`, re-exported here) the compressed participants of a
round and the segment sums.

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

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from fedtheory.algorithms.participants import (
    Participants,
    add_scaled_sums,
    as_participants,
    cached,
    cached_coef,
    client_coef,
    pair_coef,
    rows_coef,
    scaled_sum,
    scratch,
    segment_sum,
    take_rows,
    weight_coef,
)
from fedtheory.validation import positive_integer, probabilities, real_array

__all__ = [
    "Participants",
    "Rule",
    "TableRule",
    "add_scaled_sums",
    "as_participants",
    "cached",
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
    "weight_coef",
]


def validate_probabilities(p: Any, n: int, name: str = "p") -> np.ndarray:
    """Return ``p`` as a float array ``(n,)`` with entries in (0, 1], or raise ``ValueError``
    (:func:`fedtheory.validation.probabilities`)."""
    return probabilities(name, p, n)


def validate_weights(weights: Any, n: int) -> np.ndarray:
    """Return the objective weights ``(n,)`` (uniform ``1/n`` when None), or raise."""
    if weights is None:
        return np.full(n, 1.0 / n)
    w = real_array("weights", weights)
    if w.shape != (n,):
        raise ValueError(f"weights must have shape ({n},), got shape {w.shape}")
    if not (np.isfinite(w).all() and (w >= 0).all() and w.sum() > 0):
        raise ValueError(f"weights must be finite, non-negative and not all 0, got {weights!r}")
    return w


class Rule:
    r"""Base class of aggregation rules: explicit state in, direction and state out.

    Subclasses set the class attributes and implement :meth:`_init` and the blockwise
    :meth:`begin` / :meth:`accumulate` / :meth:`finish`; the public :meth:`init` and
    :meth:`step` validate and handle the dense form, and :meth:`run_round` is the round every
    simulator runs (corrections, local updates, blocks).

    The state :meth:`init` returns is a dict with two parts.

    - The model state: what the algorithm carries from round to round and what results depend
      on: the validated ``replicas``, ``n``, ``d``, ``dtype``, ``weights``, ``p`` and
      ``local_steps``, and the rule's own arrays and counters (``table``, ``total`` and
      ``since_refresh`` of table rules, the momentum ``v``; SCAFFOLD's ``round_total``,
      :math:`\bar u` as at the start of the round, exists between :meth:`begin` and
      :meth:`finish` only). No key starts with ``"_"``.
    - ``state["scratch"]``, a dict of caches and work buffers (coefficients such as
      :math:`w_i/p_i`, the table's row view, gather buffers): it **may be cleared between any
      two calls** without changing any result; everything in it is rebuilt on demand
      (:func:`scratch`, :func:`cached`).

    Updated in place, on purpose: table rules write their :math:`O(Rnd)` ``table`` (and the
    running ``total``) in place every round, to avoid a copy of the table per round; the
    momentum rules update ``v`` in place. :meth:`step` therefore returns the same dict it was
    given; copy the state (``copy.deepcopy``) to keep an earlier one. Memoryless rules change
    only their scratch.

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
    pair_coefficients
        Aggregates with the per-pair coefficients a round-aware participation process may
        set (``Participants.coef``, e.g. OCS's :math:`w_i/p_i^t`) when present.
    """

    name: ClassVar[str] = ""
    table: ClassVar[bool] = False
    needs_all: ClassVar[bool] = False
    importance_weighted: ClassVar[bool] = False
    floats_per_update: ClassVar[int] = 1
    own_momentum: ClassVar[bool] = False
    pair_coefficients: ClassVar[bool] = False
    #: "zeros" or "full" (tables filled with every client's update at the initial point).
    memory_init: str = "zeros"
    #: :math:`R` when the rule carries parameters per replica of a run (the run's
    #: ``replicas`` must then be :math:`R`), else None (one rule for every replica).
    replicas: int | None = None

    def for_replicas(self, start: int, stop: int) -> Rule:
        """The rule of a run's replicas ``start .. stop - 1``, the block the engine simulates:
        itself, unless the rule carries per-replica parameters (then their rows)."""
        return self

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
            positive_integer(label, v)
        state: dict[str, Any] = {
            "replicas": int(replicas),
            "n": int(n),
            "d": int(d),
            "dtype": np.dtype(dtype),
            "weights": validate_weights(weights, n),
            "p": None,
            "local_steps": int(local_steps),
            "scratch": {},  # caches and buffers: may be cleared between any two calls
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
        acc = self.begin(state, part, p)
        self.accumulate(state, acc, part, upd)
        G = self.finish(state, acc)
        return (G[0] if single else G), state

    def run_round(
        self,
        state: dict[str, Any],
        part: Participants,
        local_updates: Callable[[Participants, np.ndarray | None], np.ndarray],
        block_rows: int | None = None,
    ) -> np.ndarray:
        r"""One round as every simulator runs it: the direction :math:`G_t`, ``(R, d)``.

        :meth:`begin`; then for each block of ``part`` (:meth:`Participants.blocks` of
        ``block_rows`` pairs; the whole round when None): the rule's :meth:`correction`
        :math:`c` of the block (None for rules without one), the block's updates
        ``local_updates(block, c)``, ``(k, d)``, and :meth:`accumulate` (which may overwrite
        them: ``local_updates`` must return an array the caller no longer needs); then
        :meth:`finish`. ``part`` must hold every pair when the rule ``needs_all``.
        """
        corrects = type(self).correction is not Rule.correction
        acc = self.begin(state, part)
        blocks = (part,) if block_rows is None else part.blocks(block_rows)
        for block in blocks:
            corr = self.correction(state, block) if corrects and block.size else None
            self.accumulate(state, acc, block, local_updates(block, corr), consume=True)
        return self.finish(state, acc)

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
        """The table viewed as ``(R * n, d)`` rows (kept in the scratch; rebuilt if the table
        was replaced). Writing to it writes the table."""
        cache = state.setdefault("scratch", {})
        flat = cache.get("rows_view")
        if flat is None or flat.base is not state["table"]:
            flat = cache["rows_view"] = state["table"].reshape(-1, state["d"])
        return flat

    def _gather(self, state: dict[str, Any], part: Participants) -> tuple[np.ndarray, np.ndarray]:
        """The flat row index of each pair and a copy of the table's rows there, ``(K, d)``
        (in a buffer of ``state["scratch"]``, valid until the next step)."""
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
            add_scaled_sums(state["total"], change, block, rows_coef(weight_coef(state), block))
        else:
            state["total"] += change_sum

    def _end_round(self, state: dict[str, Any]) -> None:
        """Count the round; every ``n`` rounds recompute the running total from the table."""
        state["since_refresh"] += 1
        if state["since_refresh"] >= state["n"]:
            state["total"] = self._weighted_sum(state)
            state["since_refresh"] = 0
