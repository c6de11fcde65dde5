"""``fedtheory errata`` (:mod:`fedtheory.errata`): pages from a small real report, escaping,
figures, the report read as untrusted input, and the pages opened in a real browser.

The report is made of three quick verifications shared with the rest of the session
(``tests/_verified.py``): ``ocs.closed_form`` (refuted), its ``.corrected`` claim and
``is.unbiased`` (confirmed; it cites seeds 000, 002 and 003). The browser tests drive Debian's
Chromium through its chromedriver (``apt-get install chromium chromium-driver``; ``.ci/run``
installs them) with the driver's path given, so that Selenium Manager never downloads
anything; without them the tests skip, saying so.
"""

from __future__ import annotations

import copy
import json
import re
import struct
import subprocess
import sys
import zlib
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from fedtheory import cli
from fedtheory.claims import get_claim
from fedtheory.errata import (
    load_errata_report,
    math_html,
    page_name,
    paper_errata,
    render_html,
    render_latex,
    rich_html,
    rich_latex,
    segments,
    write_errata,
)
from fedtheory.report import write_json
from fedtheory.schema import digest

from ._browser import CHROMEDRIVER, CHROMIUM, headless_chromium

# one worker for the module: one report, one browser
pytestmark = pytest.mark.xdist_group("errata")

CLAIMS = ("ocs.closed_form", "ocs.closed_form.corrected", "is.unbiased")



def _png(width: int = 3, height: int = 2) -> bytes:
    """A small RGB PNG, written with the standard library (no drawing package needed)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + bytes([200, 30, 30] * width) for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


@pytest.fixture(scope="module")
def small_report(verified: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished quick report of :data:`CLAIMS`, as ``fedtheory verify --json`` writes it."""
    results = [verified.result(get_claim(cid)) for cid in CLAIMS]
    path = tmp_path_factory.mktemp("errata-report") / "small.json"
    write_json(path, results, 0, "quick")
    return path


