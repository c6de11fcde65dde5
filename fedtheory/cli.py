"""The ``fedtheory`` command line: ``list``, ``show``, ``verify``, ``replay``, ``catalogue``,
``errata``.

``--help``, ``--version``, ``list``, ``show ID`` and an unknown id are answered without importing
the claims (:mod:`fedtheory.index`); the claim machinery is imported by the commands that run
claims. ``verify`` keeps every claim that finished: the run record (and the ``--json`` report)
is rewritten atomically as each claim finishes, and SIGINT (Ctrl-C) or SIGTERM (a batch
scheduler's kill) stops the run with one line that says what was kept and the ``--resume``
command that continues it (exit status 128 + the signal's number: 130, 143); so does a closed
output pipe (141, as SIGPIPE would), and an output that cannot be written (a full disk: exit
1). A run's session in its folder (its lock, its outputs, its progress) is
:mod:`fedtheory.session`.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import signal
import sys
import textwrap
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fedtheory.report import (
    RECORD_PATH,
    atomic_write_text,
    check_writable_dir,
    check_writable_file,
    load_report,
    provenance_lines,
)
from fedtheory.safetext import terminal_text
from fedtheory.sandbox import RunInterrupted, clear_interrupt, note_interrupt
from fedtheory.session import Progress, known_seconds
from fedtheory.vocabulary import PRESETS

if TYPE_CHECKING:
    from fedtheory.claimkit.core import ClaimResult

__all__ = ["Interrupted", "Progress", "build_parser", "main"]

#: Lines printed by ``list`` fit this many columns.
LIST_WIDTH = 100

# The size presets: PRESETS, imported from fedtheory.vocabulary (no claim imported to read them).

#: The provenance fields the committed catalogue keeps (what made the verdicts, not where).
CATALOGUE_PROVENANCE = ("fedtheory_version", "commit", "dirty", "preset", "seed", "time",
                        "python", "packages")


class Interrupted(RunInterrupted):
    """SIGINT or SIGTERM arrived (``signum``): the command stops and keeps what it finished."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _signal_name(exc: BaseException) -> tuple[int, str]:
    signum = getattr(exc, "signum", signal.SIGINT)
    return int(signum), signal.Signals(signum).name


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
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


def _fresh_line() -> str:
    """A newline on a terminal, after the ``^C`` it echoed; nothing in a log."""
    return "\n" if sys.stderr.isatty() else ""


