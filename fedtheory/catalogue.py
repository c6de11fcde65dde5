"""The claim catalogue: every registered claim with its paper, its place there and its verdict.

``CATALOGUE.md`` at the repository root is rendered by :func:`render_catalogue` from the live
registry and the verdicts the claims declare (:func:`declared_verdicts`: ``Claim.expected``,
which the test suite holds to a quick run), so that adding a claim needs no verification run:
``python -m fedtheory catalogue --regenerate`` (:mod:`fedtheory.contract`) rewrites it. A user
catalogues a real run's verdicts instead from its JSON report (:func:`read_report`:
``fedtheory catalogue --from REPORT.json``). The rendered file ends with an HTML comment
holding the verdicts and the provenance as JSON, so :func:`parse_catalogue` can recover them
and a test can re-render the file and check that it is current::

    verdicts, provenance = parse_catalogue(text)
    assert render_catalogue(all_claims(), verdicts, provenance) == text

Families come in the order their packages declare (:mod:`fedtheory.claims.family_packages`), with
their titles; a family's seeds are the ones its claims cite.

>>> from fedtheory.claims import get_claim
>>> text = render_catalogue([get_claim("ocs.closed_form")], {"ocs.closed_form": "refuted"}, None)
>>> parse_catalogue(text)
({'ocs.closed_form': 'refuted'}, {})
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fedtheory.claimkit.core import Claim
from fedtheory.claims.family_packages import declaration, declared_families
from fedtheory.papers import PAPERS, Paper, references, seed_keys

__all__ = [
    "DATA_MARKER",
    "DECLARED_PROVENANCE",
    "FROM_REPORT_COMMAND",
    "REGENERATE_COMMAND",
    "declared_verdicts",
    "family_seeds",
    "parse_catalogue",
    "read_report",
    "render_catalogue",
]

#: The command that regenerates ``CATALOGUE.md`` (and the generated part of ``docs/claims.md``)
#: from the claim files, with their declared verdicts.
REGENERATE_COMMAND = "python -m fedtheory catalogue --regenerate"

#: The command that writes a catalogue with the verdicts of a quick run's report.
FROM_REPORT_COMMAND = "fedtheory catalogue --from REPORT.json --out CATALOGUE.md"

#: The command that writes that report.
REPORT_COMMAND = "fedtheory verify --quick --json REPORT.json"

#: The provenance of the declared verdicts (:func:`declared_verdicts`).
DECLARED_PROVENANCE: dict[str, Any] = {
    "preset": "quick",
    "seed": 0,
    "source": "declared by each claim (expected=); tests/test_registry.py holds them to a run",
}

#: Opens the HTML comment that holds the machine-readable verdicts and provenance.
DATA_MARKER = "<!-- fedtheory-catalogue-data"

_WIDTH = 100


def __getattr__(name: str) -> Any:
    """``FAMILY_TITLES`` (deprecated): family -> title, now declared by each family's package
    (:func:`fedtheory.claims.family_packages.declaration`)."""
    if name == "FAMILY_TITLES":
        import warnings

        warnings.warn("fedtheory.catalogue.FAMILY_TITLES is deprecated: a family declares its "
                      "title in its package (fedtheory.claims.family_packages.declaration(f)"
                      ".title)", DeprecationWarning, stacklevel=2)
        return {f: declaration(f).title for f in declared_families()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

_FORMAT = 1
_VERDICT_ORDER = ("confirmed", "refuted", "inconclusive", "error")
_NO_VERDICT = "not run"
_DATA_RE = re.compile(re.escape(DATA_MARKER) + r"\n(.*?)\n-->", re.DOTALL)


# --------------------------------------------------------------------------------- text helpers


def _md(text: str) -> str:
    r"""Escape what Markdown would take as markup in plain text, and nothing more.

    Backslashes, backticks and ``*`` always; ``_`` where it could open emphasis; ``<`` before
    what could be a tag; ``]`` before what could make a link.

    >>> print(_md("E[x](1) <= 2*a_b, _c <b>"))
    E[x\](1) <= 2\*a_b, \_c \<b>
    """
    text = text.replace("\\", "\\\\").replace("`", "\\`").replace("*", "\\*")
    text = re.sub(r"<(?=[A-Za-z/!?])", r"\\<", text)
    text = re.sub(r"\](?=[(\[])", r"\\]", text)
    return re.sub(r"(?<!\w)_(?=\S)", r"\\_", text)


_BLOCK_WORD = re.compile(r"[-+*]|\d{1,9}[.)]|#{1,6}|=+|-+|_+|\*+|>.*|```.*|~~~.*")


def _wrap(text: str, first: str = "", rest: str = "", width: int = _WIDTH) -> list[str]:
    """Greedy word wrap of Markdown text that never starts a line with block markup.

    A word that would start a list, quote, heading or fence at the start of a line takes the
    word before it along to the next line.

    >>> _wrap("ab cd - e", width=6)
    ['ab', 'cd - e']
    >>> _wrap("one two three", first="- ", rest="  ", width=9)
    ['- one two', '  three']
    """
    lines: list[str] = []
    prefix, cur = first, []
    for word in text.split():
        if not cur or len(prefix + " ".join([*cur, word])) <= width:
            cur.append(word)
        elif not _BLOCK_WORD.fullmatch(word):
            lines.append(prefix + " ".join(cur))
            prefix, cur = rest, [word]
        elif len(cur) >= 2 and not _BLOCK_WORD.fullmatch(cur[-1]):
            lines.append(prefix + " ".join(cur[:-1]))
            prefix, cur = rest, [cur[-1], word]
        else:
            cur.append(word)
    lines.append(prefix + " ".join(cur))
    return lines


def _wrap_math(statement: str, width: int = _WIDTH) -> list[str]:
    r"""Wrap LaTeX at spaces that are not control spaces (``\ ``); a newline is a space in math.

    >>> _wrap_math(r"a + b\ c + d", width=5)
    ['a +', 'b\\ c', '+ d']
    """
    out: list[str] = []
    for raw in statement.strip().splitlines():
        tokens = re.split(r"(?<!\\) ", raw.rstrip())
        line = tokens[0]
        for tok in tokens[1:]:
            if len(line) + 1 + len(tok) <= width or not line.strip():
                line += " " + tok
            else:
                out.append(line)
                line = tok
        out.append(line)
    return out


def _value(value: Any) -> str:
    """A provenance value as text: strings as they are, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)


