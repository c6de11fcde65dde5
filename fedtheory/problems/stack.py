r"""One problem per replica: :class:`ProblemStack`.

A simulation's replicas usually train on one problem (independent runs of one federation).
Some experiments draw a fresh federation per seed: seed 001's table (each instance its own
label split and participation means), seed 004's runs (a fresh split per seed). A
:class:`ProblemStack` holds one problem per replica of a run, of equal ``n`` and ``d``:
replica :math:`r` of the run (:math:`0 \le r < R`, whatever ``first_replica``) trains on
``problems[r]`` and its metrics are ``problems[r]``'s:

.. math:: f_r(x) = \sum_{i=1}^n w_i f_{r,i}(x), \qquad
    \text{f\_gap}_r = f_r(x_r) - f_r^\star .

The engine's hot path stays vectorised over (replica, client) pairs: it calls one *flat*
problem of :math:`Un` clients, :math:`U` the distinct problems (the same object given for
several replicas, e.g. methods side by side on one instance, is stacked once), whose client
:math:`un + i` is problem :math:`u`'s client :math:`i` (:meth:`ProblemStack.client_ids`).
The flat problem is the problems' class's own ``stack(problems)`` when it has one (one
batched product for every pair, e.g.
:meth:`~fedtheory.problems.LogisticProblem.stack`), else a generic adapter that calls each
replica's problem on its own pairs (correct for any problem, a loop over the replicas of a
block). Either way it is checked on construction: every client's gradient at two points
equals its problem's.

The aggregation rules take one weight vector: the problems must have equal objective weights
:math:`w_i` (their data, optima and sizes may differ).

>>> from fedtheory.problems import QuadraticProblem
>>> def quad(s): return QuadraticProblem(np.ones((3, 2)), np.arange(6.0).reshape(3, 2) + s)
>>> stack = ProblemStack([quad(0), quad(1)])
>>> stack.replicas, stack.n, stack.d, stack.x_star.shape
(2, 3, 2, (2, 2))
>>> bool(np.allclose(stack.loss(stack.x_star), stack.f_star))
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from fedtheory.problems.base import Capability, check_problem, declared_capabilities
from fedtheory.validation import equal_across, per_replica

__all__ = ["ProblemStack"]

#: The capabilities of the flat problem the engine may use (the hot path); the full-batch
#: ones (``EXACT_LOSS_GAP``) are the stack's own.
_HOT_PATH = frozenset({Capability.GRADIENTS_INTO_BUFFER, Capability.LOCAL_STEPS,
                       Capability.FUSED_LOCAL_STEPS, Capability.MINIBATCH_GRADIENTS})


def _rows(x: np.ndarray, d: int, name: str = "x") -> np.ndarray:
    x = np.asarray(x)
    if x.ndim != 2 or x.shape[1] != d:
        raise ValueError(f"{name} must have shape (R, d={d}): one row per replica, "
                         f"got shape {x.shape}")
    return x


class _LoopedFlat:
    r"""The generic flat problem of a :class:`ProblemStack`: client :math:`rn + i` is client
    :math:`i` of ``problems[r]``; each call runs every replica's problem on its own pairs."""

    def __init__(self, problems: Sequence[Any], n: int, d: int) -> None:
        self.problems, self._n, self.d = tuple(problems), n, d
        self.n = n * len(self.problems)
        self.weights = np.full(self.n, 1.0 / self.n)
        caps = {Capability.MINIBATCH_GRADIENTS} if all(
            Capability.MINIBATCH_GRADIENTS in declared_capabilities(p) for p in problems) \
            else set()
        self.capabilities = frozenset(caps)
        if caps:
            self.sizes = np.concatenate([np.asarray(p.sizes, dtype=np.int64) for p in problems])

    def _groups(self, ids: np.ndarray) -> list[tuple[int, np.ndarray, np.ndarray]]:
        ids = np.asarray(ids, dtype=np.int64)
        rep, col = np.divmod(ids, self._n)
        return [(int(r), np.flatnonzero(rep == r), col) for r in np.unique(rep)]

    def client_gradients(self, y: np.ndarray, clients: np.ndarray) -> np.ndarray:
        y = np.asarray(y)
        out = np.empty(y.shape, dtype=np.result_type(y.dtype, np.float32))
        for r, sel, col in self._groups(clients):
            out[sel] = self.problems[r].client_gradients(y[sel], col[sel])
        return out

    def minibatch_gradients(self, y: np.ndarray, clients: np.ndarray, samples: np.ndarray,
                            valid: np.ndarray) -> np.ndarray:
        y = np.asarray(y)
        out = np.empty(y.shape, dtype=np.result_type(y.dtype, np.float32))
        for r, sel, col in self._groups(clients):
            out[sel] = self.problems[r].minibatch_gradients(y[sel], col[sel], samples[sel],
                                                            valid[sel])
        return out


