"""The errata pages as a referee's reader sees them: opened in headless Chromium at 1280 px.

Every page is held to what can be sent to an author (issue 30): no element wider than the page's
column, on screen at 1280 px nor in print (A4), and no scroll box (a formula in one is cut in
print and hides its end on screen); at least one rendered formula (a MathML ``math`` element)
per claim on the page; an image for each figure of its claim's checks; no text left as LaTeX
source (``\\eta``, ``_{``, ``^{``) or as a Python or sympy print (``Matrix(``, ``**``, ``{'``,
16-digit floats); no place cited by a seed's number (``004, Lemma 2``) and no symbol by its
program name (``delta_min``, ``x_star``). The fast test makes its pages from a few quick
verifications per seed shared with the session (``tests/_verified.py``), and the page of the
worked lemmas in docs/lemmas (``errata --claims``); the slow one from a full ``verify --quick``
report, with the worked lemmas' page too, and a full-height screenshot of each page.

Screenshots: with ``FEDTHEORY_SCREENSHOT_DIR`` set, every test writes one full-height PNG at
1280 px per page it opens into that folder (``<page>.png``); with ``FEDTHEORY_ERRATA_REPORT``
set to a finished ``verify --quick --report DIR --json R`` report, the slow test makes its
seed pages from that report instead of running ``verify`` again::

    FEDTHEORY_SCREENSHOT_DIR=shots FEDTHEORY_ERRATA_REPORT=q.json \\
        pytest tests/test_errata_browser.py -m slow -k full_quick_report -n 0

The browser is Debian's Chromium with its chromedriver (``apt-get install chromium
chromium-driver``), its path given so that Selenium Manager never downloads anything; without
them the tests skip, saying so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fedtheory import cli
from fedtheory.claims import get_claim
from fedtheory.errata import page_name, write_errata
from fedtheory.papers import references
from fedtheory.report import entry, provenance, write_json
from fedtheory.runner import draw_figures

from ._browser import headless_chromium

pytestmark = pytest.mark.xdist_group("errata-browser")


#: A few cheap claims per seed: refuted ones with their corrections (long statements, exact
#: counterexamples, sympy prints), confirmed ones for the table, checks that draw figures.
CLAIMS = (
    "mifa.zero_floor", "mifa.zero_floor.corrected", "mifa.saga_equivalence",
    "mifa.saga_equivalence.corrected", "is.unbiased",
    "fedau.cutoff_choice",
    "ocs.closed_form", "ocs.closed_form.corrected", "ocs.aocs",
    "is.independent_minimises_variance", "is.independent_minimises_variance.corrected",
    "fedavg.heterogeneity",
    "fdms.discovery_error", "fdms.discovery_error.corrected", "fdms.dropout_is_substitution",
)

WIDTH = 1280
#: The worked lemmas (docs/lemmas.md), a paper declared beside its claim files.
LEMMAS = Path(__file__).resolve().parents[1] / "docs" / "lemmas"
#: The printable width of an A4 page with the pages' 15 mm margins, in CSS pixels.
PRINT_WIDTH = 680


def _driver(tmp: Path, mp: pytest.MonkeyPatch) -> Any:
    """A headless Chromium from Debian's packages (skips without it), with a fresh profile in
    ``tmp``; ``mp`` makes Selenium Manager (which would download a browser) fail if asked."""
    return headless_chromium(mp, (
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--no-first-run", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage", "--hide-scrollbars", f"--user-data-dir={tmp}",
        f"--window-size={WIDTH},900"))


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with pytest.MonkeyPatch.context() as mp:
        driver = _driver(tmp_path_factory.mktemp("chromium-profile"), mp)
        yield driver
        driver.quit()


# ----------------------------------------------------------------------- what a page shows

# Elements wider than the content column (or left of it), and scroll boxes that hide content.
_WIDTHS = r"""
const col = document.body, cs = getComputedStyle(col), box = col.getBoundingClientRect();
const left = box.left + parseFloat(cs.paddingLeft), right = box.right - parseFloat(cs.paddingRight);
const wide = [], scrolls = [];
let widest = 0;
const name = el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
  + ' "' + (el.textContent || '').trim().slice(0, 50) + '"';
