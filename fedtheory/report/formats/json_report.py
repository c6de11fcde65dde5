"""The JSON report (``verify --json PATH``): the document of :mod:`fedtheory.report.document`,
rewritten as each claim finishes; what ``--resume``, ``show --from`` and ``errata --from``
read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fedtheory.report.document import write_json
from fedtheory.report.files import check_writable_file
from fedtheory.report.formats import ReportWriter

if TYPE_CHECKING:
    from fedtheory.claimkit.core import ClaimResult

__all__ = ["WRITER", "JsonReport"]


class JsonReport(ReportWriter):
    """The JSON report: a file, written atomically after every claim."""

    name = "JSON report"
    option = "--json"
    metavar = "PATH"
    help = "write the JSON report here (rewritten as each claim finishes)"
    incremental = True
    readable = True

    def check(self, path: str) -> None:
        """A file path that names nothing yet or a regular file, in a writable folder."""
        check_writable_file(path, self.option)

    def write(self, path: str, results: Sequence[ClaimResult | Mapping[str, Any]], seed: int,
              preset: str, prov: dict[str, Any], complete: bool = True) -> Path:
        """The document (:func:`fedtheory.report.write_json`), ``complete`` as given."""
        return write_json(path, results, seed, preset, prov, complete=complete)


WRITER = JsonReport()