@pytest.fixture(scope="module")
def pages(small_report: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return write_errata(small_report, tmp_path_factory.mktemp("errata-pages"))


class _Tags(HTMLParser):
    """The start tags of an HTML document with their attributes, and its text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(html: str) -> _Tags:
    p = _Tags()
    p.feed(html)
    p.close()
    return p


# ---------------------------------------------------------------------------- the pages


def test_one_page_and_one_latex_file_per_cited_seed(pages: list[Path]) -> None:
    names = sorted(p.name for p in pages)
    assert names == sorted(f"{page_name(k)}.{ext}" for k in ("000", "002", "003")
                           for ext in ("html", "tex"))
    ocs = next(p for p in pages if p.name == "002-ocs.html").read_text(encoding="utf-8")
    text = "".join(_parse(ocs).text)
    # the refuted claim: printed statement and its place, kind, counterexample, correction,
    # replay command; the confirmed one in the table; the provenance
    assert "Statements that do not hold as printed (1)" in text
    assert "Appendix B, Lemma 20, the sentence after eq. (33)" in text
    assert "typo" in text and "appendix_reading_exact" in text
    # the smallest exact counterexample: norms (1, 2), m = 2, p = (2/3, 4/3) as fractions
    assert "<mfrac><mrow><mn>2</mn></mrow><mrow><mn>3</mn></mrow></mfrac><mo>&#x0002C;</mo>" \
           "<mfrac><mrow><mn>4</mn></mrow><mrow><mn>3</mn></mrow></mfrac>" in ocs
    assert "fedtheory replay ocs.closed_form --check appendix_reading_exact --preset quick " \
           "--seed 0" in text
    assert "ocs.closed_form.corrected" in text and "confirmed" in text
    assert "is.unbiased" in text
    assert "2 statements of this document checked: 1 refuted, 1 confirmed." in text
    assert "preset quick, seed 0" in " ".join(text.split())
    # the .corrected claim is shown with its original, not as a confirmed claim of the paper
    table = ocs[ocs.index('id="confirmed"'):]
    assert "ocs.closed_form.corrected" not in table
    mifa = next(p for p in pages if p.name == "000-mifa-notes.html").read_text(encoding="utf-8")
    assert "None of the checked statements of this document is refuted." in mifa


def test_pages_are_offline_and_hold_no_latex(pages: list[Path]) -> None:
    """No script, no remote resource, a CSP that forbids both; every formula MathML."""
    for page in (p for p in pages if p.suffix == ".html"):
        html = page.read_text(encoding="utf-8")
        parsed = _parse(html)
        tags = [t for t, _ in parsed.tags]
        assert "script" not in tags and "link" not in tags and "iframe" not in tags
        for _, attrs in parsed.tags:
            for name in ("src", "href"):
                value = attrs.get(name) or ""
                assert not value or value.startswith(("data:", "#", "https://arxiv.org")), value
        csp = [a["content"] for t, a in parsed.tags if a.get("http-equiv") ==
               "Content-Security-Policy"]
        assert csp == ["default-src 'none'; img-src data:; style-src 'unsafe-inline'"]
        assert tags.count("math") >= (3 if page.name == "002-ocs.html" else 0)
        prose = re.sub(r"<(pre|code)\b.*?</\1>", "", html, flags=re.DOTALL)
        visible = "".join(_parse(prose).text)
        assert "$" not in visible and not re.search(r"\\[A-Za-z]+", visible), page


def test_latex_snippets(pages: list[Path]) -> None:
    tex = next(p for p in pages if p.name == "002-ocs.tex").read_text(encoding="utf-8")
    assert tex.count("\\begin{equation*}") == tex.count("\\end{equation*}") == 2
    assert "\\paragraph{Erratum (typo): Appendix B, Lemma 20, the sentence after eq. (33).}" \
        in tex
    assert "\\begin{quote}\n\\(\\left\\lVert\\tilde{U}_{(j)}^{k}\\right\\rVert\\) is the j-th" \
        in tex
    assert "% re-run it: fedtheory replay ocs.closed_form --check appendix_reading_exact" in tex
    body = re.sub(r"\\\(.*?\\\)|\\begin\{equation\*\}.*?\\end\{equation\*\}|^%.*$", "", tex,
                  flags=re.DOTALL | re.MULTILINE)
    assert not re.search(r"(?<!\\)[_&%#]", body)  # every special character of prose escaped
    mifa = next(p for p in pages if p.name == "000-mifa-notes.tex").read_text(encoding="utf-8")
    assert "No statement of this document is refuted" in mifa


def test_one_paper_by_key_or_name(small_report: Path, tmp_path: Path) -> None:
    assert [p.name for p in write_errata(small_report, tmp_path, "OCS")] == \
        ["002-ocs.html", "002-ocs.tex"]
    with pytest.raises(ValueError, match=r"--paper fedau: report .* has no claim citing seed "
                                         r"001 \(FedAU\); it covers 000, 002, 003"):
        write_errata(small_report, tmp_path, "fedau")
    with pytest.raises(ValueError, match=r"--paper must be a seed key or short name .*, "
                                         r"got '7'"):
        write_errata(small_report, tmp_path, "7")


def test_cli(small_report: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "errata"
    assert cli.main(["errata", "--from", str(small_report), "--out", str(out), "--paper",
                     "002"]) == 0
    assert capsys.readouterr().out.split() == ["errata:", str(out / "002-ocs.html"), "errata:",
                                               str(out / "002-ocs.tex")]
    afile = tmp_path / "a-file"
    afile.write_text("x")
    assert cli.main(["errata", "--from", str(small_report), "--out", str(afile)]) == 2
    assert f"--out {afile} exists and is not a directory" in capsys.readouterr().err


def test_a_report_without_claims_writes_nothing(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    empty = write_json(tmp_path / "empty.json", [], 0, "quick")
    assert write_errata(empty, tmp_path / "out") == []
    assert cli.main(["errata", "--from", str(empty), "--out", str(tmp_path / "out")]) == 0
    assert "has no claims; nothing written" in capsys.readouterr().out
    with pytest.raises(ValueError, match="--from must be the path of a JSON report, got None"):
        write_errata(None, tmp_path)  # type: ignore[arg-type]


# ------------------------------------------------------------- the report, untrusted input


def _edited(small_report: Path, tmp_path: Path, edit: Any, redigest: bool = False) -> Path:
    doc = json.loads(small_report.read_text(encoding="utf-8"))
    edit(doc)
    if redigest:
        for e in doc["claims"]:
            e["digest"] = digest(e)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_a_bad_report_is_refused_naming_file_claim_and_field(small_report: Path,
                                                             tmp_path: Path) -> None:
    def verdict(doc: dict[str, Any]) -> None:
        doc["claims"][0]["verdict"] = "confirmed"

    def passed(doc: dict[str, Any]) -> None:
        doc["claims"][0]["checks"][1]["passed"] = "yes"

    def statement(doc: dict[str, Any]) -> None:
        doc["claims"][0]["statement"] = "p_i = 1 <script>"

    def unfinished(doc: dict[str, Any]) -> None:
        doc["complete"] = False

    cases = [
        (verdict, False, r"claims\[0\] \(ocs.closed_form\): verdict: 'confirmed' is not what "
                         r"its checks give \('refuted'\)"),
        (passed, False, r"claims\[0\] \(ocs.closed_form\): checks\[1\].passed: 'yes' is not "
                        r"of type"),
        (statement, True, r"claims\[0\] \(ocs.closed_form\): statement: differs from the "
                          r"claim's definition|definition: the claim's statement"),
        (unfinished, False, r"the run did not finish"),
    ]
    for edit, redigest, message in cases:
        bad = _edited(small_report, tmp_path, edit, redigest)
        with pytest.raises(ValueError, match=rf"report {re.escape(str(bad))}: .*{message}"
                           if "did not" not in message else message):
            write_errata(bad, tmp_path / "out")
        assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


# ------------------------------------------------------------------ escaping and figures


def _hostile(doc: dict[str, Any], figure: str | None) -> dict[str, Any]:
    """``doc`` with hostile texts in its refuted entry, a figure, and a certified ratio."""
    doc = copy.deepcopy(doc)
    e = doc["claims"][0]
    e["title"] = "<script>window.pwned = 1</script> & title"
    e["finding"] = "a < b && c > d; $x<y$ </dd></dl><img src=x onerror=alert(1)>"
    e["statement"] = r"\text{<b>bold</b>} x < y \quad \frac{1}{2}"
    e["erratum"]["quote"] = r"</blockquote><script>alert(1)</script> bounded by 2K\exp(-t)"
    e["erratum"]["where"] = "x_1 & 50% <b>, then"
    e["certified"] = {"status": "exact", "ratio": 2.0, "lower": 0.5, "upper": 0.5}
    if figure is not None:
        e["checks"][0]["figures"] = [figure, "missing.png"]
    return doc


def _hostile_page(small_report: Path, tmp_path: Path) -> tuple[str, Path]:
    doc = load_errata_report(small_report)
    (tmp_path / "fig.png").write_bytes(_png())
    hostile = _hostile(doc, "fig.png")
    hostile["provenance"]["report_dir"] = str(tmp_path)  # the run's --report directory
    errata = paper_errata(hostile, "002", source=tmp_path / "r.json")
    page = tmp_path / "hostile.html"
    page.write_text(render_html(errata, "test"), encoding="utf-8")
    return render_latex(errata, "test"), page


def test_report_text_is_escaped_and_figures_embedded(small_report: Path,
                                                     tmp_path: Path) -> None:
    tex, page = _hostile_page(small_report, tmp_path)
    html = page.read_text(encoding="utf-8")
    parsed = _parse(html)
    tags = [t for t, _ in parsed.tags]
    assert "script" not in tags and "b" not in tags
    imgs = [a for t, a in parsed.tags if t == "img"]
    assert len(imgs) == 1 and imgs[0]["src"].startswith("data:image/png;base64,iVBORw0KGgo")
    text = "".join(parsed.text)
    assert "<script>window.pwned = 1</script> & title" in text
    assert "</dd></dl><img src=x onerror=alert(1)>" in text
    assert "not found at missing.png" in text
    assert "stated/worst case = 2 (exact; worst case between 0.5 and 0.5)" in text
    assert "<b>bold</b>" in text  # \text{...} of a formula: text, not markup
    assert "x\\_1 \\& 50\\% <b>, then" in tex


def test_math_and_text_helpers() -> None:
    assert segments(r"a \$5 and $x$") == [("text", "a $5 and "), ("math", "x")]
    assert segments(r"see \alpha_t, then", quote=True) == [
        ("text", "see "), ("math", r"\alpha_t"), ("text", ", then")]
    assert segments(r"see \alpha_t, \unknown") == [("text", "see α_t, \\unknown")]
    assert "<script" not in str(math_html(r"\text{<script>}"))
    assert str(rich_html("no math & <b>")) == "no math &amp; &lt;b&gt;"
    assert rich_latex("100% of $a_b$") == r"100\% of \(a_b\)"
    with pytest.raises(ValueError, match=r"formula '\\\\frac\{' cannot be rendered"):
        math_html(r"\frac{")
    with pytest.raises(ValueError, match="latex must be a string, got None"):
        math_html(None)  # type: ignore[arg-type]


# ------------------------------------------------------------------- in a real browser


def _browser_or_skip(mp: pytest.MonkeyPatch) -> Any:
    """A headless Chromium from Debian's packages (skips without it); ``mp`` makes Selenium
    Manager (which would download a browser) fail if it is ever asked."""
    return headless_chromium(mp, ("--headless=new", "--no-sandbox", "--disable-gpu",
                                  "--disable-dev-shm-usage", "--window-size=1200,900",
                                  "--disable-extensions", "--no-first-run"),
                             {"goog:loggingPrefs": {"browser": "ALL"}})


@pytest.fixture(scope="module")
def browser() -> Any:
    with pytest.MonkeyPatch.context() as mp:
        driver = _browser_or_skip(mp)
        yield driver
        driver.quit()


_LATEX_LEFT = r"""
const body = document.body.cloneNode(true);
body.querySelectorAll('pre, code').forEach(n => n.remove());
return body.textContent;
"""

_BROKEN_IMAGES = """
return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0))
            .map(i => i.alt);
