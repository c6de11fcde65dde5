"""The Markdown report (``report.md``, :func:`write_markdown`) and its parts: set-up cards,
errata, certificates, the papers, the provenance list (also used by ``fedtheory show``)."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fedtheory.mathtext import markdown_display, markdown_math
from fedtheory.report.counts import _ratio_text, checks_summary, grade_counts, verdict_label
from fedtheory.report.document import claim_file
from fedtheory.report.files import atomic_write_text
from fedtheory.report.run_provenance import provenance

if TYPE_CHECKING:  # the claim machinery (sympy) is imported where results are handled
    from fedtheory.claimkit.core import ClaimResult

__all__ = [
    "certified_lines", "erratum_lines", "figure_alt", "papers_lines", "provenance_lines",
    "rate_lines", "setup_lines", "source_text", "write_markdown",
]


def certified_lines(c: Mapping[str, Any]) -> list[str]:
    """Markdown for a claim's ``certified`` entry (``verify --certify``): its status and
    stated/worst, then one row per instance."""
    if c["status"] in ("out of scope", "error"):
        return [f"**Certified** ({c['status']}): {_md_cell(c.get('reason', ''))}", "",
                *rate_lines(c.get("rate"))]
    out = [f"**Certified** (performance estimation): **{c['status']}**, stated/worst "
           f"{_ratio_text(c.get('ratio'))} at `{_md_cell(json.dumps(c.get('at')))}`"
           + (f"; {c['finding']}" if c.get("finding") else "")
           + (f"; closed form: {c['closed_form']['text']} "
              f"({_closed_form_text(c['closed_form'])})"
              if c.get("closed_form") else ""), "",
           *([f"**Function class**: {_md_cell(str(c['function_class']))}"
              + (" (interpolation conditions necessary only: lower certificates are "
                 "explicit functions of the class)" if c.get("interpolation") == "necessary"
                 else ""), ""] if c.get("function_class") else []),
           *_certified_findings(c),
           "| instance | stated | worst (lower, upper) | stated/worst | status | s |",
           "|---|---|---|---|---|---|"]
    for r in c.get("instances", []):
        worst = r["lower"] if r["lower"] == r["upper"] else f"[{r['lower']}, {r['upper']}]"
        out.append(f"| {_md_cell(json.dumps(r['params']))} | {r['stated']} | "
                   f"{_md_cell(str(worst)[:60])} | {_ratio_text(r.get('ratio'))} | "
                   f"{r['status']} | {r.get('seconds', '')} |")
    return [*out, "", *rate_lines(c.get("rate"))]


def rate_lines(rate: Mapping[str, Any] | None) -> list[str]:
    """Markdown for the ``certified.rate`` entry (a potential across rounds,
    :func:`fedtheory.certify.lyapunov.certify_rate`): the reason it is out of scope, or one
    row per instance with the stated and certified rate, potential and constant."""
    if not rate:
        return []
    if rate.get("status") in ("out of scope", "error"):
        return [f"**Rate** ({rate['status']}): {_md_cell(str(rate.get('reason', '')))}", ""]
    cf = rate.get("closed_form")
    out = [f"**Rate certificate** (potential search): **{_md_cell(str(rate.get('status')))}**; "
           f"{_md_cell(str(rate.get('description', '')))}"
           + (f"; closed form: {_md_cell(str(cf.get('text')))} "
              f"({'holds' if cf.get('holds') else 'not confirmed'})" if cf else ""), "",
           "| instance | stated | certified rate, potential, constant | at the stated potential "
           "| s |", "|---|---|---|---|---|"]
    for r in rate.get("instances", []):
        cert = (f"ρ = {r.get('rho')}" + (f" (lower {r['rho_lower']})" if r.get("rho_lower")
                                          else "")
                + f", V = {json.dumps(r.get('potential'), ensure_ascii=False)}, c = "
                f"{r.get('constant')}" + (" (attained)" if r.get("constant_tight") else "")
                if r.get("status") == "certified" else str(r.get("reason", r.get("status"))))
        at = r.get("at_stated_potential") or {}
        verdict = {True: " (the stated bound follows)", False: " (above the stated)"}.get(
            r.get("stated_certified"), "")
        out.append(f"| {_md_cell(json.dumps(r.get('params')))} | "
                   f"{_md_cell(json.dumps(r.get('stated'), ensure_ascii=False))} | "
                   f"{_md_cell(cert)} | {_md_cell(str(at.get('constant', '')) + verdict)} | "
                   f"{_md_cell(str(r.get('seconds', '')))} |")
    return [*out, ""]


def _certified_findings(c: Mapping[str, Any]) -> list[str]:
    """The certified entry's refutation (the PEP's own instance, re-checked exactly) and its
    symbolic derivation of the worst case, as Markdown lines (none when absent)."""
    out: list[str] = []
    if c.get("refuted"):
        ce = c.get("counterexample") or {}
        out += [f"**Refuted by the certificate**: {_md_cell(str(c['refuted']))}"
                + (f"; at `{_md_cell(json.dumps(ce.get('params')))}` the worst case is "
                   f"{ce.get('value')} against the stated {ce.get('stated')} "
                   f"({_md_cell(str(ce.get('from', '')))})" if ce else ""), ""]
    for d in c.get("derived") or []:
        out += [f"**Worst case derived** ({d.get('derivation')}, n = {d.get('n')}, in "
                f"{d.get('parameter')}): `{_md_cell(str(d.get('worst')))}`"
                + ("; attained by an instance" if d.get("attained") else "")
                + ("; equals the closed form" if d.get("closed_form_equal") else ""), ""]
    return out


def _closed_form_text(cf: Mapping[str, Any]) -> str:
    if not cf["holds"]:
        return "not confirmed"
    n, k = cf.get("instances", 0), cf.get("exactly", 0)
    return (f"equal to both certificates at {k} of {n} instances"
            + (", inside them at the others" if k < n else ""))


def _outcome_cell(m: dict[str, Any]) -> str:
    """A mutant's outcome for the power table; "still true" says on what evidence."""
    evidence = (m.get("instance") or {}).get("evidence")
    if m.get("statement_unchanged"):
        return f"{m['outcome']} (the mutant does not change the statement there)"
    return f"{m['outcome']} ({evidence})" if m["outcome"] == "still true" and evidence \
        else str(m["outcome"])


