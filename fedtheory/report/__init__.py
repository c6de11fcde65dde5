"""Reports of a verification run: the JSON document, the Markdown report, the run record.

Every report carries its **provenance** in a field of its own (:func:`provenance`): the
fedtheory version, the git commit and whether the tree was dirty, the preset and seed, Python,
the packages and BLAS that computed it, the command and the time. Each claim entry carries a
``digest`` of itself (:func:`fedtheory.schema.digest`). Everything outside ``provenance``, the
timings (``seconds``), the figures' paths and the digests depends only on the preset, the seed
and the code, so two runs with the same seed and preset give byte-identical documents there
(:func:`without_volatile`).

A report read back (``verify --resume``, ``show``, ``catalogue --from``) is untrusted input:
:func:`load_report` checks it against the one schema (:mod:`fedtheory.schema`) and names the
file, the claim and the field of any problem; verdicts are recomputed from the stored checks,
never read from the file; :func:`resume_plan` keeps only the entries that agree with their
checks, their digest and the claim's definition, and runs the others again.

Nothing is written that the user did not ask for, except the **run record**
``.fedtheory/last_run.json`` in the working directory (the JSON report of the last
``fedtheory verify`` run there, provenance included, rewritten as each claim finishes with
``"complete": false`` until the run ends), which ``fedtheory show`` reads when no
``--from REPORT.json`` is given and ``--resume`` continues from after an interrupt. Every file
is written atomically (a temporary file in the same folder, then :func:`os.replace`), so a
reader never sees half a report and concurrent runs never mix their results: the last one to
finish wins, and says who it was. A file is written only where nothing is or a regular file is:
a symbolic link, a device (``/dev/null``), a FIFO, a socket or a directory at an output's path
is an error naming the option, before any work and again at the rename
(:mod:`fedtheory.safefiles`); fedtheory never writes through a link nor replaces one.

A report is read with a bounded read of a regular file (at most
:data:`fedtheory.safefiles.MAX_REPORT_BYTES`, nested at most :data:`MAX_REPORT_DEPTH` deep), and
an entry is used only when its id is a claim loaded here (:func:`unresolved`).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import sys
import tempfile
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fedtheory.gitinfo import git_output
from fedtheory.safefiles import (
    MAX_REPORT_BYTES,
    check_output_dir,
    check_output_file,
    read_bounded,
)
from fedtheory.schema import (
    REPORT_FORMAT,
    ReportError,
    audit,
    claim_label,
    definition_of,
    derived,
    digest,
    grades_of,
    mutants_of,
    validate,
)

if TYPE_CHECKING:  # the claim machinery (sympy) is imported where results are handled
    from fedtheory.claims.core import Claim, ClaimResult

__all__ = [
    "MAX_REPORT_DEPTH",
    "RECORD_PATH",
    "REPORT_VERSION",
    "Resume",
    "atomic_write_text",
    "certified_lines",
    "certified_summary",
    "check_writable_dir",
    "check_counts",
    "check_writable_file",
    "checks_summary",
    "claim_file",
    "entry",
    "load_report",
    "loaded_definition",
    "nesting_depth",
    "power_summary",
    "provenance",
    "read_json",
    "result_from_dict",
    "resume_plan",
    "to_json",
    "unresolved",
    "verdict_table",
    "without_volatile",
    "write_json",
    "write_markdown",
    "write_record",
]

#: The report format (the document's ``version``; :data:`fedtheory.schema.REPORT_FORMAT`).
REPORT_VERSION = REPORT_FORMAT

#: The run record ``fedtheory verify`` leaves in the working directory (relative path).
RECORD_PATH = Path(".fedtheory") / "last_run.json"

#: Packages whose versions go into the provenance (those that compute or render evidence).
_PACKAGES = ("numpy", "scipy", "sympy", "cvxpy", "clarabel", "matplotlib", "scikit-learn",
             "numba")


# --------------------------------------------------------------------------------------------
# provenance


def _source_tree() -> dict[str, Any]:
    """The git commit of the fedtheory source that runs, and whether its tree was dirty.

    Only when the imported package lives in a git work tree (an editable install or a clone on
    ``sys.path``); an installed wheel has no commit to report.
    """
    pkg = Path(__file__).resolve().parent.parent  # fedtheory/, above this package
    top = git_output(["rev-parse", "--show-toplevel"], pkg)
    if top is None or not (Path(top) / "fedtheory" / "__init__.py").exists():
        return {"commit": None, "dirty": None, "source": str(pkg)}
    commit = git_output(["rev-parse", "HEAD"], pkg)
    status = git_output(["status", "--porcelain", "--untracked-files=no"], pkg)
    # an untracked claim file inside the package changes what runs: it counts as dirty
    loose = git_output(["ls-files", "--others", "--exclude-standard", "--", "claims"], pkg)
    if status is not None and loose is not None:
        status += "".join(line for line in loose.splitlines() if line.endswith(".py"))
    return {"commit": commit, "dirty": None if status is None else bool(status), "source": top}


def _package_versions() -> dict[str, str | None]:
    from importlib import metadata

    out: dict[str, str | None] = {}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def _compiled_kernels() -> bool:
    """Whether the simulator uses the optional numba kernels (the same numbers either way)."""
    from fedtheory.compiled import numba_enabled

    return numba_enabled()


def _blas() -> list[dict[str, Any]]:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        return []
    keep = ("internal_api", "version", "architecture", "num_threads", "threading_layer")
    return [{k: d.get(k) for k in keep} for d in threadpool_info() if d.get("user_api") == "blas"]


def provenance(seed: int, preset: str, *, argv: Sequence[str] | None = None,
               jobs: int | None = None) -> dict[str, Any]:
    """Where and when a result was made: version, commit, preset, seed, platform, time.

    >>> p = provenance(0, "quick")
    >>> sorted(p)[:5]
    ['argv', 'blas', 'blas_threads_in_checks', 'commit', 'compiled_kernels']
    >>> p["seed"], p["preset"]
    (0, 'quick')
    """
    from fedtheory import __version__

    tree = _source_tree()
    return {
        "fedtheory_version": __version__,
        "commit": tree["commit"],
        "dirty": tree["dirty"],
        "source": tree["source"],
        "preset": preset,
        "seed": seed,
        "jobs": jobs,
        "time": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "packages": _package_versions(),
        "blas": _blas(),
        "blas_threads_in_checks": 1,
        "compiled_kernels": _compiled_kernels(),
        "argv": list(sys.argv if argv is None else argv),
        "cwd": os.getcwd(),
        "pid": os.getpid(),
    }


# --------------------------------------------------------------------------------------------
# writing files


def atomic_write_text(path: Path | str, text: str, option: str = "output") -> Path:
    """Write ``text`` to ``path`` atomically: a temporary file in the same folder, then rename.

    A reader sees the old file or the new one, never a mixture; the folder is created if needed.
    Only a path that names nothing or a regular file is written: a symbolic link, a device
    (``/dev/null``), a FIFO, a socket or a directory there is an
    :class:`~fedtheory.safefiles.UnsafePath` naming ``option`` and the path (checked before the
    temporary file is made and again just before the rename), and nothing is replaced.
    """
    path = Path(path)
    check_output_file(path, option)
    path.parent.mkdir(parents=True, exist_ok=True)
    # open(..., "x") rather than mkstemp: the file gets the user's umask (mkstemp's is 0600)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        with open(tmp, "x", encoding="utf-8") as fh:
            fh.write(text)
        check_output_file(path, option)  # again: it may have been replaced meanwhile
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def _probe_dir(directory: Path) -> str | None:
    """Create ``directory`` if needed and try to write in it; return the problem, or None."""
    if directory.exists() and not directory.is_dir():
        return f"{directory} exists and is not a directory"
    for parent in directory.parents:
        if parent.exists() and not parent.is_dir():
            return f"{parent} is not a directory"
        if parent.exists():
            break
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".fedtheory-probe-", dir=directory)
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        return f"cannot write in {directory}: {exc.strerror or exc}"
    return None


def check_writable_file(path: Path | str, option: str) -> None:
    """Raise ``ValueError`` naming ``option`` unless a file can be written at ``path``.

    Run before any work, so that a bad output path is found in a second, not after the run.
    """
    check_output_file(path, option)  # a link, a device, a FIFO, a directory: refused
    path = Path(path)
    problem = _probe_dir(path.parent if str(path.parent) else Path("."))
    if problem:
        raise ValueError(f"{option} {path}: {problem}")
    if path.exists() and not os.access(path, os.W_OK):
        raise ValueError(f"{option} {path}: file is not writable")


def check_writable_dir(directory: Path | str, option: str,
                       files: Sequence[str] = ("report.md",)) -> None:
    """Raise ``ValueError`` naming ``option`` unless ``directory`` (and its ``figures/``) can be
    written, and each of its ``files`` names nothing yet or a regular file
    (:func:`fedtheory.safefiles.check_output_file`)."""
    check_output_dir(directory, option)
    check_output_dir(Path(directory) / "figures", option)
    for name in files:
        check_output_file(Path(directory) / name, option)
    directory = Path(directory)
    problem = _probe_dir(directory) or _probe_dir(directory / "figures")
    if problem:
        raise ValueError(f"{option} {directory}: {problem}")


# --------------------------------------------------------------------------------------------
# the JSON document


def entry(result: ClaimResult, report_dir: Path | str | None = None) -> dict[str, Any]:
    """A claim's entry in a report: ``result.to_dict()``, where the claim was defined
    (``origin``: :func:`fedtheory.claims.registry.origin_of`; the replay commands of a claim
    from a file name that file) and its ``digest``. With ``report_dir`` (the run's
    ``--report`` directory, which the provenance records as ``report_dir``), the figures drawn
    into it are given relative to it (what ``fedtheory errata`` embeds, and nothing else)."""
    from fedtheory.claims.registry import origin_of

    d = result.to_dict()
    if report_dir is not None:
        for c in d["checks"]:
            c["figures"] = [_relative_figure(f, report_dir) for f in c["figures"]]
    origin = origin_of(d["id"])
    if origin is not None:
        d["origin"] = origin.to_dict()
        if origin.kind == "file":
            _replay_from_file(d, origin.path)
    d["digest"] = digest(d)
    return d


def _relative_figure(figure: str, report_dir: Path | str) -> str:
    """``figure`` relative to ``report_dir`` (POSIX form) when it lies inside it, else as it is.

    >>> _relative_figure("out/figures/a.png", "out"), _relative_figure("figures/a.png", "out")
    ('figures/a.png', 'figures/a.png')
    """
    rel = os.path.relpath(os.path.abspath(figure), os.path.abspath(report_dir))
    return figure if rel.split(os.sep)[0] == os.pardir else Path(rel).as_posix()


def _replay_from_file(d: dict[str, Any], path: str | None) -> None:
    """Make every replay command of the entry ``d`` load the claim file ``path`` first: each
    made again from its parts (the claim id, the check, the preset and the seed)."""
    from fedtheory.claims.core import replay_command

    top = d.get("counterexample")
    for ce, check in [(top, (top or {}).get("check")),
                      *((c.get("counterexample"), c["name"]) for c in d["checks"])]:
        if path and isinstance(ce, dict) and isinstance(ce.get("replay"), dict) and check:
            ce["replay"] = replay_command(d["id"], check, d["preset"], d["seed"], path)


def claim_file(claim_id: str) -> str | None:
    """The claim file that defines ``claim_id`` (a claim from outside the package), else
    None."""
    from fedtheory.claims.registry import origin_of

    origin = origin_of(claim_id)
    return origin.path if origin is not None and origin.kind == "file" else None


def to_json(results: Sequence[ClaimResult | Mapping[str, Any]], seed: int, preset: str,
            prov: dict[str, Any] | None = None, complete: bool = True) -> dict[str, Any]:
    """The report document: ``{"version", "fedtheory_version", "seed", "preset", "complete",
    "summary", "claims", "provenance"}``; ``complete`` is False while a run is still writing it
    (the claims listed are finished ones). ``results`` are claim results, or their entries
    already made (:func:`entry`). Outside ``provenance``, the ``seconds`` and the ``digest``
    fields it depends only on the results."""
    from fedtheory import __version__

    entries = [dict(r) if isinstance(r, Mapping) else entry(r) for r in results]
    return {
        "version": REPORT_VERSION,
        "fedtheory_version": __version__,
        "seed": seed,
        "preset": preset,
        "complete": bool(complete),
        "summary": dict(sorted(Counter(e["verdict"] for e in entries).items())),
        "claims": entries,
        "provenance": prov if prov is not None else provenance(seed, preset),
        "grades": grades_of(entries),
    }


#: The fields of a report that may differ between two runs of the same seed and preset.
VOLATILE = ("provenance", "seconds", "figures", "digest", "origin")


def without_volatile(doc: Any) -> Any:
    """A report (or any part of one) without :data:`VOLATILE` fields, at every depth: what
    must be identical between two runs of the same seed and preset, whatever the executor.

    >>> without_volatile({"a": 1, "seconds": 2.0, "b": [{"figures": [], "c": 3}]})
    {'a': 1, 'b': [{'c': 3}]}
    """
    if isinstance(doc, dict):
        return {k: without_volatile(v) for k, v in doc.items() if k not in VOLATILE}
    if isinstance(doc, list):
        return [without_volatile(v) for v in doc]
    return doc


def _dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def write_json(path: Path | str, results: Sequence[ClaimResult | Mapping[str, Any]], seed: int,
               preset: str, prov: dict[str, Any] | None = None, complete: bool = True,
               option: str = "--json") -> Path:
    """Write the JSON report atomically (:func:`atomic_write_text`: an error naming ``option``
    where ``path`` is not a regular file); ``provenance.path`` says where it was written."""
    path = Path(path)
    doc = to_json(results, seed, preset, prov, complete)
    doc["provenance"] = {**doc["provenance"], "path": str(path.resolve())}
    return atomic_write_text(path, _dumps(doc), option)


def write_record(results: Sequence[ClaimResult | Mapping[str, Any]], seed: int, preset: str,
                 prov: dict[str, Any] | None = None, root: Path | str = ".",
                 complete: bool = True) -> Path | None:
    """Write the run record (``.fedtheory/last_run.json`` under ``root``), best effort.

    Returns its path, or None when the working directory is not writable (not an error).
    """
    try:
        return write_json(Path(root) / RECORD_PATH, results, seed, preset, prov, complete,
                          option="the run record")
    except OSError:
        return None


# --------------------------------------------------------------------------------------------
# reading reports back


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key {key!r} appears twice in one object")
        out[key] = value
    return out


#: The deepest nesting of arrays and objects a report may have (a real one has about 10): a
#: deeper document is refused right after parsing, before anything walks it recursively.
MAX_REPORT_DEPTH = 64


def nesting_depth(doc: Any, limit: int = MAX_REPORT_DEPTH) -> int:
    """How deeply ``doc`` nests arrays and objects (a scalar: 0), counted without recursion;
    the count stops at ``limit + 1``.

    >>> nesting_depth({"a": [1, {"b": 2}]}), nesting_depth(3)
    (3, 0)
    """
    deepest, stack = 0, [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict)
                                                   else value))
    return deepest


def read_json(path: Path | str, limit: int = MAX_REPORT_BYTES) -> Any:
    """Parse the JSON file at ``path`` strictly (no NaN or Infinity, no key twice in one
    object); ``ValueError`` naming the path when it is missing, not a regular file, larger than
    ``limit`` bytes (:data:`fedtheory.safefiles.MAX_REPORT_BYTES`: read with a bounded read,
    :func:`fedtheory.safefiles.read_bounded`), not JSON, or nested deeper than
    :data:`MAX_REPORT_DEPTH`."""
    path = Path(path)
    try:
        text = read_bounded(path, "report", limit).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"report {path} is not readable: {exc}") from None
    try:
        doc = json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique_keys)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise ValueError(f"report {path} is not readable JSON: {exc}") from None
    if nesting_depth(doc) > MAX_REPORT_DEPTH:
        raise ValueError(f"report {path}: nested more than {MAX_REPORT_DEPTH} levels deep (a "
                         "report is about 10): not a fedtheory report")
    return doc


def load_report(path: Path | str, only: str | None = None) -> dict[str, Any]:
    """Read a JSON report and check it against the schema (:func:`fedtheory.schema.validate`;
    with ``only``, the document and that claim's entries): a ``ValueError`` names the path, the
    claim and the field when it is missing, not JSON, or not a report of this format."""
    doc = read_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("claims"), list):
        raise ValueError(f"report {path} is not a fedtheory report (no 'claims' list)")
    if doc.get("version") != REPORT_VERSION:
        raise ReportError(str(path), f"report format {doc.get('version')!r}; this fedtheory "
                          f"reads format {REPORT_VERSION!r} (write it again with `fedtheory "
                          "verify`)", field="version")
    validate(doc, str(path), only)
    return doc


def result_from_dict(d: Mapping[str, Any]) -> ClaimResult:
    """A claim's result read back from a schema-valid report entry (the inverse of
    ``to_dict``); the verdict, counterexample and tightness are recomputed from its checks
    (:func:`fedtheory.claims.core.combine`), never read from the entry."""
    from fedtheory.claims.core import (
        CheckResult,
        ClaimKind,
        ClaimResult,
        combine,
        grade,
        tightness,
    )
    from fedtheory.claims.readings import Reading, reading_verdicts

    fields = CheckResult.__dataclass_fields__
    checks = [CheckResult(**{k: v for k, v in c.items() if k in fields}) for c in d["checks"]]
    verdict, counterexample = combine(checks)
    readings = d.get("readings")
    if readings is not None:  # each reading's verdict recomputed from its checks too
        readings = reading_verdicts([Reading(r["name"], r["lines"], r["text"],
                                             tuple(r["checks"]), r.get("kind", "reading"))
                                     for r in readings], checks)
    return ClaimResult(
        id=d["id"], family=d["family"], seed_ref=d["seed_ref"], kind=d["kind"],
        statement=d["statement"], verdict=verdict, checks=checks,
        counterexample=counterexample, preset=d["preset"], seed=d["seed"],
        seconds=float(d.get("seconds", 0.0)), title=d.get("title", ""),
        derivation=d.get("derivation", ""), finding=d.get("finding", ""),
        tightness=tightness(ClaimKind(d["kind"]), checks), power=d.get("power"),
        erratum=d.get("erratum"), setup=d.get("setup"), restatement=d.get("restatement", ""),
        certified=d.get("certified"), grade=grade(checks), readings=readings,
    )


def _live_claims() -> tuple[Any, dict[str, Any]]:
    """The registry module (None when this process has not imported it) and its claims."""
    reg = sys.modules.get("fedtheory.claims.registry")
    return reg, (getattr(reg, "_REGISTRY", {}) if reg is not None else {})


def unresolved(entry: Mapping[str, Any]) -> str | None:
    """Why a report entry's ``id`` names no claim loaded here, as ``"field: what"``; None when
    it does: a built-in claim, one of an installed entry point, or one of a ``--claims`` file
    whose SHA-256 is the one the entry's ``origin`` records (the file that computed it).

    An entry whose id resolves to nothing has no definition to be checked against (a look-alike
    id, ``is.unb\u0456ased`` with a Cyrillic letter, would carry any text): it is never used.
    """
    from fedtheory import index

    cid = entry["id"]
    reg, live = _live_claims()
    if cid not in live and cid not in index.file_ids():
        index.load_entry_points()
        reg, live = _live_claims()
        if cid not in live:
            return (f"id: {ascii(cid)} is no claim loaded here (built in, an installed entry "
                    "point, or a --claims file): the entry cannot be checked against a "
                    "definition")
    stored = entry.get("origin") or {}
    if stored.get("kind") == "file":
        now = reg.origin_of(cid) if reg is not None and cid in live else None
        if now is None or now.kind != "file" or now.sha256 != stored.get("sha256"):
            where = (f"the loaded claim is {now.describe()}" if now is not None
                     else "no --claims file defines it here")
            return (f"origin.sha256: written by the claim file {stored.get('path')} "
                    f"(sha256 {str(stored.get('sha256'))[:12]}...), but {where}: give "
                    "--claims with the file that computed it")
    return None


def loaded_definition(claim_id: str, preset: str) -> dict[str, Any] | str | None:
    """The definition of the loaded claim ``claim_id`` with ``preset``
    (:func:`fedtheory.schema.definition_of`, or its digest from the index when the claim is
    not imported), for :func:`fedtheory.schema.audit`; None when no claim has this id."""
    from fedtheory.index import lookup

    _, live = _live_claims()
    if claim_id in live:
        return definition_of(live[claim_id], preset)
    try:
        return lookup(claim_id).definition.get(preset)
    except ValueError:
        return None


@dataclass
class Resume:
    """What ``verify --resume`` keeps of a report: ``kept`` (claim id -> result), and the
    ``warnings`` to print (the claims run again because their entries could not be used, or
    the report's code differs from this run's)."""

    kept: dict[str, ClaimResult] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def resume_plan(path: Path | str, claims: Sequence[Claim], seed: int, preset: str,
                power: bool) -> Resume:
    """The finished results of the report at ``path`` that a run of ``claims`` with ``seed``
    and ``preset`` can keep (``fedtheory verify --resume``).

    The report must be valid (:func:`load_report`) and of the same fedtheory version, seed and
    preset, else ``ValueError``. Of its entries for ``claims``, those that fail the audit
    (:func:`fedtheory.schema.audit`: a stored verdict its checks do not give, an edited entry,
    another version of the claim, ...) or whose source changed (:func:`source_changes`: the
    claim's file or a helper module beside it hashes otherwise now) are run again with a
    warning naming the file, the claim and the field; those with verdict ``error``, and those
    without mutants when ``power`` is asked for, are run again silently.
    """
    from fedtheory import __version__

    doc = load_report(path)
    want = {"fedtheory_version": __version__, "seed": seed, "preset": preset}
    for key, value in want.items():
        if doc.get(key) != value:
            raise ValueError(f"--resume {path}: its {key} is {doc.get(key)!r}, this run's is "
                             f"{value!r}; run without --resume")
    out = Resume()
    then, now = doc["provenance"].get("commit"), _source_tree()["commit"]
    if then and now and then != now:
        out.warnings.append(f"--resume {path}: written by commit {then[:12]}, this is "
                            f"{now[:12]}: the claims it keeps were computed by other code")
    by_id = {c.id: c for c in claims}
    for k, d in enumerate(doc["claims"]):
        claim = by_id.get(d["id"])
        problem = unresolved(d)
        if problem is not None and (claim is not None or problem.startswith("id:")):
            out.warnings.append(f"--resume {path}: {claim_label(doc, k)}: {problem}; "
                                + ("the claim is run again" if claim is not None
                                   else "the entry is dropped"))
            continue
        if claim is None or derived(d)["verdict"] == "error" or (power and d["power"] is None):
            continue  # run again anyway: nothing of it is used
        problems = audit(d, preset=doc["preset"], seed=doc["seed"],
                         definition=definition_of(claim, preset), mutants=mutants_of(claim))
        changed = source_changes(d.get("origin"), claim.id)
        if changed:
            problems = [changed, *problems]
        if problems:
            more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
            out.warnings.append(f"--resume {path}: {claim_label(doc, k)}: {problems[0]}{more}; "
                                "the claim is run again")
            continue
        res = result_from_dict(d)
        out.kept[res.id] = res
    return out


def source_changes(then: Any, claim_id: str) -> str | None:
    """How the source of ``claim_id`` differs from the one an entry recorded (its ``origin``,
    ``then``): the claim's file or a helper module beside it hashes otherwise now, or is
    gone or new (or the entry records none of it); None when they hash the same."""
    from fedtheory.claims.registry import origin_of

    origin = origin_of(claim_id)
    if origin is None:
        return None
    now = origin.to_dict()
    then = then if isinstance(then, Mapping) else {}
    if now.get("sha256") and then.get("sha256") != now["sha256"]:
        old = str(then.get("sha256") or "none")[:12]
        return (f"its source {now.get('path')} changed since the entry was computed (sha256 "
                f"{old}..., now {now['sha256'][:12]}...)")
    before, after = then.get("helpers"), now.get("helpers") or {}
    if before is None:
        return ("the entry does not record the helper modules beside its source "
                f"({', '.join(sorted(after))})") if after else None
    if not isinstance(before, Mapping):
        return "its origin's helpers are not a name -> SHA-256 table"
    for name in sorted(set(before) | set(after)):
        if before.get(name) != after.get(name):
            what = ("is new" if name not in before else "is gone" if name not in after
                    else "changed")
            return f"the helper module {name} beside its source {what} since it was computed"
    return None


# --------------------------------------------------------------------------------------------
# text and Markdown


def check_counts(checks: Sequence[Any]) -> dict[str, int]:
    """How a claim's checks came out: ``checks`` (those that test: not a neutral figure or
    observation, unless it raised), ``passed``, ``failed``, ``undecided``, ``raised``, and the
    neutral ones: ``figures`` (kind ``figure``) and ``reported`` (other observations outside
    the verdict). ``checks`` may be :class:`~fedtheory.claims.core.CheckResult` values or
    their report entries.

    >>> check_counts([{"passed": True, "neutral": False, "error": None, "kind": "exact"},
    ...               {"passed": None, "neutral": True, "error": None, "kind": "figure"}])
    {'checks': 1, 'passed': 1, 'failed': 0, 'undecided': 0, 'raised': 0, 'figures': 1, \
'reported': 0}
    """
    def get(c: Any, key: str) -> Any:
        return c[key] if isinstance(c, Mapping) else getattr(c, key)

    tested = [c for c in checks if not get(c, "neutral") or get(c, "error") is not None]
    shown = [c for c in checks if get(c, "neutral") and get(c, "error") is None]
    return {
        "checks": len(tested),
        "passed": sum(get(c, "passed") is True for c in tested),
        "failed": sum(get(c, "passed") is False for c in tested),
        "undecided": sum(get(c, "passed") is None and get(c, "error") is None for c in tested),
        "raised": sum(get(c, "error") is not None for c in tested),
        "figures": sum(get(c, "kind") == "figure" for c in shown),
        "reported": sum(get(c, "kind") != "figure" for c in shown),
    }


def _plural(k: int, word: str) -> str:
    return f"{k} {word}" + ("" if k == 1 else "s")


def checks_summary(checks: Sequence[Any]) -> str:
    """The checks of a claim in words: ``"3 of 3 checks passed, 2 figures"``; figures and
    observations outside the verdict are not counted as checks (they show, they do not test).

    >>> ok = {"passed": True, "neutral": False, "error": None, "kind": "exact"}
    >>> bad = {**ok, "passed": False}
    >>> fig = {"passed": None, "neutral": True, "error": None, "kind": "figure"}
    >>> checks_summary([ok, ok, ok, fig, fig])
    '3 of 3 checks passed, 2 figures'
    >>> checks_summary([ok, bad, {**ok, "passed": None}, fig])
    '1 of 3 checks passed (1 failed, 1 undecided), 1 figure'
    """
    n = check_counts(checks)
    out = f"{n['passed']} of {_plural(n['checks'], 'check')} passed"
    rest = [f"{n[k]} {k}" for k in ("failed", "undecided", "raised") if n[k]]
    if rest:
        out += f" ({', '.join(rest)})"
    if n["figures"]:
        out += f", {_plural(n['figures'], 'figure')}"
    if n["reported"]:
        out += f", {n['reported']} reported outside the verdict"
    return out


def verdict_label(verdict: str, grade: str | None) -> str:
    """A verdict as shown: its grade where the grade says more than the verdict (a confirmed
    claim of low power is shown "consistent (low power)", never "confirmed"; an inconclusive
    one whose checks cannot discriminate, "not testable").

    >>> verdict_label("confirmed", "confirmed")
    'confirmed'
    >>> verdict_label("confirmed", "consistent (low power)")
    'consistent (low power)'
    >>> verdict_label("inconclusive", "not testable")
    'not testable'
    """
    return verdict if grade in (None, "confirmed") else grade


def grade_counts(items: Sequence[Any]) -> str:
    """How many claims (results or report entries) have each grade, and how many of their
    checks are not testable here (counted apart: never a refutation, never a confirmation).

    >>> ok = {"passed": True, "neutral": False, "error": None, "kind": "exact"}
    >>> nt = {**ok, "passed": None, "grade": "not testable"}
    >>> grade_counts([{"grade": "confirmed", "checks": [ok]},
    ...               {"grade": "consistent (low power)", "checks": [ok, nt]}])
    'grades: confirmed 1, consistent (low power) 1, not testable 0; checks not testable: 1'
    """
    def get(c: Any, key: str) -> Any:
        return c.get(key) if isinstance(c, Mapping) else getattr(c, key, None)

    counts = Counter(get(r, "grade") for r in items)
    untestable = sum(get(c, "grade") == "not testable" for r in items for c in get(r, "checks"))
    return ("grades: " + ", ".join(f"{g} {counts.get(g, 0)}" for g in
                                   ("confirmed", "consistent (low power)", "not testable"))
            + f"; checks not testable: {untestable}")


def verdict_table(results: Sequence[ClaimResult], counts: bool = True) -> str:
    """A plain-text table: id, verdict, checks passed (figures apart), seconds; then, with
    ``counts``, the count of each verdict."""
    rows = [("claim", "verdict", "checks", "seconds")]
    for r in results:
        n = check_counts(r.checks)
        cell = f"{n['passed']}/{n['checks']}" + (f" +{n['figures']} fig" if n["figures"]
                                                else "")
        rows.append((r.id, verdict_label(r.verdict.value, r.grade), cell, f"{r.seconds:.1f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = []
    for k, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    if counts:
        n_of = Counter(r.verdict.value for r in results)
        lines.append("")
        lines.append(", ".join(f"{v}: {n_of.get(v, 0)}" for v in
                               ("confirmed", "refuted", "inconclusive", "error")))
        lines.append(grade_counts(results))
    return "\n".join(lines)


def certified_lines(c: Mapping[str, Any]) -> list[str]:
    """Markdown for a claim's ``certified`` entry (``verify --certify``): its status and
    stated/worst, then one row per instance."""
    if c["status"] in ("out of scope", "error"):
        return [f"**Certified** ({c['status']}): {_md_cell(c.get('reason', ''))}", "",
                *rate_lines(c.get("rate"))]
    out = [f"**Certified** (performance estimation): **{c['status']}**, stated/worst "
           f"{_ratio_text(c.get('ratio'))} at `{_md_cell(json.dumps(c.get('at')))}`"
           + (f"; {c['finding']}" if c.get("finding") else "")
           + (f"; closed form: {c['closed_form']['text']} "
              f"({_closed_form_text(c['closed_form'])})"
              if c.get("closed_form") else ""), "",
           *([f"**Function class**: {_md_cell(str(c['function_class']))}"
              + (" (interpolation conditions necessary only: lower certificates are "
                 "explicit functions of the class)" if c.get("interpolation") == "necessary"
                 else ""), ""] if c.get("function_class") else []),
           *_certified_findings(c),
           "| instance | stated | worst (lower, upper) | stated/worst | status | s |",
           "|---|---|---|---|---|---|"]
    for r in c.get("instances", []):
        worst = r["lower"] if r["lower"] == r["upper"] else f"[{r['lower']}, {r['upper']}]"
        out.append(f"| {_md_cell(json.dumps(r['params']))} | {r['stated']} | "
                   f"{_md_cell(str(worst)[:60])} | {_ratio_text(r.get('ratio'))} | "
                   f"{r['status']} | {r.get('seconds', '')} |")
    return [*out, "", *rate_lines(c.get("rate"))]


def rate_lines(rate: Mapping[str, Any] | None) -> list[str]:
    """Markdown for the ``certified.rate`` entry (a potential across rounds,
    :func:`fedtheory.certify.lyapunov.certify_rate`): the reason it is out of scope, or one
    row per instance with the stated and certified rate, potential and constant."""
    if not rate:
        return []
    if rate.get("status") in ("out of scope", "error"):
        return [f"**Rate** ({rate['status']}): {_md_cell(str(rate.get('reason', '')))}", ""]
    cf = rate.get("closed_form")
    out = [f"**Rate certificate** (potential search): **{_md_cell(str(rate.get('status')))}**; "
           f"{_md_cell(str(rate.get('description', '')))}"
           + (f"; closed form: {_md_cell(str(cf.get('text')))} "
              f"({'holds' if cf.get('holds') else 'not confirmed'})" if cf else ""), "",
           "| instance | stated | certified rate, potential, constant | at the stated potential "
           "| s |", "|---|---|---|---|---|"]
    for r in rate.get("instances", []):
        cert = (f"ρ = {r.get('rho')}" + (f" (lower {r['rho_lower']})" if r.get("rho_lower")
                                          else "")
                + f", V = {json.dumps(r.get('potential'), ensure_ascii=False)}, c = "
                f"{r.get('constant')}" + (" (attained)" if r.get("constant_tight") else "")
                if r.get("status") == "certified" else str(r.get("reason", r.get("status"))))
        at = r.get("at_stated_potential") or {}
        verdict = {True: " (the stated bound follows)", False: " (above the stated)"}.get(
            r.get("stated_certified"), "")
        out.append(f"| {_md_cell(json.dumps(r.get('params')))} | "
                   f"{_md_cell(json.dumps(r.get('stated'), ensure_ascii=False))} | "
                   f"{_md_cell(cert)} | {_md_cell(str(at.get('constant', '')) + verdict)} | "
                   f"{_md_cell(str(r.get('seconds', '')))} |")
    return [*out, ""]


def _certified_findings(c: Mapping[str, Any]) -> list[str]:
    """The certified entry's refutation (the PEP's own instance, re-checked exactly) and its
    symbolic derivation of the worst case, as Markdown lines (none when absent)."""
    out: list[str] = []
    if c.get("refuted"):
        ce = c.get("counterexample") or {}
        out += [f"**Refuted by the certificate**: {_md_cell(str(c['refuted']))}"
                + (f"; at `{_md_cell(json.dumps(ce.get('params')))}` the worst case is "
                   f"{ce.get('value')} against the stated {ce.get('stated')} "
                   f"({_md_cell(str(ce.get('from', '')))})" if ce else ""), ""]
    for d in c.get("derived") or []:
        out += [f"**Worst case derived** ({d.get('derivation')}, n = {d.get('n')}, in "
                f"{d.get('parameter')}): `{_md_cell(str(d.get('worst')))}`"
                + ("; attained by an instance" if d.get("attained") else "")
                + ("; equals the closed form" if d.get("closed_form_equal") else ""), ""]
    return out


def _closed_form_text(cf: Mapping[str, Any]) -> str:
    if not cf["holds"]:
        return "not confirmed"
    n, k = cf.get("instances", 0), cf.get("exactly", 0)
    return (f"equal to both certificates at {k} of {n} instances"
            + (", inside them at the others" if k < n else ""))


def _ratio_text(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.6g}"


def certified_summary(results: Sequence[ClaimResult]) -> str:
    """One line per claim run with ``--certify``: status, stated/worst (the tightest
    instance tried), the instances and the seconds; out-of-scope claims counted."""
    lines = ["certified worst cases (performance estimation; exact certificates):"]
    skipped = 0
    for r in results:
        c = r.certified
        if c is None:
            continue
        if c["status"] == "out of scope":
            skipped += 1
            continue
        found = (f", found measured/stated {r.tightness['ratio']:.4g}" if r.tightness else "")
        lines.append(f"  {r.id}: {c['status']}, stated/worst {_ratio_text(c.get('ratio'))}{found} "
                     f"({len(c.get('instances', []))} instances, {c.get('seconds', 0):.1f} s)"
                     + (f"; {c['finding']}" if c.get("finding") else "")
                     + (f"; class: {c['function_class']}" if c.get("function_class") else "")
                     + (f" [{c.get('reason')}]" if c["status"] == "error" else ""))
    lines.append(f"  ({skipped} claim(s) out of scope: see each entry's reason)")
    return "\n".join(lines)


def power_summary(results: Sequence[ClaimResult]) -> str:
    """One line per claim run with ``--power``: its mutants' outcomes, the missed ones named."""
    lines = ["power (mutants of each claim's stated side):"]
    for r in results:
        if r.power is None:
            continue
        if r.verdict.value == "refuted":
            lines.append(f"  {r.id}: n/a (refuted: the statement already fails)")
            continue
        if not r.power:
            lines.append(f"  {r.id}: no stated side declared")
            continue
        counts = Counter(m["outcome"] for m in r.power)
        missed = [m["mutant"] for m in r.power if m["outcome"] in ("missed", "error")]
        unchanged = [m["mutant"] for m in r.power if m.get("statement_unchanged")]
        text = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        lines.append(f"  {r.id}: {text}"
                     + (f"; NOT CAUGHT: {', '.join(missed)}" if missed else "")
                     + (f"; caught where the mutant does not change the statement: "
                        f"{', '.join(unchanged)}" if unchanged else ""))
    return "\n".join(lines)


