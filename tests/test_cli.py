import json

import pytest

from fedtheory.claims import all_claims
from fedtheory.cli import main

FIRST = all_claims()[0].id if all_claims() else None
needs_claims = pytest.mark.skipif(FIRST is None, reason="no claims registered yet")


@needs_claims
def test_list_and_show(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert FIRST in out and "claims" in out
    assert main(["show", FIRST]) == 0
    assert "No verdict yet" in capsys.readouterr().out


def test_unknown_id_is_a_clear_error(capsys):
    assert main(["show", "ocs.closed_from"]) == 2
    assert "closest matches" in capsys.readouterr().err
    assert main(["verify", "--family", "nope", "--quick"]) == 2


@needs_claims
def test_verify_writes_json_and_report(tmp_path, capsys):
    js = tmp_path / "r.json"
    rc = main(["verify", FIRST, "--quick", "--json", str(js), "--report", str(tmp_path / "rep"),
               "--no-progress", "--jobs", "1"])
    assert rc == 0
    doc = json.loads(js.read_text())
    assert set(doc) >= {"version", "seed", "claims"}
    (c,) = doc["claims"]
    assert set(c) >= {"id", "family", "seed_ref", "kind", "verdict", "checks", "counterexample"}
    for chk in c["checks"]:
        assert chk["kind"] in {"symbolic", "convex", "monte_carlo", "figure"}
        assert set(chk) >= {"passed", "measured", "theoretical", "detail"}
    assert (tmp_path / "rep" / "report.md").exists()
    capsys.readouterr()
    assert main(["show", FIRST]) == 0
    assert "Last verdict" in capsys.readouterr().out
