"""What a run records: the metrics at the iterates (:class:`Measure`), their running sums over
a block's replicas (:class:`Recorder`) and what an ``observe`` callback sees of a round
(:class:`RoundRecord`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from fedtheory.participation.base import Selection

__all__ = ["METRICS", "Measure", "Recorder", "RoundRecord"]

#: The metrics every simulation records (besides ``extra_metrics``).
METRICS = ("f_gap", "grad_norm2", "dist2", "bits")


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



class Measure:
    """The metrics of a run's iterates: of its problem (or, for a
    :class:`~fedtheory.problems.stack.ProblemStack` ``stack``, each row's replica's), skipping
    the built-in ones named in ``skip`` and adding the ``extra`` ones."""

    def __init__(self, problem: Any, stack: Any, loss_gap: Callable[[np.ndarray], np.ndarray]
                 | None, skip: tuple[str, ...],
                 extra: Mapping[str, Callable[..., np.ndarray]]) -> None:
        self.problem, self.stack, self.loss_gap = problem, stack, loss_gap
        self.skip, self.extra = skip, extra
        self.x_star = np.asarray(problem.x_star, dtype=float)  # (R, d) for a stack
        self.f_star = (np.asarray(problem.f_star, dtype=float) if stack is not None
                       else float(problem.f_star))

    def _f_gap(self, x64: np.ndarray, reps: np.ndarray) -> np.ndarray:
        r""":math:`f(x) - f^\star`: the problem's ``loss_gap`` when it has one (exact, without
        the cancellation of ``loss(x) - f_star`` near :math:`x^\star`), else that
        difference; for a stack, each row on its replica's problem (``reps``)."""
        if self.stack is not None:
            return self.stack.loss_gap(x64, reps)
        if self.loss_gap is not None:
            return np.asarray(self.loss_gap(x64), dtype=float)
        return np.asarray(self.problem.loss(x64), dtype=float) - self.f_star

    def __call__(self, x: np.ndarray, bits: np.ndarray, first: int = 0) -> dict[str, np.ndarray]:
        """The metrics at the iterates ``x`` ``(R_b, d)`` of the run's replicas ``first,
        first + 1, ...`` (a skipped built-in one: NaN). With a
        :class:`~fedtheory.problems.stack.ProblemStack` every row is measured on its replica's
        problem, and an extra metric is called as ``fn(x, replicas=...)`` (the rows' replicas
        in the run)."""
        x64 = x.astype(float, copy=False)
        reps = np.arange(first, first + x.shape[0])
        skip = self.skip
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
        for name, fn in self.extra.items():
            val = np.asarray(fn(x64) if self.stack is None else fn(x64, replicas=reps),
                             dtype=float)
            if val.shape != (x.shape[0],):
                raise ValueError(
                    f"extra metric {name!r} must map (R, d) iterates to (R,), got {val.shape}"
                )
            out[name] = val
        return out



class Recorder:
    """Per recorded round and metric (``names``), the mean and the sum of squared deviations
    over a block's replicas, and every replica's value when ``keep``."""

    def __init__(self, names: list[str], size: int, recorded: int, keep: bool) -> None:
        self.names = names
        self.acc = {k: (np.zeros(recorded), np.zeros(recorded)) for k in names}
        self.kept = {k: np.empty((size, recorded)) for k in names} if keep else None

    def record(self, j: int, vals: dict[str, np.ndarray]) -> None:
        """Store the metrics ``vals`` (``(R_b,)`` each) of the ``j``-th recorded round."""
        for k in self.names:
            mean = vals[k].mean()
            self.acc[k][0][j] = mean
            self.acc[k][1][j] = np.sum((vals[k] - mean) ** 2)
            if self.kept is not None:
                self.kept[k][:, j] = vals[k]
