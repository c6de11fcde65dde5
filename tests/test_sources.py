"""Claims from outside the package (fedtheory/claims/sources.py): claim files and folders on
the command line (``verify PATH``, ``--claims PATH``), installed packages' entry points, the
origin of every claim in its report entry, and ``fedtheory new``. Every command runs in a
fresh interpreter from a temporary folder outside the source tree, as a user's would."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fedtheory.claim_skeleton import skeleton
from fedtheory.claims.sources import claim_files, module_name_for

from ._demo import demo_package
from ._in_process import cli_in_process

CONFIRMED = '''"""mine.mean: the mean of a Bernoulli(3/10) indicator is 3/10."""
from fractions import Fraction

from fedtheory.claims import Claim, ClaimKind, Evidence

CLAIM = Claim(id="mine.mean", family="mine", seed_ref="my notes", title="A Bernoulli mean",
              statement=r"\\mathbb E[1] = p", kind=ClaimKind.IDENTITY)


@CLAIM.check("exact")
def mean(ctx):
    """The mean, enumerated."""
    p = Fraction(3, 10)
    return Evidence(p * 1 + (1 - p) * 0 == p, str(p), "3/10", "exact mean over {0, 1}")


@CLAIM.check("monte_carlo")
def simulated(ctx):
    """Bernoulli draws."""
    x = ctx.rng("b").random(ctx.size(quick=20_000, full=200_000)) < 0.3
    return ctx.check_mean(x.astype(float), 0.3)
'''

REFUTED = '''"""mine.wrong: a false identity, 1/2 + 1/3 = 2/5."""
from fractions import Fraction

from fedtheory.claims import Claim, ClaimKind, Evidence

CLAIM = Claim(id="mine.wrong", family="mine", seed_ref="my notes", title="A wrong sum",
              statement=r"\\tfrac12 + \\tfrac13 = \\tfrac25", kind=ClaimKind.IDENTITY)


@CLAIM.check("exact")
def exact_sum(ctx):
    """The sum in rationals."""
    s = Fraction(1, 2) + Fraction(1, 3)
    return Evidence(s == Fraction(2, 5), str(s), "2/5", "exact",
                    counterexample={"sum": str(s)})
'''


def _run(cwd: Path, *args: str, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fedtheory", *args], cwd=cwd,
                          env={**os.environ, **(env or {})}, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture()
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """``fedtheory ARGS`` run in this process (no interpreter start-up), from a folder: its
    exit code, stdout and stderr. The claims the run loads from files leave the registry, the
    environment and ``sys.modules`` afterwards, as if the run had been a process of its own."""
    with cli_in_process(monkeypatch, capsys) as run:
        yield run


@pytest.fixture()
def lemmas(tmp_path: Path) -> Path:
    """A user's folder of lemmas, outside the source tree."""
    folder = tmp_path / "lemmas"
    folder.mkdir()
    (folder / "mine_mean.py").write_text(CONFIRMED)
    (folder / "mine_wrong.py").write_text(REFUTED)
    (folder / "_helpers.py").write_text("raise RuntimeError('a helper is never imported')\n")
    return folder


