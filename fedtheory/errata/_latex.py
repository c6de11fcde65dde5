r"""The errata of one seed paper as LaTeX snippets an author can paste.

One block per refuted claim, each starting with a comment line naming the claim: a
``\paragraph`` with the place and the erratum kind, the statement as printed (quoted), what is
wrong, the smallest counterexample as a list, the corrected statement in an ``equation*``, and
the command that re-runs the counterexample (as a comment, rebuilt from the entry's validated
parts and quoted: :func:`fedtheory.schema.replay_shown`). Every text that a report chooses
(counterexample values, check details and names, certified ratios, provenance) is escaped
for text mode character by character (:func:`._math.latex_escape`): no macro of a report
survives. Only the claim's definition (its statement, the seed's quoted words, the erratum's
prose), which must equal the loaded claim's before a page is written
(:func:`fedtheory.errata.load_errata_report`), keeps its formulas as LaTeX. The header lists
the packages the formulas use.
"""

from __future__ import annotations

from fedtheory.errata._content import (
    CHECK_EVIDENCE,
    ERRATUM_MEANING,
    Erratum,
    PaperErrata,
    certified_text,
    flatten,
)
from fedtheory.errata._math import latex_escape, math_latex, rich_latex
from fedtheory.safetext import terminal_text

__all__ = ["render_latex"]

_HOLDS = {True: "The intended statement holds.", False: "The intended statement is false too.",
          None: "Whether the intended statement holds is not established here."}


def _comment(text: str) -> str:
    """A LaTeX comment line: the text on one line (every line break and control character
    gone), so nothing of it reaches TeX but as a comment."""
    return "% " + " ".join(terminal_text(text).split())


def _block(item: Erratum) -> list[str]:
    er = item.erratum
    kind = f" ({latex_escape(er['kind'])})" if er["kind"] else ""
    out = ["", _comment("-" * 90), _comment(f"{item.id}: refuted"),
           f"\\paragraph{{Erratum{kind}: {latex_escape(item.place)}.}}"]
    if er["quote"]:
        out += ["As printed:", "\\begin{quote}", rich_latex(er["quote"], quote=True),
                "\\end{quote}"]
    out += ["As checked:", "\\begin{equation*}", math_latex(item.statement), "\\end{equation*}"]
    if er["kind"]:
        where = er["where"].rstrip(".")
        text = f"{er['kind'].capitalize()} ({ERRATUM_MEANING[er['kind']]}). {where}."
        out += [rich_latex(text) + " " + _HOLDS[er["intended_holds"]]]
        if er["hypothesis"]:
            out += [f"Hypothesis to add: {rich_latex(er['hypothesis'])}."]
    elif item.finding:
        out += [rich_latex(item.finding)]
    if item.counterexample_check or item.counterexample:
        how = (f" (check \\texttt{{{latex_escape(item.counterexample_check.name)}}}, "
               f"{CHECK_EVIDENCE[item.counterexample_check.kind]})"
               if item.counterexample_check else "")
        out += [f"Counterexample{how}:"]
        if item.counterexample:
            out += ["\\begin{itemize}"]
            out += [f"  \\item \\texttt{{{latex_escape(name)}}} $=$ {latex_escape(value)}"
                    for name, value in flatten(item.counterexample)]
            out += ["\\end{itemize}"]
    if item.replay.get("command"):
        command = item.replay["command"]  # pasteable as it is, unless it holds a backslash
        if "\\" in command:
            command = latex_escape(command)
        out += [_comment(f"re-run it: {command}")]
    c = item.corrected
    if c is not None:
        verdict = f", {c.verdict} by fedtheory" if c.verdict else ", not verified in this report"
        out += [f"Corrected statement (\\texttt{{{latex_escape(c.id)}}}{verdict}):",
                "\\begin{equation*}", math_latex(c.statement), "\\end{equation*}"]
        if c.certified is not None:
            out += [latex_escape(f"Certified: {certified_text(c.certified)}.")]
    if item.certified is not None:
        out += [latex_escape(f"Certified tightness: {certified_text(item.certified)}.")]
    return out


def render_latex(e: PaperErrata, version: str) -> str:
    """The LaTeX snippets of ``e`` (:func:`fedtheory.errata.paper_errata`); ``version`` is the
    fedtheory version that writes them."""
    prov = e.provenance
    commit = prov.get("commit") or "unknown"
    head = [
        _comment(f"Errata for: {e.paper.citation}"),
        _comment(f"Written by fedtheory {version} `fedtheory errata` from "
                 + latex_escape(f"{e.source or 'a report'} (fedtheory "
                                f"{prov.get('fedtheory_version')}, commit {commit}, preset "
                                f"{prov.get('preset')}, seed {prov.get('seed')}).")),
        _comment("Paste the blocks you need. The formulas use amsmath, amssymb and mathtools "
                 "(\\coloneqq): \\usepackage{amsmath,amssymb,mathtools}."),
    ]
    if not e.errata:
        head += ["", _comment("No statement of this document is refuted in the report.")]
    for item in e.errata:
        head += _block(item)
    return "\n".join(head) + "\n"
