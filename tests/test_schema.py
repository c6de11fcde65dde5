"""Reports as untrusted input (fedtheory.schema): one schema that accepts what the toolkit
writes and names the file, the claim and the field of what it refuses; verdicts and the other
derived fields recomputed from the stored checks by the same rules as fedtheory.claimkit.core;
every edit an entry could smuggle in is caught by the audit."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from fedtheory import schema
from fedtheory.claimkit.core import (
    CHECK_KINDS,
    PRESETS,
    CheckResult,
    ClaimResult,
    Verdict,
    combine,
    replay_command,
    tightness,
)
from fedtheory.claimkit.power import OUTCOMES
from fedtheory.claimkit.stated import ERRATUM_KINDS, MUTANT_KINDS, Erratum
from fedtheory.claims import Claim, ClaimKind, Evidence, SetupCard, SetupRow, get_claim
from fedtheory.report import entry, load_report, to_json, write_json
from fedtheory.runner import Job, run_jobs

#: cheap quick-preset claims: confirmed with mutants (mifa.biased), refuted with an erratum
#: (ocs.closed_form); the shapes claim below adds the rest (a bound's tightness, ...)
IDS = ("mifa.biased", "ocs.closed_form")


def _shapes_claim() -> Claim:
    """A claim whose report has every optional shape: a set-up card, an erratum, a figure, an
    undecided check, a check that raised, a failed check, a bound's ratio."""
    c = Claim(id="zz.shapes", family="zz", seed_ref="001, test", title="shapes",
              statement="x <= 1", kind=ClaimKind.UPPER_BOUND,
              erratum=Erratum("omitted hypothesis", "somewhere", quote="q", location="p. 1",
                              hypothesis="h", relied_on="r"),
              setup=SetupCard([SetupRow("data", "digits", "Sec. 5", code=None,
                                        run={"quick": "100", "full": "1797"},
                                        deviation={"quick": "fewer"})],
                              code_url=None, sensitivity=["s"], notes="n"))

    @c.check("monte_carlo")
    def bound(ctx):
        """A failed bound."""
        return Evidence(False, 2.0, 1.0, "over", counterexample={"x": 2}, ratio=2.0,
                        instance={"x": 2}, alpha=1e-6, tolerance=0.1)

    @c.check("symbolic")
    def unsure(ctx):
        """Not reached."""
        return Evidence.unproven(1.0, 1.0, "weaker")

    @c.check("figure")
    def picture(ctx):
        """A figure."""
        return Evidence.illustration(["/tmp/x.png"], measured=[1, 2])

    @c.check("exact")
    def boom(ctx):
        """Raises."""
        raise RuntimeError("no")

    return c


@pytest.fixture(scope="module")
def results() -> list[ClaimResult]:
    return [*run_jobs([Job(i, "quick", 0, power=True) for i in IDS]),
            _shapes_claim().verify()]


@pytest.fixture()
def report(tmp_path: Path, results: list[ClaimResult]) -> tuple[Path, dict[str, Any]]:
    path = tmp_path / "r.json"
    write_json(path, results, 0, "quick", {"time": "t"})
    return path, json.loads(path.read_text())


# ----------------------------------------------------------------- the schema and the writers


def test_the_schema_is_a_json_schema() -> None:
    Draft202012Validator.check_schema(schema.REPORT_SCHEMA)


def test_the_vocabulary_copies_are_the_claims_vocabulary() -> None:
    from fedtheory import cli

    assert schema.VERDICTS == tuple(v.value for v in Verdict)
    assert schema.CLAIM_KINDS == tuple(k.value for k in ClaimKind)
    assert schema.CHECK_KINDS == CHECK_KINDS and schema.PRESETS == PRESETS == cli.PRESETS
    assert schema.ERRATUM_KINDS == ERRATUM_KINDS and schema.MUTANT_KINDS == MUTANT_KINDS
    assert schema.OUTCOMES == OUTCOMES
    from fedtheory.claimkit.core import BOUND_KINDS

    assert schema.BOUND_KINDS == tuple(k.value for k in BOUND_KINDS)


def _properties(s: dict[str, Any]) -> set[str]:
    return set(s["properties"])


def test_the_schema_names_every_field_the_toolkit_writes(results: list[ClaimResult]) -> None:
    """A new field of CheckResult, ClaimResult.to_dict, Erratum, SetupCard or a power entry
    is one edit in fedtheory/schema.py: this test says which."""
    where = "add it to fedtheory/schema.py"
    fields = {f.name for f in dataclasses.fields(CheckResult)}
    assert _properties(schema.CHECK_SCHEMA) == fields, where
    for r in results:  # claims made here have no origin (a registered claim's is written)
        # nor a certified entry (written with --certify: tests/test_certify.py), nor
        # readings (a claim that declares them: tests/test_readings.py), nor always a grade
        assert _properties(schema.CLAIM_SCHEMA) == set(entry(r)) | {
            "origin", "certified", "readings", "grade"}, where
    shapes = results[-1]
    assert _properties(schema.ERRATUM_SCHEMA) == set(shapes.erratum), where
    assert _properties(schema.SETUP_SCHEMA) == set(shapes.setup), where
    assert _properties(schema.SETUP_SCHEMA["properties"]["rows"]["items"]) == set(
        shapes.setup["rows"][0]), where
    power = [m for r in results for m in r.power or []]
    assert power and all(set(m) <= _properties(schema.POWER_SCHEMA) for m in power), where
    assert {k for m in power for k in m} == _properties(schema.POWER_SCHEMA), where


