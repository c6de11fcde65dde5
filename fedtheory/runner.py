"""Run the checks of many claims, serially, in worker processes or on a Dask cluster
(:mod:`fedtheory.executors`), with the same numbers.

The unit of parallel work is a task (:mod:`fedtheory.tasks`), not a claim. A run first plans
every selected claim (:func:`plan`: the tasks of the datasets it declares, nothing computed),
then executes the claims that have no tasks and the tasks of every other one (replica chunks,
sweep points), the costliest first; a claim with tasks is verified as soon as its last task is
done, given their results (:attr:`Job.provided`, handed to its checks in its run's
:class:`~fedtheory.cache.Cache`), ahead of the work not yet started. A task planned by several
claims (the same key: a dataset they share) runs once, and its result goes to each of them. A
claim one of whose tasks was lost with its worker for good is reported as ``error`` (never a
verdict on partial data); so is a claim whose planning fails (check ``plan``, with the error:
never a silent run without its tasks).

Every claim and task runs under a one-thread BLAS limit and with the engine's own threads
limited to one (:func:`fedtheory.simulate.max_threads`), in the parent as in the workers, so
that the summation order of matrix products (and so the last digits of every number) does not
depend on ``--jobs``, and a worker uses one core: the same seed and preset give the same report
whatever the parallelism. Results are handed to ``on_result`` as they finish; the returned list
is in the order asked.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from fedtheory import sandbox
from fedtheory.cache import Cache
from fedtheory.certify import certify
from fedtheory.certify.lyapunov import certify_rate
from fedtheory.claimkit.core import CheckResult, ClaimResult, Verdict
from fedtheory.claimkit.power import power
from fedtheory.claims.registry import get_claim
from fedtheory.executors import Executor, SerialExecutor, make_executor
from fedtheory.simulate import max_threads
from fedtheory.tasks import ClaimPlan, Task, plan_claim

__all__ = ["Job", "TaskDone", "certify_entry", "certify_rate_entry", "draw_figures",
           "error_result", "plan", "run_jobs", "run_task", "verify_one"]


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
    #: Also certify the worst case of the claim's one-step inequality (``--certify``:
    #: :func:`fedtheory.certify.certify`, needs the ``pep`` extra).
    certify: bool = False
    #: Results of the claim's tasks computed elsewhere (task key -> result).
    provided: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    """BLAS/OpenMP pools (threadpoolctl, when installed) and the engine's threads limited to
    one."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        blas: Any = contextlib.nullcontext()
    else:
        blas = threadpool_limits(1)
    with blas, max_threads(1):
        yield


def verify_one(job: Job) -> ClaimResult:
    """Verify one claim, one thread (the same in every process), in a cache of its own holding
    its provided task results (its datasets combine them instead of computing them); then draw
    the figures its checks asked for into ``job.figure_dir`` (none when it is None), titled
    with the claim and its verdict (:func:`fedtheory.plotting.figures.draw_result`)."""
    claim = get_claim(job.claim_id)
    cache = Cache(job.provided)
    with _one_thread():
        res = claim.verify(preset=job.preset, seed=job.seed, figure_dir=job.figure_dir,
                           only=job.only, cache=cache)
        if job.power:
            res.power = power(claim, job.preset, job.seed, base=res, cache=cache)
        if job.certify:
            res.certified = certify_entry(claim.one_step, job.preset)
            if claim.rate is not None:
                res.certified["rate"] = certify_rate_entry(claim.rate, job.preset)
        try:
            draw_figures(res, job.figure_dir)
        except OSError as exc:  # a full disk, a folder made read-only: the run's output fails
            where = exc.filename or job.figure_dir
            raise sandbox.OutputError(str(where), exc.strerror or str(exc)) from None
    return res


def certify_entry(one_step: Any, preset: str) -> dict[str, Any]:
    """The claim's ``certified`` entry (:func:`fedtheory.certify.certify`); a failure is
    reported in it (status ``error``), never as the claim's verdict."""
    t0 = time.perf_counter()
    try:
        return certify(one_step, quick=preset == "quick")
    except Exception as exc:  # noqa: BLE001 - reported in the entry
        return {"status": "error", "reason": f"{type(exc).__name__}: {exc}", "ratio": None,
                "lower": None, "upper": None, "instances": [], "solver": None,
                "seconds": round(time.perf_counter() - t0, 3)}


def certify_rate_entry(rate: Any, preset: str) -> dict[str, Any]:
    """The claim's ``certified.rate`` entry (:func:`fedtheory.certify.lyapunov.certify_rate`);
    a failure is reported in it (status ``error``), never as the claim's verdict."""
    t0 = time.perf_counter()
    try:
        return certify_rate(rate, quick=preset == "quick")
    except Exception as exc:  # noqa: BLE001 - reported in the entry
        return {"status": "error", "reason": f"{type(exc).__name__}: {exc}", "instances": [],
                "seconds": round(time.perf_counter() - t0, 3)}


def draw_figures(res: ClaimResult, figure_dir: str | None) -> None:
    """Draw ``res``'s figures into ``figure_dir`` (their paths join their checks'
    ``figures``), or drop them when figures are off; either way ``res.drawings`` is emptied
    (a result sent back from a worker carries no figure data)."""
    if figure_dir is None or not res.drawings:
        res.drawings = []
        return
    # matplotlib is imported only by a run that draws (a heavy import, optional for a run)
    from fedtheory.plotting.figures import draw_result

    draw_result(res, figure_dir)


