"""report.md as GitHub renders it: every table row one cell per column (a ``||`` of a norm in a
seed's words escaped), math as ``$...$`` (a seed's quoted formula, the toolkit's ``\\eta``:
no LaTeX command outside a formula), papers named as papers, alt texts that say what a figure
shows. Parsed with markdown-it-py's GFM tables (the parser GitHub's rendering follows)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from markdown_it import MarkdownIt

from fedtheory.claims import get_claim
from fedtheory.report import write_markdown

pytestmark = pytest.mark.xdist_group("errata")

# mifa.mifa_error cites "000, 'Analyzing E||∇f(w_t) - G_t||^2 for MIFA'"; mifa.zero_floor's
# erratum quotes a display of the seed in LaTeX without delimiters
CLAIMS = ("mifa.mifa_error", "ocs.closed_form", "is.unbiased", "mifa.zero_floor")


def _tables(md: str) -> list[tuple[int, list[int]]]:
    """Each table's number of header cells and every body row's number of cells."""
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    tables: list[tuple[int, list[int]]] = []
    head, rows, cells, in_head = 0, [], 0, False
    for t in tokens:
        if t.type == "table_open":
            head, rows = 0, []
        elif t.type == "thead_open":
            in_head = True
        elif t.type == "thead_close":
            in_head = False
        elif t.type == "tr_open":
            cells = 0
        elif t.type in ("th_open", "td_open"):
            cells += 1
        elif t.type == "tr_close":
            if in_head:
                head = cells
            else:
                rows.append(cells)
        elif t.type == "table_close":
            tables.append((head, rows))
    return tables


@pytest.fixture(scope="module")
def report_md(verified: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    results = [verified.result(get_claim(cid)) for cid in CLAIMS]
    folder = tmp_path_factory.mktemp("md")
    figure = folder / "figures" / "closed_form.png"
    figure.parent.mkdir()
    figure.write_bytes(b"\x89PNG\r\n\x1a\n")
    results[1].checks[0].figures.append(str(figure))
    return write_markdown(folder, results, 0, "quick").read_text(encoding="utf-8")


def test_every_table_row_has_one_cell_per_column(report_md: str) -> None:
    tables = _tables(report_md)
    assert len(tables) >= 1 + len(CLAIMS)  # the summary and each claim's checks
    for head, rows in tables:
        assert head >= 2 and rows and all(n == head for n in rows), (head, rows)
    # the summary row of mifa.mifa_error keeps its verdict column
    row = next(line for line in report_md.splitlines() if line.startswith("| [mifa.mifa_error]"))
    assert "E\\|\\|∇f" in row and "**confirmed**" in row


def test_papers_are_named_and_figures_described(report_md: str) -> None:
    assert not re.search(r"\d{3}_[0-9a-f]{16}|seed text", report_md)
    assert "| MIFA notes, 'Analyzing E" in report_md and "OCS, " in report_md
    alts = re.findall(r"!\[([^\]]*)\]\(", report_md)
    assert alts, "no figure"
    for alt in alts:
        assert alt.strip().lower() not in ("figure", "") and "figure of check" in alt, alt
        assert get_claim("ocs.closed_form").title.split()[0] in alt


def test_the_cited_papers_are_listed_as_papers(report_md: str) -> None:
    papers = report_md[report_md.index("## Papers"):].split("\n\n")[1]
    assert "- **OCS**: Wenlin Chen, Samuel Horváth, Peter Richtárik. Optimal Client Sampling " \
        "for Federated Learning. Transactions on Machine Learning Research (TMLR), 2022. " \
        "arXiv:2010.13723." in papers
    assert "- **MIFA notes**: Federated Learning with Partial Client Participation. Notes, " \
        "unsigned, dated July 26, 2021" in papers


_FORMULA = re.compile(r"\$\$.*?\$\$|(?<!\\)\$[^$\n]+?(?<!\\)\$|`[^`\n]*`", re.DOTALL)


def test_math_is_delimited_as_github_renders_it(report_md: str) -> None:
    """Outside ``$...$``, ``$$...$$`` and code, no LaTeX command: a seed's quote keeps its
    formula as ``$...$``, a finding's symbol is its character."""
    prose = _FORMULA.sub(" ", re.sub(r"```.*?```", " ", report_md, flags=re.DOTALL))
    commands = re.findall(r".{0,30}\\[A-Za-z]{2,}.{0,30}", prose)
    assert commands == [], commands[:5]
    quote = next(line for line in report_md.splitlines()
                 if line.startswith("> ") and "mathbb{E}" in line)
    assert quote.startswith("> $\\mathbb{E}") and quote.endswith("$"), quote