def test_what_the_toolkit_writes_is_valid_and_holds_up(report, results) -> None:
    """Real claims (with --power) and every optional shape: valid, and every entry passes the
    audit against the claim's definition and mutants."""
    path, doc = report
    load_report(path)  # raises if not
    claims = [get_claim(i) for i in IDS] + [_shapes_claim()]
    for d, c in zip(doc["claims"], claims, strict=True):
        assert schema.audit(d, preset="quick", seed=0,
                            definition=schema.definition_of(c, "quick"),
                            mutants=schema.mutants_of(c)) == [], d["id"]
    verdicts = [schema.derived(d)["verdict"] for d in doc["claims"]]
    assert verdicts == ["confirmed", "refuted", "refuted"]
    assert doc["summary"] == schema.summary_of(doc["claims"])


# ------------------- derived() (reading a report) and combine() (verifying) agree on the rules

_check = st.fixed_dictionaries({
    "passed": st.sampled_from([True, False, None]),
    "neutral": st.booleans(),
    "error": st.sampled_from([None, "Traceback: boom"]),
    "ratio": st.one_of(st.none(), st.sampled_from([0.0, 0.5, 1.0, 1.0, 2.5])),
    "counterexample": st.one_of(st.none(), st.fixed_dictionaries({"x": st.integers(0, 3)}),
                                st.just({"check": "given"})),
    "instance": st.one_of(st.none(), st.just({"n": 2})),
    "detail": st.sampled_from(["", "d"]),
})


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_check, max_size=6), st.sampled_from([k.value for k in ClaimKind]))
def test_derived_is_combine_and_tightness(checks: list[dict[str, Any]], kind: str) -> None:
    for k, c in enumerate(checks):
        c["name"] = f"c{k}"
    results = [CheckResult(kind="exact", measured=None, theoretical=None, **c) for c in checks]
    verdict, counterexample = combine(results)
    got = schema.derived({"kind": kind, "checks": checks})
    assert got["verdict"] == verdict.value and got["counterexample"] == counterexample
    assert got["tightness"] == tightness(ClaimKind(kind), results)
    assert got["errors"] == [{"check": r.name, "detail": r.detail} for r in results
                             if r.error is not None]


def test_the_replay_command_is_cores() -> None:
    assert schema.replay_command_text("a.b", "c", "quick", 3) == replay_command(
        "a.b", "c", "quick", 3)["command"]


# ------------------------------------------------------------ what the schema refuses, and how


@pytest.mark.parametrize("edit,where", [
    (lambda d: d["claims"][1].pop("checks"), r"claims\[1\] \(ocs.closed_form\): checks: missing"),
    (lambda d: d["claims"][1].update(verdict="banana"),
     r"claims\[1\] \(ocs.closed_form\): verdict: 'banana' is not one of"),
    (lambda d: d["claims"][0]["checks"][0].update(passed="yes"),
     r"claims\[0\] \(mifa.biased\): checks\[0\].passed: 'yes' is not of type"),
    (lambda d: d["claims"][1].update(erratum={"kind": "typo"}),
     r"claims\[1\] \(ocs.closed_form\): erratum.where: missing"),
    (lambda d: d["claims"][0]["power"][0].update(outcome="sure"),
     r"claims\[0\] \(mifa.biased\): power\[0\].outcome: 'sure' is not one of"),
    (lambda d: d["claims"][0].update(smuggled=1),
     r"claims\[0\] \(mifa.biased\): smuggled: not a field of a fedtheory report"),
    (lambda d: d["claims"].append(copy.deepcopy(d["claims"][0])),
     r"claims\[3\] \(mifa.biased\): id: the claim appears twice \(also claims\[0\]\)"),
    (lambda d: d.update(version="4"), r"version: report format '4'; this fedtheory reads"),
    (lambda d: d.pop("provenance"), r"provenance: missing"),
    (lambda d: d["claims"][0].update(seed=-1),
     r"claims\[0\] \(mifa.biased\): seed: -1 is less than the minimum"),
])
def test_a_malformed_report_is_refused_naming_file_claim_and_field(report, edit, where) -> None:
    path, doc = report
    edit(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=rf"^report {path}: {where}"):
        load_report(path)


