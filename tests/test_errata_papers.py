"""The papers an errata page cites: the seeds as papers (authors, venue and year, arXiv id; no
internal file name), and your own paper, declared beside your claim files and made into a page
the same way (docs/lemmas.md). The declaration is untrusted text: checked, read as literals,
escaped."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fedtheory.claims import get_claim
from fedtheory.errata import _paper_literal as paper_literal
from fedtheory.errata import write_errata
from fedtheory.papers import PAPERS, Paper, claim_references
from fedtheory.report import write_json

from ._in_process import cli_in_process

pytestmark = pytest.mark.xdist_group("errata")

LEMMAS = Path(__file__).resolve().parents[1] / "docs" / "lemmas"
#: What no page, snippet or report.md may show: the seed texts' internal names.
# the seed files' internal names, and the text versions in them (a commit hash may be on a page)
INTERNAL = re.compile("|".join([r"\d{3}_[0-9a-f]{16}", "seed text", "seed file",
                                *(p.text_version for p in PAPERS.values() if p.text_version)]))


def test_seeds_are_cited_as_papers() -> None:
    """Each bibliographic field as verified (papers.py's notes say where each was found)."""
    fedau, ocs, fdms = PAPERS["001"], PAPERS["002"], PAPERS["004"]
    assert (fedau.arxiv, fedau.year) == ("2306.03401", 2024) and "ICLR" in fedau.venue
    assert (ocs.arxiv, ocs.year) == ("2010.13723", 2022) and "TMLR" in ocs.venue
    assert (fdms.arxiv, fdms.year, fdms.venue) == ("2205.13222", 2022, "arXiv preprint")
    assert fedau.citation.startswith("Shiqiang Wang, Mingyue Ji. A Lightweight Method")
    assert "arXiv:2205.13222" in fdms.citation and "Heqiang Wang, Jie Xu." in fdms.citation
    notes, lecture = PAPERS["000"].citation, PAPERS["003"].citation
    assert notes.endswith("Notes, unsigned, dated July 26, 2021.")
    assert lecture.startswith("Kun Yuan. Optimization for Deep Learning, Lecture 14")
    assert "no date stated" in lecture
    for paper in PAPERS.values():
        assert not INTERNAL.search(paper.citation), paper.citation


@pytest.fixture(scope="module")
def seed_report(verified: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    claims = ("ocs.closed_form", "ocs.closed_form.corrected", "is.unbiased",
              "fdms.nonfriend_probability")
    results = [verified.result(get_claim(cid)) for cid in claims]
    path = tmp_path_factory.mktemp("cite-report") / "r.json"
    write_json(path, results, 0, "quick")
    return path


@pytest.fixture(scope="module")
def seed_pages(seed_report: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return write_errata(seed_report, tmp_path_factory.mktemp("cite-pages"))


def test_pages_cite_papers_and_places_not_files(seed_pages: list[Path]) -> None:
    by_name = {p.name: p.read_text(encoding="utf-8") for p in seed_pages}
    for name, text in by_name.items():
        assert not INTERNAL.search(text), (name, INTERNAL.search(text))
    ocs = by_name["002-ocs.html"]
    assert "Wenlin Chen, Samuel Horváth, Peter Richtárik" in ocs
    assert "Transactions on Machine Learning Research (TMLR), 2022" in ocs
    assert 'href="https://arxiv.org/abs/2010.13723"' in ocs
    assert "% Errata for: Wenlin Chen, Samuel Horváth" in by_name["002-ocs.tex"]
    fdms = by_name["004-fl-fdms.html"]
    assert "arXiv:2205.13222" in fdms and "Section 5.2, Lemma 2" in fdms
    assert "Notes, unsigned, dated July 26, 2021" in by_name["000-mifa-notes.html"]


def test_every_claim_of_a_page_shows_its_statement(seed_pages: list[Path]) -> None:
    """The cards of the other claims give each one's statement as a formula, not only its
    title."""
    checked = 0
    for page in (p for p in seed_pages if p.suffix == ".html"):
        html = page.read_text(encoding="utf-8")
        table = html[html.index('id="confirmed"'):html.index('id="provenance"')]
        rows = table.count('<div class="claim"')  # one card per claim
        assert table.count("<math") >= rows, page.name
        checked += rows
    assert checked >= 3


def test_a_refuted_claim_shows_no_tightness(seed_pages: list[Path]) -> None:
    """A tightness ratio says how close a bound that holds comes; a refuted one has none."""
    fdms = next(p for p in seed_pages if p.name == "004-fl-fdms.html").read_text("utf-8")
    errata = fdms[fdms.index('id="errata"'):fdms.index('id="confirmed"')]
    assert "Tightness ratio" not in errata


# ------------------------------------------------------------------------- your own paper


@pytest.fixture()
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """``fedtheory ARGS`` run in this process from a folder; the claims and papers it loads
    from files are forgotten afterwards (tests/test_sources.py's fixture, papers too)."""
    with cli_in_process(monkeypatch, capsys) as run:
        yield run


@pytest.fixture(scope="module")
def verified_lemmas(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """docs/lemmas (its claims and its _paper.py) copied outside the repository and verified
    (``fedtheory verify --json w.json``, a process of its own)."""
    folder = tmp_path_factory.mktemp("own") / "lemmas"
    folder.mkdir()
    for f in LEMMAS.glob("*.py"):
        shutil.copy(f, folder / f.name)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    ran = subprocess.run([sys.executable, "-m", "fedtheory", "verify", "--claims", "lemmas",
                          "--family", "hetero", "--quick", "--json", "w.json", "--no-progress",
                          "--no-record", "--jobs", "1"], cwd=folder.parent, env=env,
                         capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stderr[-2000:]
    # the next command it suggests loads the claim files, whose folder declares the paper
    assert re.search(r"errata --from w\.json --out errata --claims \S*hetero_\w+\.py --claims",
                     ran.stdout), ran.stdout[-1500:]
    return folder


@pytest.fixture()
def lemmas(verified_lemmas: Path) -> Any:
    """The verified folder; its _paper.py as docs/lemmas has it again after the test, and no
    errata folder left."""
    yield verified_lemmas
    shutil.copy(LEMMAS / "_paper.py", verified_lemmas / "_paper.py")
    for name in ("e", "e2"):
        shutil.rmtree(verified_lemmas.parent / name, ignore_errors=True)


def test_your_own_paper_gets_its_page(cli: Any, lemmas: Path) -> None:
    ran = cli(lemmas.parent, "errata", "--claims", "lemmas", "--from", "w.json", "--out", "e")
    assert ran.returncode == 0, ran.stderr[-2000:]
    out = lemmas.parent / "e"
    assert sorted(p.name for p in out.iterdir()) == ["hetero-steps.html", "hetero-steps.tex"]
    page = (out / "hetero-steps.html").read_text(encoding="utf-8")
    assert "<h1>Where FedAvg with Heterogeneous Local Steps Converges: Two Worked Lemmas</h1>" \
        in page
    assert "The fedtheory authors." in page and "fedtheory documentation, docs/lemmas.md, " \
        "2026" in page
    # the refuted Lemma 2 with the paper's own printed lines, the confirmed Lemma 1 in the table
    assert "1. Lemma 2" in page and "Heterogeneous local steps do not move the limit" in page
    assert "hetero.fixed_point" in page[page.index('id="confirmed"'):]
    tex = (out / "hetero-steps.tex").read_text(encoding="utf-8")
    assert "\\paragraph{Erratum: Lemma 2.}" in tex and "\\begin{quote}" in tex
    assert cli(lemmas.parent, "errata", "--claims", "lemmas",
                                          "--from", "w.json", "--out", "e2", "--paper",
                                          "hetero-steps").returncode == 0


def test_a_claim_citing_no_paper_is_told_how_to_declare_one(cli: Any, lemmas: Path) -> None:
    (lemmas / "_paper.py").unlink()
    ran = cli(lemmas.parent, "errata", "--claims", "lemmas", "--from", "w.json", "--out", "e")
    assert ran.returncode != 0 and "Traceback" not in ran.stderr
    assert "names no paper" in ran.stderr and "_paper.py" in ran.stderr, ran.stderr


@pytest.mark.parametrize(("edit", "message"), [
    ('"title": "<script>alert(1)</script>\\x1b[2J",', "control character"),
    ('"title": "' + "x" * 400 + '",', "at most 300"),
    ('"url": "javascript:alert(1)",', "http(s) address"),
    ('"year": "2020",', "whole year"),
    ('"key": "002",', "name the seed documents"),
    ('"quotes": ["Lemma 1"],', "map places to quoted lines"),
    ('"colour": "red",', "unknown field"),
])
def test_a_hostile_paper_declaration_is_refused(cli: Any, lemmas: Path, edit: str,
                                                message: str) -> None:
    paper = lemmas / "_paper.py"
    paper.write_text(paper.read_text().replace("\n}\n", "\n    " + edit + "\n}\n"))
    ran = cli(lemmas.parent, "errata", "--claims", "lemmas", "--from", "w.json", "--out", "e")
    assert ran.returncode != 0 and "Traceback" not in ran.stderr, ran.stderr
    assert message in ran.stderr and "_paper.py" in ran.stderr, ran.stderr
    assert not (lemmas.parent / "e").exists()


def test_a_paper_declaration_is_read_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    f = tmp_path / "_paper.py"
    f.write_text(f"PAPER = __import__('pathlib').Path({str(marker)!r}).touch()\n")
    with pytest.raises(ValueError, match="literals only"):
        paper_literal(f)
    assert not marker.exists()
    f.write_text("PAPER = Paper(key='mine', short='mine', title='T', authors=['A'])\n")
    assert paper_literal(f) == {"key": "mine", "short": "mine", "title": "T", "authors": ["A"]}


def test_page_text_of_a_declared_paper_is_escaped(cli: Any, lemmas: Path) -> None:
    paper = lemmas / "_paper.py"
    paper.write_text(paper.read_text().replace(
        '"The fedtheory authors"', '"<img src=x onerror=alert(1)> & \\"Co\\""'))
    ran = cli(lemmas.parent, "errata", "--claims", "lemmas", "--from", "w.json", "--out", "e")
    assert ran.returncode == 0, ran.stderr[-2000:]
    page = (lemmas.parent / "e" / "hetero-steps.html").read_text(encoding="utf-8")
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt; &amp;" in page


def test_declared_and_seed_references() -> None:
    assert [(p.key, s) for p, s in claim_references("x.y", "002, eq. (7)")] == [("002", "eq. (7)")]
    with pytest.raises(ValueError, match="names no paper"):
        claim_references("nobody.declared", "my notes")
    with pytest.raises(ValueError, match="seed_file is for the seed documents"):
        Paper(key="mine", short="m", title="t", authors=(), seed_file="mine_x.txt")


def test_a_hypothesis_is_said_once_per_page() -> None:
    from dataclasses import dataclass

    from fedtheory.errata._rules import said_once

    @dataclass(frozen=True)
    class Item:
        id: str
        erratum: dict[str, Any]

    same = {"hypothesis": "delta_min > 0", "relied_on": "Section 5.1"}
    items = said_once([Item("a", dict(same)), Item("b", dict(same)),
                       Item("c", {"hypothesis": "other"})])
    assert items[0].erratum == same
    assert items[1].erratum == {"hypothesis": "the same as for erratum 1 above (a)",
                                "relied_on": None}
    assert items[2].erratum["hypothesis"] == "other"


def test_the_figures_of_every_claim_are_on_its_page(seed_report: Path, tmp_path: Path) -> None:
    """A confirmed claim's figure (is.unbiased's, as the lecture's and OCS's experiments draw
    theirs) is embedded in its page, under the table of the other claims."""
    from fedtheory.errata import load_errata_report, paper_errata, render_html

    doc = load_errata_report(seed_report)
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "unbiased.png").write_bytes(
        b"\x89PNG\r\n\x1a\n" + b"\x00" * 16)
    entry = next(e for e in doc["claims"] if e["id"] == "is.unbiased")
    entry["checks"][0]["figures"] = ["figures/unbiased.png"]
    html = render_html(paper_errata(doc, "003", base=tmp_path), "0")
    table = html[html.index('id="confirmed"'):html.index('id="provenance"')]
    assert 'id="figures-is.unbiased"' in table and 'src="data:image/png;base64,' in table


def test_a_corrected_claims_same_drawing_is_shown_once(seed_report: Path, tmp_path: Path) -> None:
    """fdms.complexity_reduction and its .corrected draw the same runs by a check of the same
    name: the refuted claim's section shows that drawing once."""
    from fedtheory.errata import load_errata_report, paper_errata

    doc = load_errata_report(seed_report)
    (tmp_path / "figures").mkdir()
    by_id = {e["id"]: e for e in doc["claims"]}
    original, corrected = by_id["ocs.closed_form"], by_id["ocs.closed_form.corrected"]
    for n, entry in enumerate((original, corrected)):
        (tmp_path / "figures" / f"{n}.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 8)
        entry["checks"][0]["name"] = "drawing"
        entry["checks"][0]["figures"] = [f"figures/{n}.png"]
    (item,) = paper_errata(doc, "002", base=tmp_path).errata
    assert [f.path for f in item.figures] == ["figures/0.png"]


def test_the_counterexample_is_drawn_and_shown(verified: Any, tmp_path: Path) -> None:
    """fdms.complexity_reduction's refuting check (negative_gap) draws its counterexample,
    which the page shows under the refuted claim beside the observation its .corrected draws
    from the same runs (shown once); the .corrected has no counterexample figure."""
    from fedtheory.errata import load_errata_report, paper_errata
    from fedtheory.report import entry, provenance
    from fedtheory.runner import draw_figures

    results = [verified.result(get_claim(cid)) for cid in
               ("fdms.complexity_reduction", "fdms.complexity_reduction.corrected")]
    drawn = {r.id: {check for check, _ in r.drawings} for r in results}
    assert drawn == {"fdms.complexity_reduction": {"complexity", "negative_gap"},
                     "fdms.complexity_reduction.corrected": {"complexity"}}
    rep = tmp_path / "rep"
    rep.mkdir()
    for res in results:  # as verify --report draws them
        draw_figures(res, str(rep))
    prov = provenance(0, "quick")
    prov["report_dir"] = str(rep.resolve())
    path = tmp_path / "r.json"
    write_json(path, [entry(r, report_dir=rep) for r in results], 0, "quick", prov)
    (item,) = paper_errata(load_errata_report(path), "004", base=rep).errata
    assert sorted(f.check for f in item.figures) == ["complexity", "negative_gap"]
    assert all(f.data for f in item.figures), [(f.path, f.note) for f in item.figures]
