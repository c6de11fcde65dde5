"""A new user's first hour: the README's two commands, in order, in one fresh clone.

``.ci/run`` runs the README's main command first and then its test command, verbatim, in the
same clone; ``.ci/first_hour`` (run here with ``-m slow``) reproduces the sequence that broke
the install (issue 28): ``pip install .``, ``fedtheory list``, ``pip install -e ".[dev]"``,
``fedtheory --version``."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _readme_block(marker: str) -> str:
    """The bash block after ``<!-- marker -->`` in README.md, read by .ci/run's own function."""
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    start = script.index("readme_block() {")
    function = script[start:script.index("\n}\n", start) + 3]
    proc = subprocess.run(["bash", "-c", f"{function}readme_block {marker}"], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def test_ci_runs_the_readme_main_command_first_then_its_test_command() -> None:
    main, tests = _readme_block("main-command"), _readme_block("test-command")
    assert main.startswith("python3 -m venv .venv && .venv/bin/pip install . && ") and \
        "fedtheory verify --quick" in main, main
    assert ".venv/bin/pip install -e \".[dev]\"" in tests and "pytest" in tests, tests
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    loop = "for block in main-command test-command; do"
    assert loop in script, "main command first, then the test command, in one clone"
    assert script.index(loop) < script.index("ruff check") < script.index("-m slow")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to clone the checkout")
def test_the_readme_commands_in_turn_keep_the_install_working() -> None:
    """Two installs in one virtualenv (2 to 6 minutes with a warm wheel cache)."""
    if subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"],
                      capture_output=True).returncode != 0:
        pytest.skip("not a git checkout")
    proc = subprocess.run([str(ROOT / ".ci" / "first_hour"), str(ROOT)], capture_output=True,
                          text=True, timeout=1800)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    assert "first hour: the install survives" in proc.stdout
