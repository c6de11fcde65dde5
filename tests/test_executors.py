"""Executors: serial, local processes and a Dask LocalCluster give the same JSON; a worker
killed mid-run loses nothing that finished; an interrupted run leaves a valid partial report;
``--resume`` keeps what is done."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import fedtheory
from fedtheory.claims import get_claim
from fedtheory.executors import DaskExecutor, ProcessExecutor, SerialExecutor, make_executor
from fedtheory.report import (
    REPORT_VERSION,
    result_from_dict,
    resume_plan,
    to_json,
    without_volatile,
)
from fedtheory.runner import Job, error_result, run_jobs, verify_one

#: fast quick-preset claims of three families, one refuted
IDS = ("is.unbiased", "mifa.biased", "ocs.closed_form")
#: a quick claim whose data comes in tasks (2 in the quick preset, 3 s): the default run
TASKED = ("fdms.nonfriend_probability",)
#: a claim whose engine runs are cut into 13 tasks (7 s): the slow step's comparison
TASKED_MANY = ("fedavg.partial_participation",)


def _doc(executor, ids: tuple[str, ...] = IDS) -> object:
    results = run_jobs([Job(i, "quick", 0) for i in ids], executor=executor)
    return without_volatile(to_json(results, 0, "quick", prov={}))


def test_tasks_give_the_same_json_whatever_the_number_of_workers():
    """A claim cut into tasks: the same report computed here, or its tasks spread over 2 or 3
    worker processes (finishing in whatever order)."""
    serial = _doc(SerialExecutor(), TASKED)
    assert serial == _doc(ProcessExecutor(2), TASKED)  # 3 workers: the slow test below
    # verified alone (its own cache, nothing handed in): the claim computes its own tasks
    assert without_volatile(to_json([verify_one(Job(TASKED[0], "quick", 0))], 0, "quick",
                             prov={})) == serial  # the claim computing its own tasks


@pytest.mark.slow
def test_serial_processes_and_dask_give_the_same_json():
    pytest.importorskip("distributed")
    serial = _doc(SerialExecutor(), IDS + TASKED + TASKED_MANY)
    assert serial == _doc(ProcessExecutor(2), IDS + TASKED + TASKED_MANY) == _doc(
        ProcessExecutor(3), IDS + TASKED + TASKED_MANY)
    dask = DaskExecutor("local:2")
    assert serial == _doc(dask, IDS + TASKED + TASKED_MANY)
    assert dask.reruns == {} and dask.describe() == "dask (local:2)"
    out: dict[int, int] = {}
    dask.map(abs, [-3, 4], out.__setitem__)
    assert out == {0: 3, 1: 4}
    items, got = [-1, 2], {}

    def on(k: int, v: int) -> list[int]:
        got[k] = v
        return [-10 * v] if v < 10 else []

    dask.map(abs, items, on)  # items brought in by a result run too, in arrival order
    assert items[:2] == [-1, 2] and sorted(items[2:]) == [-20, -10]
    assert got == {k: abs(v) for k, v in enumerate(items)}  # each index with its own item


def test_make_executor_and_bad_input():
    assert isinstance(make_executor(1), SerialExecutor)
    assert isinstance(make_executor(3), ProcessExecutor) and make_executor(3).workers == 3
    for bad in (0, -1, 1.5):
        with pytest.raises(ValueError, match="jobs must be an integer >= 1"):
            make_executor(bad)
    with pytest.raises(ValueError, match="retries must be an integer >= 0"):
        ProcessExecutor(2, retries=-1)
    pytest.importorskip("distributed")
    for bad in ("local:0", "local:x", "local:"):
        with pytest.raises(ValueError, match=f"--dask {bad}: local:N needs an integer N >= 1"):
            DaskExecutor(bad)


def test_map_runs_any_picklable_task_in_any_executor():
    """Executor.map: the same values, in their places, whatever the executor."""
    items = list(range(-5, 5))
    for ex in (SerialExecutor(), ProcessExecutor(2)):
        out: dict[int, int] = {}
        ex.map(abs, items, out.__setitem__)
        assert [out[k] for k in range(len(items))] == [abs(i) for i in items]
        assert ex.reruns == {}


def test_items_brought_in_by_a_result_run_too_and_first():
    """on_result may return further items: they run (serially: right away, ahead of the
    items not yet started), with their own indices."""
    for ex in (SerialExecutor(), ProcessExecutor(2)):
        items = [1, 2, 3]
        seen: list[tuple[int, int]] = []

        def on(k: int, v: int, items=items, seen=seen) -> list[int]:
            seen.append((k, v))
            return [10 * v] if v < 10 else []

        ex.map(abs, items, on)  # (in processes, brought in in the order results arrive)
        assert items[:3] == [1, 2, 3] and sorted(items[3:]) == [10, 20, 30]
        assert sorted(seen) == list(enumerate(items))  # each index with its own item
        if isinstance(ex, SerialExecutor):
            assert [v for _, v in seen] == [1, 10, 2, 20, 3, 30]


def test_results_read_back_from_json_are_the_same():
    results = run_jobs([Job(i, "quick", 0, power=True) for i in IDS[:2]])
    for r in results:
        back = result_from_dict(json.loads(json.dumps(r.to_dict())))
        assert back.to_dict() == r.to_dict()
    err = error_result(Job("is.unbiased", "quick", 0), "lost")
    assert err.verdict.value == "error" and err.errors[0].detail == "lost"


_KILLER = '''"""demo.{name}: a claim whose check kills its own worker process {when}."""

import os
import signal
from pathlib import Path

from fedtheory.claims import Claim, ClaimKind, Evidence

CLAIM = Claim(id="demo.{name}", family="demo", seed_ref="001, test", title="killer",
              kind=ClaimKind.QUALITATIVE, expected="confirmed", statement="dies")


@CLAIM.check("symbolic")
def dies(ctx):
    marker = Path(os.environ["FEDTHEORY_TEST_MARKERS"]) / "{name}"
    if {always} or not marker.exists():
        marker.touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return Evidence(True, 1, 1, "survived")
'''


_TASKED = '''"""demo.{name}: a claim whose data comes in three tasks; task t1 kills its worker
{when}."""

import os
import signal
from pathlib import Path

import numpy as np

from fedtheory.claims import Claim, ClaimKind, Evidence
from fedtheory.tasks import Plan, dataset, task


def draw(*, seed, kill):
    marker = Path(os.environ["FEDTHEORY_TEST_MARKERS"]) / "{name}"
    if kill and ({always} or not marker.exists()):
        marker.touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return np.random.default_rng(seed).random(5)


@dataset("demo.{name}")
def draws(ctx):
    seeds = ctx.seed_sequence("draws").spawn(3)
    return Plan([task(f"t{{j}}", draw, seed=s, kill={kills} and j == 1)
                 for j, s in enumerate(seeds)], np.concatenate)


CLAIM = Claim(id="demo.{name}", family="demo", seed_ref="001, test", title="tasks",
              kind=ClaimKind.QUALITATIVE, expected="confirmed", statement="draws",
              datasets=(draws,))


@CLAIM.check("monte_carlo")
def mean(ctx):
    x = draws(ctx)
    return Evidence(bool(0 < x.mean() < 1), float(x.mean()), 0.5, repr(x.tolist()))
'''


@pytest.fixture()
def demo_tree(tmp_path: Path) -> Path:
    """A copy of the package with a demo family: the CONTRIBUTING example, two claims that
    kill their worker (once, always), a claim whose data comes in tasks, and two such claims
    whose second task kills its worker (once, always)."""
    src = Path(fedtheory.__file__).resolve().parent
    dst = tmp_path / "fedtheory"
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
    demo = dst / "claims" / "demo"
    demo.mkdir()
    (demo / "__init__.py").write_text('"""A demo family."""\n')
    text = (Path(__file__).resolve().parents[1] / "CONTRIBUTING.md").read_text(encoding="utf-8")
    example = text.split("<!-- example-claim -->", 1)[1].split("```python\n", 1)[1]
    (demo / "geometric_sum.py").write_text(example.split("```", 1)[0])
    (demo / "killer_once.py").write_text(_KILLER.format(name="killer_once", when="once",
                                                        always=False))
    (demo / "killer_always.py").write_text(_KILLER.format(name="killer_always",
                                                          when="every time", always=True))
    for name, when, always, kills in (("tasked", "never", False, False),
                                      ("task_killer_once", "once", False, True),
                                      ("task_killer_always", "every time", True, True)):
        (demo / f"{name}.py").write_text(_TASKED.format(name=name, when=when, always=always,
                                                        kills=kills))
    (tmp_path / "markers").mkdir()
    return tmp_path


def _verify(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FEDTHEORY_TEST_MARKERS": str(root / "markers"),
           "PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, "-m", "fedtheory", "verify", *args, "--quick",
                           "--no-progress", "--no-record"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=600)


def test_a_killed_worker_loses_nothing(demo_tree: Path):
    """--jobs 2: the job whose worker was killed once is re-run and confirmed; the one that
    kills every worker ends as error, with the reason; the others keep their verdicts; the
    report lists the re-runs. No raw BrokenProcessPool."""
    out = demo_tree / "out.json"
    proc = _verify(demo_tree, "demo.geometric_sum", "demo.killer_once", "demo.killer_always",
                   "is.unbiased", "--jobs", "2", "--json", str(out))
    assert "BrokenProcessPool" not in proc.stderr and "Traceback" not in proc.stderr
    assert proc.returncode == 1, proc.stderr[-2000:]  # a check errored: exit 1
    doc = json.loads(out.read_text())
    verdicts = {c["id"]: c["verdict"] for c in doc["claims"]}
    assert verdicts == {"demo.geometric_sum": "confirmed", "demo.killer_once": "confirmed",
                        "demo.killer_always": "error", "is.unbiased": "confirmed"}
    [always] = [c for c in doc["claims"] if c["id"] == "demo.killer_always"]
    assert "worker process running this task died" in always["errors"][0]["detail"]
    reruns = doc["provenance"]["reruns"]
    assert reruns["demo.killer_once"] >= 1 and reruns["demo.killer_always"] >= 2
    assert doc["complete"] is True


def test_a_task_lost_with_its_worker_is_rerun_or_its_claim_is_an_error(demo_tree: Path):
    """--jobs 2: the task whose worker was killed once is re-run, and its claim has the same
    numbers as a claim whose tasks never died; the claim whose task kills every worker ends as
    error naming the task (never a verdict on the two tasks that finished); the re-runs are
    listed by task."""
    out = demo_tree / "out.json"
    proc = _verify(demo_tree, "demo.tasked", "demo.task_killer_once",
                   "demo.task_killer_always", "is.unbiased", "--jobs", "2", "--json", str(out))
    assert "BrokenProcessPool" not in proc.stderr and "Traceback" not in proc.stderr
    assert proc.returncode == 1, proc.stderr[-2000:]
    doc = json.loads(out.read_text())
    by_id = {c["id"]: c for c in doc["claims"]}
    assert {k: c["verdict"] for k, c in by_id.items()} == {
        "demo.tasked": "confirmed", "demo.task_killer_once": "confirmed",
        "demo.task_killer_always": "error", "is.unbiased": "confirmed"}
    detail = by_id["demo.task_killer_always"]["errors"][0]["detail"]
    assert "task demo.task_killer_always/draws/quick/0/t1 of this claim was lost" in detail
    reruns = doc["provenance"]["reruns"]
    assert reruns["demo.task_killer_once/draws/quick/0/t1"] >= 1
    assert reruns["demo.task_killer_always/draws/quick/0/t1"] >= 2


def test_an_interrupted_run_leaves_a_valid_partial_report_and_resumes(demo_tree: Path):
    """Serial: the claim that kills the process ends the run; the JSON written so far holds
    the finished claims (complete: false). --resume keeps them and runs only the rest; the
    result equals a run from scratch."""
    out = demo_tree / "partial.json"
    ids = ["demo.geometric_sum", "demo.killer_once", "is.unbiased"]
    proc = _verify(demo_tree, *ids, "--jobs", "1", "--json", str(out))
    assert proc.returncode < 0  # killed
    doc = json.loads(out.read_text())
    assert doc["complete"] is False and doc["version"] == REPORT_VERSION
    assert [c["id"] for c in doc["claims"]] == ["demo.geometric_sum"]
    resumed = demo_tree / "resumed.json"
    proc = _verify(demo_tree, *ids, "--jobs", "1", "--json", str(resumed), "--resume", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "1 claim(s) kept, 2 to run" in proc.stderr
    fresh = demo_tree / "fresh.json"
    assert _verify(demo_tree, *ids, "--jobs", "2", "--json", str(fresh)).returncode == 0
    a, b = (json.loads(p.read_text()) for p in (resumed, fresh))
    assert a["complete"] and without_volatile(a) == without_volatile(b)
    assert a["provenance"]["resumed"] == ["demo.geometric_sum"]
    # a report of another seed or preset cannot be resumed
    proc = _verify(demo_tree, *ids, "--seed", "1", "--resume", str(out))
    assert proc.returncode == 2 and "its seed is 0, this run's is 1" in proc.stderr


def test_resume_leaves_out_errors_and_results_without_power(tmp_path: Path):
    results = run_jobs([Job(i, "quick", 0) for i in IDS[:2]])
    results.append(error_result(Job(IDS[2], "quick", 0), "lost"))
    path = tmp_path / "r.json"
    path.write_text(json.dumps(to_json(results, 0, "quick", prov={})))
    claims = [get_claim(i) for i in IDS]
    plan = resume_plan(path, claims, 0, "quick", power=False)
    assert sorted(plan.kept) == sorted(IDS[:2]) and plan.warnings == []
    assert resume_plan(path, claims, 0, "quick", power=True).kept == {}
    with pytest.raises(ValueError, match="its preset is 'quick', this run's is 'full'"):
        resume_plan(path, claims, 0, "full", power=False)