def _one_line(text: str, width: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def _looks_like_path(arg: str) -> bool:
    """A ``verify`` argument naming a claim file or folder rather than a claim id."""
    return arg.endswith(".py") or os.sep in arg or Path(arg).is_dir()


def _add_sources(args: argparse.Namespace) -> list[Any]:
    """Load the claim sources of the command into the registry (``--claims PATH`` first, then
    a ``verify``'s PATH arguments); return every claim they define, in order (none without
    sources). A file that fails to import is a ``ValueError`` naming it."""
    paths = [*(getattr(args, "claims", None) or []), *getattr(args, "paths", [])]
    if not paths:
        return []
    from fedtheory.claims.registry import add_sources

    try:
        return add_sources(paths)
    except ImportError as exc:  # a claim file that fails to import: one line, its name
        raise ValueError(str(exc)) from exc


def _claims_of_paths(paths: Sequence[str]) -> list[Any]:
    """The claims the (already loaded) claim files or folders ``paths`` define."""
    if not paths:
        return []
    from fedtheory.claims.registry import add_sources

    return add_sources(paths)


def cmd_list(args: argparse.Namespace) -> int:
    """One entry per claim: id, kind, then its title and seed reference wrapped to fit."""
    from fedtheory import index

    extra = [index.info_from_claim(c) for c in [*index.load_entry_points(),
                                                 *_add_sources(args)]]
    if args.family is not None:
        index.check_family(args.family)
    claims = [c for c in [*(index.load_index() or []), *extra]
              if args.family is None or c.family == args.family]
    w_id = max((len(c.id) for c in claims), default=0)
    w_kind = max((len(c.kind) for c in claims), default=0)
    width = max(24, LIST_WIDTH - w_id - w_kind - 4)
    indent = " " * (w_id + w_kind + 4)
    for c in claims:
        text = textwrap.wrap(" ".join(c.title.split()), width, max_lines=2, placeholder=" ...")
        text += textwrap.wrap(f"[seed {' '.join(c.seed_ref.split())}]", width, max_lines=2,
                              placeholder=" ...]")
        print(f"{c.id.ljust(w_id)}  {c.kind.ljust(w_kind)}  {text[0]}")
        for line in text[1:]:
            print(indent + line)
    print(f"\n{len(claims)} claims")
    return 0


def _print_result(entry: dict[str, Any], counterexample: dict[str, Any] | None) -> None:
    """A report entry's checks and counterexample: every string of the report printed
    without its control characters (:func:`fedtheory.safetext.terminal_text`), the re-run
    command rebuilt from the entry's validated parts and quoted, never the stored one."""
    from fedtheory.schema import replay_shown

    def say(text: str) -> None:
        print(terminal_text(text))

    for chk in entry.get("checks", []):
        say(f"  - {chk['name']} [{chk['kind']}] passed={chk['passed']}: "
            f"{_one_line(chk.get('detail') or '', 300)}")
        if chk.get("error"):
            say(f"    check {chk['name']} raised: {_one_line(chk['detail'], 300)}")
    if counterexample:
        shown = {k: v for k, v in counterexample.items() if k != "replay"}  # rebuilt below
        say("  counterexample: " + _one_line(json.dumps(shown), 600))
        check = counterexample.get("check")
        if counterexample.get("replay") and isinstance(check, str):
            say(f"  re-run it: {replay_shown(entry, check, terminal=True)['command']}")


def _report_path(value: str | None, option: str = "--from") -> str | None:
    """A report path argument: None when not given, ``ValueError`` when empty."""
    if value is not None and not str(value).strip():
        raise ValueError(f"{option} must be the path of a JSON report, got {value!r}")
    return value


def _cited(claim_id: str, seed_ref: str) -> tuple[str, list[str]]:
    """Where a claim is printed, as the errata pages say it (``"OCS, eq. (7)"``), and each
    paper it cites as a reader cites it (:attr:`fedtheory.papers.Paper.citation`); a
    ``seed_ref`` naming no paper is shown as it is, with no paper."""
    from fedtheory.papers import claim_references

    try:
        refs = claim_references(claim_id, seed_ref)
    except ValueError:
        return " ".join(str(seed_ref).split()), []
    where = "; ".join(f"{p.short}, {place}" if place else p.short for p, place in refs)
    return where, list(dict.fromkeys(f"{p.short}: {p.citation}" for p, _ in refs))


def cmd_show(args: argparse.Namespace) -> int:
    """The claim (from the index: no claim imported when it is fresh), then the verdict of the
    last run here or of ``--from REPORT.json``, recomputed from the stored checks; an entry
    that does not hold up (:func:`fedtheory.schema.audit`) is not shown."""
    from fedtheory.commands import command
    from fedtheory.index import lookup
    from fedtheory.report import unresolved
    from fedtheory.schema import audit, claim_label, derived

    _report_path(args.from_report)
    _add_sources(args)
    claims = [w for path in args.claims for w in ("--claims", path)]  # for the hints
    c = lookup(args.id)
    if args.from_report:  # read the report first: a bad path is an error before any output
        doc = load_report(args.from_report, only=c.id)
    where, papers = _cited(c.id, c.seed_ref)
    print(terminal_text(f"{c.id}  ({c.family}; {where}; {c.kind})"))
    print("".join(terminal_text(f"  {line}\n") for line in papers))
    print(textwrap.fill(c.title, 100) + "\n")
    print("Statement (LaTeX):\n" + textwrap.indent(c.statement.strip(), "    ") + "\n")
    if c.finding:
        print("Finding:\n" + textwrap.indent(textwrap.fill(c.finding.strip(), 96), "    "))
        print()
    if c.derivation:
        print("How it is derived and checked:\n" + textwrap.indent(c.derivation.strip(), "    "))
        print()
    print("Checks:")
    for chk in c.checks:
        print(f"  - {chk.name} [{chk.kind}]: {_one_line(chk.description, 90)}")
    print()
    failed = 2 if args.from_report else 0  # the implicit run record may be absent or stale
    if args.from_report:
        source = Path(args.from_report)
    else:
        source = RECORD_PATH
        if not source.exists():
            print(f"No recorded verdict here: run `{command('verify', *claims, c.id, '--quick')}` "
                  "in this directory, or give a report with --from REPORT.json.")
            return 0
        try:
            doc = load_report(source, only=c.id)
        except ValueError as exc:
            print(terminal_text(f"No usable run record ({exc})."))
            return 0
    prov = doc["provenance"]
    if not prov.get("time"):
        print(f"Report {source} has no provenance (who wrote it, when); its verdicts are not "
              "shown.")
        return failed
    places = [k for k, e in enumerate(doc["claims"]) if e["id"] == c.id]
    if not places:
        where = f"report {source}" if args.from_report else f"the last run here ({source})"
        print(f"No verdict for {c.id} in {where}.")
        return failed
    entry = doc["claims"][places[0]]
    problem = unresolved(entry)  # a claim file's entry: the file that computed it
    problems = [problem] if problem is not None else audit(
        entry, preset=doc["preset"], seed=doc["seed"], definition=c.definition.get(doc["preset"]))
    if problems:
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        print(terminal_text(f"Verdict: not shown: report {source}: {claim_label(doc, places[0])}: "
              f"{problems[0]}{more}. Run it again: " + command(
                  "verify", *claims, c.id, "--preset", doc["preset"], "--seed", doc["seed"])))
        return failed
    now = derived(entry)
    partial = "" if doc["complete"] else " (a run that did not finish)"
    print(terminal_text(f"Verdict: {now['verdict']}, from {source}{partial}:"))
    print(terminal_text("\n".join("  " + line.lstrip("- ") for line in provenance_lines(prov))))
    _print_result(entry, now["counterexample"])
    return 0


def _preset(args: argparse.Namespace) -> str:
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
    for option, value in (("--json", args.json), ("--report", args.report)):
        if value:
            options += [option, str(value)]
    if args.no_progress:
        options.append("--no-progress")
    if args.no_record:
        options.append("--no-record")
    return resume(path, preset, args.seed, claims=getattr(args, "claims", None) or [],
                  targets=args.targets, options=options)


def _warn(line: str) -> None:
    """A line for the user on stderr (nothing when stderr is gone: a closed pipe)."""
    with contextlib.suppress(OSError, ValueError):
        print(line, file=sys.stderr, flush=True)


def _check_outputs(args: argparse.Namespace) -> None:
    """``verify``'s outputs, before any work: ``--json`` and the run record name nothing or a
    regular file (never a link, a device, a FIFO, a socket or a directory), ``--report`` a
    directory whose ``report.md`` is such a file; an empty path is an error; ``--resume`` is
    a report path."""
    if args.json is not None:
        check_writable_file(args.json, "--json")
    if args.report is not None:
        if not str(args.report).strip():
            raise ValueError(f"--report must be a directory path, got {args.report!r}")
        check_writable_dir(args.report, "--report")
    _report_path(args.resume, "--resume")
    if not args.no_record:
        from fedtheory.safefiles import check_output_file

        check_output_file(RECORD_PATH, "the run record (--no-record: none)")


def cmd_verify(args: argparse.Namespace) -> int:
    """``verify``: one run at a time in a folder that keeps a run record
    (:func:`fedtheory.session.lock_folder`), the stale temporary files of killed runs removed;
    a folder where the record cannot be written is said so in one line."""
    from fedtheory import session

    _check_outputs(args)  # a bad output path: an error before anything is written, the lock too
    if args.no_record:
        return _verify(args, session.Outputs(False, args.json, _warn))
    with session.lock_folder() as skipped:
        if skipped:
            _warn(f"fedtheory: note: the run record {RECORD_PATH} is skipped: {skipped}")
        else:
            session.remove_stale_temporary(RECORD_PATH.parent)
        return _verify(args, session.Outputs(skipped is None, args.json, _warn))


def _stopped(args: argparse.Namespace, preset: str, kept: list[str], head: str,
             problem: str = "") -> None:
    """The line of a run stopped before its end: what was kept and how to continue."""
    if kept:
        _warn(f"{head}, kept in {' and '.join(kept)}{problem}; continue with: "
              f"{resume_command(args, preset, kept[-1])}")
    else:
        _warn(f"{head}; nothing was kept{problem or ' (--no-record without --json)'}")


def _verify(args: argparse.Namespace, outputs: Any) -> int:
    from fedtheory import index
    from fedtheory.sandbox import OutputError
    from fedtheory.session import remove_stale_temporary, stdout_closed

    preset = _preset(args)
    if args.certify:  # the optional extra, checked before any work
        from fedtheory.certify import require_pepit

        try:
            require_pepit()
        except ImportError as exc:
            print(f"fedtheory: {exc}", file=sys.stderr)
            return 2
    _add_sources(args)  # --claims and PATH arguments: a bad file is an error now
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
    # (output paths were checked by cmd_verify before any work; the writer checks again)
    if args.json:
        remove_stale_temporary(Path(args.json).parent, Path(args.json).name)
    fig_dir = str(Path(args.report) / "figures") if args.report else None
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
    if args.report:  # where the figures are: `fedtheory errata` embeds only files under it
        prov["report_dir"] = str(Path(args.report).resolve())
    if args.resume:
        print(f"resuming from {args.resume}: {len(done)} claim(s) kept, {len(jobs)} to run",
              file=sys.stderr)
    entries = {cid: entry(res, args.report) for cid, res in done.items()}  # made once per claim

    def save(complete: bool, **extra: Any) -> list[str]:
        """Write the run record and the --json report of what is done; where they went
        (:class:`fedtheory.session.Outputs`: a report that cannot be written raises
        OutputError)."""
        items = [entries[c.id] for c in claims if c.id in entries]
        p = {**prov, "reruns": dict(executor.reruns), **extra}
        return outputs.save(items, args.seed, preset, p, complete)

    def finished(res: ClaimResult) -> None:
        done[res.id] = res
        entries[res.id] = entry(res, args.report)
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
                            else _signal_name(exc))
            code = 128 + signum
            head = (f"{_fresh_line()}fedtheory: interrupted ({name}): {len(done)} of "
                    f"{len(claims)} claim(s) finished")
        for cid, res in done.items():
            entries.setdefault(cid, entry(res, args.report))
        if isinstance(exc, OutputError) and exc.path == str(args.json):
            outputs.json_path = None  # it cannot be written: keep what can be in the record
        problem = ""
        try:
            kept = save(complete=False, **({"interrupted": name} if name else {}))
        except OutputError as err:  # the --json report, now too
            problem = f" ({err})"
            outputs.json_path = None
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
        outputs.json_path = None
        _stopped(args, preset, save(complete=True),
                 f"fedtheory: error: {exc}; {len(done)} of {len(claims)} claim(s) finished")
        return 1
    try:
        code = _summary(args, results, preset, prov, executor, entries, kept)
        sys.stdout.flush()  # a pipe's buffer: a reader gone shows here, not at exit
    except BrokenPipeError:  # the reader left: what finished is in the reports already
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        _warn("fedtheory: the output pipe was closed before the summary (SIGPIPE); the "
              "reports are complete")
        return 128 + int(signal.SIGPIPE)
    return 1 if outputs.failed and code == 0 else code


