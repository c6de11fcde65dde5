r"""One aggregation rule per replica: :class:`RuleStack`.

To compare methods on common random numbers in one vectorised run, give the methods
consecutive ranges of replicas: replica :math:`r` aggregates with ``rules[r]``,

.. math:: G_{t,r} = \text{rules}[r](\text{state}_r, \mathcal A_{t,r}, \Delta_{t,r}),

with the run's ``Run(streams=...)`` mapping the methods' replicas of one instance to one
stream and ``LocalWork(lr=(R,))`` / ``Server(global_lr=(R,))`` giving each its rates. Each
range's rule keeps its own state and sees exactly the pairs of its replicas, block by block
as the engine streams them, so replica :math:`r` of a stacked run is bit for bit the run of
``rules[r]`` alone.

>>> from fedtheory.algorithms import FedAvgAll, get_rule
>>> avg, every = get_rule("fedavg"), FedAvgAll()
>>> stack = RuleStack([avg, avg, every, every])
>>> stack.runs
((FedAvg(), 2), (FedAvgAll(omega=None), 2))
>>> st = stack.init(4, 2, 1)
>>> mask = np.array([[True, False]] * 4)
>>> G, st = stack.step(st, mask, np.ones((4, 2, 1)))
>>> G.ravel().tolist()  # the mean of the active update, then (1/n) times their sum
[1.0, 1.0, 0.5, 0.5]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from fedtheory.algorithms.base import Rule
from fedtheory.algorithms.participants import Participants
from fedtheory.validation import per_replica, stack_replicas, whole_block

__all__ = ["RuleStack"]

#: What a rule declares to the engine; the rules of a stack must agree on it.
_DECLARED = ("table", "needs_all", "importance_weighted", "floats_per_update", "own_momentum",
             "pair_coefficients", "memory_init")


def _rows_slice(part: Participants, a: int, b: int) -> tuple[Participants, slice]:
    """The pairs of replicas ``a .. b - 1`` of ``part`` (contiguous: sorted by replica), as
    a :class:`Participants` of ``b - a`` replicas, and their positions in ``part``."""
    s, e = int(part.starts[a]), int(part.starts[b])
    sub = Participants(b - a, part.n, part.rows[s:e] - a, part.cols[s:e],
                       part.starts[a:b + 1] - s, None if part.coef is None else part.coef[s:e])
    return sub, slice(s, e)


class RuleStack(Rule):
    r"""Replica :math:`r` of the run aggregates with ``rules[r]`` (see the module docstring).

    Parameters
    ----------
    rules
        :math:`R \ge 1` rules (one per replica; the run's ``replicas`` must be :math:`R`).
        Consecutive entries that are the same object form one range, run as one rule over
        its replicas (a rule with per-replica parameters, e.g. ``FedAvgWeighted(omega=(k,
        n))``, covers a range of :math:`k`). The rules must agree on what the engine reads
        (memory table, every client's update, :math:`1/p`, floats per update, momentum,
        per-pair coefficients) and apply no drift correction.
    """

    name: ClassVar[str] = "stack"

    def __init__(self, rules: Sequence[Rule]) -> None:
        runs: list[list[Any]] = []
        for k, rule in enumerate(per_replica("rules", rules, "rules (one per replica)")):
            if not isinstance(rule, Rule) or isinstance(rule, RuleStack):
                raise ValueError(f"rules[{k}] must be an aggregation rule (not a RuleStack), "
                                 f"got {rule!r}")
            if runs and runs[-1][0] is rule:
                runs[-1][1] += 1
            else:
                runs.append([rule, 1])
        self._init_runs([(r, c) for r, c in runs])

    def _init_runs(self, runs: list[tuple[Rule, int]]) -> None:
        first = runs[0][0]
        for rule, count in runs:
            for attr in _DECLARED:
                if getattr(rule, attr) != getattr(first, attr):
                    raise ValueError(f"the rules must agree on {attr}: {first!r} has "
                                     f"{getattr(first, attr)!r}, {rule!r} has "
                                     f"{getattr(rule, attr)!r}")
            if type(rule).correction is not Rule.correction:
                raise ValueError(f"rule {rule!r} corrects the local work: not stacked")
            own = rule.replicas
            if own is not None and own != count:
                raise ValueError(f"rule {rule!r} holds parameters for {own} replicas but covers "
                                 f"{count} consecutive replicas of the stack")
        self._runs = tuple(runs)
        # each range's rule and its replicas a .. b - 1, read every block of every round
        ends = np.cumsum([c for _, c in runs]).tolist()
        self._bounds = tuple((rule, b - c, b) for (rule, c), b in zip(runs, ends, strict=True))
        for attr in _DECLARED:  # what the engine reads, as the stacked rules declare it
            setattr(self, attr, getattr(first, attr))

    @property
    def runs(self) -> tuple[tuple[Rule, int], ...]:
        """``(rule, count)`` per range of consecutive replicas."""
        return self._runs

    @property
    def replicas(self) -> int:  # type: ignore[override]
        """:math:`R`, the replicas the stack is for."""
        return self._bounds[-1][2]

    def __repr__(self) -> str:
        return "RuleStack(" + ", ".join(f"{r!r} x {c}" for r, c in self._runs) + ")"

    def for_replicas(self, start: int, stop: int) -> RuleStack:
        """The stack of replicas ``start .. stop - 1`` (each range's rule for its part)."""
        if whole_block(start, stop, self.replicas):
            return self
        out, a = [], 0
        for rule, count in self._runs:
            lo, hi = max(start, a), min(stop, a + count)
            if lo < hi:
                out.append((rule.for_replicas(lo - a, hi - a), hi - lo))
            a += count
        new = object.__new__(RuleStack)
        new._init_runs(out)
        return new

    # -- the rule protocol -----------------------------------------------------------------
    def _init(self, state: dict[str, Any], initial: np.ndarray | None) -> None:
        stack_replicas(state["replicas"], self.replicas, "rule")
        state["parts"] = [
            rule.init(b - a, state["n"], state["d"], p=state["p"], weights=state["weights"],
                      dtype=state["dtype"], initial=None if initial is None else initial[a:b],
                      local_steps=state["local_steps"])
            for rule, a, b in self._bounds]

    def begin(self, state: dict[str, Any], part: Participants,
              p: np.ndarray | None = None) -> dict[str, Any]:
        acc = super().begin(state, part, p)
        acc["parts"] = [rule.begin(sub_state, _rows_slice(part, a, b)[0], p)
                        for (rule, a, b), sub_state in zip(self._bounds, state["parts"],
                                                           strict=True)]
        return acc

    def accumulate(self, state: dict[str, Any], acc: dict[str, Any], block: Participants,
                   updates: np.ndarray, consume: bool = False) -> None:
        for (rule, a, b), sub_state, sub_acc in zip(self._bounds, state["parts"],
                                                    acc["parts"], strict=True):
            sub, rows = _rows_slice(block, a, b)
            if sub.size:
                rule.accumulate(sub_state, sub_acc, sub, updates[rows], consume=consume)

    def finish(self, state: dict[str, Any], acc: dict[str, Any]) -> np.ndarray:
        return np.concatenate([rule.finish(sub_state, sub_acc) for (rule, _, _), sub_state,
                               sub_acc in zip(self._bounds, state["parts"], acc["parts"],
                                              strict=True)], axis=0)
