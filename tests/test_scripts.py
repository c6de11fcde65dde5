"""Every figure script runs in quick mode into a temporary folder and writes PNG and PDF;
every verification script runs its family in quick mode."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIGURES = sorted(p for p in (ROOT / "paper_figures").glob("*.py") if not p.name.startswith("_"))
VERIFY = sorted(p for p in (ROOT / "verification").glob("verify_*.py"))


@pytest.mark.parametrize("script", FIGURES, ids=[p.stem for p in FIGURES])
def test_figure_script_quick(script, tmp_path):
    proc = subprocess.run([sys.executable, str(script), "--quick", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert list(tmp_path.rglob("*.png")) and list(tmp_path.rglob("*.pdf")), proc.stdout


@pytest.mark.parametrize("script", VERIFY, ids=[p.stem for p in VERIFY])
def test_verification_script_quick(script, tmp_path):
    proc = subprocess.run([sys.executable, str(script), "--quick", "--no-progress"],
                          capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "confirmed" in proc.stdout or "refuted" in proc.stdout