def setup_lines(setup: dict[str, Any]) -> list[str]:
    """An experiment's set-up card as Markdown: paper, authors' code, this run, deviation."""
    out = ["**Set-up** (the paper's, the authors' code's and this run's; every deviation with "
           "its reason):", "", "| aspect | paper | authors' code | this run | deviation |",
           "|---|---|---|---|---|"]
    for row in setup.get("rows") or []:
        paper = row.get("paper") or ""
        if row.get("paper_where"):
            paper += f" ({row['paper_where']})"
        code = row.get("code") or "–"
        if row.get("code") and row.get("code_where"):
            code += f" (`{row['code_where']}`)"
        out.append(f"| {_md_cell(row.get('aspect', ''))} | {_md_cell(paper)} | "
                   f"{_md_cell(code)} | {_md_cell(row.get('run') or '')} | "
                   f"{_md_cell(row.get('deviation') or 'as the paper')} |")
    if setup.get("code_url"):
        out += ["", f"Authors' code: {setup['code_url']}"]
    for s in setup.get("sensitivity") or []:
        out += ["", f"- Sensitivity run: {s}"]
    if setup.get("notes"):
        out += ["", setup["notes"]]
    return out + [""]


def erratum_lines(e: dict[str, Any], finding: str = "") -> list[str]:
    """A refutation's erratum as Markdown: its kind, what is wrong, the seed's words.

    Beside a ``finding`` (which says what is wrong in a referee's words), what is wrong is not
    said twice: the erratum's paragraph gives its kind, whether the intended statement holds
    and the seed's words, and its own account (``where``) is folded under them."""
    holds = {True: "the intended statement holds", False: "the intended statement is "
             "false too", None: "whether the intended statement holds is not known"}
    if finding.strip():
        out = [f"**Erratum** ({e['kind']}): {holds[e.get('intended_holds')]}.", ""]
    else:
        out = [f"**Erratum** ({e['kind']}): {markdown_math(e['where'])}; "
               f"{holds[e.get('intended_holds')]}.",
               ""]
    if e.get("quote"):
        where = e.get("location", "")
        out += [f"> {markdown_math(e['quote'], quote=True)}",
                f"> — {source_text('', where) if where else 'as printed'}", ""]
    if e.get("hypothesis"):
        out += [f"Omitted hypothesis: {markdown_math(e['hypothesis'])}.", ""]
    if e.get("relied_on"):
        out += [f"Where the paper relies on it: \"{markdown_math(e['relied_on'], quote=True)}\"",
                ""]
    if finding.strip() and e.get("where"):
        out += ["<details><summary>The erratum in detail</summary>", "", markdown_math(e["where"]),
                "", "</details>", ""]
    return out


def _passed_cell(c: Any) -> str:
    """A check's outcome in the report's table: passed, failed, undecided (and why), raised;
    a figure or an observation outside the verdict says so instead of "None"."""
    if c.error is not None:
        return "raised"
    if c.neutral:
        return "figure (shows)" if c.kind == "figure" else "reported (outside the verdict)"
    if c.passed is None:
        return f"undecided ({c.undecided})" if c.undecided else "undecided"
    return "passed" if c.passed else "**failed**"


