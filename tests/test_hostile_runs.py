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
    assert proc.returncode == 2 and "--check-timeout" in proc.stderr, proc.stderr


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
    claim_file(tmp_path, "fine")
    proc = verify(tmp_path, "./fine.py", "--quick", "--no-progress", *args)
    assert proc.returncode == 2, proc.stderr
    assert words in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / RECORD_PATH).exists()  # before any work


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