class ProblemStack:
    r"""One problem per replica of a run (see the module docstring).

    Parameters
    ----------
    problems
        :math:`R \ge 1` problems with equal ``n``, ``d`` and objective weights; replica
        :math:`r` of the run trains on ``problems[r]`` (the run's ``replicas`` must be
        :math:`R`).
    flat
        The flat problem of :math:`Un` clients for the hot path, :math:`U` the distinct
        problem objects in their first order (client :math:`un + i` is the :math:`u`-th
        distinct problem's client :math:`i`). None: ``type(problems[0]).stack(distinct)``
        when all problems are of that class and it has one, else the generic adapter.

    Attributes
    ----------
    replicas, n, d
        :math:`R`, clients per replica, dimension.
    weights
        The common objective weights ``(n,)``.
    x_star, f_star
        ``(R, d)`` and ``(R,)``: each replica's optimum.
    sizes
        ``(R, n)`` samples per client, when every problem has ``sizes``.
    distinct, slots
        The distinct problem objects (first order) and ``(R,)``: replica :math:`r`'s index
        among them.
    flat
        The flat problem the engine calls.
    """

    #: The full-batch capability the stack offers itself (when all its problems do).
    capabilities: frozenset[Capability]
    name: ClassVar[str] = "stack"

    def __init__(self, problems: Sequence[Any], flat: Any = None) -> None:
        probs = tuple(check_problem(p, f"problems[{k}]")
                      for k, p in enumerate(per_replica("problems", problems, "problems")))
        n, d = equal_across("problems", probs, "n", "d")
        W = np.stack([np.asarray(p.weights, dtype=float) for p in probs])
        if not np.all(W == W[0]):
            k = int(np.flatnonzero(np.any(W != W[0], axis=1))[0])
            raise ValueError(f"problems must have equal objective weights (the rules take one "
                             f"(n,) vector): problems[{k}].weights differ from problems[0]'s")
        self.problems, self.replicas, self.n, self.d = probs, len(probs), n, d
        # the distinct problem objects, in their first order, and each replica's index there
        index: dict[int, int] = {}
        for p in probs:
            index.setdefault(id(p), len(index))
        self.distinct = tuple({id(p): p for p in probs}.values())
        #: ``(R,)``: replica r's problem is ``distinct[slots[r]]``
        self.slots = np.array([index[id(p)] for p in probs], dtype=np.intp)
        self.weights = W[0].copy()
        self.weights.flags.writeable = False
        self.x_star = np.stack([np.asarray(p.x_star, dtype=float) for p in probs])
        self.f_star = np.array([float(p.f_star) for p in probs])
        if all(hasattr(p, "sizes") for p in probs):
            self.sizes = np.stack([np.asarray(p.sizes, dtype=np.int64) for p in probs])
        exact = all(Capability.EXACT_LOSS_GAP in declared_capabilities(p) for p in probs)
        self.capabilities = frozenset({Capability.EXACT_LOSS_GAP} if exact else set())
        if flat is None:
            cls = type(probs[0])
            own = getattr(cls, "stack", None)
            if callable(own) and all(type(p) is cls for p in probs):
                flat = own(self.distinct)
            else:
                flat = _LoopedFlat(self.distinct, n, d)
        self.flat = flat
        self._check_flat()

    def _check_flat(self) -> None:
        """Every client's gradient from the flat problem at two points equals its problem's
        (in the flat problem's arithmetic: a relative tolerance of 1e-4 covers float32)."""
        flat, R, n, d = self.flat, len(self.distinct), self.n, self.d
        if int(getattr(flat, "n", -1)) != R * n or int(getattr(flat, "d", -1)) != d:
            raise ValueError(f"flat must be a problem of U n = {R * n} clients in d = {d}, "
                             f"got {flat!r} with n={getattr(flat, 'n', None)!r}, "
                             f"d={getattr(flat, 'd', None)!r}")
        caps = declared_capabilities(flat)
        if Capability.MINIBATCH_GRADIENTS in caps:
            sizes = np.asarray(flat.sizes, dtype=np.int64)
            want = [np.asarray(p.sizes, dtype=np.int64) for p in self.distinct] \
                if hasattr(self, "sizes") else None
            if want is None or not np.array_equal(sizes, np.concatenate(want)):
                raise ValueError("flat.sizes must be the distinct problems' sizes, one after "
                                 "another")
        gen = np.random.default_rng(0)
        ids = np.arange(R * n)
        for y in (np.zeros((R * n, d)), gen.standard_normal((R * n, d)) / np.sqrt(d)):
            got = np.asarray(flat.client_gradients(y, ids), dtype=float)
            want = np.concatenate([
                np.asarray(p.client_gradients(y[r * n:(r + 1) * n], np.arange(n)), dtype=float)
                for r, p in enumerate(self.distinct)])
            scale = max(float(np.abs(want).max()), 1e-300)
            if got.shape != want.shape or not np.all(np.abs(got - want) <= 1e-4 * scale):
                raise ValueError("flat's client gradients must be the problems' (client "
                                 "u n + i is the u-th distinct problem's client i): they differ")

    @property
    def hot_capabilities(self) -> frozenset[Capability]:
        """The flat problem's declared capabilities the engine's hot path may use."""
        return declared_capabilities(self.flat) & _HOT_PATH

    def client_ids(self, replicas: np.ndarray, clients: np.ndarray) -> np.ndarray:
        r"""The flat problem's client of each pair (replica :math:`r`, client :math:`i`):
        :math:`u_r n + i`, :math:`u_r` the index of replica :math:`r`'s problem among the
        distinct ones.

        >>> from fedtheory.problems import QuadraticProblem
        >>> q = QuadraticProblem(np.ones((3, 2)), np.zeros((3, 2)))
        >>> q2 = QuadraticProblem(np.ones((3, 2)), np.ones((3, 2)))
        >>> s = ProblemStack([q, q2, q])
        >>> len(s.distinct), s.client_ids(np.array([0, 1, 2]), np.array([2, 0, 1])).tolist()
        (2, [2, 3, 1])
        """
        return self.slots[np.asarray(replicas, dtype=np.intp)] * self.n \
            + np.asarray(clients, dtype=np.intp)

    def _which(self, x: np.ndarray, replicas: Any) -> tuple[np.ndarray, np.ndarray]:
        x = _rows(x, self.d)
        reps = np.arange(x.shape[0]) if replicas is None else np.asarray(replicas)
        if (reps.shape != (x.shape[0],) or not np.issubdtype(reps.dtype, np.integer)
                or (reps.size and (reps.min() < 0 or reps.max() >= self.replicas))):
            raise ValueError(f"replicas must be {x.shape[0]} integers in [0, {self.replicas}) "
                             f"(one per row of x), got {replicas!r}")
        return x, reps

    def _each(self, method: str, x: np.ndarray, replicas: Any, width: int) -> np.ndarray:
        """``method`` of each row's problem at the row, ``(K, width)``: one call per distinct
        problem on its rows (``(k, d)``, as a run of that problem evaluates its replicas)."""
        x, reps = self._which(x, replicas)
        slots = self.slots[reps]
        out = np.empty((x.shape[0], width))
        for u in np.unique(slots).tolist():
            rows = np.flatnonzero(slots == u)
            val = np.asarray(getattr(self.distinct[u], method)(x[rows]), dtype=float)
            out[rows] = val.reshape(rows.size, width)
        return out

    def loss(self, x: np.ndarray, replicas: Any = None) -> np.ndarray:
        r""":math:`f_r(x_k)` for rows ``x`` ``(K, d)`` of the replicas ``replicas`` ``(K,)``
        (default: row :math:`k` is replica :math:`k`): ``(K,)``."""
        return self._each("loss", x, replicas, 1)[:, 0]

    def loss_gap(self, x: np.ndarray, replicas: Any = None) -> np.ndarray:
        r""":math:`f_r(x_k) - f_r^\star` per row: each problem's ``loss_gap`` when all have one,
        else the difference."""
        if Capability.EXACT_LOSS_GAP in self.capabilities:
            return self._each("loss_gap", x, replicas, 1)[:, 0]
        _, reps = self._which(x, replicas)
        return self.loss(x, reps) - self.f_star[reps]

    def grad(self, x: np.ndarray, replicas: Any = None) -> np.ndarray:
        r""":math:`\nabla f_r(x_k)` per row, ``(K, d)``."""
        return self._each("grad", x, replicas, self.d)

    def client_losses(self, x: np.ndarray, replicas: Any = None) -> np.ndarray:
        r""":math:`f_{r,i}(x_k)` per row and client, ``(K, n)``."""
        return self._each("client_losses", x, replicas, self.n)

    def __repr__(self) -> str:
        kinds = sorted({type(p).__name__ for p in self.problems})
        return (f"ProblemStack(replicas={self.replicas}, distinct={len(self.distinct)}, "
                f"n={self.n}, d={self.d}, problems={'/'.join(kinds)}, "
                f"flat={type(self.flat).__name__})")