def _summary(args: argparse.Namespace, results: list[ClaimResult], preset: str,
             prov: dict[str, Any], executor: Any, entries: dict[str, dict[str, Any]],
             kept: list[str]) -> int:
    """Print the end of a finished run (the reports in ``kept`` are written): the details,
    then the summary (:func:`fedtheory.summary.summary_lines`); its exit status."""
    from fedtheory.report import power_summary, verdict_table, write_markdown
    from fedtheory.summary import summary_lines

    for cid, n in sorted(executor.reruns.items()):
        print(f"{cid}: its worker was lost {n} time(s); re-run", file=sys.stderr)
    for r in results:  # the details first: the summary ends the output
        if r.verdict.value == "refuted":
            ce = entries[r.id]["counterexample"]  # as the report has it
            shown = {k: v for k, v in (ce or {}).items() if k != "replay"}
            print(f"{r.id} refuted; counterexample: {_one_line(str(shown), 300)}")
        if r.readings:  # which readings of the seed hold (fedtheory.claimkit.readings)
            from fedtheory.claimkit.readings import parts_label, readings_text

            print(f"{r.id} {parts_label(r.readings)}: "
                  f"{_one_line(readings_text(r.readings), 400)}")
        for c in r.errors:
            print(f"{r.id}: check {c.name} errored: {c.detail}", file=sys.stderr)
    print("\n" + verdict_table(results, counts=False))
    if args.power:
        print("\n" + power_summary(results))
    if args.certify:
        from fedtheory.report import certified_summary

        print("\n" + certified_summary(results))
    written = [("run record", p) for p in kept if p == str(RECORD_PATH)]
    if args.json:
        written.append(("JSON report", str(args.json)))
    if args.report:
        try:
            md = write_markdown(args.report, results, args.seed, preset, prov)
        except OSError as err:
            _warn(f"fedtheory: error: cannot write {err.filename or args.report}: "
                  f"{err.strerror or err}")
            return 1
        written.append(("Markdown report", str(md)))
    recorded = any(what == "run record" for what, _ in written)
    report = str(args.json) if args.json else (str(RECORD_PATH) if recorded else None)
    print("\n" + "\n".join(summary_lines(results, written, report)))
    return 1 if any(r.errors for r in results) else 0