for (const el of col.querySelectorAll('*')) {
  const r = el.getBoundingClientRect();
  if (r.width === 0 && r.height === 0) continue;
  if (getComputedStyle(el).display === 'none') continue;
  // the widest formula (its content, a block formula's box being the column's), image, table
  if (el.matches('math, img, table')) {
    const box = el.matches('math') && el.firstElementChild ? el.firstElementChild : el;
    widest = Math.max(widest, box.getBoundingClientRect().width);
  }
  if (r.right > right + 1 || r.left < left - 1)
    wide.push([name(el), Math.round(r.width), Math.round(r.right - right)]);
  // a box that clips or scrolls hides what is wider than it (what overflows visibly is
  // measured by its own box above)
  if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1
      && getComputedStyle(el).overflowX !== 'visible')
    scrolls.push([name(el), el.scrollWidth, el.clientWidth]);
}
if (col.scrollWidth > col.clientWidth + 1) scrolls.push(['body', col.scrollWidth, col.clientWidth]);
const doc = document.documentElement;
return {column: Math.round(right - left), widest: Math.round(widest),
        wide: wide.slice(0, 20), n_wide: wide.length,
        scrolls: scrolls.slice(0, 20), n_scrolls: scrolls.length,
        page: [doc.scrollWidth, doc.clientWidth]};
"""

# Per claim on the page: its formulas and images.
_CLAIMS = r"""
const out = {};
for (const el of document.querySelectorAll('article[id], div.claim[id]')) {
  const id = el.id.startsWith('row-') ? el.id.slice(4) : el.id;
  out[id] = {math: el.getElementsByTagName('math').length,
             images: Array.from(el.querySelectorAll('img'))
                          .filter(i => i.complete && i.naturalWidth > 0).length};
}
return out;
"""

def _text_nodes_matching(regex: str) -> str:
    """The script listing the text nodes (commands in <pre> apart) that match the JavaScript
    ``regex``, each as 40 characters either side of the match."""
    return (f"const re = {regex};\n" + r"""
