r"""Tasks: the independent pieces of a claim's Monte Carlo work, so that the unit of parallel work
of a run is a replica chunk or a point of a sweep, not a whole claim.

A claim's expensive data is built by a *dataset* (:func:`dataset`): a function ``build(ctx)`` of
the claim's :class:`~fedtheory.claims.Context` that fixes the parameters, hands its pieces to
:func:`gather` as :class:`Task` s and combines their results. A task is a module-level function
of keyword arguments (picklable); its randomness comes from the run's seed through
:class:`numpy.random.SeedSequence` (a spawned child per chunk, or the engine's per-replica
streams ``spawn_key=(replica, ...)`` with the chunk's first replica), so what it returns depends
on its arguments only. The pieces are fixed by the preset, never by the executor or the number
of workers, and :func:`gather` returns results in the order of the tasks: the combined data,
and so the report, is the same whatever runs the tasks and in whatever order they finish.

A run (:func:`fedtheory.runner.run_jobs`) first *plans* each selected claim
(:func:`claim_tasks`): it calls the claim's datasets in planning mode, in which :func:`gather`
records the tasks and stops the build. It runs the tasks of all claims on the executor, the
costliest first, after the claims that have none, and verifies a claim with tasks as soon as
its last task is done, with their results *provided* (:func:`provided`): its datasets'
:func:`gather` returns them instead of computing. Outside a run (a notebook, a figure script,
pytest) :func:`gather` computes the tasks here, one after the other: the same numbers.

One :func:`gather` per dataset build is planned (a second one, after the first's results are
combined, is computed where the claim runs).

Claims that use the same data share a dataset (``dataset(owner, *others)``): its tasks, keyed
under the owner, are part of each one's plan, and a run computes a key once and provides the
result to every claim that planned it.

>>> import numpy as np
>>> def draw(*, seed, size):
...     return np.random.default_rng(seed).random(size)
>>> @dataset("x.demo")
... def demo(ctx):
...     seeds = ctx.seed_sequence("draws").spawn(2)
...     parts = gather([task(f"chunk{j}", draw, cost=1.0, seed=s, size=3)
...                     for j, s in enumerate(seeds)])
...     return np.concatenate(parts)
>>> [t.key for t in demo.tasks("quick", 0)]
['x.demo/demo/quick/0/chunk0', 'x.demo/demo/quick/0/chunk1']
>>> results = {t.key: t.run() for t in demo.tasks("quick", 0)}
>>> with provided(results):
...     same = demo.build_fresh("quick", 0)
>>> bool(np.array_equal(same, demo("quick", 0)))
True
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["Dataset", "Task", "claim_tasks", "dataset", "gather", "gather_calls",
           "gather_groups", "provided", "replica_chunks", "task"]


@dataclass(frozen=True)
class Task:
    """One independent piece of work: ``fn(**kwargs)``, named ``key`` (unique in a run).

    ``cost`` is a rough estimate in seconds (full preset, one core), used to start the
    costliest tasks first and to estimate the time left; it never changes a number.
    """

    key: str
    fn: Callable[..., Any]
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    cost: float = 1.0

    def run(self) -> Any:
        """Compute the task (here, now)."""
        return self.fn(**self.kwargs)


def task(name: str, fn: Callable[..., Any], *, cost: float = 1.0, **kwargs: Any) -> Task:
    """A :class:`Task` named ``name`` within its dataset (:func:`gather` prefixes the claim,
    the dataset, the preset and the seed)."""
    if not name or "/" in name:
        raise ValueError(f"name must be a non-empty string without '/', got {name!r}")
    if not cost >= 0:
        raise ValueError(f"cost must be >= 0, got {cost!r}")
    return Task(name, fn, dict(kwargs), float(cost))


def replica_chunks(replicas: int, per_task: int) -> list[tuple[int, int]]:
    """``(first, count)`` of consecutive ranges of at most ``per_task`` replicas covering
    ``0, ..., replicas - 1``, of nearly equal sizes.

    >>> replica_chunks(10, 4)
    [(0, 4), (4, 3), (7, 3)]
    >>> replica_chunks(3, 100)
    [(0, 3)]
    """
    for name, v in (("replicas", replicas), ("per_task", per_task)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    k = -(-replicas // per_task)
    sizes = [replicas // k + (1 if j < replicas % k else 0) for j in range(k)]
    starts = [sum(sizes[:j]) for j in range(k)]
    return list(zip(starts, sizes, strict=True))


class _Planned(Exception):
    """Raised by :func:`gather` in planning mode, after recording the tasks."""


#: Tasks recorded while planning (None: not planning).
_PLAN: ContextVar[list[Task] | None] = ContextVar("fedtheory_task_plan", default=None)
#: The key prefix of the dataset being built.
_PREFIX: ContextVar[str] = ContextVar("fedtheory_task_prefix", default="")
#: Results handed in by the run (key -> result).
_PROVIDED: dict[str, Any] = {}


def gather(tasks: Sequence[Task]) -> list[Any]:
    """The results of ``tasks``, in their order: those the run provided, the others computed
    here. While a run plans, record the tasks instead and stop the build."""
    prefix = _PREFIX.get()
    full = [replace(t, key=prefix + t.key) for t in tasks]
    keys = [t.key for t in full]
    if len(set(keys)) != len(keys):
        raise ValueError(f"task names must be unique within a dataset, got {keys}")
    plan = _PLAN.get()
    if plan is not None:
        plan.extend(full)
        raise _Planned
    return [_PROVIDED[t.key] if t.key in _PROVIDED else t.run() for t in full]


def gather_groups(groups: Sequence[Sequence[Task]]) -> list[list[Any]]:
    """The results of groups of tasks (the pieces of one run each), gathered at once
    (:func:`gather`), grouped as given.

    >>> def sq(*, x):
    ...     return x * x
    >>> gather_groups([[task("a", sq, x=1)], [], [task("b", sq, x=2), task("c", sq, x=3)]])
    [[1], [], [4, 9]]
    """
    flat = gather([t for group in groups for t in group])
    out, start = [], 0
    for group in groups:
        out.append(flat[start:start + len(group)])
        start += len(group)
    return out


def gather_calls(fn: Callable[..., Any], specs: Sequence[Mapping[str, Any]], *,
                 cost: float | Callable[[Mapping[str, Any]], float] = 1.0,
                 name: str = "call") -> list[Any]:
    """``fn(**spec)`` for each keyword dict of ``specs``, as tasks ``name0``, ``name1``, ...
    (:func:`gather`), results in the order of ``specs``; ``cost`` a number or a function of
    the spec."""
    return gather([task(f"{name}{j}", fn, cost=cost(spec) if callable(cost) else cost, **spec)
                   for j, spec in enumerate(specs)])


@contextlib.contextmanager
def provided(results: Mapping[str, Any]) -> Iterator[None]:
    """Within the block, :func:`gather` returns these results (key -> result) for their
    tasks instead of computing them."""
    _PROVIDED.update(results)
    try:
        yield
    finally:
        for key in results:
            _PROVIDED.pop(key, None)


#: claim id -> its datasets, in the order they were defined.
_DATASETS: dict[str, list[Dataset]] = {}


class Dataset:
    """A claim's data built from tasks (see the module docstring); ``dataset(preset, seed)``
    builds it once per ``(preset, seed)`` in a process (cached).

    ``claim_id`` owns it (its context and task keys); ``claim_ids``: every claim whose plan
    includes its tasks (the owner first)."""

    def __init__(self, claim_id: str, build: Callable[[Any], Any],
                 shared_with: Sequence[str] = ()) -> None:
        self.claim_id, self.build = claim_id, build
        self.claim_ids = (claim_id, *(c for c in dict.fromkeys(shared_with) if c != claim_id))
        self.name = build.__name__.strip("_") or "data"
        self._cached = functools.lru_cache(maxsize=4)(self.build_fresh)
        functools.update_wrapper(self, build)

    def _context(self, preset: str, seed: int) -> Any:
        from fedtheory.claims.core import Context

        return Context(preset=preset, seed=seed, claim_id=self.claim_id)

    def _prefix(self, preset: str, seed: int) -> str:
        return f"{self.claim_id}/{self.name}/{preset}/{seed}/"

    def build_fresh(self, preset: str = "quick", seed: int = 0) -> Any:
        """Build the data now (not cached): the tasks provided, the others computed."""
        token = _PREFIX.set(self._prefix(preset, seed))
        try:
            return self.build(self._context(preset, seed))
        finally:
            _PREFIX.reset(token)

    def __call__(self, preset: str = "quick", seed: int = 0) -> Any:
        return self._cached(preset, seed)

    def tasks(self, preset: str = "quick", seed: int = 0) -> list[Task]:
        """The tasks of the build for ``(preset, seed)`` (its first :func:`gather`), without
        running them."""
        plan: list[Task] = []
        t_plan, t_prefix = _PLAN.set(plan), _PREFIX.set(self._prefix(preset, seed))
        try:
            self.build(self._context(preset, seed))
        except _Planned:
            pass
        finally:
            _PLAN.reset(t_plan)
            _PREFIX.reset(t_prefix)
        return plan

    def cache_clear(self) -> None:
        self._cached.cache_clear()


def dataset(claim_id: str, *shared_with: str) -> Callable[[Callable[[Any], Any]], Dataset]:
    """Decorate ``build(ctx)`` into a :class:`Dataset` of claim ``claim_id`` (its tasks are
    then part of the claim's plan, :func:`claim_tasks`), also used by the claims
    ``shared_with``: their plans include the same tasks (the same keys, built with
    ``claim_id``'s context), which a run computes once for all of them."""
    for cid in (claim_id, *shared_with):
        if not isinstance(cid, str) or not cid:
            raise ValueError(f"claim_id must be a non-empty string, got {cid!r}")

    def decorate(build: Callable[[Any], Any]) -> Dataset:
        ds = Dataset(claim_id, build, shared_with)
        for cid in ds.claim_ids:
            _DATASETS.setdefault(cid, []).append(ds)
        return ds
    return decorate


def claim_tasks(claim_id: str, preset: str, seed: int) -> list[Task]:
    """Every task of the datasets of claim ``claim_id`` (its own and those it shares) for
    ``(preset, seed)`` (the claim's module imported first, so that its datasets are
    defined)."""
    from fedtheory.claims.registry import get_claim

    get_claim(claim_id)  # imports the claim's module, and with it its datasets
    out: dict[str, Task] = {}
    for ds in _DATASETS.get(claim_id, []):
        for t in ds.tasks(preset, seed):
            out.setdefault(t.key, t)
    return list(out.values())