def cmd_replay(args: argparse.Namespace) -> int:
    from fedtheory import index

    preset = _preset(args)
    _add_sources(args)
    index.check_ids([args.id])
    from fedtheory.claims.registry import get_claim
    from fedtheory.runner import Job, verify_one

    claim = get_claim(args.id)
    res = verify_one(Job(claim.id, preset, args.seed, None, (args.check,)))
    (chk,) = res.checks
    from fedtheory.errata._values import plain_text  # the pages' symbols, as plain Unicode

    print(f"{claim.id} / {chk.name} [{chk.kind}], preset {preset}, seed {args.seed}")
    print(f"passed:   {chk.passed}")
    print(f"measured: {json.dumps(chk.measured)}")
    print(f"stated:   {json.dumps(chk.theoretical)}")
    print(f"detail:   {plain_text(chk.detail)}")
    if chk.counterexample:
        print("counterexample:\n" + json.dumps(chk.counterexample, indent=2))
    if chk.error:
        print(chk.error, file=sys.stderr)
        return 1
    return 0


def cmd_catalogue(args: argparse.Namespace) -> int:
    from fedtheory.catalogue import read_report, render_catalogue
    from fedtheory.claims.registry import all_claims

    if args.regenerate or args.check:
        return _regenerate(args)
    if args.from_report is None:
        raise ValueError("catalogue: give --from REPORT.json (a quick run's verdicts), or "
                         "--regenerate (the checkout's CATALOGUE.md and docs/claims.md from "
                         "the claim files)")
    check_writable_file(args.out, "--out")
    _report_path(args.from_report)
    _add_sources(args)
    claims = all_claims()
    verdicts, prov = read_report(args.from_report, claims)
    if prov.get("preset") != "quick":
        raise ValueError(f"--from {args.from_report}: the catalogue records the quick preset's "
                         f"verdicts, this report has preset {prov.get('preset')!r}")
    # what identifies the run, not the machine it ran on (no paths, pids or BLAS details)
    prov = {k: prov[k] for k in CATALOGUE_PROVENANCE if k in prov}
    atomic_write_text(args.out, render_catalogue(claims, verdicts, prov), "--out")
    print(f"catalogue: {args.out}")
    return 0