"""

_EMPTY_MATH = """
return Array.from(document.getElementsByTagName('math'))
            .filter(m => m.getBoundingClientRect().width <= 0).length;
"""


_NOT_MATHML = """
return Array.from(document.getElementsByTagName('math'))
            .filter(m => m.namespaceURI !== 'http://www.w3.org/1998/Math/MathML').length;
"""


def open_and_check(driver: Any, page: Path, shots: Path) -> dict[str, Any]:
    """Open ``page``: no console error, no broken image, every formula laid out as MathML and
    no LaTeX source left; a full-page screenshot into ``shots``. Returns what it counted."""
    driver.get_log("browser")  # drop what an earlier page left
    driver.get(page.resolve().as_uri())
    assert driver.execute_script("return document.readyState") == "complete"
    severe = [m for m in driver.get_log("browser") if m["level"] == "SEVERE"]
    assert not severe, f"{page.name}: console errors {severe}"
    assert driver.execute_script(_BROKEN_IMAGES) == [], page.name
    n_math = driver.execute_script("return document.getElementsByTagName('math').length")
    assert driver.execute_script(_EMPTY_MATH) == 0, page.name
    # the formulas are MathML elements (the browser parsed them so), not unknown HTML ones
    assert driver.execute_script(_NOT_MATHML) == 0, page.name
    text = driver.execute_script(_LATEX_LEFT)
    assert "$" not in text and not re.search(r"\\[A-Za-z]+", text), page.name
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1200, min(int(height) + 50, 12000))
    shot = shots / f"{page.stem}.png"
    assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 0
    driver.set_window_size(1200, 900)
    return {"math": n_math, "images": driver.execute_script("return document.images.length"),
            "screenshot": shot}


def test_pages_in_a_real_browser(browser: Any, pages: list[Path], tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    for page in (p for p in pages if p.suffix == ".html"):
        seen = open_and_check(browser, page, tmp_path)
        assert seen["math"] >= (3 if page.name == "002-ocs.html" else 0)
        with capsys.disabled():
            print(f"\n{page.name}: {seen['math']} formulas, {seen['images']} images; "
                  f"screenshot {seen['screenshot']}")


def test_hostile_report_in_a_real_browser(browser: Any, small_report: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Hostile texts stay text (no script element, nothing run), the figure loads."""
    _, page = _hostile_page(small_report, tmp_path)
    seen = open_and_check(browser, page, tmp_path)
    assert seen["images"] == 1
    assert browser.execute_script("return document.scripts.length") == 0
    assert browser.execute_script("return window.pwned === undefined")
    assert "<script>window.pwned = 1</script>" in browser.execute_script(
        "return document.body.textContent")
    with capsys.disabled():
        print(f"\nhostile page: screenshot {seen['screenshot']}")


