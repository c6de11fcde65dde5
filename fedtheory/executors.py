r"""Where the claims of a run are verified: serially, in local worker processes, or on a Dask
cluster, with the same numbers and surviving lost workers.

Every executor maps a picklable function over items (:meth:`Executor.map`: the claims and
the tasks of a run, :mod:`fedtheory.tasks`, or anything else), handing each result to
``on_result`` as it finishes; a result may bring in further items (a claim whose tasks are all
done), which run ahead of the items not yet started. What an item computes depends only on
the item (a claim, its preset and seed; a task and its arguments: every random stream is
derived from them), so the results are identical whatever the executor, the number of
workers and the order items finish in.

A worker that dies (the out-of-memory killer, a segfault, a lost machine) loses the job it was
running, never the finished ones:

* :class:`ProcessExecutor` notices the broken pool, keeps every result it already has, and
  re-runs the lost jobs in a fresh pool; a job lost ``retries + 1`` times is re-run alone (so
  that a job that kills its worker cannot take innocent ones with it) and, lost again, is
  reported as verdict ``error`` with the reason. A verdict is never computed on partial data: a
  job's result exists only when the whole claim finished.
* :class:`DaskExecutor` relies on Dask's own rescheduling of the tasks of a dead worker
  (``distributed.scheduler.allowed-failures``); a task that keeps killing workers ends as
  ``KilledWorker``, reported as ``error``.

Both count the re-runs (:attr:`Executor.reruns`: claim id or task key -> times lost), which
the report's provenance lists.

An interrupt (``KeyboardInterrupt``: Ctrl-C, or SIGTERM turned into one by the command line)
stops a run at once, without tracebacks from the workers: local workers, and the workers of a
``local:N`` Dask cluster, ignore SIGINT (the terminal sends it to the whole process group; the
parent decides); local workers are terminated and the jobs not started cancelled; a Dask run's
futures are cancelled before its client (and its local cluster) is closed. The results handed
to ``on_result`` before the interrupt stay with the caller. A local worker ends when the main
process dies, even by ``kill -9`` (:func:`_die_with_parent`).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import signal
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from fedtheory import sandbox

__all__ = ["DaskExecutor", "Executor", "ProcessExecutor", "SerialExecutor", "check_dask_address",
           "make_executor"]

#: ``on_result(index, value)``; may return further items to run (see :meth:`Executor.map`).
OnItem = Callable[[int, Any], "Sequence[Any] | None"]
Lost = Callable[[int, str], Any]
Status = Callable[[str, str, "str | None"], None]


class Executor:
    """Runs picklable work items (:meth:`map`), handing each result to a callback as it
    finishes (the caller orders the results). Knows nothing of claims: the run
    (:func:`fedtheory.runner.run_jobs`) gives it claims and tasks as items."""

    name = "executor"
    workers = 1

    def __init__(self) -> None:
        #: claim id or task key -> how many times it was lost with a worker and re-run.
        self.reruns: dict[str, int] = {}
        #: ``status(claim, check, mutant)``, told as each check starts (where the executor
        #: can see it: this process and local workers), or None.
        self.status: Status | None = None

    def map(self, fn: Callable[[Any], Any], items: list[Any], on_result: OnItem,
            lost: Lost | None = None,
            label: Callable[[int], str] = str) -> None:  # pragma: no cover
        """Run ``fn(item)`` for every item (``fn`` and the items picklable); call
        ``on_result(index, value)`` as each finishes. ``on_result`` may return further items:
        they are appended to ``items`` (their indices follow) and run before the items not
        yet started (a claim whose tasks are all done goes ahead of the remaining tasks). A
        task lost with its worker after the retries becomes ``lost(index, reason)`` (default:
        ``RuntimeError``), handed to ``on_result`` like a value; ``label(index)`` names it in
        :attr:`reruns`."""
        raise NotImplementedError

    def describe(self) -> str:
        return f"{self.name} ({self.workers} worker{'s' if self.workers != 1 else ''})"


class SerialExecutor(Executor):
    """One job after another in this process."""

    name = "serial"

    def map(self, fn: Callable[[Any], Any], items: list[Any], on_result: OnItem,
            lost: Lost | None = None, label: Callable[[int], str] = str) -> None:
        queue = deque(range(len(items)))
        sandbox.set_status_hook(self.status)
        try:
            while queue:
                k = queue.popleft()
                more = on_result(k, fn(items[k])) or ()
                queue.extendleft(reversed(_append(items, more)))
        finally:
            sandbox.set_status_hook(None)


def _init_worker(status_dir: str | None = None) -> None:
    """A local worker: no display; SIGINT ignored (Ctrl-C reaches the whole process group: the
    parent stops the run and ends its workers), SIGTERM ends it (handlers inherited from the
    parent by ``fork`` are reset); it ends when its parent dies (:func:`_die_with_parent`).
    With ``status_dir``, the check it runs is written there (:class:`_StatusFiles`)."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _die_with_parent()
    sandbox.set_status_hook(_StatusFiles.writer(status_dir) if status_dir else None)


