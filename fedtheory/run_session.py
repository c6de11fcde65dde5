"""The session of a ``fedtheory verify`` run: the claims it loads, its outputs checked before
any work, ``--resume``, each claim saved as it finishes, interrupts, the summary at its end.

:func:`run_verify` is the whole run (:func:`fedtheory.cli.main` parses the arguments and calls
it). It keeps every claim that finished: the run record (and the ``--json`` report) is
rewritten atomically as each claim finishes, and SIGINT (Ctrl-C) or SIGTERM (a batch
scheduler's kill) stops the run with one line that says what was kept and the ``--resume``
command that continues it (exit status 128 + the signal's number: 130, 143); so does a closed
output pipe (141, as SIGPIPE would), and an output that cannot be written (a full disk: exit
1). A run's place in its folder (its lock, the run record, its progress) is
:mod:`fedtheory.session`; the claims run in :mod:`fedtheory.runner`.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fedtheory.report import RECORD_PATH, ReportWriter, writers
from fedtheory.safetext import terminal_text
from fedtheory.sandbox import RunInterrupted, clear_interrupt, note_interrupt
from fedtheory.session import Progress, known_seconds, one_line

if TYPE_CHECKING:
    from fedtheory.claimkit.core import ClaimResult

__all__ = ["Interrupted", "add_sources", "check_outputs", "fresh_line", "interruptible",
           "preset_of", "report_path", "resume_command", "run_verify", "signal_name", "warn"]


class Interrupted(RunInterrupted):
    """SIGINT or SIGTERM arrived (``signum``): the command stops and keeps what it finished."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def signal_name(exc: BaseException) -> tuple[int, str]:
    """The number and name of the signal that stopped a command (SIGINT for a bare
    ``KeyboardInterrupt``)."""
    signum = getattr(exc, "signum", signal.SIGINT)
    return int(signum), signal.Signals(signum).name


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """SIGINT and SIGTERM raise :class:`Interrupted` in the main thread while the block runs;
    the previous handlers are restored after it. A signal ignored when the command starts (a
    background job's SIGINT, under ``nohup``, ...) stays ignored. (Elsewhere than in the main
    thread, signals cannot be handled: nothing changes.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        note_interrupt(signum)  # the user's: no check may take it for its own error
        raise Interrupted(signum)

    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    old = {s: h for s, h in old.items() if h is not signal.SIG_IGN}
    for s in old:
        signal.signal(s, handler)
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)
        clear_interrupt()


def _ignore_interrupts() -> None:
    """While a stopped run writes what it kept: further SIGINT / SIGTERM are ignored (the
    handlers are restored when the command returns)."""
    if threading.current_thread() is threading.main_thread():
        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, signal.SIG_IGN)


def fresh_line() -> str:
    """A newline on a terminal, after the ``^C`` it echoed; nothing in a log."""
    return "\n" if sys.stderr.isatty() else ""


def warn(line: str) -> None:
    """A line for the user on stderr (nothing when stderr is gone: a closed pipe)."""
    with contextlib.suppress(OSError, ValueError):
        print(line, file=sys.stderr, flush=True)


def add_sources(args: argparse.Namespace) -> list[Any]:
    """Load the claim sources of the command into the registry (``--claims PATH`` first, then
    a ``verify``'s PATH arguments); return every claim they define, in order (none without
    sources). A file that fails to import is a ``ValueError`` naming it."""
    paths = [*(getattr(args, "claims", None) or []), *getattr(args, "paths", [])]
    if not paths:
        return []
    from fedtheory.claims.registry import add_sources as load

    try:
        return load(paths)
    except ImportError as exc:  # a claim file that fails to import: one line, its name
        raise ValueError(str(exc)) from exc


def _claims_of_paths(paths: Sequence[str]) -> list[Any]:
    """The claims the (already loaded) claim files or folders ``paths`` define."""
    if not paths:
        return []
    from fedtheory.claims.registry import add_sources

    return add_sources(paths)


def report_path(value: str | None, option: str = "--from") -> str | None:
    """A report path argument: None when not given, ``ValueError`` when empty."""
    if value is not None and not str(value).strip():
        raise ValueError(f"{option} must be the path of a JSON report, got {value!r}")
    return value


def preset_of(args: argparse.Namespace) -> str:
    if args.quick and args.preset not in (None, "quick"):
        raise ValueError(f"--quick contradicts --preset {args.preset}")
    return "quick" if args.quick else (args.preset or "full")


def _jobs(args: argparse.Namespace) -> int:
    return args.jobs if args.jobs is not None else min(2, os.cpu_count() or 1)


def resume_command(args: argparse.Namespace, preset: str, path: Path | str) -> str:
    """The ``verify`` command of ``args`` that continues from the report at ``path``, as the
    user invoked the program (:func:`fedtheory.commands.resume`)."""
    from fedtheory.commands import resume

    options: list[object] = []
    if args.family is not None:
        options += ["--family", args.family]
    if args.power:
        options.append("--power")
    if getattr(args, "check_timeout", None) is not None:
        options += ["--check-timeout", f"{args.check_timeout:g}"]
    if getattr(args, "certify", False):
        options.append("--certify")
    if args.dask is not None:
        options += ["--dask", args.dask]
    elif args.jobs is not None:
        options += ["--jobs", args.jobs]
    for writer, value in outputs_of(args):
        if value:
            options += [writer.option, str(value)]
    if args.no_progress:
        options.append("--no-progress")
    if args.no_record:
        options.append("--no-record")
    return resume(path, preset, args.seed, claims=getattr(args, "claims", None) or [],
                  targets=args.targets, options=options)


def outputs_of(args: argparse.Namespace) -> list[tuple[ReportWriter, str]]:
    """The output formats ``args`` asks for (:func:`fedtheory.report.writers`: ``--json``,
    ``--report``, ...), each with its option's value, in the formats' order."""
    return [(w, getattr(args, w.dest)) for w in writers()
            if getattr(args, w.dest, None) is not None]


def check_outputs(args: argparse.Namespace) -> None:
    """``verify``'s outputs, before any work: each format's path as it checks it
    (:meth:`fedtheory.report.ReportWriter.check`: ``--json`` names nothing or a regular file,
    never a link, a device, a FIFO, a socket or a directory, ``--report`` a directory whose
    ``report.md`` is such a file; an empty path is an error); the run record as ``--json``;
    ``--resume`` is a report path."""
    for writer, value in outputs_of(args):
        writer.check(value)
    report_path(args.resume, "--resume")
    if not args.no_record:
        from fedtheory.safefiles import check_output_file

        check_output_file(RECORD_PATH, "the run record (--no-record: none)")


def run_verify(args: argparse.Namespace) -> int:
    """``verify``: one run at a time in a folder that keeps a run record
    (:func:`fedtheory.session.lock_folder`), the stale temporary files of killed runs removed;
    a folder where the record cannot be written is said so in one line."""
    from fedtheory import session

    check_outputs(args)  # a bad output path: an error before anything is written, the lock too
    if args.no_record:
        return _verify(args, session.Outputs(False, _rewritten(args), warn))
    with session.lock_folder() as skipped:
        if skipped:
            warn(f"fedtheory: note: the run record {RECORD_PATH} is skipped: {skipped}")
        else:
            session.remove_stale_temporary(RECORD_PATH.parent)
        return _verify(args, session.Outputs(skipped is None, _rewritten(args), warn))


def _rewritten(args: argparse.Namespace) -> list[tuple[ReportWriter, str]]:
    """The outputs rewritten as each claim finishes (:attr:`ReportWriter.incremental`)."""
    return [(w, value) for w, value in outputs_of(args) if w.incremental and value]


def _stopped(args: argparse.Namespace, preset: str, kept: list[str], head: str,
             problem: str = "") -> None:
    """The line of a run stopped before its end: what was kept and how to continue."""
    if kept:
        warn(f"{head}, kept in {' and '.join(kept)}{problem}; continue with: "
             f"{resume_command(args, preset, kept[-1])}")
    else:
        warn(f"{head}; nothing was kept{problem or ' (--no-record without --json)'}")


def _verify(args: argparse.Namespace, outputs: Any) -> int:
    """The run: claims selected and loaded, ``--resume``'s entries kept, the others run, each
    saved as it finishes (``outputs``: :class:`fedtheory.session.Outputs`), a stop written
    whole and said in one line, then the summary; the exit status."""
    from fedtheory import index
    from fedtheory.sandbox import OutputError
    from fedtheory.session import remove_stale_temporary, stdout_closed

    preset = preset_of(args)
    if args.certify:  # the optional extra, checked before any work
        from fedtheory.certify import require_pepit

        try:
            require_pepit()
        except ImportError as exc:
            print(f"fedtheory: {exc}", file=sys.stderr)
            return 2
    add_sources(args)  # --claims and PATH arguments: a bad file is an error now
    from_paths = [c.id for c in _claims_of_paths(getattr(args, "paths", []))]
    index.check_ids(args.ids)  # an unknown id or family fails before the claims are imported
    if args.family is not None and not args.ids and not from_paths:
        index.check_family(args.family)
    args.ids = list(dict.fromkeys([*from_paths, *args.ids]))
    from fedtheory.claims import registry
    from fedtheory.claims.registry import select
    from fedtheory.executors import make_executor
    from fedtheory.report import (
        entry,
        provenance,
        resume_plan,
    )
    from fedtheory.runner import Job, run_jobs

    claims = select(args.ids, family=args.family)  # ids with a family: a ValueError
    if not claims:
        print("no claims selected", file=sys.stderr)
        return 2
    if getattr(sys.modules.get("fedtheory.claims.registry"), "_loaded", False):
        with contextlib.suppress(Exception):  # a convenience: never a reason for a run to fail
            index.refresh()  # every claim is imported now: the index costs milliseconds
    # (output paths were checked by run_verify before any work; the writer checks again)
    for _, value in _rewritten(args):
        remove_stale_temporary(Path(value).parent, Path(value).name)
    # the figures go into the first output that holds figures (--report DIR: DIR/figures)
    report_dir, fig_dir = next(((value, w.figure_dir(value)) for w, value in outputs_of(args)
                                if value and w.figures), (None, None))
    jobs_n = _jobs(args)
    plugins = []
    if args.dask is not None and registry.sources():  # the claim files, sent to every worker
        from fedtheory.claims.sources import bundle
        from fedtheory.dask_claims import ClaimFiles  # imports distributed: only for --dask

        plugins.append(ClaimFiles(bundle(registry.sources())))
    executor = make_executor(jobs_n, args.dask, plugins)
    done: dict[str, ClaimResult] = {}
    if args.resume:
        plan = resume_plan(args.resume, claims, args.seed, preset, args.power)
        for warning in plan.warnings:
            print(terminal_text(f"fedtheory: warning: {warning}"), file=sys.stderr)
        done = {c.id: plan.kept[c.id] for c in claims if c.id in plan.kept}
    jobs = [Job(c.id, preset, args.seed, fig_dir, power=args.power, certify=args.certify)
            for c in claims if c.id not in done]
    prov = provenance(args.seed, preset, jobs=jobs_n)
    prov.update(executor=executor.describe(), resumed=sorted(done))
    if report_dir:  # where the figures are: `fedtheory errata` embeds only files under it
        prov["report_dir"] = str(Path(report_dir).resolve())
    if args.resume:
        print(f"resuming from {args.resume}: {len(done)} claim(s) kept, {len(jobs)} to run",
              file=sys.stderr)
    entries = {cid: entry(res, report_dir) for cid, res in done.items()}  # made once per claim

    def save(complete: bool, **extra: Any) -> list[str]:
        """Write the run record and the --json report of what is done; where they went
        (:class:`fedtheory.session.Outputs`: a report that cannot be written raises
        OutputError)."""
        items = [entries[c.id] for c in claims if c.id in entries]
        p = {**prov, "reruns": dict(executor.reruns), **extra}
        return outputs.save(items, args.seed, preset, p, complete)

    def finished(res: ClaimResult) -> None:
        done[res.id] = res
        entries[res.id] = entry(res, report_dir)
        save(complete=False)  # a valid partial report after every claim: nothing lost
        # (an interrupt in between: the handler below writes what is done)
        if stdout_closed(sys.stdout):  # `verify | head`: the reader left; stop as on Ctrl-C
            raise BrokenPipeError(errno.EPIPE, "the output pipe was closed")

    progress = Progress(sys.stderr, enabled=not args.no_progress,
                        known=known_seconds(preset))
    try:
        run_jobs(jobs, jobs_n, on_result=finished, executor=executor, progress=progress,
                 check_timeout=args.check_timeout)
    except (KeyboardInterrupt, BrokenPipeError, OutputError) as exc:
        # Ctrl-C or SIGTERM (Interrupted), the reader of the output pipe gone, an output
        # that cannot be written: the run stops, what finished is kept, one line says where
        _ignore_interrupts()  # what finished is written whole, whatever arrives now
        with contextlib.suppress(OSError):
            progress.close()
        if isinstance(exc, OutputError):
            signum, name, code = 0, "", 1
            head = (f"fedtheory: error: {exc}: the run stops; {len(done)} of {len(claims)} "
                    "claim(s) finished")
        else:
            signum, name = ((int(signal.SIGPIPE), "SIGPIPE") if isinstance(exc, BrokenPipeError)
                            else signal_name(exc))
            code = 128 + signum
            head = (f"{fresh_line()}fedtheory: interrupted ({name}): {len(done)} of "
                    f"{len(claims)} claim(s) finished")
        for cid, res in done.items():
            entries.setdefault(cid, entry(res, report_dir))
        if isinstance(exc, OutputError):
            outputs.drop(exc.path)  # it cannot be written: keep what can be in the record
        problem = ""
        try:
            kept = save(complete=False, **({"interrupted": name} if name else {}))
        except OutputError as err:  # the --json report, now too
            problem = f" ({err})"
            outputs.drop(err.path)
            kept = save(complete=False, **({"interrupted": name} if name else {}))
        if outputs.failed:
            code = code if code != 0 else 1
        _stopped(args, preset, kept, head, problem)
        return code
    finally:
        with contextlib.suppress(OSError):
            progress.close()
    results = [done[c.id] for c in claims]
    prov["reruns"] = dict(executor.reruns)
    try:  # the reports first: a closed pipe or a full disk below loses nothing
        kept = save(complete=True)
    except OutputError as exc:  # the --json report: the run record keeps what it can
        outputs.drop(exc.path)
        _stopped(args, preset, save(complete=True),
                 f"fedtheory: error: {exc}; {len(done)} of {len(claims)} claim(s) finished")
        return 1
    try:
        code = _summary(args, results, preset, prov, executor, entries, kept)
        sys.stdout.flush()  # a pipe's buffer: a reader gone shows here, not at exit
    except BrokenPipeError:  # the reader left: what finished is in the reports already
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        warn("fedtheory: the output pipe was closed before the summary (SIGPIPE); the "
              "reports are complete")
        return 128 + int(signal.SIGPIPE)
    return 1 if outputs.failed and code == 0 else code


def _summary(args: argparse.Namespace, results: list[ClaimResult], preset: str,
             prov: dict[str, Any], executor: Any, entries: dict[str, dict[str, Any]],
             kept: list[str]) -> int:
    """Print the end of a finished run (the reports in ``kept`` are written): the details,
    then the summary (:func:`fedtheory.summary.summary_lines`); its exit status."""
    from fedtheory.report import power_summary, verdict_table
    from fedtheory.summary import summary_lines

    for cid, n in sorted(executor.reruns.items()):
        print(f"{cid}: its worker was lost {n} time(s); re-run", file=sys.stderr)
    for r in results:  # the details first: the summary ends the output
        if r.verdict.value == "refuted":
            ce = entries[r.id]["counterexample"]  # as the report has it
            shown = {k: v for k, v in (ce or {}).items() if k != "replay"}
            print(f"{r.id} refuted; counterexample: {one_line(str(shown), 300)}")
        if r.readings:  # which readings of the seed hold (fedtheory.claimkit.readings)
            from fedtheory.claimkit.readings import parts_label, readings_text

            print(f"{r.id} {parts_label(r.readings)}: "
                  f"{one_line(readings_text(r.readings), 400)}")
        for c in r.errors:
            print(f"{r.id}: check {c.name} errored: {c.detail}", file=sys.stderr)
    print("\n" + verdict_table(results, counts=False))
    if args.power:
        print("\n" + power_summary(results))
    if args.certify:
        from fedtheory.report import certified_summary

        print("\n" + certified_summary(results))
    written = [("run record", p) for p in kept if p == str(RECORD_PATH)]
    readable = None
    for writer, value in outputs_of(args):
        if not value:
            continue
        if writer.incremental:  # written with the run record, as each claim finished
            written.append((writer.name, str(value)))
        else:
            try:
                path = writer.write(value, results, args.seed, preset, prov)
            except OSError as err:
                warn(f"fedtheory: error: cannot write {err.filename or value}: "
                     f"{err.strerror or err}")
                return 1
            written.append((writer.name, str(path)))
        if writer.readable and readable is None:
            readable = str(value)
    recorded = any(what == "run record" for what, _ in written)
    report = readable if readable else (str(RECORD_PATH) if recorded else None)
    print("\n" + "\n".join(summary_lines(results, written, report)))
    return 1 if any(r.errors for r in results) else 0
