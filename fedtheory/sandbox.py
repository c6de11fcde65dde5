r"""A check is a sandbox of its own claim: what it raises is its claim's error, and it runs
under a time limit; the user's interrupt is the one thing that leaves it.

* :func:`own_error`: whether a ``BaseException`` caught around a check (or a task, or a claim
  in a worker) is that check's error. Every exception is (``SystemExit``, a
  ``KeyboardInterrupt`` the check raised itself, ``GeneratorExit``, ...), except the user's
  interrupt: a :class:`RunInterrupted` (the command line's signal handler raises one,
  :func:`note_interrupt` having recorded it first), or anything at all once an interrupt is
  pending (the handler's exception may have been swallowed or replaced by the check's code).
* :func:`time_limit`: over ``seconds``, :class:`CheckTimeout` is raised in the block. In the
  main thread of a process (serial runs, local worker processes) by ``SIGALRM``
  (``signal.setitimer``), which stops a pure-Python loop and a blocking ``time.sleep`` alike.
  Elsewhere (a Dask worker runs its tasks in threads) a watchdog thread raises it
  asynchronously in the running thread (a Python loop); with ``hard=True`` (a Dask worker: its
  nanny starts a fresh one), a block still running ``grace`` seconds later (a blocking call)
  ends the process, which the executor reports as a lost worker.
* :func:`check_limit` sets the limit the checks of a run read (:func:`current_limit`);
  :data:`DEFAULT_TIMEOUT` holds the per-preset defaults.
* :func:`running`: the claim, check and mutant that start, told to the hook a progress line
  installs (:func:`set_status_hook`).
* :class:`OutputError`: an output of the run (the report's figures) could not be written:
  not a claim's error, the run stops (the command line says which file and why).

Standard library only (a foundation module).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

__all__ = ["DEFAULT_TIMEOUT", "CheckTimeout", "OutputError", "RunInterrupted", "check_limit",
           "clear_interrupt", "current_limit", "interrupt_pending", "note_interrupt",
           "own_error", "raise_if_interrupted", "running", "set_status_hook", "time_limit"]

#: Seconds a check may run before it is that claim's error, per preset (``verify
#: --check-timeout`` overrides; 0: none). The longest quick claims measured take about 20 s of
#: CPU (mifa's experiments 13 s and 21 s; fedavg's 15 s), the longest full one about 4 minutes
#: (fdms.experiment), its costliest task 50 s: 600 s and 3600 s leave a factor of about 30 and
#: 15 for a loaded machine.
DEFAULT_TIMEOUT = {"quick": 600.0, "full": 3600.0}


class RunInterrupted(KeyboardInterrupt):
    """The user's interrupt (SIGINT or SIGTERM), as the command line's handler raises it:
    never a check's error."""


class CheckTimeout(BaseException):
    """A check (or task) ran over its time limit. A ``BaseException``: a check's ``except
    Exception`` does not swallow it."""