class _StatusFiles:
    """What each local worker runs, for the parent's progress line: a worker writes
    ``claim<TAB>check<TAB>mutant`` to ``<folder>/<pid>`` as each check starts (a rename: no
    lock a killed worker could hold); a thread of the parent reads the folder and tells
    ``status`` of every change."""

    def __init__(self, status: Status, every: float = 0.25) -> None:
        import tempfile

        self.folder = tempfile.mkdtemp(prefix="fedtheory-status-")
        self.status, self.every = status, every
        self.stop = threading.Event()
        self.seen: dict[str, str] = {}
        self.thread = threading.Thread(target=self._watch, name="fedtheory-status",
                                       daemon=True)
        self.thread.start()

    @staticmethod
    def writer(folder: str) -> Status:
        path = os.path.join(folder, str(os.getpid()))

        def write(claim: str, check: str, mutant: str | None) -> None:
            tmp = f"{path}.tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(f"{claim}\t{check}\t{mutant or ''}")
            os.replace(tmp, path)

        return write

    def _watch(self) -> None:
        while not self.stop.wait(self.every):
            self.poll()

    def poll(self) -> None:
        try:
            names = [n for n in os.listdir(self.folder) if n.isdigit()]
        except OSError:
            return
        for name in sorted(names):
            try:
                with open(os.path.join(self.folder, name), encoding="utf-8") as fh:
                    text = fh.read()
            except OSError:
                continue
            if self.seen.get(name) != text and text.count("\t") == 2:
                self.seen[name] = text
                claim, check, mutant = text.split("\t")
                with contextlib.suppress(Exception):  # progress never stops a run
                    self.status(claim, check, mutant or None)

    def close(self) -> None:
        import shutil

        self.stop.set()
        self.thread.join(5)
        shutil.rmtree(self.folder, ignore_errors=True)


#: How often (seconds) a local worker looks whether its parent is still there.
PARENT_POLL = 1.0


def _die_with_parent() -> None:
    """End this worker when the process that started it dies, even by ``kill -9`` (which
    leaves it no time to end its workers): on Linux the kernel sends SIGTERM
    (``prctl(PR_SET_PDEATHSIG)``); everywhere a daemon thread ends the process once its parent
    has changed (it was re-parented)."""
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    if os.getppid() != parent:  # died before the line above
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(PARENT_POLL)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="fedtheory-parent-watch", daemon=True).start()