const bad = [], walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
let n;
while ((n = walker.nextNode())) {
  if (n.parentElement.closest('pre, style')) continue;
  const m = n.textContent.match(re);
  if (m) bad.push(n.textContent.slice(Math.max(0, m.index - 40), m.index + 40));
}
return bad;
""")


# Text nodes holding LaTeX source (a command, a lone backslash) or a Python / sympy print.
_SOURCE = _text_nodes_matching(r"/\\[a-zA-Z]*|_\{|\^\{|Matrix\(|\*\*|\{'|\d\.\d{12,}|\d{16,}/")

# Places cited by a seed's number (``(004, Lemma 2``, ``seed 000's``) and symbols by their
# program names (``delta_min``, ``x_star``).
_NAMES = _text_nodes_matching(
    r"/(?:^|[\s(;])00\d, |\b(?:seed|paper) 00\d\b|\b[A-Za-z]+_(?:star|min|max)\b/")


def screenshot_dir() -> Path | None:
    """The folder ``FEDTHEORY_SCREENSHOT_DIR`` names (made if absent), or None."""
    name = os.environ.get("FEDTHEORY_SCREENSHOT_DIR", "").strip()
    if not name:
        return None
    folder = Path(name)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _cited_keys(seed_ref: str) -> set[str | None]:
    """The seeds ``seed_ref`` cites; ``{None}`` for a place in a paper its claim file declares."""
    try:
        return {p.key for p, _ in references(seed_ref)}
    except ValueError:
        return {None}


def expected_claims(report: Path, key: str | None) -> dict[str, int]:
    """The claims the page of seed ``key`` shows (``None``: of the paper the report's claim
    files declare), each with the number of figures its checks drew (a refuted claim with its
    ``.corrected`` one's, less the drawings of checks of the same name, which the page shows
    once)."""
    doc = json.loads(report.read_text(encoding="utf-8"))
    ids = {e["id"] for e in doc["claims"]}

    def drawings(e: dict[str, Any], skip: frozenset[str] = frozenset()) -> int:
        return len({str(Path(f).with_suffix("")) for c in e["checks"] if c["name"] not in skip
                    for f in c["figures"]})

    by_id = {e["id"]: e for e in doc["claims"]}
    out: dict[str, int] = {}
    for e in doc["claims"]:
        if key not in _cited_keys(e["seed_ref"]):
            continue
        cid = e["id"]
        if cid.endswith(".corrected") and cid[: -len(".corrected")] in ids:
            continue
        corrected = by_id.get(cid + ".corrected")
        # a .corrected check named as one of the original's draws the same runs: shown once
        # (errata._rules.without_checks)
        shown = frozenset(c["name"] for c in e["checks"] if c["figures"])
        extra = drawings(corrected, shown) if corrected and e["verdict"] == "refuted" else 0
        out[cid] = drawings(e) + extra
    return out


def check_page(driver: Any, page: Path, claims: dict[str, int],
               shots: Path | None = None) -> dict[str, Any]:
    """Open ``page`` and hold it to the module's rules (see the docstring); with ``shots`` a
    full-height screenshot at 1280 px goes there. Returns what it measured."""
    driver.set_window_size(WIDTH, 900)
    driver.get(page.resolve().as_uri())
    assert driver.execute_script("return document.readyState") == "complete"
    screen = driver.execute_script(_WIDTHS)
    assert screen["page"][0] <= screen["page"][1], f"{page.name}: the page scrolls sideways"
    assert screen["n_wide"] == 0, f"{page.name}: wider than the column: {screen['wide']}"
    assert screen["n_scrolls"] == 0, f"{page.name}: scroll boxes: {screen['scrolls']}"
    shown = driver.execute_script(_CLAIMS)
    assert sorted(shown) == sorted(claims), page.name
    for cid, figures in claims.items():
        assert shown[cid]["math"] >= 1, f"{page.name}: {cid} has no rendered formula"
        assert shown[cid]["images"] >= figures, \
            f"{page.name}: {cid} shows {shown[cid]['images']} of its {figures} figures"
    source = driver.execute_script(_SOURCE)
    assert source == [], f"{page.name}: LaTeX or Python prints left: {source[:5]}"
    names = driver.execute_script(_NAMES)
    assert names == [], f"{page.name}: seed numbers or program names of symbols: {names[:5]}"
    if shots is not None:
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(WIDTH, min(int(height) + 20, 30000))
        shot = shots / f"{page.stem}.png"
        assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 0
    # in print: an A4 page's width, the print styles
    driver.set_window_size(PRINT_WIDTH, 900)
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        printed = driver.execute_script(_WIDTHS)
    finally:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
        driver.set_window_size(WIDTH, 900)
    assert printed["n_wide"] == 0, f"{page.name} in print: wider: {printed['wide']}"
    assert printed["n_scrolls"] == 0, f"{page.name} in print: scroll boxes: {printed['scrolls']}"
    return {"column": screen["column"], "widest": screen["widest"],
            "print_column": printed["column"], "print_widest": printed["widest"],
            "math": sum(v["math"] for v in shown.values()),
            "images": sum(v["images"] for v in shown.values())}


# ----------------------------------------------------------------------------------- tests


@pytest.fixture(scope="module")
def small_report(verified: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished quick report of :data:`CLAIMS` whose figures are in its ``--report``
    directory (the session's figure folder), as ``verify --report`` records it."""
    root = tmp_path_factory.mktemp("errata-browser")
    rep = root / "rep"
    rep.mkdir()
    results = [verified.result(get_claim(cid)) for cid in CLAIMS]
    for res in results:  # as verify --report draws them (fedtheory.runner)
        draw_figures(res, str(rep))
    prov = provenance(0, "quick")
    prov["report_dir"] = str(rep.resolve())
    path = root / "small.json"
    write_json(path, [entry(r, report_dir=rep) for r in results], 0, "quick", prov)
    return path


