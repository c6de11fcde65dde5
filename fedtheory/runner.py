"""Run the checks of many claims, serially, in worker processes or on a Dask cluster
(:mod:`fedtheory.executors`), with the same numbers.

The unit of parallel work is a task (:mod:`fedtheory.tasks`), not a claim. A run executes the
claims that have no tasks and the tasks of every other selected claim (replica chunks, sweep
points: each claim's plan), the costliest first; a claim with tasks is verified as soon as its
last task is done, given their results (:attr:`Job.provided`), ahead of the work not yet
started. A task planned by several claims (the same key: a dataset they share) runs once, and
its result goes to each of them. A claim one of whose tasks was lost with its worker for good
is reported as ``error`` (never a verdict on partial data).

Every claim and task runs under a one-thread BLAS limit and with the engine's own threads
limited to one (:func:`fedtheory.simulate.max_threads`), in the parent as in the workers, so
that the summation order of matrix products (and so the last digits of every number) does not
depend on ``--jobs``, and a worker uses one core: the same seed and preset give the same report
whatever the parallelism. Results are handed to ``on_result`` as they finish; the returned list
is in the order asked.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from fedtheory.claims.core import ClaimResult
from fedtheory.claims.power import power
from fedtheory.claims.registry import get_claim
from fedtheory.tasks import Task, claim_tasks, provided

if TYPE_CHECKING:
    from fedtheory.executors import Executor

__all__ = ["Job", "TaskDone", "run_jobs", "run_task", "verify_one"]


@dataclass(frozen=True)
class Job:
    """One claim to verify: its id, the preset, the seed, where figures go, which checks."""

    claim_id: str
    preset: str
    seed: int
    figure_dir: str | None = None
    only: tuple[str, ...] | None = None
    #: Also run the checks against the mutants of the stated side (``--power``).
    power: bool = False
    #: Results of the claim's tasks computed elsewhere (task key -> result).
    provided: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    """BLAS/OpenMP pools (threadpoolctl, when installed) and the engine's threads limited to
    one."""
    from fedtheory.simulate import max_threads

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        blas: Any = contextlib.nullcontext()
    else:
        blas = threadpool_limits(1)
    with blas, max_threads(1):
        yield


def verify_one(job: Job) -> ClaimResult:
    """Verify one claim, one thread (the same in every process), its provided task results
    used instead of computing them."""
    claim = get_claim(job.claim_id)
    with _one_thread(), provided(job.provided):
        res = claim.verify(preset=job.preset, seed=job.seed, figure_dir=job.figure_dir,
                           only=job.only)
        if job.power:
            res.power = power(claim, job.preset, job.seed, base=res)
    return res


@dataclass(frozen=True)
class TaskDone:
    """What running a task gave: its result, or the error it raised (``error``, then
    ``result`` is None: the claim recomputes the task and reports the error as its check's),
    and the seconds it took."""

    key: str
    result: Any
    error: str | None
    seconds: float


def run_task(t: Task) -> TaskDone:
    """Run one task, one thread (the same in every process)."""
    t0 = time.perf_counter()
    try:
        with _one_thread():
            out = t.run()
    except Exception as exc:  # noqa: BLE001 - reported by the claim that needs the task
        return TaskDone(t.key, None, f"{type(exc).__name__}: {exc}", time.perf_counter() - t0)
    return TaskDone(t.key, out, None, time.perf_counter() - t0)


def _work(item: Job | Task) -> ClaimResult | TaskDone:
    """Stage 1's work items: a task, or a claim without tasks."""
    return run_task(item) if isinstance(item, Task) else verify_one(item)


class _LostTask:
    """A task lost with its worker after the retries (``reason``)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


def plan(job: Job) -> list[Task]:
    """The tasks of ``job``'s claim (:func:`fedtheory.tasks.claim_tasks`); none when planning
    fails (the claim then computes, and reports the failure as its check's error)."""
    try:
        return claim_tasks(job.claim_id, job.preset, job.seed)
    except Exception:  # noqa: BLE001 - the claim's own run reports it
        return []


def run_jobs(jobs: Sequence[Job], n_workers: int = 1,
             on_result: Callable[[ClaimResult], None] | None = None,
             executor: Executor | None = None,
             progress: Any | None = None) -> list[ClaimResult]:
    """Verify ``jobs`` on ``executor`` (default: ``n_workers`` local processes, serial for one);
    results in the order of ``jobs``.

    ``on_result(result)`` is called as each claim finishes, in the order they finish.
    ``progress``, if given, is told the work before it starts (``start(items)``: a list of
    ``(label, cost)``, tasks then claims, ``cost`` None when unknown) and each item as it
    finishes (``done(label, seconds, status)``).
    """
    from fedtheory.executors import SerialExecutor, error_result, make_executor

    if n_workers < 1:
        raise ValueError(f"n_workers must be >= 1, got {n_workers}")
    if executor is None:
        executor = SerialExecutor() if len(jobs) <= 1 else make_executor(n_workers)
    plans = [plan(job) for job in jobs]
    unique: dict[str, Task] = {}
    for tasks in plans:
        for t in tasks:
            unique.setdefault(t.key, t)
    order = sorted(unique.values(), key=lambda t: -t.cost)  # costliest first (stable)
    free = [k for k, tasks in enumerate(plans) if not tasks]
    planned = [k for k, tasks in enumerate(plans) if tasks]
    if progress is not None:
        progress.start([(t.key, t.cost) for t in order]
                       + [(jobs[k].claim_id, None) for k in free + planned])
    results: dict[int, ClaimResult] = {}

    def collect(k: int, res: ClaimResult) -> None:
        results[k] = res
        if progress is not None:
            progress.done(res.id, res.seconds, res.verdict.value)
        if on_result:
            on_result(res)

    # First the claims without tasks (each a single piece of work, up to tens of seconds),
    # then every task, costliest first, so that the run ends with small pieces. A claim
    # with tasks is brought in, with their results, as soon as its last task is done (ahead
    # of the items not yet started).
    done: dict[str, TaskDone | _LostTask] = {}
    work: list[Job | Task] = [*(jobs[k] for k in free), *order]
    claim_of = dict(enumerate(free))  # index in work -> index in jobs (claims only)
    waiting = {k: {t.key for t in plans[k]} for k in planned}
    needed_by: dict[str, list[int]] = {}
    for k in planned:
        for t in plans[k]:
            needed_by.setdefault(t.key, []).append(k)

    def ready(k: int) -> Job | None:
        """Claim ``k``'s job with its tasks' results, or None (collected as an error) when
        one of its tasks was lost."""
        gone = [t.key for t in plans[k] if isinstance(done[t.key], _LostTask)]
        if gone:
            lost_task = done[gone[0]]
            assert isinstance(lost_task, _LostTask)
            collect(k, error_result(jobs[k], f"task {gone[0]} of this claim was lost: "
                                             f"{lost_task.reason}"))
            return None
        got = {}
        for t in plans[k]:
            out = done[t.key]
            assert isinstance(out, TaskDone)
            if out.error is None:  # a failed task is recomputed, and its error reported, there
                got[t.key] = out.result
        return replace(jobs[k], provided=got)

    def finished(i: int, out: Any) -> list[Job]:
        item = work[i]
        if not isinstance(item, Task):
            k = claim_of[i]
            if k in waiting:  # a claim's seconds: its checks' and its tasks' (wherever run;
                # a task shared by several claims in equal parts)
                out.seconds += sum(getattr(done[t.key], "seconds", 0.0) / len(needed_by[t.key])
                                   for t in plans[k])
            collect(k, out)
            return []
        done[item.key] = out
        if progress is not None:
            lost = isinstance(out, _LostTask)
            progress.done(item.key, 0.0 if lost else out.seconds,
                          "lost" if lost else "error" if out.error else "done")
        more: list[Job] = []
        for k in needed_by.get(item.key, []):
            waiting[k].discard(item.key)
            if not waiting[k]:
                job = ready(k)
                if job is not None:
                    claim_of[len(work) + len(more)] = k  # the index it is appended at
                    more.append(job)
        return more

    def lost(i: int, reason: str) -> Any:
        item = work[i]
        return _LostTask(reason) if isinstance(item, Task) else error_result(item, reason)

    def label(i: int) -> str:
        item = work[i]
        return item.key if isinstance(item, Task) else item.claim_id

    executor.map(_work, work, finished, lost=lost, label=label)
    return [results[k] for k in range(len(jobs))]
