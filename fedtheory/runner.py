"""Run the checks of many claims, serially, in worker processes or on a Dask cluster
(:mod:`fedtheory.executors`), with the same numbers.

Every claim is verified under a one-thread BLAS limit, in the parent as in the workers, so that
the summation order of matrix products (and so the last digits of every number) does not
depend on ``--jobs``: the same seed and preset give the same report whatever the parallelism.
Results are handed to ``on_result`` as they finish; the returned list is in the order asked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fedtheory.claims.core import ClaimResult
from fedtheory.claims.power import power
from fedtheory.claims.registry import get_claim

if TYPE_CHECKING:
    from fedtheory.executors import Executor

__all__ = ["Job", "run_jobs", "verify_one"]


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


def _limit_blas():
    """A context manager that limits BLAS/OpenMP pools to one thread (no-op without
    threadpoolctl)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(1)


def verify_one(job: Job) -> ClaimResult:
    """Verify one claim under a one-thread BLAS limit (the same in every process)."""
    claim = get_claim(job.claim_id)
    with _limit_blas():
        res = claim.verify(preset=job.preset, seed=job.seed, figure_dir=job.figure_dir,
                           only=job.only)
        if job.power:
            res.power = power(claim, job.preset, job.seed)
    return res


def run_jobs(jobs: Sequence[Job], n_workers: int = 1,
             on_result: Callable[[ClaimResult], None] | None = None,
             executor: Executor | None = None) -> list[ClaimResult]:
    """Verify ``jobs`` on ``executor`` (default: ``n_workers`` local processes, serial for one);
    results in the order of ``jobs``.

    ``on_result(result)`` is called as each claim finishes, in the order they finish.
    """
    from fedtheory.executors import SerialExecutor, make_executor

    if n_workers < 1:
        raise ValueError(f"n_workers must be >= 1, got {n_workers}")
    if executor is None:
        executor = SerialExecutor() if len(jobs) <= 1 else make_executor(n_workers)
    results: dict[int, ClaimResult] = {}

    def collect(k: int, res: ClaimResult) -> None:
        results[k] = res
        if on_result:
            on_result(res)

    executor.run(jobs, collect)
    return [results[k] for k in range(len(jobs))]