def _md_value(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, list) and len(v) > 8:
        return f"[{', '.join(_md_value(x) for x in v[:8])}, ...] ({len(v)} values)"
    if isinstance(v, list):
        return "[" + ", ".join(_md_value(x) for x in v) + "]"
    return str(v)


def _md_cell(text: Any) -> str:
    """Text for one cell of a GitHub table: every ``|`` escaped (a ``||`` of a norm would
    split the row), on one line.

    >>> print(_md_cell("E||g||^2"))
    E\\|\\|g\\|\\|^2
    """
    return str(text if text is not None else "").replace("|", "\\|").replace("\n", " ")


def source_text(claim_id: str, seed_ref: str) -> str:
    """Where a claim is printed, for a reader: each seed by its short name and the place in it
    (``"OCS, eq. (7)"``), a declared paper's by its short name; a ``seed_ref`` naming no paper
    is shown as it is.

    >>> source_text("x", "002, eq. (7); 003, Theorem 3")
    'OCS, eq. (7); Lecture 14, Theorem 3'
    >>> source_text("x", "my notes")
    'my notes'
    """
    from fedtheory.papers import claim_references

    try:
        refs = claim_references(claim_id, seed_ref)
    except ValueError:
        return seed_ref
    return "; ".join(f"{p.short}, {place}" if place else p.short for p, place in refs)


def papers_lines(results: Sequence[ClaimResult]) -> list[str]:
    """The papers the results' claims cite, each cited as a paper (authors, title, venue and
    year, arXiv id or address: :attr:`fedtheory.papers.Paper.citation`), Markdown-escaped."""
    from fedtheory.papers import claim_references

    cited: dict[str, Any] = {}
    for r in results:
        try:
            cited.update((p.key, p) for p, _ in claim_references(r.id, r.seed_ref))
        except ValueError:  # a claim whose seed_ref names no paper: shown as it is
            continue
    return [f"- **{_md_text(p.short)}**: {_md_text(p.citation)}" for p in cited.values()]


def _md_text(text: str) -> str:
    """Text shown as it is in Markdown: its markup characters escaped."""
    return "".join("\\" + ch if ch in "\\`*_[]<>#|" else ch for ch in " ".join(text.split()))


def figure_alt(r: ClaimResult, c: Any) -> str:
    """The alt text of a check's figure in report.md: what it shows (the claim's title, the
    check's name and its detail), on one line, without the brackets that would end it."""
    what = " ".join(f"{r.title or r.id}: figure of check {c.name}".split())
    detail = " ".join(str(c.detail or "").split())
    text = f"{what} ({detail})" if detail else what
    text = text if len(text) <= 300 else text[:299] + "…"
    return text.replace("\\", "").replace("[", "(").replace("]", ")")


def provenance_lines(prov: dict[str, Any]) -> list[str]:
    """The provenance as a Markdown list (also used by ``fedtheory show``)."""
    commit = prov.get("commit") or "unknown (not run from a git checkout)"
    if prov.get("dirty"):
        commit += " (tree dirty: uncommitted changes)"
    pkgs = ", ".join(f"{k} {v}" for k, v in (prov.get("packages") or {}).items() if v)
    blas = "; ".join(f"{b.get('internal_api')} {b.get('version')} ({b.get('architecture')}, "
                     f"{b.get('num_threads')} threads)" for b in prov.get("blas") or [])
    lines = [
        f"- fedtheory {prov.get('fedtheory_version')}, commit {commit}",
        f"- preset `{prov.get('preset')}`, seed {prov.get('seed')}, jobs {prov.get('jobs')}",
        f"- written {prov.get('time')} by `{' '.join(prov.get('argv') or [])}` "
        f"in {prov.get('cwd')}",
        f"- Python {prov.get('python')} on {prov.get('platform')}",
    ]
    if pkgs:
        lines.append(f"- {pkgs}")
    if blas:
        lines.append(f"- BLAS: {blas}")
    if prov.get("path"):
        lines.append(f"- JSON: {prov['path']}")
    return lines