def error_result(job: Job, reason: str, check: str = "worker") -> ClaimResult:
    """The result of a job that could not be run to the end: verdict ``error``, one check
    ``check`` carrying ``reason``, no evidence (never a verdict on partial data)."""
    claim = get_claim(job.claim_id)
    failed = CheckResult(name=check, kind="monte_carlo", passed=None, measured=None,
                         theoretical=None, detail=reason, error=reason)
    return ClaimResult(
        id=claim.id, family=claim.family, seed_ref=claim.seed_ref, kind=claim.kind.value,
        statement=claim.statement, verdict=Verdict.ERROR, checks=[failed], counterexample=None,
        preset=job.preset, seed=job.seed, seconds=0.0, title=claim.title,
        derivation=claim.derivation,
    )


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
    """Run one task, one thread (the same in every process), under the run's time limit
    (:func:`fedtheory.sandbox.current_limit`); whatever it raises but the user's interrupt is
    its error."""
    t0 = time.perf_counter()
    try:
        sandbox.running(t.key, "", None)
        with _one_thread(), sandbox.time_limit(sandbox.current_limit(), f"task {t.key}"):
            out = t.run()
    except BaseException as exc:  # reported by the claim that needs the task
        if not sandbox.own_error(exc):
            raise
        return TaskDone(t.key, None, f"{type(exc).__name__}: {exc}", time.perf_counter() - t0)
    return TaskDone(t.key, out, None, time.perf_counter() - t0)


def _work(item: Job | Task, limit: float | None = None) -> ClaimResult | TaskDone:
    """Stage 1's work items: a task, or a claim without tasks; each check (and task) has at
    most ``limit`` seconds. Whatever a claim raises outside its checks (but the user's
    interrupt, or an output that cannot be written) is its error."""
    with sandbox.check_limit(limit):
        if isinstance(item, Task):
            return run_task(item)
        try:
            return verify_one(item)
        except sandbox.OutputError:
            raise
        except BaseException as exc:
            if not sandbox.own_error(exc):
                raise
            return error_result(item, f"{type(exc).__name__}: {exc}")


class _LostTask:
    """A task lost with its worker after the retries (``reason``)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


def plan(job: Job) -> ClaimPlan:
    """The plan of ``job``'s claim (:func:`fedtheory.tasks.plan_claim`: the tasks of the
    datasets it declares); raises what planning raises."""
    return plan_claim(get_claim(job.claim_id), job.preset, job.seed)


def _plans(jobs: Sequence[Job]) -> tuple[list[list[Task]], dict[int, str]]:
    """Each job's tasks, and the planning errors (job index -> reason): a claim whose planning
    fails is that claim's error, reported as such."""
    plans: list[list[Task]] = []
    errors: dict[int, str] = {}
    for k, job in enumerate(jobs):
        try:
            plans.append(list(plan(job).tasks))
        except BaseException as exc:  # the claim's error, reported as its result
            if not sandbox.own_error(exc):
                raise
            plans.append([])
            errors[k] = f"planning the claim's tasks failed: {type(exc).__name__}: {exc}"
    return plans, errors


def run_jobs(jobs: Sequence[Job], n_workers: int = 1,
             on_result: Callable[[ClaimResult], None] | None = None,
             executor: Executor | None = None,
             progress: Any | None = None,
             check_timeout: float | None = None) -> list[ClaimResult]:
    """Verify ``jobs`` on ``executor`` (default: ``n_workers`` local processes, serial for one);
    results in the order of ``jobs``. Each check (and task) has at most ``check_timeout``
    seconds (None: the preset's default, :data:`fedtheory.sandbox.DEFAULT_TIMEOUT`; 0: no
    limit); over it, it is its claim's error.

    ``on_result(result)`` is called as each claim finishes, in the order they finish.
    ``progress``, if given, is told the work before it starts (``start(items)``: a list of
    ``(label, cost)``, tasks then claims, ``cost`` None when unknown), each item as it
    finishes (``done(label, seconds, status)``) and, if it has ``running(claim, check,
    mutant)``, each check as it starts (serially and in local workers; a task is ``running(key,
    "", None)``).
    """
    if n_workers < 1:
        raise ValueError(f"n_workers must be >= 1, got {n_workers}")
    if executor is None:
        executor = SerialExecutor() if len(jobs) <= 1 else make_executor(n_workers)
    plans, failed = _plans(jobs)
    unique: dict[str, Task] = {}
    for tasks in plans:
        for t in tasks:
            unique.setdefault(t.key, t)
    order = sorted(unique.values(), key=lambda t: -t.cost)  # costliest first (stable)
    free = [k for k, tasks in enumerate(plans) if not tasks and k not in failed]
    planned = [k for k, tasks in enumerate(plans) if tasks]
    if progress is not None:
        progress.start([(t.key, t.cost) for t in order]
                       + [(jobs[k].claim_id, None) for k in [*free, *planned, *failed]])
    results: dict[int, ClaimResult] = {}

    def collect(k: int, res: ClaimResult) -> None:
        results[k] = res
        if progress is not None:
            progress.done(res.id, res.seconds, res.verdict.value)
        if on_result:
            on_result(res)

    for k, reason in failed.items():
        collect(k, error_result(jobs[k], reason, check="plan"))

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

    if progress is not None and callable(getattr(progress, "running", None)):
        executor.status = progress.running  # the check each worker runs, where it can be seen
    if check_timeout is None:
        check_timeout = max((sandbox.DEFAULT_TIMEOUT.get(j.preset, 0.0) for j in jobs),
                            default=0.0)
    executor.map(functools.partial(_work, limit=check_timeout or None), work, finished,
                 lost=lost, label=label)
    return [results[k] for k in range(len(jobs))]
