r"""The session of a ``fedtheory verify`` run in a folder: one run at a time, no stale files,
outputs that fail loudly.

* :func:`lock_folder`: the run holds an ``fcntl.flock`` lock on ``.fedtheory/lock`` (its pid
  inside) while it writes the run record; a second run in the same folder is refused, naming
  the first one's pid. The kernel releases the lock with the process, so a run killed with
  ``kill -9`` leaves no stale lock. A folder where ``.fedtheory/`` cannot be written: the run
  record is skipped, and the run says so in one line.
* :func:`remove_stale_temporary`: the temporary files of an atomic write
  (:func:`fedtheory.report.atomic_write_text`: ``.<name>.<pid>.<hex>.tmp``) left by a run
  killed between write and rename are removed by the next run, when their process is gone
  (or they are older than :data:`STALE_SECONDS`).
* :class:`Outputs`: writes the run record and the ``--json`` report (the reports rewritten as
  each claim finishes: :attr:`fedtheory.report.ReportWriter.incremental`); an ``OSError`` (a full
  disk, a read-only or vanished folder) is one line naming the file and the OS's reason: for
  the run record, the run goes on without it (an earlier run's record removed where it can
  be, this run's own left marked incomplete) and exits 1; for the report,
  :class:`fedtheory.sandbox.OutputError` stops the run, as an interrupt does.
* :func:`stdout_closed`: whether the reader of the output pipe has gone (``verify | head``);
  the run then stops as an interrupt does (exit 141, 128 + SIGPIPE).
"""

from __future__ import annotations

import contextlib
import os
import select
import stat
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from fedtheory.report import RECORD_PATH, ReportWriter, read_json, write_json
from fedtheory.sandbox import OutputError

__all__ = ["LOCK_PATH", "STALE_SECONDS", "Outputs", "Progress", "known_seconds", "lock_folder",
           "one_line", "remove_stale_temporary", "stdout_closed"]

#: The lock a run holds while it writes the run record of its folder.
LOCK_PATH = RECORD_PATH.parent / "lock"

#: A temporary file older than this (seconds) is stale even if a process has its pid.
STALE_SECONDS = 3600.0


def _reason(err: OSError) -> str:
    return err.strerror or str(err)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