def test_a_claim_file_is_verified_and_its_report_names_the_file(cli, lemmas: Path) -> None:
    out = lemmas / "out.json"
    proc = cli(lemmas, "verify", "./mine_mean.py", "mine_wrong.py", "is.unbiased", "--quick",
                "--json", str(out), "--no-progress", "--no-record", "--jobs", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    doc = json.loads(out.read_text())
    by_id = {c["id"]: c for c in doc["claims"]}
    assert list(by_id) == ["mine.mean", "mine.wrong", "is.unbiased"]
    assert by_id["mine.mean"]["verdict"] == "confirmed"
    assert by_id["mine.wrong"]["verdict"] == "refuted"
    origin = by_id["mine.mean"]["origin"]
    path = (lemmas / "mine_mean.py").resolve()
    assert origin["kind"] == "file" and origin["path"] == str(path)
    assert origin["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert by_id["is.unbiased"]["origin"]["kind"] == "built in"
    # the replay command of the refutation loads the file, and re-runs the check
    command = by_id["mine.wrong"]["counterexample"]["replay"]["command"]
    assert command.endswith(f"--claims {(lemmas / 'mine_wrong.py').resolve()}")
    replay = cli(lemmas, *command.split()[1:])
    assert replay.returncode == 0 and "passed:   False" in replay.stdout, replay.stderr
    # the report reads back: show recomputes the verdict (the replay command is the file's)
    shown = cli(lemmas, "show", "mine.wrong", "--claims", ".", "--from", str(out))
    assert shown.returncode == 0 and "Verdict: refuted" in shown.stdout, shown.stdout


def test_a_folder_of_claims_works_with_every_command(cli, lemmas: Path) -> None:
    listed = cli(lemmas, "list", "--claims", ".", "--family", "mine")
    assert listed.returncode == 0, listed.stderr
    assert "mine.mean" in listed.stdout and "mine.wrong" in listed.stdout
    assert "2 claims" in listed.stdout
    ran = cli(lemmas, "verify", "--claims", ".", "--family", "mine", "--quick", "--jobs", "2",
               "--no-progress", "--json", "fam.json")
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert json.loads((lemmas / "fam.json").read_text())["summary"] == {
        "confirmed": 1, "refuted": 1}
    # a worker process started by spawn (a fresh interpreter, not a fork) finds the claims of
    # the run's files through the environment the run sets
    code = ("import multiprocessing as mp\n"
            "from concurrent.futures import ProcessPoolExecutor\n"
            "from fedtheory.claims.registry import add_sources\n"
            "from fedtheory.runner import Job, verify_one\n"
            "if __name__ == '__main__':\n"
            "    add_sources(['.'])\n"
            "    with ProcessPoolExecutor(1, mp_context=mp.get_context('spawn')) as ex:\n"
            "        res = ex.submit(verify_one, Job('mine.wrong', 'quick', 0)).result()\n"
            "    print(res.verdict.value)\n")
    (lemmas / "_spawn.py").write_text(code)
    spawned = subprocess.run([sys.executable, "_spawn.py"], cwd=lemmas, capture_output=True,
                             text=True, timeout=300)
    assert spawned.returncode == 0 and spawned.stdout.split() == ["refuted"], spawned.stderr
    # the catalogue of a report with user claims
    cat = cli(lemmas, "catalogue", "--from", "fam.json", "--claims", ".", "--out", "C.md")
    assert cat.returncode == 0, cat.stderr
    assert "mine.wrong" in (lemmas / "C.md").read_text()


def test_bad_claim_sources_are_clear_errors(cli, lemmas: Path, tmp_path: Path) -> None:
    (lemmas / "mine_broken.py").write_text("import not_a_module_anywhere\n")
    proc = cli(lemmas, "verify", "mine_broken.py", "--quick", "--no-record")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "mine_broken.py failed to import" in proc.stderr
    assert "not_a_module_anywhere" in proc.stderr
    (lemmas / "mine_broken.py").write_text("X = 1\n")
    proc = cli(lemmas, "verify", "mine_broken.py", "--quick", "--no-record")
    assert proc.returncode == 2 and "defines no claim" in proc.stderr
    (lemmas / "mine_broken.py").write_text(CONFIRMED.replace('"mine.mean"', '"is.unbiased"')
                                           .replace('family="mine"', 'family="is"'))
    proc = cli(lemmas, "verify", "mine_broken.py", "--quick", "--no-record")
    assert proc.returncode == 2 and "'is.unbiased' is defined twice" in proc.stderr
    assert "mine_broken.py" in proc.stderr
    proc = cli(lemmas, "verify", "no_such_file.py", "--quick", "--no-record")
    assert proc.returncode == 2 and "'no_such_file.py' does not exist" in proc.stderr
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no claim file"):
        claim_files(tmp_path / "empty")


def test_module_names_are_unique_per_path(tmp_path: Path) -> None:
    a, b = tmp_path / "a" / "lemma.py", tmp_path / "b" / "lemma.py"
    assert module_name_for(a) != module_name_for(b)
    assert module_name_for(a) == module_name_for(tmp_path / "a" / ".." / "a" / "lemma.py")


def test_an_entry_point_ships_claims(tmp_path: Path) -> None:
    """An installed package's ``fedtheory.claims`` entry point: its claims are listed, shown
    and verified under their own family, their origin named."""
    site = tmp_path / "site"
    (site / "mylemmas").mkdir(parents=True)
    (site / "mylemmas" / "__init__.py").write_text(CONFIRMED.replace("mine.", "theirs.")
                                                   .replace('"mine"', '"theirs"'))
    info = site / "mylemmas-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mylemmas\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[fedtheory.claims]\nmylemmas = mylemmas\n")
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    shown = _run(tmp_path, "show", "theirs.mean", env=env)  # (list: tested in-process)
    assert shown.returncode == 0 and "theirs.mean  (theirs;" in shown.stdout, shown.stderr
    ran = _run(tmp_path, "verify", "theirs.mean", "--quick", "--json", "t.json", "--no-record",
               "--no-progress", env=env)
    assert ran.returncode == 0, ran.stderr[-2000:]
    (entry,) = json.loads((tmp_path / "t.json").read_text())["claims"]
    assert entry["origin"]["kind"] == "entry point"
    assert entry["origin"]["entry_point"] == "mylemmas"


def test_a_family_folder_without_init_is_an_error(tmp_path: Path) -> None:
    root = demo_package(tmp_path, {})
    loose = root / "fedtheory" / "claims" / "loose"
    loose.mkdir()
    (loose / "thing.py").write_text(CONFIRMED.replace("mine.mean", "loose.thing"))
    proc = _run(root, "list", env={"PYTHONPATH": str(root)})
    assert proc.returncode != 0
    assert "holds claim files but no __init__.py" in proc.stderr


def test_new_writes_a_skeleton_that_is_an_error_until_written(cli, tmp_path: Path) -> None:
    made = cli(tmp_path, "new", "mine.step", "--kind", "upper-bound")
    assert made.returncode == 0, made.stderr
    path = tmp_path / "mine_step.py"
    assert path.exists() and "ClaimKind.UPPER_BOUND" in path.read_text()
    ran = cli(tmp_path, "verify", "mine_step.py", "--quick", "--no-record", "--no-progress")
    assert ran.returncode == 1 and "mine.step  error" in ran.stdout
    assert ran.stdout.count("NotImplementedError") + ran.stderr.count("NotImplementedError") >= 2
    again = cli(tmp_path, "new", "mine.step", "--kind", "upper-bound")
    assert again.returncode == 2 and "not overwritten" in again.stderr
    for bad, match in ((("Mine", "identity"), "FAMILY.NAME"), (("a.b", "bound"), "--kind")):
        with pytest.raises(ValueError, match=match):
            skeleton(*bad)
    for kind in ("identity", "lower-bound", "closed-form", "qualitative"):
        compile(skeleton("mine.x", kind), "mine_x.py", "exec")


LEMMAS = Path(__file__).resolve().parents[1] / "docs" / "lemmas"


def test_the_worked_lemmas_run_from_outside_the_source_tree(cli, tmp_path: Path) -> None:
    """docs/lemmas.md's two worked lemmas, copied to a folder outside the repository: one
    confirmed (its mutant caught), one refuted with its exact counterexample; the report names
    each file and its hash, and the refutation's replay command re-runs it."""
    for f in LEMMAS.glob("*.py"):
        (tmp_path / f.name).write_text(f.read_text())
    ran = cli(tmp_path, "verify", ".", "--quick", "--power", "--json", "w.json",
               "--no-progress", "--no-record", "--jobs", "2")
    assert ran.returncode == 0, ran.stderr[-2000:]
    doc = json.loads((tmp_path / "w.json").read_text())
    by_id = {c["id"]: c for c in doc["claims"]}
    assert {k: c["verdict"] for k, c in by_id.items()} == {
        "hetero.fixed_point": "confirmed", "hetero.true_minimiser": "refuted"}
    assert [m["outcome"] for m in by_id["hetero.fixed_point"]["power"]] == ["caught"]
    ce = by_id["hetero.true_minimiser"]["counterexample"]
    assert ce["limit"] == "40951/50951" and ce["x_star"] == "1/2"
    for c in by_id.values():
        path = Path(c["origin"]["path"])
        assert path.parent == tmp_path.resolve()
        assert c["origin"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    replay = cli(tmp_path, *ce["replay"]["command"].split()[1:])
    assert replay.returncode == 0 and "passed:   False" in replay.stdout, replay.stderr


def test_a_claim_file_in_a_git_work_tree_records_its_commit(cli, lemmas: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=lemmas, check=True, capture_output=True,
                       env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})

    git("init", "-q")
    git("add", "mine_mean.py")
    git("commit", "-qm", "a lemma")
    for edit, dirty in ((False, False), (True, True)):
        if edit:
            (lemmas / "mine_mean.py").write_text(CONFIRMED + "\n# edited\n")
        ran = cli(lemmas, "verify", "mine_mean.py", "--quick", "--json", "g.json",
                   "--no-progress", "--no-record")
        assert ran.returncode == 0, ran.stderr[-2000:]
        origin = json.loads((lemmas / "g.json").read_text())["claims"][0]["origin"]
        assert len(origin["commit"]) == 40 and origin["dirty"] is dirty


@pytest.mark.slow  # a local Dask cluster's start costs about 10 s
def test_a_dask_cluster_gets_the_claim_files(lemmas: Path) -> None:
    """--dask: the run's claim files are sent to every worker (fedtheory.dask_claims), which
    finds them without the parent's environment or file system."""
    pytest.importorskip("distributed")
    ran = _run(lemmas, "verify", "--claims", ".", "--family", "mine", "--quick", "--dask",
               "local:2", "--no-progress", "--no-record", "--json", "d.json")
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert json.loads((lemmas / "d.json").read_text())["summary"] == {
        "confirmed": 1, "refuted": 1}


def test_claim_files_bundle_and_unpack(lemmas: Path, tmp_path: Path) -> None:
    from fedtheory.claims.sources import bundle, unpack

    files = bundle([lemmas, lemmas / "mine_mean.py"])
    assert sorted(files) == ["0/_helpers.py", "0/mine_mean.py", "0/mine_wrong.py",
                             "1/_helpers.py", "1/mine_mean.py"]  # helpers go with them
    out = unpack(files, tmp_path / "w")
    assert [Path(o).name for o in out] == ["0", "1"]
    assert (tmp_path / "w" / "0" / "mine_wrong.py").read_text() == REFUTED
    with pytest.raises(ValueError, match="leaves the folder"):
        unpack({"../evil.py": b"x"}, tmp_path / "w")