@pytest.mark.slow
def test_all_five_pages_from_a_full_quick_report(tmp_path: Path, monkeypatch: Any) -> None:
    """The issue's done-when: ``verify --quick --json`` then ``errata`` writes five pages and
    their LaTeX snippets; each opens cleanly in the browser (skipped without one)."""
    monkeypatch.chdir(tmp_path)
    report = tmp_path / "out.json"
    assert cli.main(["verify", "--quick", "--json", str(report), "--report", "rep",
                     "--no-progress", "--no-record"]) == 0
    assert cli.main(["errata", "--from", str(report), "--out", "errata"]) == 0
    html = sorted((tmp_path / "errata").glob("*.html"))
    assert [p.stem for p in html] == [page_name(k) for k in ("000", "001", "002", "003", "004")]
    assert len(list((tmp_path / "errata").glob("*.tex"))) == 5
    if CHROMIUM.exists() and CHROMEDRIVER.exists():
        driver = _browser_or_skip(monkeypatch)
        try:
            for page in html:
                open_and_check(driver, page, tmp_path)
        finally:
            driver.quit()


def test_help_imports_no_claim_nor_renderer() -> None:
    """``fedtheory errata --help`` stays fast: no claim, no template engine, no LaTeX
    converter imported (``fedtheory/index.py``)."""
    code = ("import sys\nfrom fedtheory.cli import main\ntry:\n    main(['errata', '--help'])\n"
            "except SystemExit:\n    pass\nprint('IMPORTED', ' '.join(sorted(sys.modules)))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    line = next(x for x in proc.stdout.splitlines() if x.startswith("IMPORTED "))
    heavy = [m for m in line.split()[1:]
             if m.startswith(("fedtheory.claims", "fedtheory.errata", "latex2mathml", "jinja2",
                              "sympy", "numpy"))]
    assert heavy == [] and "--paper ID" in proc.stdout
