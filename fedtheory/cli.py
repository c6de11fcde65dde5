"""The ``fedtheory`` command line: ``list``, ``show``, ``verify``, ``replay``, ``catalogue``,
``errata``.

``--help``, ``--version``, ``list``, ``show ID`` and an unknown id are answered without importing
the claims (:mod:`fedtheory.index`); the claim machinery is imported by the commands that run
claims. ``verify`` keeps every claim that finished: the run record (and the ``--json`` report)
is rewritten atomically as each claim finishes, and SIGINT (Ctrl-C) or SIGTERM (a batch
scheduler's kill) stops the run with one line that says what was kept and the ``--resume``
command that continues it (exit status 128 + the signal's number: 130, 143); so does a closed
output pipe (141, as SIGPIPE would), and an output that cannot be written (a full disk: exit
1). This module parses the arguments; a ``verify`` run is :mod:`fedtheory.run_session`, and a
run's place in its folder (its lock, its outputs, its progress) :mod:`fedtheory.session`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fedtheory.report import (
    RECORD_PATH,
    atomic_write_text,
    check_writable_file,
    load_report,
    provenance_lines,
    writers,
)
from fedtheory.run_session import (
    Interrupted,
    add_sources,
    fresh_line,
    interruptible,
    preset_of,
    report_path,
    resume_command,
    run_verify,
    signal_name,
)
from fedtheory.safetext import terminal_text
from fedtheory.session import Progress, one_line
from fedtheory.vocabulary import PRESETS

#: The signal handling of a command (:func:`fedtheory.run_session.interruptible`), by its
#: former name here.
_interruptible = interruptible

__all__ = ["Interrupted", "Progress", "build_parser", "main", "resume_command"]

#: Lines printed by ``list`` fit this many columns.
LIST_WIDTH = 100

# The size presets: PRESETS, imported from fedtheory.vocabulary (no claim imported to read them).

#: The provenance fields the committed catalogue keeps (what made the verdicts, not where).
CATALOGUE_PROVENANCE = ("fedtheory_version", "commit", "dirty", "preset", "seed", "time",
                        "python", "packages")


def _looks_like_path(arg: str) -> bool:
    """A ``verify`` argument naming a claim file or folder rather than a claim id."""
    return arg.endswith(".py") or os.sep in arg or Path(arg).is_dir()


def cmd_list(args: argparse.Namespace) -> int:
    """One entry per claim: id, kind, then its title and seed reference wrapped to fit."""
    from fedtheory import index

    extra = [index.info_from_claim(c) for c in [*index.load_entry_points(),
                                                 *add_sources(args)]]
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
            f"{one_line(chk.get('detail') or '', 300)}")
        if chk.get("error"):
            say(f"    check {chk['name']} raised: {one_line(chk['detail'], 300)}")
    if counterexample:
        shown = {k: v for k, v in counterexample.items() if k != "replay"}  # rebuilt below
        say("  counterexample: " + one_line(json.dumps(shown), 600))
        check = counterexample.get("check")
        if counterexample.get("replay") and isinstance(check, str):
            say(f"  re-run it: {replay_shown(entry, check, terminal=True)['command']}")


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

    report_path(args.from_report)
    add_sources(args)
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
        print(f"  - {chk.name} [{chk.kind}]: {one_line(chk.description, 90)}")
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


def cmd_verify(args: argparse.Namespace) -> int:
    """``verify``: the run session (:func:`fedtheory.run_session.run_verify`)."""
    return run_verify(args)


def cmd_replay(args: argparse.Namespace) -> int:
    from fedtheory import index

    preset = preset_of(args)
    add_sources(args)
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
    report_path(args.from_report)
    add_sources(args)
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

    report_path(args.from_report)
    add_sources(args)  # --claims: the claim files a report's entries were computed by
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
    for writer in writers():  # the output formats, one file each (fedtheory/report/formats/)
        pv.add_argument(writer.option, metavar=writer.metavar, help=writer.help)
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
        with interruptible():
            return args.func(args)
    except KeyboardInterrupt as exc:  # a command without its own handling (verify has one)
        signum, name = signal_name(exc)
        print(f"{fresh_line()}fedtheory: interrupted ({name})", file=sys.stderr)
        return 128 + signum
    except ValueError as exc:  # its text may quote a report: no control characters
        print(terminal_text(f"fedtheory: error: {exc}"), file=sys.stderr)
        return 2
    except BrokenPipeError:  # `fedtheory ... | head`: the reader left; not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