def worked_lemmas_page(root: Path, report_dir: str = "rep", source: Path = LEMMAS,
                       family: str = "hetero", page: str = "hetero-steps.html"
                       ) -> tuple[Path, Path]:
    """A worked-lemmas folder (docs/lemmas, or one below it) copied into ``root`` and verified
    (``verify --claims lemmas --quick --report``, a process of its own: its claim files stay
    out of this session's registry), then its page made (``errata --claims lemmas --from``):
    (the page, the report)."""
    folder = root / "lemmas"
    folder.mkdir(parents=True)
    for f in source.glob("*.py"):
        shutil.copy(f, folder / f.name)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    for argv in (["verify", "--claims", "lemmas", "--family", family, "--quick", "--json",
                  "w.json", "--report", report_dir, "--no-progress", "--no-record", "--jobs",
                  "1"],
                 ["errata", "--claims", "lemmas", "--from", "w.json", "--out", "errata"]):
        ran = subprocess.run([sys.executable, "-m", "fedtheory", *argv], cwd=root, env=env,
                             capture_output=True, text=True, check=False)
        assert ran.returncode == 0, ran.stderr[-2000:]
    pages = sorted((root / "errata").glob("*.html"))
    assert [p.name for p in pages] == [page]
    return pages[0], root / "w.json"


def test_the_third_worked_lemma_page_holds(browser: Any, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The third worked lemma's paper (docs/lemmas/li_sampling: Li et al. 2020, declared in its
    own ``_paper.py``, helpers imported by name) gets its page, held to the same rules."""
    page, report = worked_lemmas_page(tmp_path, source=LEMMAS / "li_sampling", family="li",
                                      page="li2020-fedavg-noniid-li-et-al-2020.html")
    expected = expected_claims(report, None)
    assert sorted(expected) == ["li.unbiased", "li.variance"]
    seen = check_page(browser, page, expected, screenshot_dir())
    with capsys.disabled():
        print(f"\n{page.name}: column {seen['column']} px (print {seen['print_column']}), "
              f"widest {seen['widest']} (print {seen['print_widest']}), {seen['math']} "
              f"formulas, {seen['images']} figures")


def test_pages_hold_at_1280_px_and_in_print(browser: Any, small_report: Path,
                                            tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    pages = [p for p in write_errata(small_report, tmp_path / "errata") if p.suffix == ".html"]
    assert [p.stem for p in pages] == [page_name(k) for k in ("000", "001", "002", "003", "004")]
    figures = 0
    for page in pages:
        expected = expected_claims(small_report, page.stem[:3])
        figures += sum(expected.values())
        seen = check_page(browser, page, expected, screenshot_dir())
        with capsys.disabled():
            print(f"\n{page.name}: column {seen['column']} px (print {seen['print_column']}), "
                  f"{seen['math']} formulas, {seen['images']} figures")
    assert figures >= 3  # ocs.aocs, fedavg.heterogeneity and mifa.zero_floor draw one each


def test_the_worked_lemmas_page_holds(browser: Any, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The page of your own paper (docs/lemmas, ``errata --claims``) is held to the same
    rules, and says nothing of figures for claims that draw none."""
    page, report = worked_lemmas_page(tmp_path)
    expected = expected_claims(report, None)
    assert sorted(expected) == ["hetero.fixed_point", "hetero.true_minimiser"]
    seen = check_page(browser, page, expected, screenshot_dir())
    text = browser.execute_script("return document.body.innerText")
    assert "No figure" not in text and "Tightness, for the bounds" not in text, text[-600:]
    with capsys.disabled():
        print(f"\n{page.name}: column {seen['column']} px (print {seen['print_column']}), "
              f"{seen['math']} formulas, {seen['images']} figures")