@contextlib.contextmanager
def lock_folder(root: Path | str = ".") -> Iterator[str | None]:
    """Hold this folder's run lock for the block; yields None, or why the run record is
    skipped (``.fedtheory/`` cannot be written). ``ValueError`` naming the other run's pid when
    one holds it."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not a POSIX system: no lock
        yield None
        return
    path = Path(root) / LOCK_PATH
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as err:
        yield f"{path.parent} cannot be written: {_reason(err)}"
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            who = f"pid {other}" if other.isdigit() else "another process"
            raise ValueError(f"another fedtheory verify ({who}) is running in this folder "
                             f"(it holds {path}); wait for it to end, or run this one in "
                             "another folder or with --no-record") from None
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield None
    finally:
        os.close(fd)  # releases the lock


def remove_stale_temporary(folder: Path | str, name: str | None = None) -> list[Path]:
    """Remove the temporary files of atomic writes in ``folder`` (of the file ``name`` only,
    when given) whose process is gone or that are older than :data:`STALE_SECONDS`; the files
    removed."""
    removed = []
    prefix = f".{name}." if name else "."
    try:
        candidates = [p for p in Path(folder).iterdir()
                      if p.name.startswith(prefix) and p.name.endswith(".tmp")]
    except OSError:
        return []
    now = time.time()
    for p in candidates:
        parts = p.name.split(".")
        pid = parts[-3] if len(parts) >= 5 else ""
        try:
            st = p.lstat()
            if not stat.S_ISREG(st.st_mode) or not pid.isdigit():
                continue
            if int(pid) == os.getpid() or (_pid_alive(int(pid))
                                          and now - st.st_mtime < STALE_SECONDS):
                continue
            p.unlink()
            removed.append(p)
        except OSError:
            continue
    return removed


def stdout_closed(stream: TextIO) -> bool:
    """Whether ``stream`` is a pipe whose reader has gone (``verify ... | head -1``)."""
    try:
        fd = stream.fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return any(ev & select.POLLERR for _, ev in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


class Outputs:
    """The run record (unless ``record`` is False) and the reports rewritten as each claim
    finishes (``reports``: each output format, :class:`fedtheory.report.ReportWriter`, with its
    path; the ``--json`` report) of a run, written by :meth:`save`; ``warn(line)`` prints a
    line for the user."""

    def __init__(self, record: bool, reports: Sequence[tuple[ReportWriter, str]],
                 warn: Any) -> None:
        self.record, self.reports, self.warn = record, list(reports), warn
        #: The run record could not be written (the line said so): the run exits 1.
        self.failed: str | None = None
        self.wrote_record = False  # this run's record is there (its claims so far)

    def save(self, items: Sequence[Mapping[str, Any]], seed: int, preset: str,
             prov: dict[str, Any], complete: bool) -> list[str]:
        """Write both (the record first); where they went. A record that cannot be written is
        dropped with one line; a report that cannot be written raises
        :class:`~fedtheory.sandbox.OutputError`."""
        written = []
        if self.record:
            try:
                write_json(RECORD_PATH, items, seed, preset, prov, complete=complete)
                written.append(str(RECORD_PATH))
                self.wrote_record = True
            except OSError as err:
                self._record_failed(err)
        for writer, path in self.reports:
            try:
                writer.write(path, items, seed, preset, prov, complete=complete)
            except OSError as err:
                raise OutputError(path, _reason(err)) from None
            written.append(str(path))
        return written

    def drop(self, path: str) -> None:
        """Stop writing the report at ``path`` (it cannot be written: the others go on)."""
        self.reports = [(w, p) for w, p in self.reports if str(p) != str(path)]

    def _record_failed(self, err: OSError) -> None:
        self.record = False
        if self.wrote_record:  # this run's own, "complete": false: it keeps what it has
            left = "it keeps the claims written before, marked incomplete"
        else:
            try:
                RECORD_PATH.unlink(missing_ok=True)  # never a stale record that looks current
                left = "removed the earlier one"
            except OSError:
                left = "the one there is from an earlier run" if RECORD_PATH.exists() else ""
        self.failed = (f"cannot write the run record {RECORD_PATH}: {_reason(err)}"
                       + (f" ({left})" if left else "") + "; the run goes on without it")
        self.warn(f"fedtheory: error: {self.failed}")


def one_line(text: str, width: int = 70) -> str:
    """``text`` on one line of at most ``width`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


class Progress:
    """Work items done out of all (tasks and claims, across all workers), the last to finish,
    the time left, and the claim, check and mutant that run (:meth:`running`).

    The time left is the estimated cost of the work not yet done times the seconds per unit of
    cost measured so far (tasks carry a cost estimate; a claim counts as the mean known cost,
    or as the seconds it took in the last run recorded here with the same preset). On a
    terminal: a tqdm bar. Elsewhere (a log file, CI): one plain line per finished item.
    """

    def __init__(self, stream: TextIO, enabled: bool = True,
                 known: dict[str, float] | None = None) -> None:
        self.stream, self.enabled, self.known = stream, enabled, dict(known or {})
        self.total = self.done_n = 0
        self.cost: dict[str, float] = {}
        self.left = 0.0
        self.spent = 0.0
        self.t0 = time.perf_counter()
        self.bar: Any = None

    def start(self, items: list[tuple[str, float | None]]) -> None:
        given = [c for _, c in items if c is not None]
        default = sum(given) / len(given) if given else 1.0
        self.cost = {label: c if c is not None else self.known.get(label, default)
                     for label, c in items}
        self.total, self.left = len(items), float(sum(self.cost.values()))
        self.t0 = time.perf_counter()
        if self.enabled and self.stream.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=self.total, desc="verifying", unit="item", file=self.stream)

    def done(self, label: str, seconds: float, status: str) -> None:
        self.done_n += 1
        c = self.cost.pop(label, 0.0)
        self.left, self.spent = max(self.left - c, 0.0), self.spent + c
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self.t0
        left = elapsed / self.spent * self.left if self.spent > 0 else float("nan")
        if self.bar is not None:
            if self.done_n >= self.total:
                self.bar.set_description_str("verified", refresh=False)
            self.bar.set_postfix_str(f"{label}: {status}; about {left:.0f} s left")
            self.bar.update()
            return
        print(f"[{self.done_n}/{self.total}] {label}: {status} ({seconds:.1f} s; "
              f"{elapsed:.0f} s elapsed, about {left:.0f} s left)", file=self.stream,
              flush=True)

    def running(self, claim: str, check: str, mutant: str | None = None) -> None:
        """A check starts (``check`` empty: the task ``claim``): named on the bar's line on a
        terminal, one plain line elsewhere (the last line of a log names what runs)."""
        if not self.enabled or (self.cost and claim not in self.cost):
            return  # (a worker's status read after its claim finished)
        what = (f"{claim}: check {check}" + (f" (mutant {mutant})" if mutant else "")
                if check else f"task {claim}")
        what = one_line(what, 200)
        if self.bar is not None:
            self.bar.set_description_str(one_line(what, 60), refresh=True)
            return
        print(f"[{self.done_n}/{self.total}] running {what}", file=self.stream, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def known_seconds(preset: str) -> dict[str, float]:
    """Seconds per claim in the last run recorded here with ``preset`` (for the time left; a
    guess, so the record is read without the checks a verdict needs)."""
    try:
        doc = read_json(RECORD_PATH)
        if doc.get("preset") != preset:
            return {}
        return {c["id"]: float(c.get("seconds") or 0.0) for c in doc["claims"]
                if isinstance(c.get("id"), str)}
    except Exception:  # noqa: BLE001 - no record, or one we cannot read: no estimate
        return {}
