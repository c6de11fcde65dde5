"""The fields of a claim's result, once: what a report entry holds, in its order.

A claim's result has four shapes: the record :class:`~fedtheory.claims.ClaimResult` and its
``to_dict`` (the report entry), the entry read back (``ClaimResult.from_dict``, which
:func:`fedtheory.report.result_from_dict` calls), the report schema's claim object
(:data:`fedtheory.schema.CLAIM_SCHEMA`) and what the index shows without importing a claim
(:class:`fedtheory.index.ClaimInfo`). All four are made from :data:`CLAIM_FIELDS`: a field
added here is written, read, validated and (if it is a text of the definition) indexed; a
field of one of them missing here fails ``tests/test_record.py``.

>>> [f.name for f in CLAIM_FIELDS][:4]
['id', 'family', 'seed_ref', 'kind']
>>> DEFINITION_FIELDS[-1], "verdict" in RECOMPUTED
('restatement', True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["CHECK_FIELDS", "CHECK_WHEN_SET", "CLAIM_FIELDS", "DEFINITION_FIELDS",
           "INDEX_FIELDS", "RECOMPUTED", "RESULT_FIELDS", "WRITTEN_BY_REPORT", "RecordField",
           "optional_fields"]

_REQUIRED = object()


@dataclass(frozen=True)
class RecordField:
    """One field of a claim's report entry.

    Parameters
    ----------
    name:
        The key of the entry (and the attribute of the result, unless ``by_report``).
    default:
        What an entry read back without it gives (None: a field written only when set);
        none: it must be there.
    when_set:
        Written only when not None (absent from older reports, and from runs that do not
        make it: ``--certify``, a grade, readings): the one kind of field a schema-valid
        entry may lack.
    definition:
        Repeated from the claim's definition (not from running it): it must be the claim's as
        the registry defines it now (:func:`fedtheory.schema.entry_definition`).
    index:
        A text of the definition the index keeps, so that ``list`` and ``show`` need not
        import the claim (:class:`fedtheory.index.ClaimInfo`).
    recomputed:
        Implied by the checks: recomputed on reading, never taken from the entry.
    by_report:
        Added by the report writer beside the result (where the claim was defined, the
        entry's digest), not a field of the result.
    """

    name: str
    default: Any = _REQUIRED
    when_set: bool = False
    definition: bool = False
    index: bool = False
    recomputed: bool = False
    by_report: bool = False

    @property
    def required(self) -> bool:
        """Whether a schema-valid entry must hold it."""
        return not self.when_set

    def read(self, entry: Any) -> Any:
        """Its value in ``entry`` (a mapping), or its default when the entry lacks it."""
        if self.default is _REQUIRED or self.name in entry:
            return entry[self.name]
        return self.default


def _text(name: str, index: bool = True) -> RecordField:
    return RecordField(name, "", definition=True, index=index)


#: The fields of a report entry, in the order an entry holds them.
CLAIM_FIELDS: tuple[RecordField, ...] = (
    RecordField("id", definition=True, index=True),
    RecordField("family", definition=True, index=True),
    RecordField("seed_ref", definition=True, index=True),
    RecordField("kind", definition=True, index=True),
    _text("title"),
    RecordField("statement", definition=True, index=True),
    _text("derivation"),
    _text("finding"),
    RecordField("verdict", recomputed=True),
    RecordField("checks"),
    RecordField("counterexample", recomputed=True),
    RecordField("errors", recomputed=True),
    RecordField("tightness", recomputed=True),
    RecordField("erratum", None, definition=True),
    RecordField("setup", None, definition=True),
    _text("restatement"),
    RecordField("power", None),
    RecordField("certified", None, when_set=True),
    RecordField("grade", None, when_set=True, recomputed=True),
    RecordField("readings", None, when_set=True, recomputed=True),
    RecordField("preset"),
    RecordField("seed"),
    RecordField("seconds", 0.0),
    RecordField("origin", None, when_set=True, by_report=True),
    RecordField("digest", by_report=True),
)

#: The fields of the result record (:class:`~fedtheory.claims.ClaimResult`'s, beside what it
#: keeps for the layer above: ``drawings``) but ``errors``, a property of it.
RESULT_FIELDS: tuple[str, ...] = tuple(f.name for f in CLAIM_FIELDS
                                       if not f.by_report and f.name != "errors")
#: The fields an entry repeats from the claim's definition.
DEFINITION_FIELDS: tuple[str, ...] = tuple(f.name for f in CLAIM_FIELDS if f.definition)
#: The texts of the definition the index keeps.
INDEX_FIELDS: tuple[str, ...] = tuple(f.name for f in CLAIM_FIELDS if f.index)
#: The fields implied by the checks, recomputed on reading.
RECOMPUTED: tuple[str, ...] = tuple(f.name for f in CLAIM_FIELDS if f.recomputed)
#: The fields the report writer adds beside the result.
WRITTEN_BY_REPORT: tuple[str, ...] = tuple(f.name for f in CLAIM_FIELDS if f.by_report)

#: The fields of a check's entry (:class:`~fedtheory.claims.CheckResult`), in order; ``grade``
#: only when graded.
CHECK_FIELDS: tuple[str, ...] = (
    "name", "kind", "passed", "measured", "theoretical", "detail", "tolerance", "alpha",
    "counterexample", "figures", "seconds", "error", "neutral", "ratio", "instance", "proof",
    "search", "reads", "mutated", "undecided", "solves", "tests", "grade",
)
#: The check fields written only when set.
CHECK_WHEN_SET: tuple[str, ...] = ("grade",)


def optional_fields() -> tuple[str, ...]:
    """The entry fields a schema-valid entry may lack."""
    return tuple(f.name for f in CLAIM_FIELDS if not f.required)