@pytest.mark.slow
def test_all_five_pages_from_a_full_quick_report(tmp_path: Path, monkeypatch: Any,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The five seed pages of a full ``verify --quick --report`` run (or of the report
    ``FEDTHEORY_ERRATA_REPORT`` names) and the worked lemmas' page, each held to the rules,
    with a full-height screenshot at 1280 px (into ``FEDTHEORY_SCREENSHOT_DIR`` when set)."""
    given = os.environ.get("FEDTHEORY_ERRATA_REPORT", "").strip()
    report = Path(given).resolve() if given else tmp_path / "out.json"
    monkeypatch.chdir(tmp_path)
    if not given:
        assert cli.main(["verify", "--quick", "--json", str(report), "--report", "rep",
                         "--no-progress", "--no-record"]) == 0
    assert cli.main(["errata", "--from", str(report), "--out", "errata"]) == 0
    pages = [(p, expected_claims(report, p.stem[:3]))
             for p in sorted((tmp_path / "errata").glob("*.html"))]
    assert [p.stem[:3] for p, _ in pages] == ["000", "001", "002", "003", "004"]
    lemmas, lemma_report = worked_lemmas_page(tmp_path / "own")
    pages.append((lemmas, expected_claims(lemma_report, None)))
    shots = screenshot_dir() or tmp_path / "shots"
    shots.mkdir(exist_ok=True)
    driver = _driver(tmp_path / "profile", monkeypatch)
    try:
        for page, expected in pages:
            seen = check_page(driver, page, expected, shots)
            with capsys.disabled():
                print(f"\n{page.name}: {len(expected)} claims, {seen}; "
                      f"screenshot {shots / (page.stem + '.png')}")
    finally:
        driver.quit()


def test_replay_prints_symbols_not_latex(capsys: pytest.CaptureFixture[str]) -> None:
    """``fedtheory replay`` prints a check's detail in plain Unicode, from the same source as
    the pages (:func:`fedtheory.errata._values.plain_text`): η and δ₁, not ``\\eta`` and
    ``\\delta_{1}``; and the symbols of a derivation are defined where they appear."""
    assert cli.main(["replay", "mifa.error_floor_average", "--check", "floor_avg_symbolic",
                     "--quick"]) == 0
    detail = next(line for line in capsys.readouterr().out.splitlines()
                  if line.startswith("detail:"))
    assert "η" in detail and "\\" not in detail and "**" not in detail, detail
    assert "where q = (1/p-1)/n, v >= 0 with ηL = s/((1+v)(1+c))" in detail


def test_the_toolkits_math_is_rendered_not_printed() -> None:
    """Without a browser too: a check's ASCII math, a sympy print, a Python list and dict, a
    0-based name and an exact float become MathML, with nothing of their source left in the
    page's text; a long display formula is set on several lines."""
    from html.parser import HTMLParser

    from fedtheory.errata._math import display_html, rich_html
    from fedtheory.errata._values import number_latex, value_segments

    class Text(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.text: list[str] = []

        def handle_data(self, data: str) -> None:
            self.text.append(data)

    detail = ("slack = -q*(L - 2)/(2*L*(2*q + 1)**2*(v + 1)**2) >= 0: violated; E||r^{k+1}||^2 "
              "= 0.0454 vs 0.0399; printed p = ['2/3', '4/3'], constants {'beta2': '72'}; "
              "p_01 = p_0*p_1, ratio 0.3333333333333333, floor L*\\eta*\\sigma_G^2")
    html = str(rich_html(detail))
    parser = Text()
    parser.feed(html)
    text = "".join(parser.text)
    for source in ("**", "{'", "['", "^{", "_{", "\\eta", "0.3333333333333"):
        assert source not in text, (source, text)
    assert "<msub><mi>p</mi><mrow><mn>12</mn></mrow></msub>" in html  # p_01 is P_12
    assert html.count("<math") >= 5
    assert number_latex(1 / 3, exact=True) == r"\frac{1}{3}"
    assert value_segments(0.3333333333333333) == [("math", "0.333333")]
    long = r"a_1 + a_2 + a_3 + a_4 = b_1 + b_2 + b_3 + b_4 \le c_1 + c_2 + c_3 + c_4" * 3
    assert str(display_html(long)).count('<math') >= 2
