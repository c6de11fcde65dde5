"""``fedtheory recheck`` on a report with one-step, proof-for-every-n and rate certificates:
all re-checked without a solver, and tampered copies caught."""

from __future__ import annotations

import json
from fractions import Fraction as Fr

import pytest

from fedtheory.certify import OutOfScope, certify_instance
from fedtheory.certify.lyapunov import certify_rate_instance
from fedtheory.claims import get_claim

pytest.importorskip("cvxpy")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """A report written by the toolkit's own writer: mifa.mifa_error with one certified
    instance and its proof for every n, mifa.rates_table.corrected with one certified rate
    instance."""
    from fedtheory.report import write_json
    from fedtheory.runner import certify_entry

    results = []
    one = get_claim("mifa.mifa_error")
    row = certify_instance(one.one_step, one.one_step.grid(True)[0])
    entry = certify_entry(OutOfScope("x"), "quick")
    entry.update({"status": row["status"], "instances": [row], "lower": row["lower"],
                  "upper": row["upper"], "ratio": row["ratio"], "solver": "CLARABEL",
                  "derived": one.one_step.prove(), "derivation": "proof for every n"})
    res = one.verify(preset="quick", only=(one.checks[0].name,))
    res.certified = entry
    results.append(res)
    rated = get_claim("mifa.rates_table.corrected")
    rrow = certify_rate_instance(rated.rate, {"n": 3, "b": 1, "eta": Fr(1, 2)})
    res = rated.verify(preset="quick", only=(rated.checks[0].name,))
    res.certified = {**certify_entry(OutOfScope("no one-step"), "quick"),
                     "rate": {"status": "certified", "description": rated.rate.description,
                              "instances": [rrow], "notes": [], "seconds": 1.0}}
    results.append(res)
    path = tmp_path_factory.mktemp("recheck") / "r.json"
    write_json(path, results, 0, "quick", {"time": "t"})
    return path


def _run(path, capsys) -> tuple[int, str]:
    from fedtheory import cli

    rc = cli.main(["recheck", "--from", str(path)])
    return rc, capsys.readouterr().out


def test_every_kind_rechecked(report, capsys) -> None:
    rc, out = _run(report, capsys)
    assert rc == 0, out
    lines = out.splitlines()
    assert any(x.startswith("mifa.mifa_error {") and ": ok: " in x for x in lines)
    rate = [x for x in lines if x.startswith("mifa.rates_table.corrected rate ")]
    assert len(rate) == 1 and ": ok: rate certified; E V+ <= V - progress + 1/4" in rate[0]
    assert "the stated potential 2 gives 1/2 (attained: 1/2) against the stated 1/2" in rate[0]
    proof = [x for x in lines if "proof for every n: re-derived" in x]
    assert len(proof) == 1 and "not read from the report" in proof[0]
    assert "2 certificate(s) hold, 0 failed" in lines[-1]
    assert "1 proof(s) for every n re-derived" in lines[-1]


def _tampered(report, tmp_path, capsys, change) -> tuple[int, str]:
    bad = json.loads(report.read_text())
    change({c["id"]: c for c in bad["claims"]})
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(bad))
    return _run(p, capsys)


def _rate_row(claims):
    return claims["mifa.rates_table.corrected"]["certified"]["rate"]["instances"][0]


def _double_first(row):
    k, lab, v = row["certificate"]["multipliers"][0]
    row["certificate"]["multipliers"][0] = [k, lab, str(Fr(v) * 2)]


@pytest.mark.parametrize(("change", "says"), [
    # a multiplier doubled: still a certificate, but of a larger constant than reported
    (lambda c: _double_first(_rate_row(c)), "the multipliers prove 1/2, the report says"),
    (lambda c: _rate_row(c).__setitem__("constant", "1/1000"), "constant"),
    (lambda c: _rate_row(c)["potential"].update({"||x - x*||^2": "1/3"}), "fails"),
    (lambda c: _rate_row(c).__setitem__("rho", "1/2"), "rho"),
    (lambda c: _rate_row(c).__setitem__("stated_certified", False), "stated_certified"),
    (lambda c: _rate_row(c)["params"].__setitem__("n", "7"), "not one of the claim's"),
    (lambda c: _rate_row(c)["certificate"].__setitem__("kind", "magic"), "unknown certificate"),
    (lambda c: _rate_row(c)["certificate"]["multipliers"][0].__setitem__(1, "x"), "label"),
    (lambda c: _rate_row(c)["certificate"]["multipliers"].extend([[0, "a", "1"]] * 10**4),
     "at most"),
    (lambda c: _rate_row(c)["at_stated_potential"].__setitem__("constant", "0"),
     "at_stated_potential"),
    (lambda c: c["mifa.mifa_error"]["certified"]["derived"][0].__setitem__("worst", "0"),
     "differs from the re-derived"),
])
def test_tampered_copies_caught(report, tmp_path, capsys, change, says) -> None:
    rc, out = _tampered(report, tmp_path, capsys, change)
    failed = [x for x in out.splitlines() if "FAILED" in x]
    assert rc == 1 and len(failed) == 1 and says in failed[0], out


def test_linear_rate_rechecked() -> None:
    """A linear rate (gradient descent, rho = max(|1 - ηL|, |1 - ημ|)^2, its lower certificate
    recomputed from the step): re-checked exactly; a smaller rate, a lower bound that is not
    the step's, or another kind is refused."""
    from fedtheory.certify.lyapunov import (
        RateStep,
        check_rate_certificate,
        gradient_descent_model,
        recheck_rate_instance,
    )
    from fedtheory.certify.reported_certificates import CertificateError

    step = RateStep("gd", lambda q: gradient_descent_model(1, Fr(1, 4), Fr(1, 2)),
                    lambda quick: [{}])
    row = json.loads(json.dumps(certify_rate_instance(step, {})))
    assert row["rho"] == "49/64" and row["rho_tight"] and row["stated_certified"]
    assert "the stated rate 49/64 reached" in check_rate_certificate(step, {}, row)
    assert recheck_rate_instance(step, row)
    for change in ({"rho": "1/2"}, {"rho_lower": "1/2"}, {"stated_certified": False},
                   {"certificate": {**row["certificate"], "kind": "pep"}}):
        assert not recheck_rate_instance(step, {**row, **change}), change
    with pytest.raises(CertificateError, match="rho_lower"):
        check_rate_certificate(step, {}, {**row, "rho_lower": "1/2"})
