"""The output formats of ``fedtheory verify``: one file each in this folder.

A format is a module here that defines ``WRITER``, an instance of a :class:`ReportWriter`:
its name, the command-line option that asks for it (``--json PATH``, ``--report DIR``), how it
checks its output path before any work and how it writes. :func:`writers` finds them by listing
this folder (:func:`pkgutil.iter_modules`), in the order of their file names, so adding a format
(a CSV table, say) is one new file here: ``verify`` gets its option, checks its path before any
work, names it in the ``--resume`` command of a stopped run and in its summary, without an edit
elsewhere.

>>> [w.option for w in writers()]
['--json', '--report']
"""

from __future__ import annotations

import importlib
import pkgutil
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from fedtheory.claimkit.core import ClaimResult

__all__ = ["ReportWriter", "writers"]


class ReportWriter(ABC):
    """An output format of a ``verify`` run, asked for by the option :attr:`option`.

    The run calls :meth:`check` with the option's value before any work (a bad path is an
    error naming the option, before anything is written), then :meth:`write`: once at the end,
    or, for an :attr:`incremental` format, after each claim finishes (with ``complete=False``
    until the run ends, so that an interrupted run keeps what finished).
    """

    #: What the run's summary calls the output (``"JSON report"``).
    name: ClassVar[str]
    #: The command-line option that asks for it (``"--json"``) and its argument (``"PATH"``).
    option: ClassVar[str]
    metavar: ClassVar[str]
    #: The option's help text.
    help: ClassVar[str]
    #: Rewritten as each claim finishes (a stopped run keeps it; ``--resume`` reads it); else
    #: written once, when the run ends.
    incremental: ClassVar[bool] = False
    #: A report fedtheory reads back (``verify --resume``, ``show --from``, ``errata
    #: --from``): the commands the summary suggests name it.
    readable: ClassVar[bool] = False
    #: The folder inside the output where the claims' figures are drawn (``"figures"``), or
    #: None: the format has no figures. (One format of a run holds them: the first given.)
    figures: ClassVar[str | None] = None

    @property
    def dest(self) -> str:
        """The option's attribute on the parsed arguments (``--json``: ``json``)."""
        return self.option.lstrip("-").replace("-", "_")

    def figure_dir(self, path: str) -> str | None:
        """Where the figures go for the output ``path`` (None: this format has none)."""
        return str(Path(path) / self.figures) if self.figures else None

    @abstractmethod
    def check(self, path: str) -> None:
        """Before any work: ``ValueError`` (or :class:`fedtheory.safefiles.UnsafePath`)
        naming :attr:`option` unless the output can be written at ``path``."""

    @abstractmethod
    def write(self, path: str, results: Sequence[ClaimResult | Mapping[str, Any]], seed: int,
              preset: str, prov: dict[str, Any], complete: bool = True) -> Path:
        """Write the output at ``path``; the file written. ``results`` are the claims'
        results (an :attr:`incremental` format is given their report entries,
        :func:`fedtheory.report.entry`, as the run goes); an ``OSError`` when it cannot be
        written."""


def writers() -> list[ReportWriter]:
    """The output formats: the ``WRITER`` of every module in this folder, in the order of
    their file names; ``TypeError`` when one is not a :class:`ReportWriter` or two answer the
    same option."""
    found: list[ReportWriter] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        writer = getattr(module, "WRITER", None)
        if not isinstance(writer, ReportWriter):
            raise TypeError(f"{module.__name__}: WRITER must be a ReportWriter instance, got "
                            f"{type(writer).__name__}")
        if not writer.option.startswith("--") or any(w.option == writer.option for w in found):
            raise TypeError(f"{module.__name__}: the option {writer.option!r} is not a new "
                            "long option")
        found.append(writer)
    return found
