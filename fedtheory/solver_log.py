"""A record of the convex programs solved while a check runs: what makes a check ``convex``.

Every cvxpy solve of the toolkit goes through :mod:`fedtheory.convex`, which calls
:func:`record` with the problem's name, the solver and its status. :func:`recording` collects
them for the duration of a ``with`` block (a :class:`contextvars.ContextVar`, so threads and
nested checks keep their own lists). :func:`fedtheory.claims.core.Claim.verify` records each
check: a check of kind ``convex`` that solved nothing is an error, never a report that
misstates its evidence.

>>> with recording() as log:
...     record("ocs", "CLARABEL", "optimal")
>>> log
[{'problem': 'ocs', 'solver': 'CLARABEL', 'status': 'optimal'}]
>>> record("outside", "CLARABEL", "optimal")  # outside a recording: nothing kept
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

__all__ = ["record", "recording"]

_LOG: ContextVar[list[dict[str, Any]] | None] = ContextVar("fedtheory_solver_log", default=None)


def record(problem: str, solver: str, status: str) -> None:
    """Note that the convex program ``problem`` was solved by ``solver`` with ``status``."""
    log = _LOG.get()
    if log is not None:
        log.append({"problem": str(problem), "solver": str(solver), "status": str(status)})


@contextlib.contextmanager
def recording() -> Iterator[list[dict[str, Any]]]:
    """Collect the solves made inside the block into the list it yields."""
    log: list[dict[str, Any]] = []
    token = _LOG.set(log)
    try:
        yield log
    finally:
        _LOG.reset(token)
