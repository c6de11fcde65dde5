r"""Tasks: the independent pieces of a claim's Monte Carlo work, as data, so that the unit of
parallel work of a run is a replica chunk or a point of a sweep, not a whole claim.

A claim's expensive data is a *dataset* (:func:`dataset`): a function ``build(ctx)`` of a
:class:`~fedtheory.claims.Context` (of the dataset's owner claim: its random streams) that
fixes the parameters and returns a :class:`Plan`, the :class:`Task` s to run and how their
results combine into the data. A task is a module-level function of keyword arguments
(picklable); its randomness comes from the run's seed through
:class:`numpy.random.SeedSequence` (a spawned child per chunk, or the engine's per-replica
streams with the chunk's first replica), so what it returns depends on its arguments only. The
pieces are fixed by the preset, never by the executor or the number of workers, and a plan
combines the results in the order of its tasks: the data, and so the report, is the same
whatever runs the tasks and in whatever order they finish.

A claim declares the datasets its checks read (``Claim(..., datasets=(...))``). A run
(:func:`fedtheory.runner.run_jobs`) first *plans* each selected claim (:func:`plan_claim`:
building each declared dataset's plan, nothing computed), runs the tasks of all claims on the
executor, the costliest first, and verifies a claim as soon as its last task is done, the
results handed to it in its run's :class:`~fedtheory.cache.Cache` (``results``). A check reads
a dataset with its context, ``data(ctx)``: the value is built once per cache, from the results
handed in, the tasks not handed in computed there. Outside a run (a notebook, a figure script,
pytest) ``data("quick", 0)`` computes the tasks here, one after the other: the same numbers.

Claims that read the same data declare the same dataset: its tasks (keyed under its owner) are
in each one's plan, and a run computes a key once and hands the result to every claim that
planned it.

>>> import numpy as np
>>> from fedtheory.cache import Cache
>>> def draw(*, seed, size):
...     return np.random.default_rng(seed).random(size)
>>> @dataset("x.demo")
... def demo(ctx):
...     seeds = ctx.seed_sequence("draws").spawn(2)
...     return Plan([task(f"chunk{j}", draw, cost=1.0, seed=s, size=3)
...                  for j, s in enumerate(seeds)], np.concatenate)
>>> [t.key for t in demo.plan("quick", 0).tasks]
['x.demo/demo/quick/0/chunk0', 'x.demo/demo/quick/0/chunk1']
>>> results = {t.key: t.run() for t in demo.plan("quick", 0).tasks}
>>> same = demo.compute("quick", 0, results)
>>> bool(np.array_equal(same, demo.compute("quick", 0)))
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from fedtheory import streams
from fedtheory.cache import PROCESS_CACHE, Cache
from fedtheory.validation import integer_at_least

__all__ = ["BuildContext", "ClaimPlan", "Dataset", "Plan", "Task", "dataset", "plan_claim",
           "replica_chunks", "run_tasks", "task"]


@dataclass(frozen=True)
class BuildContext:
    """What a dataset's build reads: the preset, the seed and the owner claim's random streams,
    the same streams as the owner's :class:`~fedtheory.claims.Context` (both derive them with
    :mod:`fedtheory.streams`). Tasks sit below the claims: a build never needs more."""

    preset: str
    seed: int
    claim_id: str

    @property
    def quick(self) -> bool:
        return self.preset == "quick"

    def size(self, quick: Any, full: Any) -> Any:
        """``quick`` in the quick preset, ``full`` in the full one."""
        return quick if self.quick else full

    def seed_sequence(self, stream: str = "") -> Any:
        return streams.seed_sequence(self.seed, self.claim_id, stream)

    def rng(self, stream: str = "") -> Any:
        return streams.stream_rng(self.seed, self.claim_id, stream)


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
    """A :class:`Task` named ``name`` within its dataset (its plan prefixes the owner claim,
    the dataset, the preset and the seed)."""
    if not isinstance(name, str) or not name or "/" in name:
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
        integer_at_least(name, v)
    k = -(-replicas // per_task)
    sizes = [replicas // k + (1 if j < replicas % k else 0) for j in range(k)]
    starts = [sum(sizes[:j]) for j in range(k)]
    return list(zip(starts, sizes, strict=True))


@dataclass(frozen=True)
class Plan:
    """What a dataset needs computed, and how it becomes the data: ``combine(results)``, the
    results of ``tasks`` in their order.

    >>> def sq(*, x):
    ...     return x * x
    >>> p = Plan([task("a", sq, x=2), task("b", sq, x=3)], sum)
    >>> p.combine([t.run() for t in p.tasks])
    13
    >>> g = Plan.grouped([[task("a", sq, x=1)], [], [task("b", sq, x=2)]], lambda r: r)
    >>> g.combine([t.run() for t in g.tasks])
    [[1], [], [4]]
    """

    tasks: tuple[Task, ...]
    combine: Callable[[list[Any]], Any]

    def __init__(self, tasks: Sequence[Task], combine: Callable[[list[Any]], Any]) -> None:
        tasks = tuple(tasks)
        bad = [t for t in tasks if not isinstance(t, Task)]
        if bad:
            raise ValueError(f"tasks must be Task objects (fedtheory.tasks.task), got {bad[0]!r}")
        keys = [t.key for t in tasks]
        if len(set(keys)) != len(keys):
            raise ValueError(f"task names must be unique within a dataset, got {keys}")
        if not callable(combine):
            raise ValueError(f"combine must be callable, got {combine!r}")
        object.__setattr__(self, "tasks", tasks)
        object.__setattr__(self, "combine", combine)

    @classmethod
    def grouped(cls, groups: Sequence[Sequence[Task]],
                combine: Callable[[list[list[Any]]], Any]) -> Plan:
        """A plan of groups of tasks (the pieces of one run each): ``combine`` receives the
        results grouped as the tasks were."""
        sizes = [len(g) for g in groups]

        def regroup(flat: list[Any]) -> Any:
            out, start = [], 0
            for size in sizes:
                out.append(flat[start:start + size])
                start += size
            return combine(out)
        return cls([t for g in groups for t in g], regroup)

    def prefixed(self, prefix: str) -> Plan:
        """The same plan, every task key prefixed with ``prefix``."""
        return Plan([replace(t, key=prefix + t.key) for t in self.tasks], self.combine)


def run_tasks(tasks: Sequence[Task], results: Mapping[str, Any] | None = None) -> list[Any]:
    """The results of ``tasks`` in their order: those in ``results`` (task key -> result)
    taken, the others computed here."""
    given = results or {}
    return [given[t.key] if t.key in given else t.run() for t in tasks]


class Dataset:
    """A claim's data built from tasks (see the module docstring).

    ``owner``: the claim whose random streams (:meth:`~fedtheory.claims.Context.seed_sequence`)
    the build uses, and under which its task keys are named; ``build(ctx) -> Plan``.
    ``data(ctx)`` reads it in a check (built once in the context's cache, with the task
    results the run handed in); ``data(preset, seed)`` elsewhere (the process's cache,
    :data:`fedtheory.cache.PROCESS_CACHE`)."""

    def __init__(self, owner: str, build: Callable[[BuildContext], Plan]) -> None:
        if not isinstance(owner, str) or not owner:
            raise ValueError(f"owner must be a non-empty claim id, got {owner!r}")
        self.owner, self.build = owner, build
        self.name = build.__name__.strip("_") or "data"
        self.__doc__ = build.__doc__
        self.__name__ = build.__name__
        self.__module__ = build.__module__
        self.__qualname__ = build.__qualname__

    def __repr__(self) -> str:
        return f"<dataset {self.owner}/{self.name}>"

    def key(self, preset: str, seed: int) -> tuple[str, str, str, str, int]:
        """The cache key of the data of ``(preset, seed)``: everything it depends on."""
        return ("dataset", self.owner, self.name, preset, int(seed))

    def plan(self, preset: str = "quick", seed: int = 0) -> Plan:
        """The plan of ``(preset, seed)``: its tasks, keyed ``owner/name/preset/seed/task``,
        nothing computed."""
        out = self.build(BuildContext(preset, int(seed), self.owner))
        if not isinstance(out, Plan):
            raise ValueError(f"dataset {self.owner}/{self.name} must return a Plan, "
                             f"got {type(out).__name__}")
        return out.prefixed(f"{self.owner}/{self.name}/{preset}/{seed}/")

    def compute(self, preset: str = "quick", seed: int = 0,
                results: Mapping[str, Any] | None = None) -> Any:
        """Build the data now (not cached): the tasks in ``results`` (task key -> result)
        taken, the others computed here."""
        p = self.plan(preset, seed)
        return p.combine(run_tasks(p.tasks, results))

    def __call__(self, where: Any = "quick", seed: int | None = None) -> Any:
        """The data: ``data(ctx)`` in a check (a claim's context: its preset, seed and cache,
        with the task results handed to it), ``data(preset, seed)`` elsewhere."""
        if not isinstance(where, str):
            if seed is not None and seed != where.seed:
                raise ValueError(f"seed must be None with a context (its seed is "
                                 f"{where.seed}), got {seed!r}")
            preset, s, cache = where.preset, where.seed, where.cache
            if not isinstance(cache, Cache):
                raise ValueError(f"a dataset reads a claim's context (preset, seed, cache) or "
                                 f"a preset name, got {where!r}")
        else:
            preset, s, cache = where, 0 if seed is None else seed, PROCESS_CACHE
        return cache.get(self.key(preset, s), lambda: self.compute(preset, s, cache.results))


def dataset(owner: str) -> Callable[[Callable[[BuildContext], Plan]], Dataset]:
    """Decorate ``build(ctx) -> Plan`` into a :class:`Dataset` owned by claim ``owner`` (its
    random streams and task keys). The claims that read it declare it
    (``Claim(..., datasets=(...))``)."""
    if not isinstance(owner, str) or not owner:
        raise ValueError(f"claim_id must be a non-empty string, got {owner!r}")

    def decorate(build: Callable[[BuildContext], Plan]) -> Dataset:
        return Dataset(owner, build)
    return decorate


@dataclass(frozen=True)
class ClaimPlan:
    """A claim's plan for a preset and seed: each declared dataset with the keys of its tasks,
    and the tasks (each key once, in the order of the datasets)."""

    claim_id: str
    datasets: tuple[tuple[Dataset, tuple[str, ...]], ...]
    tasks: tuple[Task, ...]


def plan_claim(claim: Any, preset: str, seed: int) -> ClaimPlan:
    """The plan of ``claim`` (a :class:`~fedtheory.claims.Claim`) for ``(preset, seed)``: its
    declared datasets' tasks. A dataset whose planning raises raises here: a planning error
    is the claim's error (:func:`fedtheory.runner.run_jobs` reports it as such)."""
    datasets = tuple(getattr(claim, "datasets", ()) or ())
    bad = [d for d in datasets if not isinstance(d, Dataset)]
    if bad:
        raise ValueError(f"claim {claim.id}: datasets must be Dataset objects "
                         f"(fedtheory.tasks.dataset), got {bad[0]!r}")
    out: dict[str, Task] = {}
    per: list[tuple[Dataset, tuple[str, ...]]] = []
    for ds in dict.fromkeys(datasets):
        p = ds.plan(preset, seed)
        per.append((ds, tuple(t.key for t in p.tasks)))
        for t in p.tasks:
            out.setdefault(t.key, t)
    return ClaimPlan(claim.id, tuple(per), tuple(out.values()))
