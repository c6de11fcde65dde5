"""Ctrl-C (SIGINT to the process group, as a terminal sends it) and SIGTERM (a batch
scheduler's kill) during ``fedtheory verify``: one line on stderr, no traceback, exit 128 + the
signal, the claims that finished kept in the run record (and the --json report) as they
finished, the workers gone, and ``--resume`` then gives the report an uninterrupted run gives.

The runs use a copy of the package whose only family is a demo one (so that each run imports
no real claim): two instant claims and one that sleeps until the run is stopped, when told to.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fedtheory.report import RECORD_PATH, without_volatile
from tests._demo import CLAIM_TEMPLATE, demo_package

#: The program the printed commands start with: ``python -m fedtheory`` runs here.
PROG = shlex.join([sys.executable, "-m", "fedtheory"])

IDS = ["demo.one", "demo.two", "demo.slow"]

@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("interrupts")
    return demo_package(root, {n: CLAIM_TEMPLATE.format(name=n, slow=n == "slow",
                                                what=", slow when told" if n == "slow" else "")
                               for n in ("one", "two", "slow")})


def _env(root: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "FEDTHEORY_TEST_SLEEP"}
    return {**env, "PYTHONPATH": str(root), **extra}


def _verify(root: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fedtheory", "verify", *IDS, "--quick",
                           "--no-progress", *args], cwd=cwd, env=_env(root),
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def fresh(tree: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """An uninterrupted run's report."""
    cwd = tmp_path_factory.mktemp("fresh")
    proc = _verify(tree, cwd, "--jobs", "1", "--json", "fresh.json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads((cwd / "fresh.json").read_text())


def _interrupt(root: Path, cwd: Path, sig: int, group: bool, *args: str,
               watch: Path | None = None) -> tuple[subprocess.CompletedProcess[str], int]:
    """Start ``verify``, wait until two claims are in ``watch`` (the run record) and the slow
    claim sleeps, send ``sig`` (to the process group, or to the parent alone); the finished
    process and the sleeping claim's pid."""
    watch = watch or cwd / RECORD_PATH
    pid_file = cwd / "slow.pid"
    proc = subprocess.Popen([sys.executable, "-m", "fedtheory", "verify", *IDS, "--quick",
                             "--no-progress", *args], cwd=cwd,
                            env=_env(root, FEDTHEORY_TEST_SLEEP=str(pid_file)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    deadline = time.monotonic() + 240
    while True:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run did not get to the slow claim"
        try:
            ready = len(json.loads(watch.read_text())["claims"]) == 2 and pid_file.exists()
        except (OSError, ValueError, KeyError):
            ready = False
        if ready:
            break
        time.sleep(0.1)
    (os.killpg if group else os.kill)(proc.pid, sig)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), int(
        pid_file.read_text())


def _gone(pid: int, within: float = 30.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def _one_line_without_traceback(err: str, name: str, kept: str, resume: str) -> None:
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    (line,) = err.strip().splitlines()
    assert line.startswith(f"fedtheory: interrupted ({name}): 2 of 3 claim(s) finished, "
                           f"kept in {kept}; continue with: {PROG} verify "), line
    assert line.endswith(f"--resume {resume}"), line


def test_ctrl_c_in_a_serial_run_keeps_the_record_and_resume_completes_it(tree, fresh,
                                                                         tmp_path) -> None:
    proc, pid = _interrupt(tree, tmp_path, signal.SIGINT, True, "--jobs", "1")
    assert proc.returncode == 130
    _one_line_without_traceback(proc.stderr, "SIGINT", str(RECORD_PATH), str(RECORD_PATH))
    assert _gone(pid)
    record = json.loads((tmp_path / RECORD_PATH).read_text())
    assert record["complete"] is False and record["provenance"]["interrupted"] == "SIGINT"
    assert [c["id"] for c in record["claims"]] == IDS[:2]
    # the printed command, pasted into a shell (no virtualenv activated: the interpreter's
    # path), continues the run, without --json: nothing is lost
    command = proc.stderr.strip().split("continue with: ", 1)[1]
    assert shlex.split(command)[:4] == [sys.executable, "-m", "fedtheory", "verify"]
    again = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=_env(tree),
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "2 claim(s) kept, 1 to run" in again.stderr and "Traceback" not in again.stderr
    done = json.loads((tmp_path / RECORD_PATH).read_text())
    assert done["complete"] and done["provenance"]["resumed"] == IDS[:2]
    assert without_volatile(done) == without_volatile(fresh)


def test_sigterm_to_a_process_pool_ends_its_workers_and_keeps_the_json(tree, fresh,
                                                                       tmp_path) -> None:
    proc, pid = _interrupt(tree, tmp_path, signal.SIGTERM, False, "--jobs", "2", "--json",
                           "out.json", watch=tmp_path / "out.json")
    assert proc.returncode == 143
    _one_line_without_traceback(proc.stderr, "SIGTERM", f"{RECORD_PATH} and out.json",
                                "out.json")
    assert _gone(pid), "the worker running the slow claim outlived the run"
    assert json.loads((tmp_path / "out.json").read_text())["complete"] is False
    again = _verify(tree, tmp_path, "--jobs", "2", "--json", "out.json", "--resume",
                    "out.json")
    assert again.returncode == 0, again.stderr[-2000:]
    assert without_volatile(json.loads((tmp_path / "out.json").read_text())) == \
        without_volatile(fresh)


def test_sigterm_to_the_group_with_nothing_to_keep_says_so(tree, tmp_path) -> None:
    proc, pid = _interrupt(tree, tmp_path, signal.SIGTERM, True, "--jobs", "2", "--json",
                           "out.json", watch=tmp_path / "out.json")
    assert proc.returncode == 143 and "Traceback" not in proc.stderr
    assert _gone(pid)
    # the same run without anything to write to
    (tmp_path / "out.json").unlink()
    proc = subprocess.Popen([sys.executable, "-m", "fedtheory", "verify", *IDS, "--quick",
                             "--no-progress", "--no-record", "--jobs", "1"], cwd=tmp_path,
                            env=_env(tree, FEDTHEORY_TEST_SLEEP=str(tmp_path / "p")),
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while not (tmp_path / "p").exists():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "Traceback" not in err
    assert err.strip() == ("fedtheory: interrupted (SIGINT): 2 of 3 claim(s) finished; nothing "
                           "was kept (--no-record without --json)")


@pytest.mark.slow  # a local Dask cluster's start costs 10 s; .ci/run's slow step runs it
def test_ctrl_c_in_a_dask_run_closes_the_cluster_quietly(tree, tmp_path) -> None:
    pytest.importorskip("distributed")
    proc, pid = _interrupt(tree, tmp_path, signal.SIGINT, True, "--dask", "local:2")
    assert proc.returncode == 130
    _one_line_without_traceback(proc.stderr, "SIGINT", str(RECORD_PATH), str(RECORD_PATH))
    assert _gone(pid), "the Dask worker running the slow claim outlived the run"