def _outcome_cell(m: dict[str, Any]) -> str:
    """A mutant's outcome for the power table; "still true" says on what evidence."""
    evidence = (m.get("instance") or {}).get("evidence")
    if m.get("statement_unchanged"):
        return f"{m['outcome']} (the mutant does not change the statement there)"
    return f"{m['outcome']} ({evidence})" if m["outcome"] == "still true" and evidence \
        else str(m["outcome"])


def setup_lines(setup: dict[str, Any]) -> list[str]:
    """An experiment's set-up card as Markdown: paper, authors' code, this run, deviation."""
    out = ["**Set-up** (the paper's, the authors' code's and this run's; every deviation with "
           "its reason):", "", "| aspect | paper | authors' code | this run | deviation |",
           "|---|---|---|---|---|"]
    for row in setup.get("rows") or []:
        paper = row.get("paper") or ""
        if row.get("paper_where"):
            paper += f" ({row['paper_where']})"
        code = row.get("code") or "–"
        if row.get("code") and row.get("code_where"):
            code += f" (`{row['code_where']}`)"
        out.append(f"| {_md_cell(row.get('aspect', ''))} | {_md_cell(paper)} | "
                   f"{_md_cell(code)} | {_md_cell(row.get('run') or '')} | "
                   f"{_md_cell(row.get('deviation') or 'as the paper')} |")
    if setup.get("code_url"):
        out += ["", f"Authors' code: {setup['code_url']}"]
    for s in setup.get("sensitivity") or []:
        out += ["", f"- Sensitivity run: {s}"]
    if setup.get("notes"):
        out += ["", setup["notes"]]
    return out + [""]


