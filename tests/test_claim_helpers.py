"""Helper modules beside a user's claim files (fedtheory/claims/sources.py, helper_import):
``import _common`` / ``from _common import x`` in a claim file find the ``_*.py`` files of its
folder, on a serial run, in process workers started by fork and by spawn, and on Dask workers,
without the folder on ``sys.path``; a helper named like a module Python already imports is a
clear error. Every run starts from a folder other than the claims' (so the working folder on
``sys.path`` cannot be what finds the helper)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HELPER = '''"""Shared by the claim files of this folder."""
from fractions import Fraction

P = Fraction(3, 10)


def mean(p):
    return p * 1 + (1 - p) * 0
'''

TOP = '''"""mine.top: a helper imported at the top of the file."""
import _common
from _common import P, mean

from fedtheory.claims import Claim, ClaimKind, Evidence

CLAIM = Claim(id="mine.top", family="mine", seed_ref="my notes", title="A Bernoulli mean",
              statement=r"\\mathbb E[1] = p", kind=ClaimKind.IDENTITY)


@CLAIM.check("exact")
def exact(ctx):
    """The mean, from the helper."""
    return Evidence(mean(P) == _common.P, str(mean(P)), str(P), "exact mean")
'''

LAZY = '''"""mine.lazy: a helper imported inside the check (at run time, in the worker)."""
from fedtheory.claims import Claim, ClaimKind, Evidence

CLAIM = Claim(id="mine.lazy", family="mine", seed_ref="my notes", title="A wrong mean",
              statement=r"\\mathbb E[1] = 1/2", kind=ClaimKind.IDENTITY)


@CLAIM.check("exact")
def exact(ctx):
    """The mean, from the helper, against 1/2."""
    from _common import P, mean
    return Evidence(mean(P) == 0.5, str(mean(P)), "1/2", "exact mean",
                    counterexample={"mean": str(mean(P))})
'''


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fedtheory", *args], cwd=cwd,
                          env=os.environ.copy(), capture_output=True, text=True, timeout=300)


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    lemmas = tmp_path / "lemmas"
    lemmas.mkdir()
    (lemmas / "_common.py").write_text(HELPER)
    (lemmas / "mine_top.py").write_text(TOP)
    (lemmas / "mine_lazy.py").write_text(LAZY)
    (tmp_path / "elsewhere").mkdir()
    return lemmas


def _summary(path: Path) -> dict[str, object]:
    doc = json.loads(path.read_text())
    assert {c["id"]: c["verdict"] for c in doc["claims"]} == {
        "mine.top": "confirmed", "mine.lazy": "refuted"}
    return doc


@pytest.mark.parametrize("jobs", ["1", "2"])  # serial; process workers (fork, Linux's default)
def test_a_helper_is_imported_by_name(folder: Path, jobs: str) -> None:
    out = folder.parent / "elsewhere" / "r.json"
    ran = _run(folder.parent / "elsewhere", "verify", str(folder), "--quick", "--jobs", jobs,
               "--json", str(out), "--no-progress", "--no-record")
    assert ran.returncode == 0, ran.stderr[-2000:]
    doc = _summary(out)
    helper_sha = hashlib.sha256((folder / "_common.py").read_bytes()).hexdigest()
    for c in doc["claims"]:  # --resume keeps an entry only while its helpers hash the same
        assert c["origin"]["helpers"] == {"_common.py": helper_sha}


def test_resume_runs_again_a_claim_whose_helper_changed(folder: Path) -> None:
    """The helper's SHA-256 in the origin: after an edit of _common.py, --resume runs both
    claims again (with a warning naming the helper) and the new helper's values count."""
    where = folder.parent / "elsewhere"
    out = where / "r.json"
    args = ("verify", str(folder), "--quick", "--jobs", "1", "--no-progress", "--no-record")
    assert _run(where, *args, "--json", str(out)).returncode == 0
    (folder / "_common.py").write_text(HELPER.replace("Fraction(3, 10)", "Fraction(1, 2)"))
    ran = _run(where, *args, "--json", str(where / "r2.json"), "--resume", str(out))
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stderr.count("the helper module _common.py beside its source changed") == 2
    doc = json.loads((where / "r2.json").read_text())
    assert {c["id"]: c["verdict"] for c in doc["claims"]} == {  # P = 1/2 now: mean = 1/2
        "mine.top": "confirmed", "mine.lazy": "confirmed"}