@pytest.mark.parametrize("text,message", [
    ('{"a": NaN}', "NaN is not a JSON number"),
    ('{"a": 1, "a": 2}', "key 'a' appears twice"),
    ("[" * 100_000, "not readable JSON"),
    ("{", "not readable JSON"),
])
def test_json_is_read_strictly(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "r.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_report(path)


def test_only_checks_the_claim_asked_for(report) -> None:
    """show ID validates the document and that claim's entries: another claim's problem does
    not stop it; its own does, named by its place in the file."""
    path, doc = report
    doc["claims"][0]["checks"][0]["passed"] = "yes"
    path.write_text(json.dumps(doc))
    load_report(path, only="ocs.closed_form")
    with pytest.raises(ValueError, match=r"claims\[0\] \(mifa.biased\): checks\[0\].passed"):
        load_report(path, only="mifa.biased")


# ---------------------------------------------------------- what the audit catches, and how


def _first_failed(d: dict[str, Any]) -> int:
    return next(k for k, c in enumerate(d["checks"]) if c["passed"] is False)


def _tamper_flip_failed_check(d):  # a refuted claim made to look confirmed, consistently
    k = _first_failed(d)
    d["checks"][k].update(passed=True, counterexample=None)
    d.update(verdict="confirmed", counterexample=None)


TAMPERS = {
    "verdict edited": (1, lambda d: d.update(verdict="confirmed"), "verdict: 'confirmed'"),
    "failed check passed, counterexample kept": (
        1, lambda d: d["checks"][_first_failed(d)].update(passed=True),
        "counterexample: a check that passed has no counterexample"),
    "passed check given a counterexample": (
        0, lambda d: d["checks"][0].update(counterexample={"x": 1}),
        "checks[0].counterexample: a check that passed"),
    "confirmed with a failed check": (
        0, lambda d: (d["checks"][0].update(passed=False), d.update(verdict="confirmed")),
        "checks[0].counterexample.replay: not the command"),
    "power table on a refuted claim": (
        1, lambda d: d.update(power=[{"mutant": "m", "kind": "factor", "target": "t",
                                      "scale": "1", "outcome": "caught", "by": ["x"],
                                      "instance": None}]),
        "power: a refuted claim has no power table"),
    "power outcome caught by nothing": (
        0, lambda d: d["power"][0].update(outcome="caught", by=[]), "power[0].by: empty"),
    "power entry dropped": (0, lambda d: d["power"].pop(), "power: its mutants are not"),
    "errors edited": (2, lambda d: d.update(errors=[]), "errors: what is stored is not"),
    "counterexample edited": (1, lambda d: d["counterexample"].update(norms=[0]),
                              "counterexample: what is stored is not"),
    "tightness edited": (2, lambda d: d["tightness"].update(ratio=0.5),
                         "tightness: what is stored is not"),
    "replay command edited": (
        1, lambda d: d["checks"][_first_failed(d)]["counterexample"]["replay"].update(
            command="rm -rf ~"), "counterexample.replay: not the command"),
    "undecided made decided": (2, lambda d: d["checks"][1].update(undecided=None),
                               "checks[1].undecided"),
    "figure made to decide": (2, lambda d: d["checks"][2].update(passed=True),
                              "checks[2].passed: True, but a figure decides nothing"),
    "a check that raised made to pass": (2, lambda d: d["checks"][3].update(passed=True),
                                         "checks[3].passed: True, but the check raised"),
    "convex check that solved nothing": (
        0, lambda d: d["checks"][0].update(kind="convex", solves=[]), "checks[0].solves"),
    "statement edited": (0, lambda d: d.update(statement="anything"),
                         "statement: differs from the claim's definition"),
    "check renamed": (0, lambda d: d["checks"][0].update(name="other"),
                      "checks: differs from the claim's definition"),
    "seed edited": (0, lambda d: d.update(seed=7), "seed: 7, but the report's is 0"),
    "family edited": (0, lambda d: d.update(family="ocs"), "family: 'ocs' is not the family"),
    "a check that failed made to pass, consistently": (
        1, _tamper_flip_failed_check, "digest: does not match"),
}


@pytest.mark.parametrize("name", list(TAMPERS))
def test_every_edit_is_caught(report, name: str) -> None:
    """Each edit is caught by its own rule (the digest redone, as a careful editor would), and
    by the digest when it is left as it was. An edit that keeps the entry consistent and
    redoes the digest is a forgery no digest can catch: the last case, without the redone
    digest, is the digest's to catch."""
    _, doc = report
    k, edit, message = TAMPERS[name]
    claims = [get_claim(i) for i in IDS] + [_shapes_claim()]
    d = copy.deepcopy(doc["claims"][k])

    def problems(d: dict[str, Any]) -> list[str]:
        return schema.audit(d, preset="quick", seed=0,
                            definition=schema.definition_of(claims[k], "quick"),
                            mutants=schema.mutants_of(claims[k]))

    assert problems(d) == []
    edit(d)
    found = problems(d)
    assert any(p.startswith("digest: does not match") for p in found), found
    assert any(message in p for p in found), (message, found)
    if message.startswith("digest"):
        return
    d["digest"] = schema.digest(d)
    found = problems(d)
    assert any(message in p for p in found), (message, found)


def test_to_json_summary_and_entries(results) -> None:
    doc = to_json(results, 0, "quick", prov={})
    assert doc["version"] == schema.REPORT_FORMAT
    assert all(e["digest"] == schema.digest(e) for e in doc["claims"])
    assert doc["summary"] == {"confirmed": 1, "refuted": 2}
