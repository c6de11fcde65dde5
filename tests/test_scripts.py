"""Every figure script runs in quick mode into a temporary folder and writes PNG and PDF;
every verification script runs its family in quick mode.

The default run executes each figure script in the test process, as ``__main__`` (``runpy``,
its own folder first on ``sys.path``, as ``python script.py`` has it), on the worker of its
claim family (``xdist_group``, ``--dist loadgroup``): there the family's claims were verified
by tests/test_registry.py just before, and the data they share with the figures (the
datasets of :mod:`fedtheory.tasks`, cached per process) are computed once, not once more in a
fresh interpreter. A verification script is a three-line call of the CLI: the default run
checks that it hands its family and the user's arguments to ``fedtheory verify``; what that
does for every claim is tested by test_registry.py (each claim's quick verdict) and
test_cli.py (``verify --family``).

The slow step (``pytest -m slow``, run by ``.ci/run``) runs every script as a user does: in a
fresh interpreter, the verification scripts verifying their whole family (quick preset).
"""

import runpy
import subprocess
import sys
from pathlib import Path

import matplotlib
import numpy as np
import pytest

import fedtheory.cli
from fedtheory.claims import all_claims
from fedtheory.claims.registry import select

from ._tracked import repository_paths

ROOT = Path(__file__).resolve().parents[1]
FIGURES = [p for p in repository_paths("paper_figures", "*.py") if not p.name.startswith("_")]
VERIFY = repository_paths("verification", "verify_*.py")
FAMILIES = {c.family for c in all_claims()}
#: script-name prefixes that are not a family's name
ALIASES = {"aocs": "ocs"}


def _family(script: Path) -> str | None:
    """The claim family a script belongs to: its name's first word (``ocs_sqrt_n`` -> ocs)."""
    head = script.stem.removeprefix("verify_").split("_")[0]
    head = ALIASES.get(head, head)
    return head if head in FAMILIES else None


def _params(scripts: list[Path]) -> list:
    return [pytest.param(p, id=p.stem, marks=[pytest.mark.xdist_group(_family(p))]
                         if _family(p) else []) for p in scripts]


def _run_as_main(script: Path, args: list[str], monkeypatch: pytest.MonkeyPatch) -> object:
    """Run ``script`` as ``python script args...`` would, in this process; its exit code."""
    monkeypatch.setattr(sys, "argv", [str(script), *args])
    monkeypatch.syspath_prepend(str(script.parent))
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as stop:
        return stop.code
    return None


@pytest.mark.parametrize("script", _params(FIGURES))
def test_figure_script_quick(script, tmp_path, monkeypatch, capsys):
    import matplotlib.pyplot as plt

    assert matplotlib.get_backend().lower() == "agg"
    try:
        with matplotlib.rc_context(), np.errstate():  # what a script sets stays with it
            code = _run_as_main(script, ["--quick", "--out", str(tmp_path)], monkeypatch)
    finally:
        plt.close("all")
    out = capsys.readouterr().out
    assert code in (0, None), out[-3000:]
    assert list(tmp_path.rglob("*.png")) and list(tmp_path.rglob("*.pdf")), out


def test_every_script_belongs_to_a_family():
    """A script named after no family would run on any worker, away from the data it shares
    with its claims (see the module docstring): name it ``<family>_...`` or add an alias."""
    orphans = [p.name for p in [*FIGURES, *VERIFY] if _family(p) is None]
    assert not orphans, orphans


@pytest.mark.parametrize("script", _params(VERIFY))
def test_verification_script_hands_its_family_to_the_cli(script, monkeypatch):
    calls = []
    monkeypatch.setattr(fedtheory.cli, "main", lambda argv=None: calls.append(argv) or 0)
    code = _run_as_main(script, ["--quick", "--no-progress"], monkeypatch)
    family = script.stem.removeprefix("verify_")
    assert code in (0, None)
    assert calls == [["verify", "--family", family, "--quick", "--no-progress"]]
    assert select(family=family), f"no claim in family {family!r}"


@pytest.mark.slow
@pytest.mark.parametrize("script", FIGURES, ids=[p.stem for p in FIGURES])
def test_figure_script_quick_in_a_fresh_interpreter(script, tmp_path):
    proc = subprocess.run([sys.executable, str(script), "--quick", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert list(tmp_path.rglob("*.png")) and list(tmp_path.rglob("*.pdf")), proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize("script", VERIFY, ids=[p.stem for p in VERIFY])
def test_verification_script_quick(script, tmp_path):
    proc = subprocess.run([sys.executable, str(script), "--quick", "--no-progress"],
                          capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "confirmed" in proc.stdout or "refuted" in proc.stdout