def _regenerate(args: argparse.Namespace) -> int:
    """``catalogue --regenerate`` / ``--check``: the checkout's generated files from its claim
    files (:mod:`fedtheory.contract`); ``--check`` writes nothing and fails when one is stale."""
    from fedtheory.contract import REGENERATE_COMMAND, regenerate

    if args.from_report is not None or args.claims:
        raise ValueError("catalogue --regenerate/--check describe the package's claim files "
                         "with their declared verdicts: give neither --from nor --claims")
    stale = regenerate(check=args.check)
    for rel in stale:
        print(f"{'out of date' if args.check else 'written'}: {rel}")
    if args.check and stale:
        print(f"run `{REGENERATE_COMMAND}` to regenerate", file=sys.stderr)
        return 1
    if not stale:
        print("catalogue: CATALOGUE.md and docs/claims.md are up to date")
    return 0


def cmd_errata(args: argparse.Namespace) -> int:
    """Write the errata pages and LaTeX snippets of a report (:mod:`fedtheory.errata`)."""
    from fedtheory.errata import write_errata

    _report_path(args.from_report)
    _add_sources(args)  # --claims: the claim files a report's entries were computed by
    written = write_errata(args.from_report, args.out, args.paper)
    for path in written:
        print(terminal_text(f"errata: {path}"))
    if not written:
        print(terminal_text(f"errata: report {args.from_report} has no claims; nothing "
                            "written"))
    return 0