class OutputError(Exception):
    """An output of the run could not be written (``path``, the OS reason): the run stops."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(path, reason)
        self.path, self.reason = path, reason

    def __str__(self) -> str:
        return f"cannot write {self.path}: {self.reason}"


_PENDING: list[int] = []  # the signal numbers of the user's interrupts in this process


def note_interrupt(signum: int) -> None:
    """Record that the user interrupted the run (the signal handler calls this first)."""
    _PENDING.append(int(signum))


def interrupt_pending() -> bool:
    """Whether the user interrupted the run in this process."""
    return bool(_PENDING)


def raise_if_interrupted() -> None:
    """Raise :class:`RunInterrupted` (its ``signum`` the first signal's) if the user
    interrupted the run: a check that swallowed the handler's exception does not hide it."""
    if _PENDING:
        exc = RunInterrupted(f"signal {_PENDING[0]}")
        exc.signum = _PENDING[0]  # type: ignore[attr-defined]
        raise exc


def clear_interrupt() -> None:
    """Forget the recorded interrupts (a command that handled them)."""
    _PENDING.clear()


def own_error(exc: BaseException) -> bool:
    """Whether ``exc``, caught around a check, a task or a claim, is its own error (to report
    as such) rather than the user's interrupt (to let through)."""
    return not (isinstance(exc, RunInterrupted) or interrupt_pending())


_LIMIT: ContextVar[float | None] = ContextVar("fedtheory_check_limit", default=None)


def current_limit() -> float | None:
    """The time limit of the checks of the run in progress (seconds; None: none)."""
    return _LIMIT.get()


@contextlib.contextmanager
def check_limit(seconds: float | None) -> Iterator[None]:
    """Checks run in the block have at most ``seconds`` each (None or 0: no limit)."""
    token = _LIMIT.set(float(seconds) if seconds else None)
    try:
        yield
    finally:
        _LIMIT.reset(token)


#: A time limit is running in this thread (no nesting).
_ACTIVE: ContextVar[bool] = ContextVar("fedtheory_time_limit_active", default=False)
_HARD: list[bool] = [False]  # over the grace in a thread: end the process (set by a Dask worker)


def allow_hard_stop() -> None:
    """In this process (a Dask worker), a check still running ``grace`` seconds after its time
    limit ends the process (its nanny starts another)."""
    _HARD[0] = True


@contextlib.contextmanager
def time_limit(seconds: float | None, what: str, grace: float | None = None) -> Iterator[None]:
    """Raise :class:`CheckTimeout` (``what ran over its time limit of S s``) in the block after
    ``seconds`` (None or 0: no limit; inside another limit: the outer one holds). ``grace``
    (outside the main thread, with :func:`allow_hard_stop`): how long after that the process
    ends if the block still runs (default: ``seconds``, between 2 and 30 s)."""
    if not seconds or seconds <= 0 or _ACTIVE.get():
        yield
        return
    message = f"{what} ran over its time limit of {seconds:g} s (--check-timeout)"
    token = _ACTIVE.set(True)
    try:
        if (threading.current_thread() is threading.main_thread()
                and hasattr(signal, "setitimer")):
            with _alarm(seconds, message):
                yield
        else:
            with _watchdog(seconds, message,
                           grace if grace is not None else min(30.0, max(2.0, seconds))):
                yield
    finally:
        _ACTIVE.reset(token)


@contextlib.contextmanager
def _alarm(seconds: float, message: str) -> Iterator[None]:
    def handler(signum: int, frame: Any) -> None:
        raise CheckTimeout(message)

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old if old is not None else signal.SIG_DFL)


class _Timeout(CheckTimeout):
    """Raised asynchronously in a thread (no arguments can be given: the message is the
    class's)."""

    message = "a check ran over its time limit (--check-timeout)"

    def __init__(self, *args: Any) -> None:
        super().__init__(*(args or (self.message,)))


@contextlib.contextmanager
def _watchdog(seconds: float, message: str, grace: float) -> Iterator[None]:
    tid = ctypes.c_ulong(threading.get_ident())
    done, lock, fired = threading.Event(), threading.Lock(), [False]
    timeout_cls = type("CheckTimeout", (_Timeout,), {"message": message})

    def watch() -> None:
        if done.wait(seconds):
            return
        with lock:
            if done.is_set():
                return
            fired[0] = True
            ctypes.pythonapi.PyThreadState_SetAsyncExc(tid, ctypes.py_object(timeout_cls))
        if not done.wait(grace) and _HARD[0]:
            os._exit(70)  # a blocking call the exception cannot reach: the worker goes

    threading.Thread(target=watch, name="fedtheory-time-limit", daemon=True).start()
    try:
        yield
    finally:
        with lock:
            done.set()
            if fired[0]:  # not delivered yet (the block ended first): cancelled
                ctypes.pythonapi.PyThreadState_SetAsyncExc(tid, None)


_HOOK: list[Callable[[str, str, str | None], None] | None] = [None]


def set_status_hook(hook: Callable[[str, str, str | None], None] | None) -> None:
    """``hook(claim, check, mutant)`` is called as each check starts in this process (None:
    nothing is told)."""
    _HOOK[0] = hook


def running(claim: str, check: str, mutant: str | None = None) -> None:
    """Tell the status hook that ``check`` of ``claim`` (against ``mutant``) starts; a hook
    that fails is dropped (progress never stops a run)."""
    hook = _HOOK[0]
    if hook is not None:
        try:
            hook(claim, check, mutant)
        except Exception:  # noqa: BLE001 - progress is a convenience
            _HOOK[0] = None
