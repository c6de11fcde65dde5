"""Reports of a verification run: the JSON document, the Markdown report, the run record.

One room per job, every name importable from here as before:

* :mod:`~fedtheory.report.run_provenance`: where and when a result was made
  (:func:`provenance`);
* :mod:`~fedtheory.report.files`: atomic writes, and the output paths checked before any
  work (:func:`atomic_write_text`, :func:`check_writable_file`, :func:`check_writable_dir`);
* :mod:`~fedtheory.report.document`: the JSON report, its entries and volatile fields, the
  run record (:func:`to_json`, :func:`write_json`, :func:`without_volatile`, :data:`RECORD_PATH`);
* :mod:`~fedtheory.report.reading`: a report read back, strictly and bounded
  (:func:`read_json`, :func:`load_report`, :func:`result_from_dict`);
* :mod:`~fedtheory.report.resume`: which entries read back may be used (:func:`unresolved`,
  :func:`resume_plan`);
* :mod:`~fedtheory.report.counts` and :mod:`~fedtheory.report.terminal`: the checks and
  verdicts in words, the tables a run prints;
* :mod:`~fedtheory.report.markdown`: ``report.md`` (:func:`write_markdown`);
* :mod:`~fedtheory.report.writers` and :mod:`fedtheory.report.formats`: the output formats of
  ``verify`` (one file each, found by listing the folder: :func:`writers`).

Every report carries its **provenance** in a field of its own (:func:`provenance`): the
fedtheory version, the git commit and whether the tree was dirty, the preset and seed, Python,
the packages and BLAS that computed it, the command and the time. Each claim entry carries a
``digest`` of itself (:func:`fedtheory.schema.digest`). Everything outside ``provenance``, the
timings (``seconds``), the figures' paths and the digests depends only on the preset, the seed
and the code, so two runs with the same seed and preset give byte-identical documents there
(:func:`without_volatile`).

A report read back (``verify --resume``, ``show``, ``catalogue --from``) is untrusted input:
:func:`load_report` checks it against the one schema (:mod:`fedtheory.schema`) and names the
file, the claim and the field of any problem; verdicts are recomputed from the stored checks,
never read from the file; :func:`resume_plan` keeps only the entries that agree with their
checks, their digest and the claim's definition, and runs the others again.

Nothing is written that the user did not ask for, except the **run record**
``.fedtheory/last_run.json`` in the working directory (the JSON report of the last
``fedtheory verify`` run there, provenance included, rewritten as each claim finishes with
``"complete": false`` until the run ends), which ``fedtheory show`` reads when no
``--from REPORT.json`` is given and ``--resume`` continues from after an interrupt. Every file
is written atomically (a temporary file in the same folder, then :func:`os.replace`), so a
reader never sees half a report and concurrent runs never mix their results: the last one to
finish wins, and says who it was. A file is written only where nothing is or a regular file is:
a symbolic link, a device (``/dev/null``), a FIFO, a socket or a directory at an output's path
is an error naming the option, before any work and again at the rename
(:mod:`fedtheory.safefiles`); fedtheory never writes through a link nor replaces one.

A report is read with a bounded read of a regular file (at most
:data:`fedtheory.safefiles.MAX_REPORT_BYTES`, nested at most :data:`MAX_REPORT_DEPTH` deep), and
an entry is used only when its id is a claim loaded here (:func:`unresolved`).
"""

from __future__ import annotations

from fedtheory.report.counts import (
    check_counts,
    checks_summary,
    grade_counts,
    verdict_label,
)
from fedtheory.report.document import (
    RECORD_PATH,
    REPORT_VERSION,
    VOLATILE,
    claim_file,
    entry,
    to_json,
    without_volatile,
    write_json,
    write_record,
)
from fedtheory.report.files import (
    atomic_write_text,
    check_writable_dir,
    check_writable_file,
)
from fedtheory.report.formats import ReportWriter, writers
from fedtheory.report.markdown import (
    certified_lines,
    erratum_lines,
    figure_alt,
    papers_lines,
    provenance_lines,
    rate_lines,
    setup_lines,
    source_text,
    write_markdown,
)
from fedtheory.report.reading import (
    MAX_REPORT_DEPTH,
    load_report,
    nesting_depth,
    read_json,
    result_from_dict,
)
from fedtheory.report.resume import (
    Resume,
    loaded_definition,
    resume_plan,
    source_changes,
    unresolved,
)
from fedtheory.report.run_provenance import (
    provenance,
)
from fedtheory.report.terminal import (
    certified_summary,
    power_summary,
    verdict_table,
)

__all__ = [
    "MAX_REPORT_DEPTH",
    "RECORD_PATH",
    "REPORT_VERSION",
    "ReportWriter",
    "Resume",
    "VOLATILE",
    "atomic_write_text",
    "certified_lines",
    "certified_summary",
    "check_counts",
    "check_writable_dir",
    "check_writable_file",
    "checks_summary",
    "claim_file",
    "entry",
    "erratum_lines",
    "figure_alt",
    "grade_counts",
    "load_report",
    "loaded_definition",
    "nesting_depth",
    "papers_lines",
    "power_summary",
    "provenance",
    "provenance_lines",
    "rate_lines",
    "read_json",
    "result_from_dict",
    "resume_plan",
    "setup_lines",
    "source_changes",
    "source_text",
    "to_json",
    "unresolved",
    "verdict_label",
    "verdict_table",
    "without_volatile",
    "write_json",
    "write_markdown",
    "write_record",
    "writers",
]