def erratum_lines(e: dict[str, Any], finding: str = "") -> list[str]:
    """A refutation's erratum as Markdown: its kind, what is wrong, the seed's words.

    Beside a ``finding`` (which says what is wrong in a referee's words), what is wrong is not
    said twice: the erratum's paragraph gives its kind, whether the intended statement holds
    and the seed's words, and its own account (``where``) is folded under them."""
    holds = {True: "the intended statement holds", False: "the intended statement is "
             "false too", None: "whether the intended statement holds is not known"}
    if finding.strip():
        out = [f"**Erratum** ({e['kind']}): {holds[e.get('intended_holds')]}.", ""]
    else:
        out = [f"**Erratum** ({e['kind']}): {e['where']}; {holds[e.get('intended_holds')]}.",
               ""]
    if e.get("quote"):
        where = e.get("location", "")
        out += [f"> {_md_cell(e['quote'])}",
                f"> — {source_text('', where) if where else 'as printed'}", ""]
    if e.get("hypothesis"):
        out += [f"Omitted hypothesis: {e['hypothesis']}.", ""]
    if e.get("relied_on"):
        out += [f"Where the paper relies on it: \"{_md_cell(e['relied_on'])}\"", ""]
    if finding.strip() and e.get("where"):
        out += ["<details><summary>The erratum in detail</summary>", "", e["where"].strip(),
                "", "</details>", ""]
    return out