def test_the_helper_is_scoped_to_its_folder(folder: Path, tmp_path: Path) -> None:
    """In the process that loaded the files, the folder is not on sys.path and the helper is
    not a top-level module; a second folder's own _common.py is its own."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "_common.py").write_text("from fractions import Fraction\nP = Fraction(1, 2)\n"
                                      "def mean(p):\n    return p\n")
    (other / "mine_other.py").write_text(LAZY.replace("mine.lazy", "mine.other"))
    code = ("import sys\n"
            "from fedtheory.claims.sources import load_file\n"
            f"top, _ = load_file({str(folder / 'mine_top.py')!r})\n"
            f"lazy, _ = load_file({str(other / 'mine_other.py')!r})\n"
            f"assert {str(folder)!r} not in sys.path and '_common' not in sys.modules\n"
            "import fedtheory.claims.registry as reg\n"
            "from fedtheory.runner import Job, verify_one\n"
            f"reg.add_sources([{str(folder)!r}, {str(other)!r}])\n"
            "print(verify_one(Job('mine.other', 'quick', 0)).verdict.value)\n"
            "print(verify_one(Job('mine.lazy', 'quick', 0)).verdict.value)\n")
    ran = subprocess.run([sys.executable, "-c", code], cwd=tmp_path / "elsewhere",
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.split() == ["confirmed", "refuted"]  # other's P = 1/2: mean = 1/2


def test_a_spawned_worker_imports_the_helper(folder: Path) -> None:
    code = ("import multiprocessing as mp\n"
            "from concurrent.futures import ProcessPoolExecutor\n"
            "from fedtheory.claims.registry import add_sources\n"
            "from fedtheory.runner import Job, verify_one\n"
            "if __name__ == '__main__':\n"
            f"    add_sources([{str(folder)!r}])\n"
            "    with ProcessPoolExecutor(1, mp_context=mp.get_context('spawn')) as ex:\n"
            "        for cid in ('mine.top', 'mine.lazy'):\n"
            "            res = ex.submit(verify_one, Job(cid, 'quick', 0)).result()\n"
            "            print(res.verdict.value)\n")
    script = folder.parent / "elsewhere" / "spawn_run.py"
    script.write_text(code)
    ran = subprocess.run([sys.executable, str(script)], cwd=script.parent, capture_output=True,
                         text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.split() == ["confirmed", "refuted"]


@pytest.mark.slow  # a local Dask cluster's start costs about 10 s
def test_dask_workers_get_the_helper(folder: Path) -> None:
    pytest.importorskip("distributed")
    out = folder.parent / "elsewhere" / "d.json"
    ran = _run(folder.parent / "elsewhere", "verify", "--claims", str(folder), "--family",
               "mine", "--quick", "--dask", "local:2", "--no-progress", "--no-record",
               "--json", str(out))
    assert ran.returncode == 0, ran.stderr[-2000:]
    _summary(out)


@pytest.mark.parametrize("name", ["_thread", "_pytest"])  # standard library; installed
def test_a_helper_named_like_a_module_python_imports_is_refused(folder: Path,
                                                                  name: str) -> None:
    (folder / f"{name}.py").write_text("X = 1\n")
    (folder / "mine_top.py").write_text(TOP.replace("import _common\n",
                                                    f"import _common\nimport {name}\n"))
    ran = _run(folder.parent / "elsewhere", "verify", str(folder / "mine_top.py"), "--quick",
               "--no-progress", "--no-record")
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert f"{name}.py" in ran.stderr and f"named like the module {name!r}" in ran.stderr
    assert "Traceback" not in ran.stderr


LI = Path(__file__).resolve().parents[1] / "docs" / "lemmas" / "li_sampling"


def test_the_third_worked_lemma_runs_from_outside_the_source_tree(tmp_path: Path) -> None:
    """docs/lemmas/li_sampling (Li et al. 2020, Lemmas 4 and 5, Scheme I), copied to a folder
    outside the repository: its claim files import their helper _li.py by name; the identity
    and the bound are confirmed, the bound's tightness (79/80)^2 is found by the tightness
    search at the box's corner E = 40, eta_t0 = 2 eta_t, p = 1/2, and both strengthened
    statements (the constant 4 x 7/10, the step condition relaxed) are refuted exactly."""
    folder = tmp_path / "li"
    folder.mkdir()
    for f in LI.glob("*.py"):
        (folder / f.name).write_text(f.read_text())
    assert all(len(f.read_text().splitlines()) <= 100 for f in folder.glob("*.py"))
    (tmp_path / "elsewhere").mkdir()
    out = tmp_path / "elsewhere" / "li.json"
    ran = _run(tmp_path / "elsewhere", "verify", str(folder), "--quick", "--power", "--json",
               str(out), "--no-progress", "--no-record")
    assert ran.returncode == 0, ran.stderr[-2000:]
    by_id = {c["id"]: c for c in json.loads(out.read_text())["claims"]}
    assert {k: c["verdict"] for k, c in by_id.items()} == {
        "li.unbiased": "confirmed", "li.variance": "confirmed"}
    tight = next(c for c in by_id["li.variance"]["checks"] if c["name"] == "tightness")
    assert tight["ratio"] == 6241 / 6400 and "exact ratio 6241/6400" in tight["search"]
    assert {k: tight["instance"][k] for k in ("E", "rho", "p1")} == {
        "E": 40, "rho": 0.5, "p1": 0.5}
    power = {m["mutant"]: m for m in by_id["li.variance"]["power"]}
    assert {k: m["outcome"] for k, m in power.items()} == {
        "four x 7/10": "caught", "step condition relaxed x 2": "caught"}
    assert power["four x 7/10"]["instance"]["measured"] == "6241/400"
    assert power["four x 7/10"]["instance"]["bound"] == "56/5"  # exact: 15.6 > 11.2
