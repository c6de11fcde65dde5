r"""Step sizes within a round: a schedule of the local steps (``LocalWork(schedule=)``,
``simulate(lr_schedule=)``).

Local step :math:`k` of round :math:`t` (both from 0: round :math:`t` takes :math:`x_t` to
:math:`x_{t+1}`) has the step size :math:`\eta\,s_{t,k}`, the run's ``lr`` :math:`\eta`
times the schedule's factor :math:`s_{t,k} > 0`, and the client reports

.. math:: y^{k+1} = y^k - \eta\,s_{t,k}\,g^k, \qquad
    \Delta = \sum_{k<\tau} s_{t,k}\,g^k = (x_t - y^{\tau})/\eta,
    \qquad g^k = \nabla f_i(y^k) + \xi^k,

so that, as without a schedule, :math:`x_t - \eta\Delta` is the client's last iterate (FedAvg
with every client and ``global_lr`` 1 averages the clients' last iterates). The schedule is

* ``(E,)`` factors, the same in every round, :math:`E` the most local steps of a pair
  (``local_steps``' int, the maximum of its ``(n,)`` array, a :class:`LocalStepsDraw`'s
  ``high``): a pair with :math:`\tau_i < E` steps uses the first :math:`\tau_i`;
* ``(T, E)`` factors, row :math:`t` for round :math:`t` (:math:`T` the run's rounds);
* a callable ``schedule(t, k) -> float``, evaluated once for every round and step when the run
  is configured (so a callable that raises or returns a non-finite or non-positive value is
  an error naming the round and step, before any work).

The schedule :math:`\eta_{t,k} = \eta_0/(1+k)` is ``lr=eta0, lr_schedule=lambda t, k: 1 / (1
+ k)``. A schedule of ones is no schedule (the same run, bit for bit). The problem's closed form
of the steps (``fuse_local_steps``) stays exact when every round's factors are one number
(:math:`s_{t,k} = s_t`: a per-round decay): round :math:`t` runs the closed form with step
size :math:`\eta s_t` and scales its update by :math:`s_t`; a schedule that varies within a
round runs the plain steps (``fuse_local_steps=True`` is then an error). The problem's own
``local_steps`` take one step size and are not used with a schedule (the plain steps are);
mini-batch steps (:class:`~fedtheory.engine.MiniBatches`) apply it as the plain steps do, and
a round-aware process's :meth:`~fedtheory.participation.RoundView.updates` are those of the
schedule. Refused (a ``ValueError`` when the run is configured): a callable ``local_steps``
(its most steps are unknown before the run) and a rule with a drift correction (SCAFFOLD's
control variates assume one step size within a round).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from fedtheory.budget import check_memory
from fedtheory.validation import _short, real_array

__all__ = ["check_schedule", "fusable", "resolve_schedule", "round_factors"]

#: What a schedule may be given as.
Schedule = np.ndarray | Callable[[int, int], float]


def _positive_table(name: str, a: np.ndarray) -> np.ndarray:
    """``a`` if every entry is finite and > 0, else a ``ValueError`` naming the first bad
    entry and where it is."""
    bad = ~(np.isfinite(a) & (a > 0))
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} must be finite step-size factors > 0, got "
                         f"{float(a[where])!r} at index {where[0] if a.ndim == 1 else where}")
    return a


def check_schedule(schedule: Any) -> Schedule | None:
    """A schedule as given to :class:`~fedtheory.engine.LocalWork`: None, a callable
    ``(t, k) -> float``, or a 1-D or 2-D array of finite factors > 0 (returned read-only);
    otherwise a ``ValueError`` naming ``lr_schedule``. Its shape is checked against the run by
    :func:`resolve_schedule`.

    >>> check_schedule([1.0, 0.5]).tolist()
    [1.0, 0.5]
    >>> check_schedule([1.0, -0.5])
    Traceback (most recent call last):
    ...
    ValueError: lr_schedule must be finite step-size factors > 0, got -0.5 at index 1
    """
    if schedule is None or (callable(schedule) and not isinstance(schedule, np.ndarray)):
        return schedule
    if isinstance(schedule, (str, bytes)):
        raise ValueError(f"lr_schedule must be an (E,) or (T, E) array of step-size factors "
                         f"or a callable (t, k) -> float, got {_short(schedule)}")
    a = real_array("lr_schedule", schedule)
    if a.ndim not in (1, 2) or a.size == 0:
        raise ValueError(f"lr_schedule must be an (E,) or (T, E) array of step-size factors "
                         f"(E local steps, T rounds) or a callable (t, k) -> float, got shape "
                         f"{a.shape}")
    a = _positive_table("lr_schedule", a.copy())
    a.flags.writeable = False
    return a


def _evaluate(fn: Callable[[int, int], Any], rounds: int, steps: int) -> np.ndarray:
    """The ``(rounds, steps)`` table of ``fn(t, k)``, every value checked."""
    out = np.empty((rounds, steps))
    for t in range(rounds):
        for k in range(steps):
            try:
                v = fn(t, k)
            except Exception as exc:  # the user's function: reported, never a traceback
                raise ValueError(f"lr_schedule(t={t}, k={k}) raised {type(exc).__name__}: "
                                 f"{_short(str(exc))}") from None
            ok = not isinstance(v, (bool, np.bool_, complex, np.complexfloating, str, bytes))
            if ok:
                try:
                    f = float(v)
                    ok = math.isfinite(f) and f > 0
                except (TypeError, ValueError, OverflowError):
                    ok = False
            if not ok:
                raise ValueError(f"lr_schedule(t={t}, k={k}) must return a finite real "
                                 f"number > 0 (a step-size factor), got {_short(v)}")
            out[t, k] = f
    return out


def resolve_schedule(schedule: Schedule | None, rounds: int,
                     steps: int) -> np.ndarray | None:
    """The run's factors: ``(steps,)`` or ``(rounds, steps)`` (a callable is evaluated for
    every round ``t < rounds`` and step ``k < steps``; a table whose rounds are all alike
    becomes its one row), None for no schedule or one of ones.
    A ``ValueError`` naming ``lr_schedule`` when its shape is not the run's (``steps``: the
    most local steps of a pair, the length :math:`E` of a 1-D schedule; ``rounds``: the run's
    rounds).

    >>> resolve_schedule(lambda t, k: 1 / (1 + t + k), 2, 3).tolist()
    [[1.0, 0.5, 0.3333333333333333], [0.5, 0.3333333333333333, 0.25]]
    >>> resolve_schedule(lambda t, k: 1 / (1 + k), 2, 3).tolist()
    [1.0, 0.5, 0.3333333333333333]
    >>> resolve_schedule([1.0, 1.0], 10, 2) is None
    True
    >>> resolve_schedule([1.0, 0.5], 10, 3)
    Traceback (most recent call last):
    ...
    ValueError: lr_schedule must have E=3 factors (one per local step), got 2
    """
    if schedule is None:
        return None
    rows = max(int(rounds), 1)  # (a table rule's first round of every client reads row 0)
    if callable(schedule) and not isinstance(schedule, np.ndarray):
        check_memory("lr_schedule's table of step-size factors", 8.0 * rows * steps,
                     {"rounds": rows, "local steps": steps})
        table = _evaluate(schedule, rows, steps)
    else:
        table = np.asarray(check_schedule(schedule))
        if table.ndim == 1 and table.shape != (steps,):
            raise ValueError(f"lr_schedule must have E={steps} factors (one per local step), "
                             f"got {table.shape[0]}")
        if table.ndim == 2 and table.shape != (rows, steps):
            raise ValueError(f"lr_schedule must have shape (T, E) = ({rows}, {steps}) (one row "
                             f"per round, one factor per local step), got {table.shape}")
    if np.all(table == 1.0):
        return None
    if table.ndim == 2 and np.all(table == table[:1]):  # the same factors every round
        table = table[0]
    table = np.array(table, dtype=float)
    table.flags.writeable = False
    return table


def fusable(table: np.ndarray | None) -> bool:
    """Whether the closed form of the local steps stays exact: no schedule, or one factor per
    round (every row constant)."""
    if table is None:
        return True
    rows = table.reshape(-1, table.shape[-1])
    return bool(np.all(rows == rows[:, :1]))


def round_factors(table: np.ndarray | None, t: int) -> np.ndarray | None:
    """The factors of round ``t`` (from 0), ``(E,)``, or None without a schedule."""
    if table is None:
        return None
    return table if table.ndim == 1 else table[t]