def write_markdown(directory: Path | str, results: Sequence[ClaimResult], seed: int,
                   preset: str, prov: dict[str, Any] | None = None) -> Path:
    """Write ``report.md`` in ``directory``: provenance, a summary table, then a section per
    claim with its statement, finding, derivation, checks, counterexample and figures."""
    directory = Path(directory)
    prov = prov if prov is not None else provenance(seed, preset)
    out = [f"# fedtheory report (preset `{preset}`, seed {seed})", "", "## Provenance", ""]
    out += provenance_lines(prov)
    cited = papers_lines(results)
    if cited:
        out += ["", "## Papers", "", *cited]
    counts = Counter(r.verdict.value for r in results)
    out += ["", ", ".join(f"**{k}**: {v}" for k, v in sorted(counts.items())),
            "", grade_counts(results)]
    out += ["", "| claim | paper | kind | verdict | checks |", "|---|---|---|---|---|"]
    for r in results:
        out.append(f"| [{r.id}](#{r.id.replace('.', '')}) | "
                   f"{_md_cell(source_text(r.id, r.seed_ref))} | {r.kind} | "
                   f"**{verdict_label(r.verdict.value, r.grade)}** | "
                   f"{checks_summary(r.checks)} |")
    for r in results:
        out += ["", f"## {r.id}", "", f"{source_text(r.id, r.seed_ref)}, {r.kind}: "
                f"**{verdict_label(r.verdict.value, r.grade)}**; {checks_summary(r.checks)}", ""]
        if r.readings:
            from fedtheory.claimkit.readings import parts_label, readings_text

            out += [f"**{parts_label(r.readings).capitalize()}.** "
                    f"{_md_cell(readings_text(r.readings))}", ""]
        if r.title:
            out += [r.title, ""]
        out += [*markdown_display(r.statement), ""]
        if r.finding:
            out += [f"**Finding.** {markdown_math(r.finding)}", ""]
        if r.erratum:
            out += erratum_lines(r.erratum, r.finding)
        if r.restatement:
            out += [f"**Restatement.** {markdown_math(r.restatement)}", ""]
        if r.setup:
            out += setup_lines(r.setup)
        if r.tightness:
            t = r.tightness
            out += [f"**Tightness.** measured/stated reaches {t['ratio']:.4g} (check "
                    f"`{t['check']}`; 1 means the bound is attained) at "
                    f"`{_md_cell(json.dumps(t.get('instance'), default=str)[:400])}`", ""]
        if r.certified:
            out += certified_lines(r.certified)
        if r.derivation:
            out += ["<details><summary>How it is derived and checked</summary>", "",
                    r.derivation.strip(), "", "</details>", ""]
        out += ["| check | kind | passed | measured | theory | detail |",
                "|---|---|---|---|---|---|"]
        for c in r.checks:
            out.append(f"| {_md_cell(c.name)} | {c.kind} | {_md_cell(_passed_cell(c))} | "
                       f"{_md_cell(markdown_math(_md_value(c.measured)))} | "
                       f"{_md_cell(markdown_math(_md_value(c.theoretical)))} | "
                       f"{_md_cell(markdown_math(c.detail))} |")
        if r.counterexample:
            replay = r.counterexample.get("replay") or {}
            check = r.counterexample.get("check")
            if replay and isinstance(check, str):  # --claims for a claim from a file, as
                from fedtheory.claimkit.core import replay_command  # the JSON report has it

                replay = replay_command(r.id, check, r.preset, r.seed, claim_file(r.id))
            out += ["", f"**Counterexample** (check `{r.counterexample.get('check')}`):", ""]
            if replay:
                out += ["Re-run exactly this case (prints the measured and stated values):", "",
                        "```bash", replay.get("command", ""), "```", "",
                        f"or in Python: `{replay.get('python', '')}`", ""]
            shown = {**r.counterexample, "replay": replay} if replay else r.counterexample
            out += ["```json", json.dumps(shown, indent=2)[:6000], "```"]
        for c in r.errors:
            out += ["", f"**Check `{c.name}` raised** (listed beside the verdict): "
                        f"`{_md_cell(c.detail)}`"]
        if r.power is not None and r.verdict.value == "refuted":
            out += ["", "**Power**: n/a (refuted: the statement already fails)."]
        elif r.power:
            out += ["", "**Power** (the checks run against mutants of the statement):", "",
                    "| mutant | outcome | by |", "|---|---|---|"]
            out += [f"| {m['mutant']} | {_outcome_cell(m)} | {', '.join(m.get('by') or [])} |"
                    for m in r.power]
        for c in r.checks:
            rel = [os.path.relpath(fig, directory) for fig in c.figures]
            for f in rel:  # a PNG shown (its PDF twin linked beside it), other files linked
                stem, suffix = os.path.splitext(f)
                if suffix == ".png":
                    pdf = f" ([PDF]({stem}.pdf))" if stem + ".pdf" in rel else ""
                    out += ["", f"![{figure_alt(r, c)}]({f}){pdf}"]
                elif not (suffix == ".pdf" and stem + ".png" in rel):
                    out += ["", f"[{c.name}: {os.path.basename(f)}]({f})"]
    return atomic_write_text(directory / "report.md", "\n".join(out) + "\n", "--report")
