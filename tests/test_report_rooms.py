"""fedtheory.report is a package of rooms, one per job (issue 31); every name the module
``fedtheory/report.py`` had is still imported from ``fedtheory.report``, without a warning, and
each lives in its room."""

import subprocess
import sys
from pathlib import Path

import fedtheory.report

#: The public names of fedtheory/report.py before the split (main 7d5780f).
NAMES = (
    "MAX_REPORT_DEPTH", "RECORD_PATH", "REPORT_VERSION", "Resume", "VOLATILE",
    "atomic_write_text", "certified_lines", "certified_summary", "check_counts",
    "check_writable_dir", "check_writable_file", "checks_summary", "claim_file", "entry",
    "erratum_lines", "figure_alt", "grade_counts", "load_report", "loaded_definition",
    "nesting_depth", "papers_lines", "power_summary", "provenance", "provenance_lines",
    "rate_lines", "read_json", "result_from_dict", "resume_plan", "setup_lines",
    "source_changes", "source_text", "to_json", "unresolved", "verdict_label", "verdict_table",
    "without_volatile", "write_json", "write_markdown", "write_record",
)

#: Where each job lives (the name of the room: the functions and classes it defines).
ROOMS = {
    "run_provenance": ("provenance",),
    "files": ("atomic_write_text", "check_writable_dir", "check_writable_file"),
    "document": ("entry", "to_json", "without_volatile", "write_json", "write_record"),
    "reading": ("read_json", "load_report", "result_from_dict", "nesting_depth"),
    "resume": ("Resume", "resume_plan", "source_changes", "unresolved", "loaded_definition"),
    "counts": ("check_counts", "checks_summary", "verdict_label", "grade_counts"),
    "terminal": ("verdict_table", "certified_summary", "power_summary"),
    "markdown": ("write_markdown", "certified_lines", "provenance_lines", "source_text"),
}


def test_every_former_name_imports_from_the_package_without_a_warning():
    code = f"from fedtheory.report import {', '.join(NAMES)}"
    proc = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True,
                          text=True)
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    assert set(NAMES) <= set(fedtheory.report.__all__)


def test_each_job_lives_in_its_room_under_600_lines():
    for room, names in ROOMS.items():
        for name in names:
            assert getattr(fedtheory.report, name).__module__ == f"fedtheory.report.{room}", name
    folder = Path(fedtheory.report.__file__).parent
    for path in [*folder.glob("*.py"), *folder.glob("formats/*.py")]:
        assert len(path.read_text().splitlines()) < 600, path
