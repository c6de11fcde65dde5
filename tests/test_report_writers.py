"""The output formats of ``verify`` are one file each (fedtheory/report/formats/): a throw-away
format dropped into the folder gets its option, its path checked before any work, its place in
the ``--resume`` command and in the summary, with no other edit (issue 31)."""

import sys
import textwrap

import pytest

import fedtheory.report.formats as formats
from fedtheory.cli import build_parser, main
from fedtheory.report import ReportWriter, writers
from fedtheory.run_session import resume_command

#: a cheap quick claim (symbolic, refuted)
CLAIM = "ocs.closed_form"

#: The throw-away format: one CSV row per claim (the whole of what a new format needs).
CSV_FORMAT = textwrap.dedent('''
    """A throw-away output format: one CSV row per claim (claim, verdict, checks passed)."""
    import csv
    import io

    from fedtheory.report import atomic_write_text, check_writable_file
    from fedtheory.report.formats import ReportWriter


    class CsvReport(ReportWriter):
        name = "CSV table"
        option = "--csv"
        metavar = "PATH"
        help = "write one CSV row per claim here"

        def check(self, path):
            check_writable_file(path, self.option)

        def write(self, path, results, seed, preset, prov, complete=True):
            out = io.StringIO()
            rows = csv.writer(out, lineterminator="\\n")
            rows.writerow(["claim", "verdict", "passed"])
            for r in results:
                rows.writerow([r.id, r.verdict.value, sum(c.passed is True for c in r.checks)])
            return atomic_write_text(path, out.getvalue(), self.option)


    WRITER = CsvReport()
''')


def _add_format(monkeypatch, folder, name, text):
    """``name``.py with ``text`` in ``folder``, listed with the formats (the folder joins the
    package's path); the module is forgotten after the test."""
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.py").write_text(text)
    monkeypatch.setattr(formats, "__path__", [*formats.__path__, str(folder)])
    monkeypatch.delitem(sys.modules, f"{formats.__name__}.{name}", raising=False)


@pytest.fixture
def csv_format(tmp_path, monkeypatch):
    _add_format(monkeypatch, tmp_path / "more_formats", "csv_report", CSV_FORMAT)
    yield
    sys.modules.pop(f"{formats.__name__}.csv_report", None)


def test_the_formats_are_the_files_of_the_folder():
    assert [(w.option, w.metavar, w.name) for w in writers()] == [
        ("--json", "PATH", "JSON report"), ("--report", "DIR", "Markdown report")]
    assert all(isinstance(w, ReportWriter) for w in writers())


def test_a_new_format_file_gets_its_option(csv_format, capsys):
    assert [w.option for w in writers()] == ["--csv", "--json", "--report"]
    with pytest.raises(SystemExit):
        main(["verify", "--help"])
    assert "--csv PATH" in capsys.readouterr().out
    args = build_parser().parse_args(["verify", CLAIM, "--quick", "--csv", "t.csv"])
    args.targets = [CLAIM]
    assert "--csv t.csv" in resume_command(args, "quick", "r.json")


def test_a_new_format_is_written_and_named_in_the_summary(csv_format, tmp_path, capsys):
    out = tmp_path / "table.csv"
    assert main(["verify", CLAIM, "--quick", "--csv", str(out), "--jobs", "1",
                 "--no-progress", "--no-record"]) == 0
    assert out.read_text().splitlines() == ["claim,verdict,passed", f"{CLAIM},refuted,2"]
    assert f"written: CSV table {out}" in capsys.readouterr().out


def test_a_new_formats_path_is_checked_before_any_work(csv_format, tmp_path, capsys,
                                                        monkeypatch):
    def no_work(*a, **k):
        raise AssertionError("work started before the output paths were checked")

    monkeypatch.setattr("fedtheory.runner.run_jobs", no_work)
    (tmp_path / "adir").mkdir()
    assert main(["verify", CLAIM, "--quick", "--csv", str(tmp_path / "adir")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fedtheory: error: --csv") and "is a directory" in err


@pytest.mark.parametrize("text,message", [
    ("WRITER = 'not a writer'\n", "WRITER must be a ReportWriter instance, got str"),
    ("from fedtheory.report.formats.json_report import JsonReport\nWRITER = JsonReport()\n",
     "the option '--json' is not a new long option"),
])
def test_a_format_file_that_is_no_writer_is_named(tmp_path, monkeypatch, text, message):
    _add_format(monkeypatch, tmp_path / "bad_formats", "bad_format", text)
    with pytest.raises(TypeError, match=message):
        writers()
