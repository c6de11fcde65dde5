"""The command line as a user meets it: list, show (with provenance), verify (paths checked
first, results independent of --jobs, byte-identical reports), replay, --version."""

import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fedtheory.claims import Claim, ClaimKind, Evidence, Verdict, all_claims
from fedtheory.claims import registry as reg
from fedtheory.cli import LIST_WIDTH, Progress, main
from fedtheory.report import RECORD_PATH, without_volatile

#: The program the printed commands start with when main() is called from Python.
PROG = shlex.join([sys.executable, "-m", "fedtheory"])

FIRST = all_claims()[0].id
#: cheap claims: one refuted (symbolic), one with a BLAS-heavy Monte Carlo simulation
REFUTED = "ocs.closed_form"
REFUTED_CHECK = "appendix_reading_exact"
MONTE_CARLO = "ocs.independent_variance"


def _strip_timings(doc):
    """A report without provenance, timings and digests: what must be byte-identical across
    runs."""
    return json.dumps(without_volatile(doc), indent=1, sort_keys=True)


def test_version_and_python_m(capsys):
    from fedtheory import __version__

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.strip() == f"fedtheory {__version__}"
    proc = subprocess.run([sys.executable, "-m", "fedtheory", "--version"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == f"fedtheory {__version__}"


def test_list_fits_100_columns(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= LIST_WIDTH, max(lines, key=len)
    for c in all_claims():
        assert any(line.startswith(c.id + " ") for line in lines), c.id
    assert f"{len(all_claims())} claims" in out


def test_show_without_a_record_shows_the_claim_and_no_verdict(capsys):
    assert main(["show", FIRST]) == 0
    out = capsys.readouterr().out
    assert "Statement (LaTeX)" in out and "Checks:" in out
    assert "No recorded verdict here" in out and "Verdict:" not in out


def test_show_cites_the_paper_as_the_errata_do(capsys):
    """The claim's place and paper as a reader cites them (fedtheory.papers), no seed number."""
    assert main(["show", REFUTED]) == 0
    head = capsys.readouterr().out.split("Statement (LaTeX)")[0]
    assert "(ocs; OCS, " in head and "seed " not in head, head
    assert "OCS: Wenlin Chen, Samuel Horváth, Peter Richtárik. Optimal Client Sampling" in head
    assert "arXiv:2010.13723" in head and not re.search(r"\b00[0-4]\b", head), head


def test_unknown_id_is_a_clear_error(capsys):
    assert main(["show", "ocs.closed_from"]) == 2
    assert "closest matches" in capsys.readouterr().err
    assert main(["verify", "--family", "nope", "--quick"]) == 2


def test_ids_with_family_are_rejected(capsys):
    assert main(["verify", REFUTED, "--family", "is", "--quick", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "not both" in err and err.count("\n") == 1
    assert not RECORD_PATH.exists()


def test_verify_writes_reports_and_a_record_with_provenance(tmp_path, capsys):
    js = tmp_path / "r.json"
    rc = main(["verify", REFUTED, "--quick", "--json", str(js), "--report",
               str(tmp_path / "rep"), "--no-progress", "--jobs", "1", "--seed", "3"])
    assert rc == 0
    doc = json.loads(js.read_text())
    assert set(doc) >= {"version", "seed", "claims", "provenance"}
    prov = doc["provenance"]
    for key in ("fedtheory_version", "commit", "dirty", "preset", "seed", "time", "python",
                "packages", "argv", "path"):
        assert key in prov, key
    assert prov["seed"] == 3 and prov["preset"] == "quick" and prov["path"] == str(js.resolve())
    (c,) = doc["claims"]
    assert set(c) >= {"id", "family", "seed_ref", "kind", "verdict", "checks", "counterexample",
                      "derivation", "finding", "errors"}
    assert c["verdict"] == "refuted" and c["finding"]
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "## Provenance" in md and "seed 3" in md
    assert "**Finding.**" in md and "How it is derived and checked" in md
    assert f"fedtheory replay {REFUTED} --check {REFUTED_CHECK} --preset quick --seed 3" in md
    # the run record in the working directory, not in the home directory
    # (the home gets only the claim index, in its cache folder)
    assert RECORD_PATH.exists()
    assert all(p.name.startswith("claim-index-") and p.suffix == ".json"
               for p in Path.home().rglob("*") if p.is_file()), list(Path.home().rglob("*"))
    capsys.readouterr()
    assert main(["show", REFUTED]) == 0
    out = capsys.readouterr().out
    assert f"Verdict: refuted, from {RECORD_PATH}" in out
    assert "seed 3" in out and prov["time"] in out and f"re-run it: {PROG} replay" in out
    # the same verdict from the report given explicitly
    assert main(["show", REFUTED, "--from", str(js)]) == 0
    assert f"from {js}" in capsys.readouterr().out


def test_verify_power_reports_mutants_tightness_and_errata(tmp_path, capsys):
    js = tmp_path / "p.json"
    bound_id = "fdms.discovery_error.corrected"  # a bound attained exactly, cheap to mutate
    rc = main(["verify", REFUTED, bound_id, "--quick", "--power", "--json",
               str(js), "--report", str(tmp_path / "rep"), "--no-progress", "--jobs", "1",
               "--no-record"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "power (mutants of each claim's stated side):" in out
    assert f"{bound_id}: caught" in out and "NOT CAUGHT" not in out
    # a refuted statement already fails: no power table, said so
    assert f"{REFUTED}: n/a (refuted: the statement already fails)" in out
    refuted, bound = json.loads(js.read_text())["claims"]
    assert refuted["erratum"]["kind"] == "typo" and refuted["power"] == []
    assert bound["tightness"]["ratio"] == 1.0 and bound["tightness"]["instance"]
    outcomes = {m["outcome"] for m in bound["power"]}
    assert outcomes <= {"caught", "still true"} and "caught" in outcomes
    for m in bound["power"]:
        assert m["by"] and m["instance"], m
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "**Power**" in md and "**Tightness.**" in md and "**Erratum** (typo)" in md
    assert "**Power**: n/a (refuted" in md


def test_show_from_reports_only_verdicts_with_provenance(tmp_path, capsys):
    old = tmp_path / "old.json"  # an old-style report or cache entry: another format
    old.write_text(json.dumps({"claims": [{"id": FIRST, "verdict": "error", "checks": []}]}))
    assert main(["show", FIRST, "--from", str(old)]) == 2
    err = capsys.readouterr().err
    assert f"report {old}: version: report format None" in err and err.count("\n") == 1
    assert main(["show", FIRST, "--from", str(tmp_path / "missing.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{")
    assert main(["show", FIRST, "--from", str(tmp_path / "bad.json")]) == 2
    assert "not readable JSON" in capsys.readouterr().err


def test_records_are_whole_reports_written_atomically(tmp_path, capsys):
    """Two runs in one directory: the record is the second run's whole report (no merge of
    claims from different runs), and no temporary file is left behind (the run lock's file
    stays: the kernel releases the lock with the process)."""
    assert main(["verify", REFUTED, "--quick", "--no-progress", "--jobs", "1"]) == 0
    assert main(["verify", MONTE_CARLO, "--quick", "--no-progress", "--jobs", "1",
                 "--seed", "1"]) == 0
    doc = json.loads(RECORD_PATH.read_text())
    assert [c["id"] for c in doc["claims"]] == [MONTE_CARLO] and doc["provenance"]["seed"] == 1
    assert sorted(p.name for p in RECORD_PATH.parent.iterdir()) == ["last_run.json", "lock"]
    capsys.readouterr()
    assert main(["show", REFUTED]) == 0
    assert "No verdict for ocs.closed_form in the last run here" in capsys.readouterr().out


@pytest.mark.parametrize("option,make,message", [
    ("--json", lambda t: (t / "adir").mkdir() or t / "adir", "is a directory"),
    ("--json", lambda t: (t / "afile").write_text("") or t / "afile" / "r.json",
     "is not a directory"),
    ("--report", lambda t: (t / "afile").write_text("") or t / "afile", "not a directory"),
    ("--report", lambda t: (t / "afile").write_text("") or t / "afile" / "sub", "not a directory"),
])
def test_bad_output_paths_fail_before_any_work(tmp_path, capsys, monkeypatch, option, make,
                                               message):
    def no_work(*a, **k):
        raise AssertionError("work started before the output paths were checked")

    monkeypatch.setattr("fedtheory.runner.run_jobs", no_work)
    assert main(["verify", REFUTED, "--quick", option, str(make(tmp_path))]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fedtheory: error: " + option) and message in err
    assert err.count("\n") == 1, err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_unwritable_report_dir_fails_before_any_work(tmp_path, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        assert main(["verify", REFUTED, "--quick", "--report", str(ro / "rep")]) == 2
        assert "cannot write" in capsys.readouterr().err
    finally:
        ro.chmod(0o700)


def test_results_do_not_depend_on_jobs_and_repeat_byte_for_byte(tmp_path):
    """Issue 6.7 and 6.11: same seed and preset give the same numbers whatever --jobs (BLAS
    limited to one thread in the parent as in the workers), and the same JSON outside
    provenance and timings."""
    docs = []
    for jobs, name in ((1, "a"), (2, "b"), (1, "c")):
        js = tmp_path / f"{name}.json"
        assert main(["verify", REFUTED, MONTE_CARLO, "--quick", "--no-progress", "--jobs",
                     str(jobs), "--json", str(js), "--no-record"]) == 0
        docs.append(json.loads(js.read_text()))
    assert _strip_timings(docs[0]) == _strip_timings(docs[1]) == _strip_timings(docs[2])
    assert [c["id"] for c in docs[1]["claims"]] == [REFUTED, MONTE_CARLO]  # order asked


def test_a_claims_numbers_do_not_depend_on_what_ran_before_it(tmp_path):
    """With --jobs 1 a claim runs after others in one process, with --jobs 2 in a fresh worker.
    The ESO SDP's last digits depended on that history (memory alignment after a large Monte
    Carlo run): is.independent_minimises_variance.corrected differed in the 14th digit."""
    target = "is.independent_minimises_variance.corrected"

    def run(ids, name):  # each in a fresh interpreter, as a user (or a worker) would
        js = tmp_path / f"{name}.json"
        proc = subprocess.run([sys.executable, "-m", "fedtheory", "verify", *ids, "--quick",
                               "--no-progress", "--jobs", "1", "--json", str(js), "--no-record"],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        (entry,) = [c for c in json.loads(js.read_text())["claims"] if c["id"] == target]
        return without_volatile(entry)

    assert run(["is.variance_arbitrary_sampling", target], "after") == run([target], "alone")


def test_checks_run_with_one_blas_thread_serially_too():
    from threadpoolctl import threadpool_info

    from fedtheory.runner import Job, run_jobs

    claim = Claim(id="zz.threads", family="zz", seed_ref="000", title="t", statement="s",
                  kind=ClaimKind.QUALITATIVE)

    @claim.check("monte_carlo")
    def threads(ctx):
        n = [d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"]
        return Evidence(all(k == 1 for k in n), n, 1)

    reg.register(claim)
    try:
        (res,) = run_jobs([Job("zz.threads", "quick", 0)], n_workers=1)
    finally:
        reg._REGISTRY.pop("zz.threads")
    assert res.verdict is Verdict.CONFIRMED, res.checks[0].measured


def test_replay_reproduces_a_counterexample(capsys):
    assert main(["replay", REFUTED, "--check", REFUTED_CHECK, "--quick"]) == 0
    out = capsys.readouterr().out
    assert "passed:   False" in out and "measured:" in out and "stated:" in out
    assert '"norms"' in out
    assert main(["replay", REFUTED, "--check", "nope", "--quick"]) == 2
    assert "its checks:" in capsys.readouterr().err


def test_progress_prints_a_plain_line_per_finished_item_with_the_time_left():
    stream = io.StringIO()  # not a terminal
    p = Progress(stream, known={"a.one": 3.0})
    # two tasks of estimated cost 2 and 4, two claims: one of unknown cost (the mean known
    # cost, 3), one known from the last run (3)
    p.start([("t/0", 2.0), ("t/1", 4.0), ("b.two", None), ("a.one", None)])
    for label, status in (("t/1", "done"), ("t/0", "done"), ("b.two", "confirmed"),
                          ("a.one", "confirmed")):  # in the order they finish
        p.done(label, 0.5, status)
    p.close()
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("[1/4] t/1: done (0.5 s;") and "left)" in lines[0]
    assert lines[3].startswith("[4/4] a.one: confirmed") and "about 0 s left" in lines[3]
    assert p.spent == 12.0 and p.left == 0.0
    silent = io.StringIO()
    q = Progress(silent, enabled=False)
    q.start([("a", None)])
    q.done("a", 0.1, "confirmed")
    assert silent.getvalue() == ""


def test_catalogue_bad_reports_are_one_line_errors(tmp_path, capsys):
    from fedtheory.report import write_json

    assert main(["catalogue", "--from", str(tmp_path / "missing.json"), "--out",
                 str(tmp_path / "c.md")]) == 2
    assert "does not exist" in capsys.readouterr().err
    js = tmp_path / "full.json"
    write_json(js, [], 0, "full", {"preset": "full", "time": "t"})
    assert main(["catalogue", "--from", str(js), "--out", str(tmp_path / "c.md")]) == 2
    assert "quick preset" in capsys.readouterr().err
    assert not (tmp_path / "c.md").exists()


def test_catalogue_regenerate_is_the_one_command(tmp_path, capsys, monkeypatch):
    """`catalogue --check` passes on the checkout (its generated files are current) and fails
    naming `--regenerate` where one is stale, which rewrites it; `catalogue` needs --from or
    --regenerate, and --regenerate takes neither --from nor --claims."""
    from fedtheory import contract

    assert main(["catalogue", "--check"]) == 0
    assert "up to date" in capsys.readouterr().out
    for rel in (contract.CATALOGUE_FILE, contract.CONTRACT_FILE):
        src = contract.repository_root() / rel
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(src.read_text(encoding="utf-8"), encoding="utf-8")
    stale = (tmp_path / contract.CONTRACT_FILE).read_text().replace("(eq. 17).", "(old).")
    (tmp_path / contract.CONTRACT_FILE).write_text(stale)
    monkeypatch.setattr(contract, "repository_root", lambda: tmp_path)
    assert main(["catalogue", "--check"]) == 1
    out, err = capsys.readouterr()
    assert "out of date: docs/claims.md" in out and "catalogue --regenerate" in err
    assert main(["catalogue", "--regenerate"]) == 0
    assert "written: docs/claims.md" in capsys.readouterr().out
    assert "(eq. 17)." in (tmp_path / contract.CONTRACT_FILE).read_text()
    assert main(["catalogue", "--check"]) == 0
    assert main(["catalogue"]) == 2
    assert "--regenerate" in capsys.readouterr().err
    assert main(["catalogue", "--regenerate", "--from", "R.json"]) == 2
    assert "neither --from nor --claims" in capsys.readouterr().err


def test_resume_recomputes_verdicts_and_reruns_an_edited_claim(tmp_path, capsys):
    """A verdict edited by hand is not trusted: --resume names the file, the claim and the
    field, runs the claim again, and the report equals an uninterrupted run's."""
    js, edited, out = tmp_path / "r.json", tmp_path / "edited.json", tmp_path / "out.json"
    ids = [REFUTED, "mifa.biased"]
    common = ["--quick", "--no-progress", "--jobs", "1", "--no-record"]
    assert main(["verify", *ids, *common, "--json", str(js)]) == 0
    doc = json.loads(js.read_text())
    doc["claims"][0]["verdict"] = "confirmed"
    edited.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["verify", *ids, *common, "--json", str(out), "--resume", str(edited)]) == 0
    err = capsys.readouterr().err
    assert (f"fedtheory: warning: --resume {edited}: claims[0] ({REFUTED}): verdict: 'confirmed' "
            "is not what its checks give ('refuted') (and 1 more problem(s)); the claim is run "
            "again") in err
    assert "1 claim(s) kept, 1 to run" in err
    assert without_volatile(json.loads(out.read_text())) == without_volatile(
        json.loads(js.read_text()))


@pytest.mark.parametrize("edit,message", [
    (lambda d: d["claims"][0].pop("checks"), "claims[0] (ocs.closed_form): checks: missing"),
    (lambda d: d["claims"][0].update(verdict="banana"),
     "claims[0] (ocs.closed_form): verdict: 'banana' is not one of ['confirmed', 'refuted', "
     "'inconclusive', 'error']"),
])
def test_resume_refuses_a_malformed_report_in_one_line(tmp_path, capsys, edit, message):
    js = tmp_path / "r.json"
    common = ["--quick", "--no-progress", "--jobs", "1", "--no-record"]
    assert main(["verify", REFUTED, *common, "--json", str(js)]) == 0
    doc = json.loads(js.read_text())
    edit(doc)
    js.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["verify", REFUTED, *common, "--resume", str(js)]) == 2
    assert capsys.readouterr().err == f"fedtheory: error: report {js}: {message}\n"


def test_show_does_not_show_a_verdict_that_does_not_hold(tmp_path, capsys):
    """The failed check dropped from the run record and the verdict made 'confirmed', all
    consistent: the entry no longer has the claim's checks (nor its digest): not shown."""
    assert main(["verify", REFUTED, "--quick", "--no-progress", "--jobs", "1"]) == 0
    fresh = json.loads(RECORD_PATH.read_text())
    doc = json.loads(RECORD_PATH.read_text())
    doc["claims"][0]["checks"] = [c for c in doc["claims"][0]["checks"] if c["passed"]]
    doc["claims"][0]["verdict"], doc["claims"][0]["counterexample"] = "confirmed", None
    RECORD_PATH.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["show", REFUTED]) == 0
    out = capsys.readouterr().out
    assert (f"Verdict: not shown: report {RECORD_PATH}: claims[0] ({REFUTED}): definition: the "
            "claim's statement, texts or checks differ from this entry's: it was written by "
            f"another version of the claim (and 1 more problem(s)). Run it again: {PROG} "
            f"verify {REFUTED} --preset quick --seed 0") in out
    assert main(["show", REFUTED, "--from", str(RECORD_PATH)]) == 2
    fresh["complete"] = False
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps(fresh))
    capsys.readouterr()
    assert main(["show", REFUTED, "--from", str(partial)]) == 0
    assert f"Verdict: refuted, from {partial} (a run that did not finish):" in \
        capsys.readouterr().out


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="signals are handled in the main thread only")
def test_sigterm_becomes_an_interrupt_and_ignored_signals_stay_ignored():
    from fedtheory.cli import Interrupted, _interruptible

    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Interrupted) as info, _interruptible():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises before this ends
    assert info.value.signum == signal.SIGTERM and isinstance(info.value, KeyboardInterrupt)
    assert signal.getsignal(signal.SIGTERM) == before
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a background job's
    try:
        with _interruptible():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, old)