def _stop(pool: ProcessPoolExecutor, grace: float = 5.0) -> None:
    """End ``pool`` now: cancel the jobs not started and terminate its workers (SIGTERM, then
    SIGKILL after ``grace`` seconds), without waiting for the running jobs."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        with contextlib.suppress(Exception):
            proc.terminate()
    for proc in processes:
        with contextlib.suppress(Exception):
            proc.join(grace)
            if proc.is_alive():
                proc.kill()
                proc.join(grace)


class ProcessExecutor(Executor):
    """Local worker processes (``fedtheory verify --jobs N``), re-running the jobs of a worker
    that died.

    Parameters
    ----------
    workers:
        Number of processes (>= 1).
    retries:
        How many times a lost job is re-run with others before it is run alone; lost alone
        too, it is reported as ``error``.
    """

    name = "processes"

    def __init__(self, workers: int, retries: int = 1) -> None:
        super().__init__()
        if not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
        if not isinstance(retries, int) or retries < 0:
            raise ValueError(f"retries must be an integer >= 0, got {retries!r}")
        self.workers, self.retries = workers, retries

    _status_dir: str | None = None

    def _round(self, fn: Callable[[Any], Any], items: list[Any], todo: list[int],
               workers: int, on_result: OnItem) -> list[int]:
        """Run ``todo`` (indices into ``items``) and the items their results bring in one
        pool; return the indices lost with it. At most two items per worker are in flight, so
        that items brought in go ahead of those not yet started."""
        lost: list[int] = []
        queue = deque(todo)
        pool = ProcessPoolExecutor(max_workers=max(1, min(workers, len(todo))),
                                   initializer=_init_worker, initargs=(self._status_dir,))
        try:
            running: dict[Future[Any], int] = {}

            def top_up() -> None:
                while queue and len(running) < 2 * workers:
                    k = queue.popleft()
                    try:
                        running[pool.submit(fn, items[k])] = k
                    except BrokenProcessPool:
                        lost.append(k)

            top_up()
            while running:
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for fut in finished:
                    k = running.pop(fut)
                    try:
                        res = fut.result()
                    except BrokenProcessPool:
                        lost.append(k)
                        continue
                    queue.extendleft(reversed(_append(items, on_result(k, res) or ())))
                top_up()
            lost.extend(queue)  # never started: the pool broke
        except BaseException:  # an interrupt (or a failing on_result): end the workers now
            _stop(pool)
            raise
        pool.shutdown(wait=True)
        return sorted(lost)

    def map(self, fn: Callable[[Any], Any], items: list[Any], on_result: OnItem,
            lost: Lost | None = None, label: Callable[[int], str] = str) -> None:
        files = _StatusFiles(self.status) if self.status is not None else None
        self._status_dir = files.folder if files is not None else None
        try:
            self._map(fn, items, on_result, lost, label)
        finally:
            if files is not None:
                files.close()
            self._status_dir = None

    def _map(self, fn: Callable[[Any], Any], items: list[Any], on_result: OnItem,
             lost: Lost | None, label: Callable[[int], str]) -> None:
        todo = list(range(len(items)))
        attempts: dict[int, int] = {}
        while todo:
            gone = self._round(fn, items, todo, self.workers, on_result)
            for k in gone:
                attempts[k] = attempts.get(k, 0) + 1
                self.reruns[label(k)] = attempts[k]
            todo = [k for k in gone if attempts[k] <= self.retries]
            for k in (k for k in gone if attempts[k] > self.retries):
                # lost more often than the others: run it alone, once
                again = self._round(fn, items, [k], 1, on_result)
                todo += [j for j in again if j != k]  # items it brought in, lost with it
                if k in again:
                    self.reruns[label(k)] = attempts[k] + 1
                    reason = (f"the worker process running this task died {attempts[k] + 1} "
                              "times (killed, e.g. by the out-of-memory killer, or crashed), "
                              "the last time running it alone; no result")
                    todo += _append(items, on_result(k, _lost(lost, k, reason)) or ())


class DaskExecutor(Executor):
    """A Dask distributed cluster (``fedtheory verify --dask ADDRESS``), or a
    ``distributed.LocalCluster`` of ``N`` single-threaded worker processes started for the run
    (``--dask local:N``). Needs ``pip install "fedtheory[dask]"``."""

    name = "dask"

    def __init__(self, address: str, plugins: Sequence[Any] = ()) -> None:
        """``plugins``: Dask worker plugins registered on the cluster before any work (e.g.
        :class:`fedtheory.dask_claims.ClaimFiles`, the run's claim files for every worker)."""
        super().__init__()
        self.plugins = tuple(plugins)
        try:
            import distributed  # noqa: F401
        except ImportError as exc:
            raise ValueError(f"--dask {address}: Dask is not installed; "
                             'pip install "fedtheory[dask]"') from exc
        self.address = address
        self.local_workers = check_dask_address(address)
        self.workers = self.local_workers or 0

    def describe(self) -> str:
        return f"dask ({self.address})"

    def _client(self) -> Any:
        import dask
        from distributed import Client, LocalCluster

        if self.local_workers is not None:
            # Dask starts its workers with MALLOC_TRIM_THRESHOLD_=65536, which hands every
            # freed block over 64 KiB back to the system: numpy's temporaries then cost page
            # faults on every allocation, and claims ran about twice as slow as in local
            # processes (measured). Our workers keep glibc's default.
            key = "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_"
            try:
                with dask.config.set({key: None}), _sigint_ignored():
                    cluster = LocalCluster(n_workers=self.local_workers, threads_per_worker=1,
                                           processes=True, dashboard_address=None,
                                           silence_logs=logging.CRITICAL)
            except Exception as exc:  # noqa: BLE001 - no cluster: one line, no traceback
                raise ValueError(f"--dask {self.address}: could not start "
                                 f"{self.local_workers} local Dask worker(s): "
                                 f"{type(exc).__name__}: {exc}") from None
            client = Client(cluster)
        else:
            try:
                client, cluster = Client(self.address, timeout=CONNECT_TIMEOUT), None
            except (OSError, TimeoutError) as exc:
                raise ValueError(f"--dask {self.address}: no Dask scheduler answered within "
                                 f"{CONNECT_TIMEOUT:g} s ({type(exc).__name__}); is it "
                                 "running, and is the address right?") from None
        for plugin in self.plugins:
            client.register_plugin(plugin)
        return client, cluster

    def map(self, fn: Callable[[Any], Any], items: list[Any], on_result: OnItem,
            lost: Lost | None = None, label: Callable[[int], str] = str) -> None:
        from distributed import as_completed as dask_completed
        from distributed.scheduler import KilledWorker

        client, cluster = self._client()
        futures: dict[Any, int] = {}
        try:
            self.workers = len(client.scheduler_info().get("workers", {})) or self.workers
            tag = uuid.uuid4().hex[:8]
            keys = [f"fedtheory-{tag}-{k}" for k in range(len(items))]
            fn = functools.partial(_in_dask_worker, fn)
            futures.update(zip(client.map(fn, list(items), key=keys, pure=False),
                               range(len(items)), strict=True))
            pending = dask_completed(list(futures))
            for fut in pending:
                k = futures[fut]
                try:
                    res = fut.result()
                except KilledWorker as exc:
                    res = _lost(lost, k, f"Dask lost the workers running this task too "
                                         f"often ({exc}; a check still blocked long after "
                                         "its time limit ends its worker); no result")
                for j in _append(items, on_result(k, res) or ()):
                    # items brought in go ahead of those not yet started
                    new = client.submit(fn, items[j], key=f"fedtheory-{tag}-{j}", pure=False,
                                        priority=1)
                    futures[new] = j
                    pending.add(new)
            # one question to the scheduler at the end (the futures held keep the tasks)
            for key, gone in _suspicious(client, [f.key for f in futures]).items():
                self.reruns[label(int(key.rsplit("-", 1)[1]))] = gone
        except BaseException:  # an interrupt: what is queued or running is dropped, quietly
            with contextlib.suppress(Exception):
                client.cancel(list(futures), force=True)
            raise
        finally:
            _close_quietly(client, cluster)


#: Seconds to wait for a Dask scheduler to answer (``--dask ADDRESS``).
CONNECT_TIMEOUT = 10.0

#: ``local:N`` starts at most this many workers per core, and one per this many bytes of the
#: memory available (a worker holds about 175 MB before it runs anything).
LOCAL_PER_CORE = 4
LOCAL_WORKER_BYTES = 512 * 2**20


def _available_memory() -> int | None:
    """Bytes of memory available to start processes (Linux: MemAvailable), or None."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (OSError, ValueError, AttributeError):
        return None


def check_dask_address(address: Any) -> int | None:
    """Check a ``--dask`` address before any work: ``local:N`` (returns N, at most
    :data:`LOCAL_PER_CORE` per core and one per :data:`LOCAL_WORKER_BYTES` of the memory
    available) or a scheduler address (``tcp://host:port``, ``host:port``; returns None).
    ``ValueError`` saying what is wrong.

    >>> check_dask_address("local:2"), check_dask_address("tcp://10.0.0.1:8786")
    (2, None)
    """
    if not isinstance(address, str) or not address.strip():
        raise ValueError(f"--dask must be a scheduler address (tcp://HOST:PORT) or local:N, "
                         f"got {address!r}")
    if address.startswith("local:"):
        n = address.removeprefix("local:")
        if not n.isdigit() or int(n) < 1:
            raise ValueError(f"--dask {address}: local:N needs an integer N >= 1")
        cores = os.cpu_count() or 1
        bound, why = cores * LOCAL_PER_CORE, f"{LOCAL_PER_CORE} per core, {cores} cores"
        memory = _available_memory()
        if memory is not None and memory // LOCAL_WORKER_BYTES < bound:
            bound = max(1, memory // LOCAL_WORKER_BYTES)
            why = (f"one per {LOCAL_WORKER_BYTES // 2**20} MiB of the "
                   f"{memory / 2**30:.1f} GiB of memory available")
        if int(n) > bound:
            raise ValueError(f"--dask {address}: this machine can start at most {bound} "
                             f"local workers ({why})")
        return int(n)
    rest = address.split("://", 1)[-1]
    host, _, port = rest.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536 or any(
            ch.isspace() for ch in address):
        raise ValueError(f"--dask {address!r}: not a scheduler address (tcp://HOST:PORT) "
                         "or local:N")
    return None


def _in_dask_worker(fn: Callable[[Any], Any], item: Any) -> Any:
    """``fn(item)`` in a Dask worker, where a check still running well after its time limit
    (a blocking call the timeout cannot interrupt in a worker's thread) ends the worker."""
    sandbox.allow_hard_stop()
    return fn(item)


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored while the block runs (in the main thread; elsewhere nothing changes).

    Processes started meanwhile inherit it: a local Dask cluster's workers then leave Ctrl-C,
    which the terminal sends to the whole process group, to the parent, which stops the run
    and closes the cluster (without it each worker prints a ``KeyboardInterrupt`` traceback).
    A Ctrl-C while the cluster starts (seconds) is ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old if old is not None else signal.SIG_DFL)


def _close_quietly(client: Any, cluster: Any) -> None:
    """Close a Dask client (and the local cluster started for it) without its shutdown
    chatter: distributed logs closed comms and cancelled tasks at levels up to ERROR."""
    names = ("distributed", "tornado", "asyncio")
    levels = {n: logging.getLogger(n).level for n in names}
    for n in names:
        logging.getLogger(n).setLevel(logging.CRITICAL)
    try:
        with contextlib.suppress(Exception):
            client.close()
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.close()
    finally:
        for n, level in levels.items():
            logging.getLogger(n).setLevel(level)


def _append(items: list[Any], more: Sequence[Any]) -> list[int]:
    """Append ``more`` to ``items``; their indices."""
    start = len(items)
    items.extend(more)
    return list(range(start, len(items)))


def _lost(lost: Lost | None, k: int, reason: str) -> Any:
    """What a task lost for good becomes: ``lost(k, reason)``, or a ``RuntimeError``."""
    if lost is None:
        raise RuntimeError(f"task {k}: {reason}")
    return lost(k, reason)


def _suspicious(client: Any, keys: list[str]) -> dict[str, int]:
    """How many workers died running each task of ``keys`` (the scheduler's counts; tasks
    with none, or counts it cannot give, are left out)."""

    def count(dask_scheduler: Any, keys: list[str] = keys) -> dict[str, int]:
        out = {}
        for key in keys:
            ts = dask_scheduler.tasks.get(key)
            n = int(getattr(ts, "suspicious", 0) or 0) if ts is not None else 0
            if n:
                out[key] = n
        return out

    try:
        return dict(client.run_on_scheduler(count))
    except Exception:  # noqa: BLE001 - counts we cannot read are reported as none
        return {}


def make_executor(jobs: int = 1, dask: str | None = None,
                  plugins: Sequence[Any] = ()) -> Executor:
    """The executor of ``fedtheory verify``: Dask when ``dask`` is given (with its worker
    ``plugins``), else ``jobs`` local processes (serial for one)."""
    if dask is not None:
        return DaskExecutor(dask, plugins)
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be an integer >= 1, got {jobs!r}")
    return SerialExecutor() if jobs == 1 else ProcessExecutor(jobs)