def _passed_cell(c: Any) -> str:
    """A check's outcome in the report's table: passed, failed, undecided (and why), raised;
    a figure or an observation outside the verdict says so instead of "None"."""
    if c.error is not None:
        return "raised"
    if c.neutral:
        return "figure (shows)" if c.kind == "figure" else "reported (outside the verdict)"
    if c.passed is None:
        return f"undecided ({c.undecided})" if c.undecided else "undecided"
    return "passed" if c.passed else "**failed**"


def _md_value(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, list) and len(v) > 8:
        return f"[{', '.join(_md_value(x) for x in v[:8])}, ...] ({len(v)} values)"
    if isinstance(v, list):
        return "[" + ", ".join(_md_value(x) for x in v) + "]"
    return str(v)


def _md_cell(text: Any) -> str:
    """Text for one cell of a GitHub table: every ``|`` escaped (a ``||`` of a norm would
    split the row), on one line.

    >>> print(_md_cell("E||g||^2"))
    E\\|\\|g\\|\\|^2
    """
    return str(text if text is not None else "").replace("|", "\\|").replace("\n", " ")


def source_text(claim_id: str, seed_ref: str) -> str:
    """Where a claim is printed, for a reader: each seed by its short name and the place in it
    (``"OCS, eq. (7)"``), a declared paper's by its short name; a ``seed_ref`` naming no paper
    is shown as it is.

    >>> source_text("x", "002, eq. (7); 003, Theorem 3")
    'OCS, eq. (7); Lecture 14, Theorem 3'
    >>> source_text("x", "my notes")
    'my notes'
    """
    from fedtheory.papers import claim_references

    try:
        refs = claim_references(claim_id, seed_ref)
    except ValueError:
        return seed_ref
    return "; ".join(f"{p.short}, {place}" if place else p.short for p, place in refs)