def _flatten(prefix: str, value: Any) -> list[tuple[str, Any]]:
    """Nested objects as dotted keys, sorted; other values (lists included) as they are.

    >>> _flatten("", {"b": 1, "a": {"y": [1, 2], "x": {}}})
    [('a.x', {}), ('a.y', [1, 2]), ('b', 1)]
    """
    if isinstance(value, Mapping) and (value or not prefix):
        out: list[tuple[str, Any]] = []
        for key in sorted(value):
            out += _flatten(f"{prefix}.{key}" if prefix else key, value[key])
        return out
    return [(prefix, value)]


def _claim_anchor(claim_id: str) -> str:
    return f"claim-{claim_id}"


def _paper_anchor(key: str) -> str:
    return f"seed-{key}"


def _claim_link(claim_id: str) -> str:
    return f"[`{claim_id}`](#{_claim_anchor(claim_id)})"


def _paper_link(paper: Paper, long: bool = False) -> str:
    label = f"{paper.short} ({paper.key})" if long else paper.key
    return f"[{label}](#{_paper_anchor(paper.key)})"


def _anchor(name: str) -> list[str]:
    return [f'<a name="{name}"></a>', ""]


# ------------------------------------------------------------------------------- validation


def _check_inputs(
    verdicts: Mapping[str, str] | None, provenance: Mapping[str, Any] | None
) -> tuple[dict[str, str], dict[str, Any]]:
    v = dict(verdicts or {})
    p = dict(provenance or {})
    for key, val in v.items():
        if not isinstance(key, str) or not isinstance(val, str):
            raise TypeError(f"verdicts must map str to str, got {key!r}: {val!r}")
    for key in p:
        if not isinstance(key, str):
            raise TypeError(f"provenance keys must be strings, got {key!r}")
    try:
        # Plain JSON only; the round trip makes tuples lists, as parse_catalogue will see them.
        p = json.loads(json.dumps(p, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise TypeError(f"provenance must be plain JSON: {exc}") from None
    return v, p


def _data_comment(verdicts: Mapping[str, str], provenance: Mapping[str, Any]) -> list[str]:
    doc = {"format": _FORMAT, "provenance": provenance, "verdicts": verdicts}
    text = json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=True, allow_nan=False)
    # Inside JSON, '-' and '>' only occur in strings (and '-' as a sign, never twice in a row),
    # so these escapes keep the JSON equal while the comment cannot be closed early.
    text = text.replace("--", "-\\u002d").replace(">", "\\u003e").replace("<", "\\u003c")
    return [DATA_MARKER, text, "-->"]


# ---------------------------------------------------------------------------------- sections


def _header(n_claims: int) -> list[str]:
    return [
        "<!-- Generated file: do not edit by hand. Regenerate with the commands below. -->",
        "",
        "# Claim catalogue",
        "",
        "This file is generated from the claim files (`fedtheory/claims/<family>/<name>.py`) and",
        "the verdicts they declare (`expected=`, which the test suite holds to a quick run), or",
        "those of a run's report (see the provenance below). Regenerate it (with the contract,",
        "`docs/claims.md`) with:",
        "",
        "```sh",
        REGENERATE_COMMAND,
        "```",
        "",
        *_wrap("`tests/test_catalogue.py` fails while this file is out of date. A catalogue of a "
               f"real run's verdicts: `{REPORT_COMMAND}`, then `{FROM_REPORT_COMMAND}`."),
        "",
        f"It lists the {n_claims} registered claims: for each, the seed document it comes from",
        "(see [Papers](#papers)), the place there, its kind, its statement and the last verdict.",
        "`fedtheory show <id>` prints a claim's checks and how it is derived. The statements the",
        "claims must verify, in words, are the contract [`docs/claims.md`](docs/claims.md).",
    ]


def _provenance_section(
    claims: Sequence[Claim], verdicts: Mapping[str, str], provenance: Mapping[str, Any]
) -> list[str]:
    out = ["", "## Provenance of the verdicts", ""]
    if provenance:
        out += ["The verdicts below were recorded with:", ""]
        for key, val in _flatten("", provenance):
            name = f"`{key}`" if "`" not in key else _md(key)
            out += _wrap(f"{name}: {_md(_value(val))}", first="- ", rest="  ")
    else:
        out.append("No provenance was given for these verdicts.")
    counts = Counter(verdicts.get(c.id, _NO_VERDICT) for c in claims)
    order = [v for v in _VERDICT_ORDER if v in counts]
    order += sorted(v for v in counts if v not in _VERDICT_ORDER and v != _NO_VERDICT)
    order += [_NO_VERDICT] if _NO_VERDICT in counts else []
    summary = ", ".join(f"{v}: {counts[v]}" for v in order) or "none"
    out += ["", *_wrap(f"Verdicts of the {len(claims)} registered claims: {summary}.")]
    known = {c.id for c in claims}
    stray = sorted(k for k in verdicts if k not in known)
    if stray:
        text = "These ids have a verdict but no registered claim: " + ", ".join(
            f"`{k}`" for k in stray
        )
        out += ["", *_wrap(text + ".")]
    return out


def _family_order(claims: Sequence[Claim]) -> list[str]:
    """The families of ``claims``, in the order their packages declare."""
    present = {c.family for c in claims}
    return [f for f in declared_families(sorted(present)) if f in present]


def family_seeds(family_name: str, claims: Iterable[Claim]) -> tuple[str, ...]:
    """The seeds (numbers of :data:`fedtheory.papers.PAPERS`) the claims of ``family_name``
    among ``claims`` cite, sorted: derived from their ``seed_ref``, never declared."""
    return tuple(sorted({k for c in claims if c.family == family_name for k in _seed_keys(c)}))


def declared_verdicts(claims: Iterable[Claim]) -> dict[str, str]:
    """Claim id -> the verdict it declares for the quick preset (``expected=``), for the
    claims that declare one."""
    return {c.id: c.expected.value for c in claims if c.expected is not None}


def _papers_section(claims: Sequence[Claim]) -> list[str]:
    out = ["", *_anchor("papers"), "## Papers", ""]
    out += _wrap(
        "The seed documents, by the number that starts each claim's `seed_ref`. Titles, "
        "authors and affiliations are as the documents state them; venue, year and arXiv id, "
        "where a document does not print them, were checked on its arXiv and OpenReview pages "
        "(each note says where), and what none of them states is marked so. The seed texts "
        "themselves are not distributed with this repository: the title, authors and arXiv id "
        "identify each document, and its seed text id names the text the statements were read "
        "from. The contract, the statements to verify in words, is "
        "[`docs/claims.md`](docs/claims.md)."
    )
    for key in sorted(PAPERS):
        paper = PAPERS[key]
        out += ["", *_anchor(_paper_anchor(key)), f"### {key}: {paper.short}", ""]
        out += _wrap(f"*{_md(paper.title)}*")
        out.append("")
        authors = _md(", ".join(paper.authors)) if paper.authors else "not stated (unsigned notes)"
        rows = [
            ("Authors", authors),
            ("Affiliations", _md("; ".join(paper.affiliations)) or "not stated"),
            ("Kind", paper.kind),
        ]
        if paper.date:
            rows.append(("Date", paper.date))
        rows += [
            ("Year", str(paper.year) if paper.year is not None else "not stated in the file"),
            ("Venue", _md(paper.venue) if paper.venue else "not stated in the file"),
            ("arXiv", f"[{paper.arxiv}]({paper.arxiv_url})" if paper.arxiv else "not stated"),
            ("Seed text id", f"`{paper.seed_file.removesuffix('.txt')}`"),
            ("Covers", _md(paper.covers)),
        ]
        if paper.notes:
            rows.append(("Note", _md(paper.notes)))
        fams = [f for f in _family_order(claims) if key in family_seeds(f, claims)]
        rows.append(("Families", ", ".join(f"[`{f}`](#family-{f})" for f in fams) or "none"))
        cited = [c.id for c in claims if key in _seed_keys(c)]
        rows.append(("Claims", ", ".join(_claim_link(i) for i in cited) or "none registered"))
        for name, value in rows:
            out += _wrap(f"**{name}:** {value}", first="- ", rest="  ")
    return out


def _family_section(
    family: str,
    claims: Sequence[Claim],
    verdicts: Mapping[str, str],
    preset: str,
) -> list[str]:
    title = declaration(family).title
    heading = f"## Family `{family}`" + (f": {title}" if title else "")
    out = ["", *_anchor(f"family-{family}"), heading, ""]
    seeds = family_seeds(family, claims)
    if seeds:
        papers = ", ".join(_paper_link(PAPERS[k], long=True) for k in seeds if k in PAPERS)
        out += _wrap(f"Seeds (per [`docs/claims.md`](docs/claims.md)): {papers}.")
        out.append("")
    ids = {c.id for c in claims}
    out += ["| claim | papers | kind | verdict |", "|---|---|---|---|"]
    for c in claims:
        papers = ", ".join(_paper_link(PAPERS[k]) for k in _seed_keys(c))
        verdict = _md(verdicts.get(c.id, _NO_VERDICT)).replace("|", "\\|")
        out.append(f"| {_claim_link(c.id)} | {papers} | {c.kind.value} | {verdict} |")
    for c in claims:
        out += _claim_section(c, verdicts, preset, ids)
    return out


def _cites_seeds(claim: Claim) -> bool:
    """Whether ``claim`` cites the seed papers (its ``seed_ref`` starts with a seed number); a
    claim from outside the package may cite anything, shown as written."""
    return bool(re.match(r"\s*\d", claim.seed_ref))


def _references(claim: Claim) -> tuple[tuple[Paper, str], ...]:
    return references(claim.seed_ref) if _cites_seeds(claim) else ()


def _seed_keys(claim: Claim) -> tuple[str, ...]:
    return seed_keys(claim.seed_ref) if _cites_seeds(claim) else ()


def _claim_section(
    claim: Claim, verdicts: Mapping[str, str], preset: str, ids: Iterable[str]
) -> list[str]:
    out = ["", *_anchor(_claim_anchor(claim.id)), f"### `{claim.id}`", ""]
    out += _wrap(_md(claim.title))
    out.append("")
    source = "; ".join(
        _paper_link(paper, long=True) + (f", {_md(place)}" if place else "")
        for paper, place in _references(claim)
    ) or _md(claim.seed_ref)
    rows = [("Source", source), ("Kind", claim.kind.value)]
    rows.append((f"Verdict ({preset})", f"**{_md(verdicts.get(claim.id, _NO_VERDICT))}**"))
    if claim.id.endswith(".corrected"):
        base = claim.id[: -len(".corrected")]
        if base in set(ids):
            rows.append(("Corrects", _claim_link(base)))
    elif f"{claim.id}.corrected" in set(ids):
        rows.append(("Corrected by", _claim_link(f"{claim.id}.corrected")))
    for name, value in rows:
        out += _wrap(f"**{name}:** {value}", first="- ", rest="  ")
    out += ["", "```math", *_wrap_math(claim.statement), "```"]
    return out


# ------------------------------------------------------------------------------------ public


def render_catalogue(
    claims: Iterable[Claim],
    verdicts: Mapping[str, str] | None,
    provenance: Mapping[str, Any] | None,
) -> str:
    """Render the catalogue of ``claims`` as Markdown (the text of ``CATALOGUE.md``).

    Parameters
    ----------
    claims:
        The claims, usually :func:`fedtheory.claims.all_claims`; within a family they keep this
        order, families the order their packages declare (as in ``docs/claims.md``).
    verdicts:
        Claim id -> verdict (``"confirmed"``, ``"refuted"``, ...) of the quick preset; a claim
        without one shows ``"not run"``. None is the same as ``{}``.
    provenance:
        Where the verdicts come from (fedtheory version, commit, preset, seed, time, ...): every
        key is shown, in sorted order; values must be plain JSON. None is the same as ``{}``.

    The same inputs always give the same text. It ends with an HTML comment holding the
    verdicts and the provenance as JSON, which :func:`parse_catalogue` reads back.

    Raises
    ------
    ValueError
        A claim's ``seed_ref`` names no known seed.
    TypeError
        A verdict is not a string, or a provenance value is not plain JSON.
    """
    claims = list(claims)
    v, p = _check_inputs(verdicts, provenance)
    preset = _md(_value(p["preset"])) if "preset" in p else "preset not recorded"
    out = _header(len(claims))
    out += _provenance_section(claims, v, p)
    families = _family_order(claims)
    out += ["", "## Contents", "", "- [Papers](#papers)"]
    for fam in families:
        title = declaration(fam).title
        out.append(f"- [Family `{fam}`](#family-{fam})" + (f": {title}" if title else ""))
    out += _papers_section(claims)
    for fam in families:
        out += _family_section(fam, [c for c in claims if c.family == fam], v, preset)
    out += ["", *_data_comment(v, p)]
    return "\n".join(out) + "\n"


def parse_catalogue(text: str) -> tuple[dict[str, str], dict[str, Any]]:
    """The verdicts and the provenance embedded in a rendered catalogue.

    ``render_catalogue(claims, *parse_catalogue(render_catalogue(claims, v, p)))`` gives back
    the same text.

    Raises
    ------
    ValueError
        The text holds no (or no readable) data comment.
    """
    matches = _DATA_RE.findall(text)
    if not matches:
        raise ValueError(
            f"no '{DATA_MARKER}' comment found: not a catalogue rendered by fedtheory "
            f"(regenerate it with `{REGENERATE_COMMAND}`)"
        )
    try:
        doc = json.loads(matches[-1])
    except json.JSONDecodeError as exc:
        raise ValueError(f"the catalogue's data comment is not valid JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
        raise ValueError(f"unknown catalogue data format: {doc.get('format')!r}")
    verdicts, provenance = doc.get("verdicts", {}), doc.get("provenance", {})
    if not isinstance(verdicts, dict) or not isinstance(provenance, dict):
        raise ValueError("the catalogue's data comment must hold two objects")
    return dict(verdicts), dict(provenance)


def read_report(path: Path | str, claims: Sequence[Claim] | None = None
                ) -> tuple[dict[str, str], dict[str, Any]]:
    """The verdicts and provenance of a finished ``fedtheory verify --json`` report.

    The report is untrusted input: it must match the schema (:func:`fedtheory.report.
    load_report`), be complete (not an interrupted run's), and every entry must hold up
    (:func:`fedtheory.schema.audit`: its verdict is recomputed from its checks, its digest
    matches, and, for the ``claims`` given, it was written by their definitions as they are).
    The verdicts returned are the recomputed ones.

    Raises
    ------
    ValueError
        The file is not such a report (the message names the file, the claim and the field).
    """
    from fedtheory.report import load_report, unresolved
    from fedtheory.schema import audit, claim_label, definition_of, derived

    doc = load_report(path)
    if not doc["complete"]:
        from fedtheory.commands import resume
        from fedtheory.schema import file_source

        files = sorted({f for e in doc["claims"] if (f := file_source(e)) is not None})
        again = resume(path, doc["preset"], doc["seed"], claims=files,
                       options=["--json", str(path)])
        raise ValueError(f"report {path}: the run did not finish (complete: false, "
                         f"{len(doc['claims'])} claim(s)): continue it with `{again}`")
    by_id = {c.id: c for c in claims or ()}
    verdicts: dict[str, str] = {}
    for k, entry in enumerate(doc["claims"]):
        claim = by_id.get(entry["id"])
        problem = unresolved(entry)
        if problem is None and claim is None:
            problem = f"id: {ascii(entry['id'])} is not among the claims catalogued"
        problems = [problem] if problem is not None else audit(
            entry, preset=doc["preset"], seed=doc["seed"],
            definition=definition_of(claim, doc["preset"]))
        if problems:
            more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
            raise ValueError(f"report {path}: {claim_label(doc, k)}: {problems[0]}{more}; "
                             "run it again")
        verdicts[entry["id"]] = derived(entry)["verdict"]
    return verdicts, dict(doc["provenance"])
