"""The commands fedtheory prints run when pasted (fedtheory/commands.py): the program as the
user invoked it, every option the re-run needs (``--claims``, the preset, the seed), each word
quoted; and ``verify`` ends with its summary. The commands printed by a small run (a demo
package and a claim file) are pasted into ``bash -c`` and run."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from fedtheory import commands
from tests._demo import CLAIM_TEMPLATE, demo_package

#: ``python -m fedtheory``, as the commands printed by ``python -m fedtheory`` start.
PROG = shlex.join([sys.executable, "-m", "fedtheory"])

WRONG = '''"""{id}: a false identity, 1/2 + 1/3 = 2/5."""
from fractions import Fraction

from fedtheory.claims import Claim, ClaimKind, Evidence

CLAIM = Claim(id="{id}", family="{family}", seed_ref="001, test", title="a wrong sum",
              statement="1/2 + 1/3 = 2/5", kind=ClaimKind.IDENTITY)


@CLAIM.check("exact")
def exact_sum(ctx):
    """The sum in rationals."""
    s = Fraction(1, 2) + Fraction(1, 3)
    return Evidence(s == Fraction(2, 5), str(s), "2/5", "exact", counterexample={{"sum": str(s)}})
'''


# ------------------------------------------------------------------------------ the function


def test_the_program_as_invoked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``fedtheory`` when PATH finds the script that runs; else its absolute path; else
    ``python -m fedtheory`` with the interpreter's absolute path."""
    bin_dir = tmp_path / "venv bin"
    bin_dir.mkdir()
    script = bin_dir / "fedtheory"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path / "elsewhere"))
    assert commands.program(str(script)) == (str(script.resolve()),)
    assert commands.command("list", prog=commands.program(str(script))) == \
        f"{shlex.quote(str(script.resolve()))} list"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin")
    assert commands.program(str(script)) == ("fedtheory",)
    other = tmp_path / "other" / "fedtheory"  # another fedtheory first on PATH
    other.parent.mkdir()
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    monkeypatch.setenv("PATH", f"{other.parent}{os.pathsep}{bin_dir}")
    assert commands.program(str(script)) == (str(script.resolve()),)
    python = (str(Path(sys.executable).absolute()), "-m", "fedtheory")
    assert commands.program("/x/fedtheory/__main__.py") == python
    assert commands.program("") == python
    assert commands.program(str(tmp_path / "gone" / "fedtheory")) == python


def test_every_word_is_quoted_and_runs_as_one_word(tmp_path: Path) -> None:
    """A claim id, a check and a path as a report could carry them: pasted, the shell passes
    each as one word and runs nothing of them."""
    hostile = ("is.evil$(touch pwned)", "c0; touch pwned2", f"{tmp_path}/my `x` lemmas.py")
    cmd = commands.replay(*hostile[:2], "quick", 0, hostile[2], prog=("printf", "%s\\n"))
    proc = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, capture_output=True, text=True,
                          check=True)
    assert proc.stdout.splitlines() == ["replay", hostile[0], "--check", hostile[1],
                                        "--preset", "quick", "--seed", "0", "--claims",
                                        hostile[2]]
    assert not list(tmp_path.glob("pwned*"))