def papers_lines(results: Sequence[ClaimResult]) -> list[str]:
    """The papers the results' claims cite, each cited as a paper (authors, title, venue and
    year, arXiv id or address: :attr:`fedtheory.papers.Paper.citation`), Markdown-escaped."""
    from fedtheory.papers import claim_references

    cited: dict[str, Any] = {}
    for r in results:
        try:
            cited.update((p.key, p) for p, _ in claim_references(r.id, r.seed_ref))
        except ValueError:  # a claim whose seed_ref names no paper: shown as it is
            continue
    return [f"- **{_md_text(p.short)}**: {_md_text(p.citation)}" for p in cited.values()]


def _md_text(text: str) -> str:
    """Text shown as it is in Markdown: its markup characters escaped."""
    return "".join("\\" + ch if ch in "\\`*_[]<>#|" else ch for ch in " ".join(text.split()))


def figure_alt(r: ClaimResult, c: Any) -> str:
    """The alt text of a check's figure in report.md: what it shows (the claim's title, the
    check's name and its detail), on one line, without the brackets that would end it."""
    what = " ".join(f"{r.title or r.id}: figure of check {c.name}".split())
    detail = " ".join(str(c.detail or "").split())
    text = f"{what} ({detail})" if detail else what
    text = text if len(text) <= 300 else text[:299] + "…"
    return text.replace("\\", "").replace("[", "(").replace("]", ")")


