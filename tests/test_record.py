"""One result record (fedtheory.vocabulary.record): the report entry ClaimResult.to_dict writes,
the result ClaimResult.from_dict (report.result_from_dict) reads back, the schema's claim
object and the index's ClaimInfo are all the fields of CLAIM_FIELDS; a field added to one of
them and not to the table fails here."""

from __future__ import annotations

import dataclasses

from fedtheory import index, report, schema
from fedtheory.claims import CheckResult, Claim, ClaimKind, ClaimResult, Evidence
from fedtheory.vocabulary import record


def _result() -> ClaimResult:
    c = Claim("zz.record", "zz", "001, test", "a title", "x <= 1", ClaimKind.UPPER_BOUND,
              derivation="d", finding="f", restatement="r")

    @c.check("exact")
    def ok(ctx):
        return Evidence(True, 0.5, 1.0, "fine", ratio=0.5, instance={"n": 2})

    @c.check("monte_carlo")
    def over(ctx):
        return Evidence(False, 2.0, 1.0, "over", counterexample={"x": 2})

    return c.verify()


def _names(when_set: bool = True) -> list[str]:
    return [f.name for f in record.CLAIM_FIELDS
            if not f.by_report and (when_set or not f.when_set)]


def test_to_dict_writes_the_table_in_its_order() -> None:
    r = _result()
    assert list(r.to_dict()) == _names(when_set=False)
    r.certified, r.grade, r.readings = {"status": "error"}, "confirmed", []
    assert list(r.to_dict()) == _names()
    assert list(report.entry(r)) == _names() + ["digest"]  # origin: a registered claim's


def test_the_result_record_has_the_tables_fields() -> None:
    mine = {f.name for f in dataclasses.fields(ClaimResult)}
    assert mine == set(record.RESULT_FIELDS) | {"drawings"}
    assert [f.name for f in dataclasses.fields(CheckResult)] == list(record.CHECK_FIELDS)


def test_from_dict_reads_back_what_to_dict_wrote() -> None:
    d = _result().to_dict()
    back = report.result_from_dict(d)
    assert back.to_dict() == d
    assert ClaimResult.from_dict(d).to_dict() == d
    assert back.verdict.value == "refuted" and back.tightness["check"] == "ok"


def test_the_schema_claim_object_is_the_table() -> None:
    claim = schema.CLAIM_SCHEMA
    assert set(claim["properties"]) == {f.name for f in record.CLAIM_FIELDS}
    assert set(claim["required"]) == {f.name for f in record.CLAIM_FIELDS if f.required}
    assert list(schema.CHECK_SCHEMA["properties"]) == list(record.CHECK_FIELDS)
    assert schema.DEFINITION_FIELDS == record.DEFINITION_FIELDS
    assert set(schema.definition_of(_claim_of(), "quick")) == {*record.DEFINITION_FIELDS,
                                                               "checks"}


def _claim_of() -> Claim:
    return Claim("zz.def", "zz", "001", "t", "s", ClaimKind.IDENTITY)


def test_the_index_keeps_the_tables_texts() -> None:
    mine = {f.name for f in dataclasses.fields(index.ClaimInfo)}
    assert mine == set(record.INDEX_FIELDS) | set(index.INDEX_ONLY)
    assert set(record.INDEX_FIELDS) <= set(record.DEFINITION_FIELDS)
    info = index.info_from_claim(_claim_of())
    assert (info.id, info.kind, info.title) == ("zz.def", "identity", "t")


def test_a_field_missing_from_the_schema_fails_at_import() -> None:
    import pytest

    with pytest.raises(RuntimeError, match="disagree"):
        schema._fields_of({"id": {}}, ["id", "new"], "a claim")
