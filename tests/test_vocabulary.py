"""One vocabulary (fedtheory.vocabulary): every list of words is declared once and read by the
claims, the schema, the command line and the pages; an evidence kind is one file of
fedtheory/vocabulary/evidence/, and a new one added as one file is accepted everywhere."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import fedtheory
from fedtheory import commands, schema, verdicts, vocabulary
from fedtheory.vocabulary.evidence import EVIDENCE_KINDS, EvidenceKind, discover


def test_every_copy_is_the_vocabulary() -> None:
    """The names the modules always exported are the vocabulary's lists themselves, not
    copies that could drift."""
    from fedtheory import cli
    from fedtheory.certify import onestep
    from fedtheory.claimkit import core, power, readings, stated
    from fedtheory.claims import CHECK_KINDS, ClaimKind, Verdict
    from fedtheory.errata import _content

    assert CHECK_KINDS is core.CHECK_KINDS is schema.CHECK_KINDS is vocabulary.CHECK_KINDS
    assert ClaimKind is vocabulary.ClaimKind and Verdict is vocabulary.Verdict
    assert core.PRESETS is schema.PRESETS is cli.PRESETS is commands.PRESETS \
        is vocabulary.PRESETS
    assert schema.VERDICTS is vocabulary.VERDICTS
    assert stated.ERRATUM_KINDS is schema.ERRATUM_KINDS is vocabulary.ERRATUM_KINDS
    assert stated.MUTANT_KINDS is schema.MUTANT_KINDS is vocabulary.MUTANT_KINDS
    assert power.OUTCOMES is schema.OUTCOMES is vocabulary.POWER_OUTCOMES
    assert readings.KINDS is vocabulary.READING_KINDS
    assert onestep.STATUSES is schema.CERTIFIED_STATUSES is vocabulary.CERTIFIED_STATUSES
    assert verdicts.CHECK_GRADES is vocabulary.CHECK_GRADES
    assert _content.ERRATUM_MEANING is vocabulary.ERRATUM_MEANING
    assert tuple(_content.CHECK_EVIDENCE) == vocabulary.CHECK_KINDS


def test_the_evidence_kinds_are_the_files_of_their_folder() -> None:
    folder = Path(vocabulary.evidence.__file__).parent
    files = sorted(p.stem for p in folder.glob("*.py") if not p.name.startswith("_"))
    assert sorted(EVIDENCE_KINDS) == files
    assert vocabulary.CHECK_KINDS == ("symbolic", "exact", "convex", "monte_carlo", "figure")
    assert vocabulary.kinds_where("shows") == ("figure",)
    assert vocabulary.kinds_where("solves") == ("convex",)


def test_a_kind_file_must_declare_its_own_name(tmp_path: Path) -> None:
    pkg = tmp_path / "kinds_demo"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "good.py").write_text("from fedtheory.vocabulary.evidence import EvidenceKind\n"
                                 "KIND = EvidenceKind('good', 1, 'good', 'a good one')\n")
    sys.path.insert(0, str(tmp_path))
    try:
        assert list(discover([str(pkg)], "kinds_demo")) == ["good"]
        (pkg / "bad.py").write_text("from fedtheory.vocabulary.evidence import EvidenceKind\n"
                                    "KIND = EvidenceKind('other', 2, 'x', 'x')\n")
        with pytest.raises(ValueError, match="is its module's"):
            discover([str(pkg)], "kinds_demo")
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.startswith("kinds_demo")]:
            del sys.modules[name]
    with pytest.raises(ValueError, match="lower-case identifier"):
        EvidenceKind("Bad Kind", 1, "w", "e")


def test_an_unknown_kind_is_refused_today() -> None:
    from fedtheory.claims import Check

    with pytest.raises(ValueError, match="check kind must be one of"):
        Check("c", "interval", lambda ctx: None)


#: What the copy of the package runs with the throw-away kind ``interval`` added as one file.
_THROWAWAY = '''
import json, sys, tempfile
from pathlib import Path
from fedtheory import report, schema
from fedtheory.claims import Check, Claim, ClaimKind, Evidence
from fedtheory.errata import _content

c = Claim("zz.kinds", "zz", "none", "t", "x <= 2", ClaimKind.UPPER_BOUND)

@c.check("interval")
def inside(ctx):
    return Evidence(True, 1.0, 2.0, "inside")

@c.check("monte_carlo")
def sampled(ctx):
    return Evidence(False, 3.0, 2.0, "over", counterexample={"x": 1})

@c.check("interval")
def outside(ctx):
    return Evidence(False, 3.0, 2.0, "outside", counterexample={"x": 2})

r = c.verify()
doc = report.to_json([r], 0, "quick", prov={})
schema.validate(json.loads(json.dumps(doc)), "copy")
entry = doc["claims"][0]
out = {
    "kinds": [k.kind for k in c.checks],
    "audit": schema.audit(entry, preset="quick", seed=0),
    "counts": report.check_counts(entry["checks"]),
    "summary": report.checks_summary(entry["checks"]),
    "evidence": _content.evidence_summary(entry),
    "counterexample": _content._smallest_failure(entry)[0]["name"],
    "establishes": _content.CHECK_EVIDENCE["interval"],
    "back": report.result_from_dict(entry).checks[0].kind,
}
md = report.write_markdown(tempfile.mkdtemp(), [r], 0, "quick", prov={}).read_text()
out["markdown"] = "interval" in md
print(json.dumps(out))
'''


def test_a_throwaway_evidence_kind_is_one_new_file(tmp_path: Path) -> None:
    """A copy of the package with one new file, ``vocabulary/evidence/interval.py``: a check of
    that kind is accepted, written, validated by the schema, audited, counted, named by the
    errata pages (ordered before Monte Carlo by its ``order``) and in the Markdown report."""
    src = Path(fedtheory.__file__).parent
    copy = tmp_path / "fedtheory"
    shutil.copytree(src, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "vocabulary" / "evidence" / "interval.py").write_text(textwrap.dedent('''
        """Interval arithmetic: a throw-away kind of evidence."""
        from fedtheory.vocabulary.evidence import EvidenceKind

        KIND = EvidenceKind(name="interval", order=35, words="interval arithmetic",
                            establishes="verified interval arithmetic")
        '''))
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", _THROWAWAY], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    import json

    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["kinds"] == ["interval", "monte_carlo", "interval"]
    assert out["audit"] == []
    assert out["counts"]["checks"] == 3 and out["counts"]["failed"] == 2
    assert out["summary"] == "1 of 3 checks passed (2 failed)"
    assert out["evidence"].startswith("1 of 3 checks passed (interval arithmetic, monte carlo)")
    assert out["counterexample"] == "outside"  # order 35: before monte_carlo (40)
    assert out["establishes"] == "verified interval arithmetic"
    assert out["back"] == "interval" and out["markdown"]