def provenance_lines(prov: dict[str, Any]) -> list[str]:
    """The provenance as a Markdown list (also used by ``fedtheory show``)."""
    commit = prov.get("commit") or "unknown (not run from a git checkout)"
    if prov.get("dirty"):
        commit += " (tree dirty: uncommitted changes)"
    pkgs = ", ".join(f"{k} {v}" for k, v in (prov.get("packages") or {}).items() if v)
    blas = "; ".join(f"{b.get('internal_api')} {b.get('version')} ({b.get('architecture')}, "
                     f"{b.get('num_threads')} threads)" for b in prov.get("blas") or [])
    lines = [
        f"- fedtheory {prov.get('fedtheory_version')}, commit {commit}",
        f"- preset `{prov.get('preset')}`, seed {prov.get('seed')}, jobs {prov.get('jobs')}",
        f"- written {prov.get('time')} by `{' '.join(prov.get('argv') or [])}` "
        f"in {prov.get('cwd')}",
        f"- Python {prov.get('python')} on {prov.get('platform')}",
    ]
    if pkgs:
        lines.append(f"- {pkgs}")
    if blas:
        lines.append(f"- BLAS: {blas}")
    if prov.get("path"):
        lines.append(f"- JSON: {prov['path']}")
    return lines


def write_markdown(directory: Path | str, results: Sequence[ClaimResult], seed: int,
                   preset: str, prov: dict[str, Any] | None = None) -> Path:
    """Write ``report.md`` in ``directory``: provenance, a summary table, then a section per
    claim with its statement, finding, derivation, checks, counterexample and figures."""
    directory = Path(directory)
    prov = prov if prov is not None else provenance(seed, preset)
    out = [f"# fedtheory report (preset `{preset}`, seed {seed})", "", "## Provenance", ""]
    out += provenance_lines(prov)
    cited = papers_lines(results)
    if cited:
        out += ["", "## Papers", "", *cited]
    counts = Counter(r.verdict.value for r in results)
    out += ["", ", ".join(f"**{k}**: {v}" for k, v in sorted(counts.items())),
            "", grade_counts(results)]
    out += ["", "| claim | paper | kind | verdict | checks |", "|---|---|---|---|---|"]
    for r in results:
        out.append(f"| [{r.id}](#{r.id.replace('.', '')}) | "
                   f"{_md_cell(source_text(r.id, r.seed_ref))} | {r.kind} | "
                   f"**{verdict_label(r.verdict.value, r.grade)}** | "
                   f"{checks_summary(r.checks)} |")
    for r in results:
        out += ["", f"## {r.id}", "", f"{source_text(r.id, r.seed_ref)}, {r.kind}: "
                f"**{verdict_label(r.verdict.value, r.grade)}**; {checks_summary(r.checks)}", ""]
        if r.readings:
            from fedtheory.claims.readings import parts_label, readings_text

            out += [f"**{parts_label(r.readings).capitalize()}.** "
                    f"{_md_cell(readings_text(r.readings))}", ""]
        if r.title:
            out += [r.title, ""]
        out += ["$$", r.statement.strip(), "$$", ""]
        if r.finding:
            out += [f"**Finding.** {r.finding.strip()}", ""]
        if r.erratum:
            out += erratum_lines(r.erratum, r.finding)
        if r.restatement:
            out += [f"**Restatement.** {r.restatement.strip()}", ""]
        if r.setup:
            out += setup_lines(r.setup)
        if r.tightness:
            t = r.tightness
            out += [f"**Tightness.** measured/stated reaches {t['ratio']:.4g} (check "
                    f"`{t['check']}`; 1 means the bound is attained) at "
                    f"`{_md_cell(json.dumps(t.get('instance'), default=str)[:400])}`", ""]
        if r.certified:
            out += certified_lines(r.certified)
        if r.derivation:
            out += ["<details><summary>How it is derived and checked</summary>", "",
                    r.derivation.strip(), "", "</details>", ""]
        out += ["| check | kind | passed | measured | theory | detail |",
                "|---|---|---|---|---|---|"]
        for c in r.checks:
            out.append(f"| {_md_cell(c.name)} | {c.kind} | {_md_cell(_passed_cell(c))} | "
                       f"{_md_cell(_md_value(c.measured))} | "
                       f"{_md_cell(_md_value(c.theoretical))} | {_md_cell(c.detail)} |")
        if r.counterexample:
            replay = r.counterexample.get("replay") or {}
            check = r.counterexample.get("check")
            if replay and isinstance(check, str):  # --claims for a claim from a file, as
                from fedtheory.claims.core import replay_command  # the JSON report has it

                replay = replay_command(r.id, check, r.preset, r.seed, claim_file(r.id))
            out += ["", f"**Counterexample** (check `{r.counterexample.get('check')}`):", ""]
            if replay:
                out += ["Re-run exactly this case (prints the measured and stated values):", "",
                        "```bash", replay.get("command", ""), "```", "",
                        f"or in Python: `{replay.get('python', '')}`", ""]
            shown = {**r.counterexample, "replay": replay} if replay else r.counterexample
            out += ["```json", json.dumps(shown, indent=2)[:6000], "```"]
        for c in r.errors:
            out += ["", f"**Check `{c.name}` raised** (listed beside the verdict): "
                        f"`{_md_cell(c.detail)}`"]
        if r.power is not None and r.verdict.value == "refuted":
            out += ["", "**Power**: n/a (refuted: the statement already fails)."]
        elif r.power:
            out += ["", "**Power** (the checks run against mutants of the statement):", "",
                    "| mutant | outcome | by |", "|---|---|---|"]
            out += [f"| {m['mutant']} | {_outcome_cell(m)} | {', '.join(m.get('by') or [])} |"
                    for m in r.power]
        for c in r.checks:
            rel = [os.path.relpath(fig, directory) for fig in c.figures]
            for f in rel:  # a PNG shown (its PDF twin linked beside it), other files linked
                stem, suffix = os.path.splitext(f)
                if suffix == ".png":
                    pdf = f" ([PDF]({stem}.pdf))" if stem + ".pdf" in rel else ""
                    out += ["", f"![{figure_alt(r, c)}]({f}){pdf}"]
                elif not (suffix == ".pdf" and stem + ".png" in rel):
                    out += ["", f"[{c.name}: {os.path.basename(f)}]({f})"]
    return atomic_write_text(directory / "report.md", "\n".join(out) + "\n", "--report")
