r"""Memory and work budgets: refuse, before allocating, a computation that cannot fit.

A call whose sizes come from its caller (``simulate(replicas=10**12)``, a process over
``n=10**12`` clients) estimates, once at set-up, the bytes of the arrays it will allocate and
the element operations it will perform, and raises :class:`BudgetError` (a ``ValueError``)
with the estimate in GiB and the inputs that drive it when they exceed the budget, instead of
a bare ``MemoryError`` from deep inside numpy or a run that never ends.

* **Memory**: at most :data:`MEMORY_FRACTION` of the machine's physical memory
  (``os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE')``, else ``MemTotal`` of
  ``/proc/meminfo``); the environment variable :data:`MEMORY_ENV` (a number of GiB) sets
  another limit.
* **Work**: at most :data:`MAX_WORK` element operations (the engine does about :math:`10^8`
  of them per second on one core, measured on the claims' quick runs, the largest of which
  is about :math:`10^8`: the ceiling is more than a day of one call); the
  environment variable :data:`WORK_ENV`, or the caller's own override
  (``simulate(max_work=...)``), sets another ceiling (``inf`` for none).

>>> check_memory("a buffer", 8 * 10**3, {"n": 10**3})
>>> check_memory("a buffer", 8 * 10**18, {"n": 10**18})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
fedtheory.budget.BudgetError: a buffer would need about 7.45e+09 GiB of memory (n=100...
>>> check_work("a run", 10**16, {"rounds": 10**16}, limit=10**15)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
fedtheory.budget.BudgetError: a run would take about 1e+16 element operations (rounds=...
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

__all__ = [
    "MAX_WORK",
    "MEMORY_ENV",
    "MEMORY_FRACTION",
    "WORK_ENV",
    "BudgetError",
    "check_memory",
    "check_simulation",
    "check_work",
    "memory_limit",
    "work_limit",
]

#: The share of physical memory one computation may plan to allocate.
MEMORY_FRACTION = 0.75

#: The default ceiling on a computation's element operations.
MAX_WORK = 10**13

#: Environment variable: the memory limit in GiB (overrides :data:`MEMORY_FRACTION`).
MEMORY_ENV = "FEDTHEORY_MAX_MEMORY_GIB"

#: Environment variable: the ceiling on element operations (``inf`` for none).
WORK_ENV = "FEDTHEORY_MAX_WORK"

_GIB = float(1 << 30)


class BudgetError(ValueError):
    """A computation refused before it started: it would not fit in memory or in time."""


def _physical_memory() -> float:
    """The machine's physical memory in bytes (inf when it cannot be read)."""
    try:
        return float(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        pass
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return float(line.split()[1]) * 1024.0
    except OSError:
        pass
    return math.inf


def _env_number(name: str) -> float | None:
    """The positive number in environment variable ``name``, None when unset, or a
    ``ValueError`` naming it."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return None
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"environment variable {name} must be a positive number, "
                         f"got {raw!r}") from None
    if not value > 0:  # NaN too
        raise ValueError(f"environment variable {name} must be a positive number, got {raw!r}")
    return value


def memory_limit() -> tuple[float, str]:
    """The memory limit in bytes and where it comes from (for messages)."""
    env = _env_number(MEMORY_ENV)
    if env is not None:
        return env * _GIB, f"{MEMORY_ENV}={os.environ[MEMORY_ENV]}"
    phys = _physical_memory()
    return MEMORY_FRACTION * phys, (f"{MEMORY_FRACTION:g} of this machine's "
                                    f"{phys / _GIB:.3g} GiB; set {MEMORY_ENV} to change it")


def work_limit(override: float | None = None) -> tuple[float, str]:
    """The ceiling on element operations and where it comes from: ``override`` (a caller's
    parameter), else :data:`WORK_ENV`, else :data:`MAX_WORK`."""
    if override is not None:
        try:
            value = float(override)
        except (TypeError, ValueError):
            value = math.nan
        if not value > 0:
            raise ValueError(f"max_work must be a positive number (inf for no ceiling), "
                             f"got {override!r}")
        return value, f"max_work={override!r}"
    env = _env_number(WORK_ENV)
    if env is not None:
        return env, f"{WORK_ENV}={os.environ[WORK_ENV]}"
    return float(MAX_WORK), f"the default ceiling; set {WORK_ENV} or max_work= to change it"


def _inputs(inputs: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in inputs.items())


def check_memory(what: str, nbytes: float, inputs: Mapping[str, Any]) -> None:
    """Nothing when ``nbytes`` fit in :func:`memory_limit`, else a :class:`BudgetError`
    stating the estimate in GiB and the ``inputs`` that drive it."""
    limit, source = memory_limit()
    if nbytes > limit:
        raise BudgetError(
            f"{what} would need about {nbytes / _GIB:.3g} GiB of memory ({_inputs(inputs)}), "
            f"more than the limit of {limit / _GIB:.3g} GiB ({source})")


def check_work(what: str, operations: float, inputs: Mapping[str, Any],
               limit: float | None = None) -> None:
    """Nothing when ``operations`` stay within :func:`work_limit` (``limit`` the caller's
    override), else a :class:`BudgetError` stating the estimate and the ``inputs``."""
    ceiling, source = work_limit(limit)
    if operations > ceiling:
        raise BudgetError(
            f"{what} would take about {operations:.3g} element operations "
            f"({_inputs(inputs)}), more than the ceiling of {ceiling:.3g} ({source})")


def check_simulation(*, rounds: int, replicas: int, n: int, d: int, pairs: float,
                     steps: float, recorded: int, metrics: int, chunk: int, workers: int,
                     float_bytes: int = 8, table: bool = False, keep_replicas: bool = False,
                     max_work: float | None = None) -> None:
    r"""Refuse a simulation that cannot fit, before it allocates anything (called once by
    :func:`fedtheory.simulate.simulate` at set-up; the engine's loop is untouched).

    ``pairs`` is the expected number of (replica, client) pairs that compute an update per
    replica and round (:math:`n` for a rule or process that needs every client), ``steps``
    the mean local steps, ``recorded`` the rounds at which ``metrics`` metrics are recorded,
    ``chunk`` the replicas simulated together in each of ``workers`` threads.

    * Work, in element operations: :math:`T R (\text{pairs}\cdot d\cdot\tau + n d\,[\text{table}]
      + d) + \text{recorded}\cdot R\, n d` (local steps, the table's aggregation, the server
      step, the metrics over every client), against :func:`work_limit`.
    * Memory, in bytes: the outputs (final iterates :math:`R d`, the divergence rounds, the
      metric traces and, with ``keep_replicas``, every replica's values, each held twice while
      the chunks are combined) and, per thread, one chunk's arrays (iterates, momentum and
      work vectors, a round's updates, the participation's uniforms, mask and state, a table
      rule's :math:`(\text{chunk}, n, d)` table), against :func:`memory_limit`.

    >>> check_simulation(rounds=100, replicas=500, n=10, d=5, pairs=5.0, steps=1, recorded=101,
    ...                  metrics=4, chunk=500, workers=1)
    >>> check_simulation(rounds=10**15, replicas=4, n=10, d=5, pairs=5.0, steps=1,
    ...                  recorded=2, metrics=4, chunk=4, workers=1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fedtheory.budget.BudgetError: simulate would take about 1.2e+17 element operations (rounds=...
    """
    inputs = {"rounds": rounds, "replicas": replicas, "n": n, "d": d,
              "participants per round": round(float(pairs), 3), "local steps": steps}
    per_round = float(pairs) * d * float(steps) + (n * d if table else 0) + d
    work = float(rounds) * replicas * per_round + float(recorded) * replicas * n * d
    chunks = -(-replicas // max(chunk, 1))
    outputs = (2.0 * replicas * d * float_bytes + 8.0 * replicas
               + 16.0 * metrics * recorded * (1 + chunks) + 100.0 * chunks
               + (16.0 * metrics * replicas * recorded if keep_replicas else 0.0))
    per_chunk = float(chunk) * (6 * d * float_bytes + 24 * n + 3 * float(pairs) * d * float_bytes
                                + (n * d * float_bytes if table else 0))
    memory = outputs + max(1, workers) * per_chunk
    check_memory("simulate", memory, {**inputs, "recorded rounds": recorded,
                                      "metrics": metrics, "chunk": chunk, "workers": workers,
                                      **({"keep_replicas": True} if keep_replicas else {})})
    check_work("simulate", work, inputs, max_work)
