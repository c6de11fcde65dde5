"""Hostile claims and a hostile machine, for ``fedtheory verify``: a check that exits, raises
KeyboardInterrupt or hangs is its claim's error (the run goes on, the report is written); a
full disk or a closed pipe ends the run with one line and a non-zero status; workers end with
their parent; stale temporary files go; two runs in one folder are refused; bad Dask addresses
are clear errors before any work.

Each run is a fresh interpreter on a small claim file written to ``tmp_path`` (seconds each).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import fedtheory
from fedtheory.report import RECORD_PATH

ROOT = Path(fedtheory.__file__).resolve().parents[1]

HEADER = '''"""hostile.{name}: a test claim."""

import os
import sys
import time

from fedtheory.claims import Claim, ClaimKind, Evidence

CLAIM = Claim(id="hostile.{name}", family="hostile", seed_ref="001, test", title="{name}",
              kind=ClaimKind.IDENTITY, expected="confirmed", statement="1 + 1 = 2")
'''


def claim_file(folder: Path, name: str, *bodies: str) -> Path:
    """A claim file ``folder/<name>.py``: one check per body (``check0``, ``check1``, ...),
    then a check that passes."""
    text = HEADER.format(name=name)
    for k, body in enumerate([*bodies, "return Evidence(True, 2, 2, 'exact')"]):
        text += (f'\n\n@CLAIM.check("exact")\ndef check{k}(ctx):\n    """check {k}."""\n'
                 + textwrap.indent(textwrap.dedent(body), "    ") + "\n")
    path = folder / f"{name}.py"
    path.write_text(text)
    return path


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), **extra}


def verify(cwd: Path, *args: str, timeout: float = 120,
           **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fedtheory", "verify", *args], cwd=cwd,
                          env=env(), capture_output=True, text=True, timeout=timeout, **kw)


def checks_of(report: Path, claim: str | None = None) -> dict[str, dict]:
    """The checks of ``claim`` (default: the first) in a JSON report, by name."""
    doc = json.loads(report.read_text())
    entry = next(e for e in doc["claims"] if claim in (None, e["id"]))
    return {c["name"]: c for c in entry["checks"]}


# --------------------------------------------------------------------------------------------
# a check is a sandbox of its own claim


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("body", ["sys.exit(0)", "raise KeyboardInterrupt", "raise SystemExit(3)",
                                  "raise GeneratorExit"])
def test_a_check_that_exits_is_its_claims_error(tmp_path: Path, body: str, jobs: str) -> None:
    claim_file(tmp_path, "leaves", body)
    claim_file(tmp_path, "other")
    proc = verify(tmp_path, "./leaves.py", "./other.py", "--quick", "--jobs", jobs,
                  "--json", "r.json", "--no-progress")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["complete"] is True
    verdicts = {e["id"]: e["verdict"] for e in doc["claims"]}
    assert verdicts == {"hostile.leaves": "error", "hostile.other": "confirmed"}
    assert checks_of(tmp_path / "r.json", "hostile.leaves")["check0"]["error"]
    record = json.loads((tmp_path / RECORD_PATH).read_text())
    assert record["complete"] is True and len(record["claims"]) == 2
    assert "Traceback" not in proc.stderr


def test_the_users_ctrl_c_stops_the_run_even_if_a_check_swallows_it(tmp_path: Path) -> None:
    started = tmp_path / "started"
    claim_file(tmp_path, "swallows", f"open({str(started)!r}, 'w').close()\n"
                                     "try:\n    time.sleep(600)\nexcept BaseException:\n"
                                     "    pass\nreturn Evidence(True, 2, 2, 'exact')")
    claim_file(tmp_path, "other")
    proc = subprocess.Popen([sys.executable, "-m", "fedtheory", "verify", "./swallows.py",
                             "./other.py", "--quick", "--jobs", "1", "--no-progress"],
                            cwd=tmp_path, env=env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not started.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted (SIGINT): 0 of 2 claim(s) finished" in err
    assert json.loads((tmp_path / RECORD_PATH).read_text())["complete"] is False


@pytest.mark.parametrize("body", ["sys.exit(0)", "raise KeyboardInterrupt"])
def test_a_claim_file_that_exits_on_import_is_an_error_naming_it(tmp_path: Path,
                                                                 body: str) -> None:
    path = claim_file(tmp_path, "leaves")
    path.write_text(path.read_text() + f"\n{body}\n")
    proc = verify(tmp_path, "./leaves.py", "--quick", "--no-progress")
    assert proc.returncode == 2, proc.stderr
    assert f"claim file {path} failed to import" in proc.stderr
    assert "Traceback" not in proc.stderr


# --------------------------------------------------------------------------------------------
# a per-check time limit

HANGS = {"sleep": "time.sleep(10**6)", "loop": "while True:\n    pass"}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_hanging_check_is_stopped_at_its_time_limit(tmp_path: Path, jobs: str) -> None:
    claim_file(tmp_path, "hangs", HANGS["sleep"], HANGS["loop"])
    proc = verify(tmp_path, "./hangs.py", "--quick", "--jobs", jobs, "--check-timeout", "0.5",
                  "--json", "r.json", "--no-progress", timeout=60)
    assert proc.returncode == 1, proc.stderr
    checks = checks_of(tmp_path / "r.json")
    for name in ("check0", "check1"):
        assert "time limit of 0.5 s" in checks[name]["detail"], checks[name]
        assert f"check {name} of hostile.hangs" in checks[name]["detail"]
    assert checks["check2"]["passed"] is True  # the run went on


def test_a_hanging_check_is_stopped_under_dask(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    claim_file(tmp_path, "loops", HANGS["loop"])
    proc = verify(tmp_path, "./loops.py", "--quick", "--dask", "local:1", "--check-timeout",
                  "0.5", "--json", "r.json", "--no-progress", timeout=90)
    assert proc.returncode == 1, proc.stderr
    assert "time limit of 0.5 s" in checks_of(tmp_path / "r.json")["check0"]["detail"]


def test_the_time_limit_names_the_mutant_under_power(tmp_path: Path) -> None:
    path = tmp_path / "mutated.py"
    path.write_text(HEADER.format(name="mutated").replace(
        'statement="1 + 1 = 2")',
        'statement="x <= 2", stated=Stated(constants={"c": 2}))').replace(
        "from fedtheory.claims import", "from fedtheory.claims.stated import Stated\n"
                                         "from fedtheory.claims import")
        + textwrap.dedent('''

        @CLAIM.check("exact")
        def bound(ctx):
            """hangs under a mutant."""
            c = ctx.const("c")
            if c != 2:
                time.sleep(10**6)
            return Evidence(True, 2, c, "exact")
        '''))
    proc = verify(tmp_path, "./mutated.py", "--quick", "--jobs", "1", "--power",
                  "--check-timeout", "0.5", "--json", "r.json", "--no-progress", timeout=60)
    assert proc.returncode == 0, proc.stderr
    power = json.loads((tmp_path / "r.json").read_text())["claims"][0]["power"]
    assert power, "no mutants were run"
    text = json.dumps(power)
    assert "(mutant c x" in text and "time limit of 0.5 s" in text


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "abc"])
def test_a_bad_check_timeout_is_a_usage_error(tmp_path: Path, value: str) -> None:
    claim_file(tmp_path, "fine")
    proc = verify(tmp_path, "./fine.py", "--quick", f"--check-timeout={value}")
    assert proc.returncode == 2, proc.stderr
    assert "--check-timeout must be a number of seconds >= 0" in proc.stderr


# --------------------------------------------------------------------------------------------
# Dask addresses


@pytest.mark.parametrize("args, words", [
    (["--dask", "local:2", "--jobs", "3"], "--jobs and --dask"),
    (["--dask", "local:0"], "N >= 1"),
    (["--dask", "local:-1"], "N >= 1"),
    (["--dask", "local:abc"], "N >= 1"),
    (["--dask", "local:100000"], "at most"),
    (["--dask", ""], "scheduler address"),
    (["--dask", "not an address"], "scheduler address"),
])
def test_bad_dask_options_are_usage_errors(tmp_path: Path, args: list[str], words: str) -> None:
    path = claim_file(tmp_path, "fine")
    path.write_text(path.read_text() + "\nopen('imported', 'w').close()\n")
    proc = verify(tmp_path, "./fine.py", "--quick", "--no-progress", *args)
    assert proc.returncode == 2, proc.stderr
    assert words in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / RECORD_PATH).exists()  # before any work,
    assert not (tmp_path / "imported").exists()  # before the claim files run any code


def test_an_unreachable_scheduler_is_a_clear_error(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    claim_file(tmp_path, "fine")
    proc = verify(tmp_path, "./fine.py", "--quick", "--no-progress", "--dask",
                  "tcp://127.0.0.1:1", timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "no Dask scheduler answered within 10 s" in proc.stderr
    assert "Traceback" not in proc.stderr


# --------------------------------------------------------------------------------------------
# workers end with their parent


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (killed, not yet reaped by its new parent) counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return True


def test_workers_end_when_the_main_process_is_killed(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    for name in ("a", "b"):
        claim_file(tmp_path, name, f"with open(os.path.join({str(pids)!r}, str(os.getpid())), "
                                   "'w'):\n    pass\ntime.sleep(600)")
    proc = subprocess.Popen([sys.executable, "-m", "fedtheory", "verify", "./a.py", "./b.py",
                             "--quick", "--jobs", "2", "--no-progress", "--no-record"],
                            cwd=tmp_path, env=env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while len(list(pids.iterdir())) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, "no workers started"
            time.sleep(0.1)
        workers = [int(p.name) for p in pids.iterdir()]
        assert proc.pid not in workers
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 20
        while any(_alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [w for w in workers if _alive(w)]
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert not left, f"workers {left} outlived their parent"


# --------------------------------------------------------------------------------------------
# full disk, read-only folders, closed pipes

#: Runs ``fedtheory`` with ``fedtheory.report.files.atomic_write_text`` failing with ENOSPC, in
#: the rooms that write reports with it (the JSON document and the Markdown report), for the
#: paths ending with argv[1] after argv[2] successful writes (and, with argv[3] == "figures",
#: every figure drawing failing so); then the command line argv[4:].
DRIVER = """
import errno, sys
import fedtheory.report.document as document
import fedtheory.report.files as files
import fedtheory.report.markdown as markdown
import fedtheory.runner as runner

