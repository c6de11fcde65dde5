"""A record of the convex programs solved while a check runs: what makes a check ``convex``.

Every cvxpy solve of the toolkit goes through :mod:`fedtheory.convex`, which calls
:func:`record` with the problem's name, the solver and its status. :func:`recording` collects
them for the duration of a ``with`` block (a :class:`contextvars.ContextVar`, so threads and
nested checks keep their own lists). :func:`fedtheory.claimkit.core.Claim.verify` records each
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
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

__all__ = ["captured_stderr", "record", "recording"]

_LOG: ContextVar[list[dict[str, Any]] | None] = ContextVar("fedtheory_solver_log", default=None)


def record(problem: str, solver: str, status: str, messages: str = "") -> None:
    """Note that the convex program ``problem`` was solved by ``solver`` with ``status``;
    ``messages``: what the solver printed meanwhile (:func:`captured_stderr`), kept here
    rather than on the terminal (the entry has the key only when it printed something)."""
    log = _LOG.get()
    if log is not None:
        entry = {"problem": str(problem), "solver": str(solver), "status": str(status)}
        if messages:
            entry["messages"] = str(messages)[:4000]
        log.append(entry)


_FD_LOCK = threading.RLock()


@contextlib.contextmanager
def captured_stderr() -> Iterator[list[str]]:
    """Redirect file descriptor 2 to a temporary file for the block (a solver's native
    code, e.g. Clarabel's Rust panics, writes there directly, past ``sys.stderr``) and yield
    a list that holds the captured text once the block ends. The descriptor is
    process-wide: a (re-entrant) lock keeps captures of two threads apart, and what another
    thread writes to fd 2 meanwhile is captured too (and kept in the log)."""
    out: list[str] = []
    with _FD_LOCK, tempfile.TemporaryFile(mode="w+b") as tmp:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        try:
            saved = os.dup(2)
        except OSError:  # no fd 2 (a detached process): nothing to capture
            yield out
            return
        try:
            os.dup2(tmp.fileno(), 2)
            yield out
        finally:
            with contextlib.suppress(Exception):
                sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            out.append(tmp.read().decode("utf-8", "replace"))


@contextlib.contextmanager
def recording() -> Iterator[list[dict[str, Any]]]:
    """Collect the solves made inside the block into the list it yields (and, inside
    another recording, into that one's too when the block ends: nothing is lost)."""
    outer = _LOG.get()
    log: list[dict[str, Any]] = []
    token = _LOG.set(log)
    try:
        yield log
    finally:
        _LOG.reset(token)
        if outer is not None:
            outer.extend(log)