def cmd_recheck(args: argparse.Namespace) -> int:
    """Re-check a report's certificates in exact arithmetic (:mod:`fedtheory.recheck`)."""
    from fedtheory.recheck import recheck_report

    return recheck_report(args.from_report)


def cmd_new(args: argparse.Namespace) -> int:
    """Write a claim skeleton (:mod:`fedtheory.claim_skeleton`) and say how to go on."""
    from fedtheory.claim_skeleton import write_skeleton
    from fedtheory.commands import command

    path = write_skeleton(args.id, args.kind, args.dir)
    print(f"wrote {path}: fill in its statement and checks (each raises NotImplementedError "
          f"until written, and the claim is reported as error), then\n"
          f"  {command('verify', str(path), '--quick')}")
    return 0


def _version() -> str:
    from fedtheory import __version__

    return f"fedtheory {__version__}"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="fedtheory",
        description="Verify the theory of federated learning under partial participation.",
    )
    p.add_argument("--version", action="version", version=_version())
    sub = p.add_subparsers(dest="command", required=True)

    def claims_option(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--claims", action="append", metavar="PATH", default=[],
                        help="also load the claims of this file or folder (repeatable): a "
                             "claim file defines CLAIM (or CLAIMS)")
    pl = sub.add_parser("list", help="list the registered claims")
    pl.add_argument("--family", help="only this family (is, ocs, mifa, fedavg, ...)")
    claims_option(pl)
    pl.set_defaults(func=cmd_list)

    ps = sub.add_parser("show", help="show one claim, its checks and a recorded verdict")
    ps.add_argument("id")
    ps.add_argument("--from", dest="from_report", metavar="REPORT.json",
                    help="take the verdict from this JSON report (default: the run record "
                         f"{RECORD_PATH} of the last `fedtheory verify` in this directory)")
    claims_option(ps)
    ps.set_defaults(func=cmd_show)

    def preset_options(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--quick", action="store_true", help="small sizes (= --preset quick)")
        sp.add_argument("--preset", choices=PRESETS, default=None,
                        help="sizes: quick (seconds per claim) or full (the seed's; default)")
        sp.add_argument("--seed", type=int, default=0, help="master seed (default 0)")

    pv = sub.add_parser("verify", help="run the checks and print the verdicts")
    pv.add_argument("ids", nargs="*", metavar="ID_OR_PATH",
                    help="claim ids, and claim files or folders (their claims), mixed freely "
                         "(default: every claim)")
    pv.add_argument("--family", help="only this family (not together with ids)")
    preset_options(pv)
    pv.add_argument("--json", metavar="PATH",
                    help="write the JSON report here (rewritten as each claim finishes)")
    pv.add_argument("--report", metavar="DIR", help="write report.md and figures into DIR")
    pv.add_argument("--jobs", type=int, default=None,
                    help="worker processes (default: min(2, cores)); never changes the numbers")
    pv.add_argument("--dask", metavar="ADDRESS",
                    help="run the claims on a Dask cluster (scheduler ADDRESS, or local:N to "
                         'start N local workers); needs pip install "fedtheory[dask]"')
    pv.add_argument("--check-timeout", type=str, default=None, metavar="SECONDS",
                    help="a check running longer is its claim's error, naming the check "
                         "(default: 600 with --quick, 3600 with the full preset; 0: no limit)")
    pv.add_argument("--resume", metavar="REPORT.json",
                    help="keep the finished claims of this report (same version, seed and "
                         f"preset; an interrupted run's {RECORD_PATH} or --json report) and "
                         "run only the others; entries that do not hold up are run again")
    pv.add_argument("--power", action="store_true",
                    help="also run every check against mutants of each claim's stated side "
                         "(constants x 0.7 / x 1.3, factors dropped, step condition relaxed) and "
                         "report which were caught")
    pv.add_argument("--certify", action="store_true",
                    help="also certify the exact worst case of each claim's one-step "
                         "inequality by performance estimation (small n, participation "
                         "patterns enumerated; certificates checked in exact arithmetic); "
                         'needs pip install "fedtheory[pep]"')
    pv.add_argument("--no-progress", action="store_true", help="no progress output")
    pv.add_argument("--no-record", action="store_true",
                    help=f"do not write the run record {RECORD_PATH} in this directory")
    claims_option(pv)
    pv.set_defaults(func=cmd_verify)

    pr = sub.add_parser("replay", help="re-run one check of a claim and print what it measured")
    pr.add_argument("id")
    pr.add_argument("--check", required=True, help="the check's name (see `fedtheory show ID`)")
    preset_options(pr)
    claims_option(pr)
    pr.set_defaults(func=cmd_replay)

    pc = sub.add_parser("catalogue", help="write the catalogue of claims (CATALOGUE.md)")
    pc.add_argument("--from", dest="from_report", metavar="REPORT.json",
                    help="the JSON report of `fedtheory verify --quick` giving the verdicts")
    pc.add_argument("--regenerate", action="store_true",
                    help="rewrite this checkout's CATALOGUE.md and docs/claims.md (generated "
                         "part) from the claim files and their declared verdicts")
    pc.add_argument("--check", action="store_true",
                    help="like --regenerate, but write nothing: exit 1 when one is stale")
    pc.add_argument("--out", default="CATALOGUE.md", help="where to write (default CATALOGUE.md)")
    claims_option(pc)
    pc.set_defaults(func=cmd_catalogue)

    pe = sub.add_parser("errata", help="write an errata page (HTML) and LaTeX snippets per "
                                       "seed paper from a JSON report")
    pe.add_argument("--from", dest="from_report", required=True, metavar="REPORT.json",
                    help="the JSON report of a finished `fedtheory verify --json` run")
    pe.add_argument("--out", required=True, metavar="DIR",
                    help="where to write <seed>-<name>.html and .tex (created if needed)")
    pe.add_argument("--paper", metavar="ID",
                    help="only this seed paper: its key (000-004) or short name (ocs, fedau, "
                         "...); default: every paper the report's claims cite")
    claims_option(pe)
    pe.set_defaults(func=cmd_errata)

    from fedtheory.claim_skeleton import KINDS  # the standard library only

    pk = sub.add_parser("recheck", help="re-check every certificate of a report (verify "
                        "--certify) in exact rational arithmetic, without a solver")
    pk.add_argument("--from", dest="from_report", required=True, metavar="REPORT.json")
    pk.set_defaults(func=cmd_recheck)

    pn = sub.add_parser("new", help="write the skeleton of a claim file (FAMILY.NAME)")
    pn.add_argument("id", metavar="FAMILY.NAME")
    pn.add_argument("--kind", required=True, choices=list(KINDS))
    pn.add_argument("--dir", default=".", help="where to write FAMILY_NAME.py (default: here)")
    pn.set_defaults(func=cmd_new)
    return p


def _check_verify_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``verify``'s options that contradict each other or are out of range: a usage error
    (exit 2) before any work."""
    if args.check_timeout is not None:
        try:
            t = float(args.check_timeout)
        except ValueError:
            t = float("nan")
        if not (0 <= t < float("inf")):
            parser.error("--check-timeout must be a number of seconds >= 0 (0: no limit), got "
                         f"{args.check_timeout!r}")
        args.check_timeout = t
    if args.dask is not None and args.jobs is not None:
        parser.error("--jobs and --dask exclude each other (a Dask cluster has its own "
                     "workers; local:N starts N)")
    if args.dask is not None:
        from fedtheory.executors import check_dask_address

        try:
            check_dask_address(args.dask)
        except ValueError as exc:
            parser.error(str(exc))


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "verify":  # claim ids and claim files, mixed
        args.targets = list(args.ids)
        args.paths = [a for a in args.ids if _looks_like_path(a)]
        args.ids = [a for a in args.ids if not _looks_like_path(a)]
    if getattr(args, "seed", 0) is not None and getattr(args, "seed", 0) < 0:
        parser.error(f"--seed must be non-negative, got {args.seed}")
    if getattr(args, "jobs", None) is not None and args.jobs < 1:
        parser.error(f"--jobs must be >= 1, got {args.jobs}")
    if args.command == "verify":
        _check_verify_options(parser, args)
    try:
        with _interruptible():
            return args.func(args)
    except KeyboardInterrupt as exc:  # a command without its own handling (verify has one)
        signum, name = _signal_name(exc)
        print(f"{_fresh_line()}fedtheory: interrupted ({name})", file=sys.stderr)
        return 128 + signum
    except ValueError as exc:  # its text may quote a report: no control characters
        print(terminal_text(f"fedtheory: error: {exc}"), file=sys.stderr)
        return 2
    except BrokenPipeError:  # `fedtheory ... | head`: the reader left; not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