real, count = files.atomic_write_text, [0]
suffix, after, figures = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "figures"

def write(path, text, *args, **kwargs):
    if suffix and str(path).endswith(suffix):
        count[0] += 1
        if count[0] > after:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
    return real(path, text, *args, **kwargs)

def draw(res, figure_dir):
    raise OSError(errno.ENOSPC, "No space left on device", figure_dir + "/x.png")

document.atomic_write_text = markdown.atomic_write_text = write
if figures:
    runner.draw_figures = draw
from fedtheory.cli import main
sys.exit(main(sys.argv[4:]))
"""


def full_disk(cwd: Path, suffix: str, after: int, *args: str,
              figures: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", DRIVER, suffix, str(after),
                           "figures" if figures else "-", "verify", *args], cwd=cwd,
                          env=env(), capture_output=True, text=True, timeout=120)


def two_claims(folder: Path) -> list[str]:
    claim_file(folder, "first")
    claim_file(folder, "second")
    return ["./first.py", "./second.py", "--quick", "--no-progress"]


def one_line_error(stderr: str, *words: str) -> None:
    assert "Traceback" not in stderr, stderr
    lines = [ln for ln in stderr.splitlines() if "No space left on device" in ln]
    assert len(lines) == 1, stderr
    for w in words:
        assert w in lines[0], lines[0]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_full_disk_for_the_json_report(tmp_path: Path, jobs: str) -> None:
    proc = full_disk(tmp_path, "r.json", 1, *two_claims(tmp_path), "--jobs", jobs,
                     "--json", "r.json")
    assert proc.returncode == 1, proc.stderr
    one_line_error(proc.stderr, "cannot write r.json", "continue with:", "--resume")
    record = json.loads((tmp_path / RECORD_PATH).read_text())
    assert record["complete"] is False and len(record["claims"]) >= 1


def test_a_full_disk_for_the_run_record(tmp_path: Path) -> None:
    stale = tmp_path / RECORD_PATH
    stale.parent.mkdir()
    stale.write_text(json.dumps({"complete": True, "claims": []}))
    proc = full_disk(tmp_path, "last_run.json", 0, *two_claims(tmp_path), "--jobs", "1",
                     "--json", "r.json")
    assert proc.returncode == 1, proc.stderr
    one_line_error(proc.stderr, f"cannot write the run record {RECORD_PATH}")
    assert not stale.exists()  # no earlier record looking like this run's
    assert json.loads((tmp_path / "r.json").read_text())["complete"] is True


def test_a_disk_full_midway_leaves_this_runs_record_incomplete(tmp_path: Path) -> None:
    proc = full_disk(tmp_path, "last_run.json", 1, *two_claims(tmp_path), "--jobs", "1")
    assert proc.returncode == 1, proc.stderr
    one_line_error(proc.stderr, f"cannot write the run record {RECORD_PATH}", "incomplete")
    record = json.loads((tmp_path / RECORD_PATH).read_text())
    assert record["complete"] is False and len(record["claims"]) == 1


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_full_disk_for_the_figures(tmp_path: Path, jobs: str) -> None:
    proc = full_disk(tmp_path, "", 0, *two_claims(tmp_path), "--jobs", jobs, "--report",
                     "out", figures=True)
    assert proc.returncode == 1, proc.stderr
    one_line_error(proc.stderr, "cannot write", "out/figures")


def test_a_full_disk_for_the_markdown_report(tmp_path: Path) -> None:
    proc = full_disk(tmp_path, "report.md", 0, *two_claims(tmp_path), "--jobs", "1",
                     "--report", "out")
    assert proc.returncode == 1, proc.stderr
    one_line_error(proc.stderr, "cannot write", "report.md")
    assert json.loads((tmp_path / RECORD_PATH).read_text())["complete"] is True


def test_a_folder_without_a_run_record_says_so(tmp_path: Path) -> None:
    (tmp_path / RECORD_PATH.parent).write_text("not a folder")  # .fedtheory cannot be made
    proc = verify(tmp_path, *two_claims(tmp_path), "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    assert f"the run record {RECORD_PATH} is skipped" in proc.stderr
    quiet = verify(tmp_path, *two_claims(tmp_path), "--jobs", "1", "--no-record")
    assert "skipped" not in quiet.stderr


def test_stale_temporary_files_are_removed(tmp_path: Path) -> None:
    folder = tmp_path / RECORD_PATH.parent
    folder.mkdir()
    dead = 2**22 + 1  # above Linux's largest pid: no such process
    stale = [folder / f".last_run.json.{dead}.0123456789ab.tmp",
             tmp_path / f".r.json.{dead}.0123456789ab.tmp"]
    alive = folder / f".last_run.json.{os.getpid()}.0123456789ab.tmp"  # a live process's
    for p in [*stale, alive]:
        p.write_text("{")
    proc = verify(tmp_path, *two_claims(tmp_path), "--jobs", "1", "--json", "r.json")
    assert proc.returncode == 0, proc.stderr
    assert not any(p.exists() for p in stale)
    assert alive.exists()


def test_a_second_run_in_the_same_folder_is_refused(tmp_path: Path) -> None:
    started = tmp_path / "started"
    claim_file(tmp_path, "slow", f"open({str(started)!r}, 'w').close()\ntime.sleep(600)")
    claim_file(tmp_path, "fine")
    first = subprocess.Popen([sys.executable, "-m", "fedtheory", "verify", "./slow.py",
                              "--quick", "--jobs", "1", "--no-progress"], cwd=tmp_path,
                             env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not started.exists():
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        second = verify(tmp_path, "./fine.py", "--quick", "--no-progress")
        assert second.returncode == 2, second.stderr
        assert f"pid {first.pid}" in second.stderr and "Traceback" not in second.stderr
        assert verify(tmp_path, "./fine.py", "--quick", "--no-record").returncode == 0
    finally:
        first.kill()  # SIGKILL: the kernel drops its lock
        first.wait()
    after = verify(tmp_path, "./fine.py", "--quick", "--no-progress")
    assert after.returncode == 0, after.stderr


def test_a_closed_output_pipe_stops_the_run_as_an_interrupt(tmp_path: Path) -> None:
    claim_file(tmp_path, "first")
    claim_file(tmp_path, "second", "time.sleep(2)")
    proc = subprocess.Popen([sys.executable, "-m", "fedtheory", "verify", "./first.py",
                             "./second.py", "--quick", "--jobs", "1", "--no-progress",
                             "--json", "r.json"], cwd=tmp_path, env=env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdout.close()  # `| true`: the reader is gone before the first line
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 141, err
    assert "interrupted (SIGPIPE)" in err and "--resume" in err and "Traceback" not in err
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["complete"] is False


# --------------------------------------------------------------------------------------------
# --resume keeps an entry only while its source hashes the same


def _resume(cwd: Path, report: str) -> subprocess.CompletedProcess[str]:
    return verify(cwd, "./lemma.py", "--quick", "--jobs", "1", "--no-progress", "--resume",
                  report, "--json", "again.json")


@pytest.mark.parametrize("edit", ["lemma.py", "_shared.py", "tools.py", "_new.py"])
def test_resume_runs_again_a_claim_whose_source_changed(tmp_path: Path, edit: str) -> None:
    (tmp_path / "_shared.py").write_text("VALUE = 2\n")
    (tmp_path / "tools.py").write_text("VALUE = 2\n")
    (tmp_path / "unrelated.py").write_text("VALUE = 2\n")
    path = claim_file(tmp_path, "lemma")
    path.write_text("import tools  # noqa: F401\n" + path.read_text())
    first = verify(tmp_path, "./lemma.py", "--quick", "--jobs", "1", "--no-progress",
                   "--json", "r.json")
    assert first.returncode == 0, first.stderr
    origin = json.loads((tmp_path / "r.json").read_text())["claims"][0]["origin"]
    assert sorted(origin["helpers"]) == ["_shared.py", "tools.py"]
    kept = _resume(tmp_path, "r.json")  # nothing changed: kept
    assert "1 claim(s) kept, 0 to run" in kept.stderr, kept.stderr
    (tmp_path / "unrelated.py").write_text("VALUE = 3\n")  # not the claim's: still kept
    assert "1 claim(s) kept, 0 to run" in _resume(tmp_path, "r.json").stderr
    with open(tmp_path / edit, "a") as fh:
        fh.write("# edited\n")
    again = _resume(tmp_path, "r.json")
    assert again.returncode == 0, again.stderr
    assert "0 claim(s) kept, 1 to run" in again.stderr, again.stderr
    assert edit.removeprefix("lemma.py") in again.stderr and "run again" in again.stderr
    now = json.loads((tmp_path / "again.json").read_text())["claims"][0]["origin"]
    assert now != origin


# --------------------------------------------------------------------------------------------
# progress names what runs


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_progress_names_the_running_claim_and_check(tmp_path: Path, jobs: str) -> None:
    claim_file(tmp_path, "slow", "time.sleep(1.5)\nreturn Evidence(True, 2, 2, 'exact')")
    claim_file(tmp_path, "other")
    args = ["./slow.py", "./other.py", "--quick", "--jobs", jobs]
    proc = verify(tmp_path, *args)
    assert proc.returncode == 0, proc.stderr
    assert "running hostile.slow: check check0" in proc.stderr, proc.stderr
    quiet = verify(tmp_path, *args, "--no-progress")
    assert quiet.returncode == 0 and "running" not in quiet.stderr, quiet.stderr


# --------------------------------------------------------------------------------------------
# the sandbox itself, in this process


def test_time_limit_in_the_main_thread_and_in_another() -> None:
    from fedtheory import sandbox

    def spin() -> None:
        with sandbox.time_limit(0.2, "the spin"):
            while True:
                pass

    with pytest.raises(sandbox.CheckTimeout, match="the spin ran over its time limit of 0.2"):
        spin()
    caught: list[BaseException] = []

    def in_thread() -> None:
        try:
            spin()
        except BaseException as exc:  # noqa: BLE001 - what the thread saw
            caught.append(exc)

    import threading

    t = threading.Thread(target=in_thread)
    t.start()
    t.join(30)
    assert not t.is_alive() and caught and isinstance(caught[0], sandbox.CheckTimeout)
    assert "the spin ran over its time limit" in str(caught[0])
    with sandbox.time_limit(5, "quick"):  # a block that ends in time: nothing raised later
        pass
    time.sleep(0.1)


def test_own_error_tells_a_checks_exceptions_from_the_users_interrupt() -> None:
    from fedtheory import sandbox

    assert sandbox.own_error(SystemExit(0)) and sandbox.own_error(KeyboardInterrupt())
    assert not sandbox.own_error(sandbox.RunInterrupted())
    sandbox.note_interrupt(signal.SIGINT)
    try:
        assert not sandbox.own_error(ValueError())  # once interrupted, nothing is the check's
        with pytest.raises(sandbox.RunInterrupted):
            sandbox.raise_if_interrupted()
    finally:
        sandbox.clear_interrupt()
    assert sandbox.own_error(ValueError())
