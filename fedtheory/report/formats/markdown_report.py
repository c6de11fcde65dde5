"""The Markdown report (``verify --report DIR``): ``DIR/report.md``
(:func:`fedtheory.report.write_markdown`) and the claims' figures in ``DIR/figures``, written
when the run ends."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fedtheory.report.files import check_writable_dir
from fedtheory.report.formats import ReportWriter
from fedtheory.report.markdown import write_markdown

if TYPE_CHECKING:
    from fedtheory.claimkit.core import ClaimResult

__all__ = ["WRITER", "MarkdownReport"]


class MarkdownReport(ReportWriter):
    """The Markdown report: a folder with ``report.md`` and the figures."""

    name = "Markdown report"
    option = "--report"
    metavar = "DIR"
    help = "write report.md and figures into DIR"
    figures = "figures"

    def check(self, path: str) -> None:
        """A directory path (not empty) whose ``report.md`` names nothing yet or a regular
        file, the directory and its ``figures/`` writable."""
        if not str(path).strip():
            raise ValueError(f"{self.option} must be a directory path, got {path!r}")
        check_writable_dir(path, self.option)

    def write(self, path: str, results: Sequence[ClaimResult | Mapping[str, Any]], seed: int,
              preset: str, prov: dict[str, Any], complete: bool = True) -> Path:
        """``report.md`` in ``path`` (:func:`fedtheory.report.write_markdown`)."""
        return write_markdown(path, results, seed, preset, prov)  # type: ignore[arg-type]


WRITER = MarkdownReport()