@pytest.mark.parametrize("args,match", [
    (("is.x\x1b]52;c;aGk=\x07", "c", "quick", 0), "control characters"),
    (("is.x", "c\n", "quick", 0), "control characters"),
    (("--claims", "c", "quick", 0), "not a claim id"),
    (("is.x", "c", "fast", 0), "preset"),
    (("is.x", "c", "quick", -1), "seed"),
    (("is.x", "c", "quick", True), "seed"),
    (("is.x", "c", "quick", "0; id"), "seed"),
])
def test_parts_that_no_run_writes_are_refused(args: tuple, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        commands.replay(*args)


def test_the_resume_command_names_the_preset_and_the_seed() -> None:
    assert commands.resume("r r.json", "quick", 3, claims=["/a b/x.py"], targets=["is.unbiased"],
                           options=["--json", "r r.json"], prog=commands.RECORD) == (
        "fedtheory verify is.unbiased --claims '/a b/x.py' --preset quick --seed 3 --json "
        "'r r.json' --resume 'r r.json'")


# ------------------------------------------------------------------- a small run, pasted


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A package whose claims are demo.one (confirmed) and demo.wrong (refuted)."""
    root = tmp_path_factory.mktemp("commands")
    return demo_package(root, {"one": CLAIM_TEMPLATE.format(name="one", slow=False, what=""),
                               "wrong": WRONG.format(id="demo.wrong", family="demo")})


def _env(root: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(root)}


def _fedtheory(root: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fedtheory", *args], cwd=cwd, env=_env(root),
                          capture_output=True, text=True, timeout=300)


def _paste(root: Path, cwd: Path, cmd: str) -> subprocess.CompletedProcess[str]:
    """``cmd`` pasted into a shell in ``cwd`` (no virtualenv activated)."""
    return subprocess.run(["bash", "-c", cmd], cwd=cwd, env=_env(root), capture_output=True,
                          text=True, timeout=300)


def _as_run_here(cmd: str) -> str:
    """A report's command (``fedtheory ...``), with this interpreter's program."""
    words = shlex.split(cmd)
    assert words[0] == "fedtheory", cmd
    return f"{PROG} {shlex.join(words[1:])}"


@pytest.fixture(scope="module")
def run(tree: Path, tmp_path_factory: pytest.TempPathFactory
        ) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """``verify --claims lemmas --quick --json r.json --report rep``, in a folder of its own:
    the demo claims and a refuted claim from a file in a folder whose name needs quoting."""
    cwd = tmp_path_factory.mktemp("run")
    lemmas = cwd / "my lemmas"
    lemmas.mkdir()
    (lemmas / "mine_wrong.py").write_text(WRONG.format(id="mine.wrong", family="mine"))
    proc = _fedtheory(tree, cwd, "verify", "--claims", "my lemmas", "--quick", "--json",
                      "r.json", "--report", "rep", "--no-progress", "--jobs", "1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return cwd, proc


def test_verify_ends_with_its_summary(run) -> None:
    """Counts, one line per refuted claim (id, erratum kind, replay command), where the
    results were written, the next commands; the details above."""
    cwd, proc = run
    lines = proc.stdout.rstrip("\n").splitlines()
    start = next(k for k, line in enumerate(lines) if re.match(r"\d+ claim\(s\): ", line))
    summary = lines[start:]
    assert summary[0] == "3 claim(s): confirmed: 1, refuted: 2, inconclusive: 0, error: 0"
    assert summary[1] == ("grades: confirmed 1, consistent (low power) 0, not testable 0; "
                          "checks not testable: 0")
    summary = [summary[0], *summary[2:]]
    assert summary[1].startswith("refuted (erratum;")
    assert [line.split(" (", 1)[0].strip() for line in summary[2:4]] == \
        ["demo.wrong", "mine.wrong"]
    assert all("(no erratum registered): " in line and " replay " in line
               for line in summary[2:4])
    assert summary[4] == ("written: run record .fedtheory/last_run.json; JSON report r.json; "
                          "Markdown report rep/report.md")
    assert summary[5].startswith(f"next: {PROG} show demo.wrong --from r.json")
    assert summary[6].strip().startswith(f"{PROG} errata --from r.json --out errata")
    assert len(summary) == 7
    # the details (the counterexamples, the table) come before
    above = "\n".join(lines[:start])
    assert "demo.wrong refuted; counterexample: " in above and "claim " in above
    assert "counterexample" not in "\n".join(summary)


def test_the_printed_commands_run_when_pasted(tree: Path, run) -> None:
    cwd, proc = run
    lines = proc.stdout.splitlines()
    replays = [line.split("): ", 1)[1] for line in lines
               if line.startswith(("  demo.wrong (", "  mine.wrong ("))]
    assert len(replays) == 2 and all(r.startswith(f"{PROG} replay ") for r in replays)
    assert "--claims " + shlex.quote(str(cwd / "my lemmas" / "mine_wrong.py")) in replays[1]
    for cmd in replays:
        again = _paste(tree, cwd, cmd)
        assert again.returncode == 0, (cmd, again.stderr[-2000:])
        assert "passed:   False" in again.stdout and "5/6" in again.stdout
    show = next(line for line in lines if line.startswith("next: "))
    show = show.removeprefix("next: ").split("    #", 1)[0]
    shown = _paste(tree, cwd, show)
    assert shown.returncode == 0, shown.stderr
    assert "Verdict: refuted, from r.json" in shown.stdout
    assert f"re-run it: {PROG} replay demo.wrong --check exact_sum" in shown.stdout


def test_the_reports_replay_commands_carry_claims_and_run(tree: Path, run) -> None:
    """The JSON and the Markdown report keep ``fedtheory replay ...`` (the same on every
    machine), with ``--claims FILE`` for a claim from a file; with this program, they run."""
    cwd, _ = run
    doc = json.loads((cwd / "r.json").read_text())
    got = {c["id"]: c["counterexample"]["replay"]["command"] for c in doc["claims"]
           if c["counterexample"]}
    claim_file = shlex.quote(str(cwd / "my lemmas" / "mine_wrong.py"))
    assert got == {
        "demo.wrong": "fedtheory replay demo.wrong --check exact_sum --preset quick --seed 0",
        "mine.wrong": "fedtheory replay mine.wrong --check exact_sum --preset quick --seed 0 "
                      f"--claims {claim_file}"}
    md = (cwd / "rep" / "report.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)\n```", md)
    assert sorted(blocks) == sorted(got.values())
    assert md.count(f"--claims {json.dumps(claim_file)[1:-1]}") == 2  # the block and the JSON
    for cmd in got.values():
        again = _paste(tree, cwd, _as_run_here(cmd))
        assert again.returncode == 0 and "passed:   False" in again.stdout, again.stderr


def test_errata_on_an_unfinished_report_advises_a_command_that_runs(tree: Path, run,
                                                                    tmp_path: Path) -> None:
    cwd, _ = run
    doc = json.loads((cwd / "r.json").read_text())
    doc["complete"] = False
    doc["claims"] = doc["claims"][-1:]  # the claim from a file: --claims in the advice
    (cwd / "partial.json").write_text(json.dumps(doc))
    proc = _fedtheory(tree, cwd, "errata", "--from", "partial.json", "--out", str(tmp_path))
    assert proc.returncode == 2
    advice = re.search(r"continue it with `([^`]*)` first", proc.stderr)
    assert advice, proc.stderr
    cmd = advice.group(1)
    assert cmd.startswith(f"{PROG} verify ") and "--preset quick --seed 0" in cmd
    again = _paste(tree, cwd, cmd)
    assert again.returncode == 0, (cmd, again.stderr[-2000:])
    assert "1 claim(s) kept, 2 to run" in again.stderr
    assert json.loads((cwd / "partial.json").read_text())["complete"] is True


def test_show_without_a_record_advises_a_command_that_runs(tree: Path, tmp_path: Path) -> None:
    proc = _fedtheory(tree, tmp_path, "show", "demo.one")
    advice = re.search(r"run `([^`]*)` in this directory", proc.stdout)
    assert proc.returncode == 0 and advice, proc.stdout
    again = _paste(tree, tmp_path, advice.group(1))
    assert again.returncode == 0 and "confirmed: 1" in again.stdout, again.stderr[-2000:]


def test_catalogue_on_an_unfinished_report_advises_the_full_command(tree: Path, run,
                                                                    tmp_path: Path) -> None:
    cwd, _ = run
    doc = json.loads((cwd / "r.json").read_text())
    doc["complete"] = False
    doc["claims"] = doc["claims"][-1:]
    (cwd / "partial catalogue.json").write_text(json.dumps(doc))
    proc = _fedtheory(tree, cwd, "catalogue", "--from", "partial catalogue.json", "--out",
                      str(tmp_path / "c.md"))
    assert proc.returncode == 2
    advice = re.search(r"continue it with `([^`]*)`", proc.stderr)
    assert advice, proc.stderr
    claim_file = shlex.quote(str(cwd / "my lemmas" / "mine_wrong.py"))
    assert advice.group(1) == (f"{PROG} verify --claims {claim_file} --preset quick --seed 0 "
                               "--json 'partial catalogue.json' --resume "
                               "'partial catalogue.json'")


def test_a_run_that_keeps_nothing_says_so_and_advises_nothing(tree: Path, tmp_path: Path
                                                              ) -> None:
    proc = _fedtheory(tree, tmp_path, "verify", "demo.one", "--quick", "--no-record",
                      "--no-progress", "--report", "rep")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.rstrip("\n").splitlines()[-3:] == [
        "1 claim(s): confirmed: 1, refuted: 0, inconclusive: 0, error: 0",
        "grades: confirmed 1, consistent (low power) 0, not testable 0; checks not testable: 0",
        "written: Markdown report rep/report.md"]
