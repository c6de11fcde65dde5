"""What an errata page says, read from a verified report: one :class:`PaperErrata` per seed.

:func:`load_errata_report` reads the report as untrusted input (the schema, a finished run, and
every entry's audit: :func:`fedtheory.schema.audit`, against the claim's definition as the
index has it); :func:`paper_errata` collects, for one seed paper, its refuted claims (each an
:class:`Erratum`: the statement as printed, the erratum, the smallest exact counterexample, the
corrected statement and its evidence, the figures, the replay command, the certified ratio) and
its other claims (one :class:`Row` each, for the compact table). Everything here is data; the
HTML and LaTeX renderers (:mod:`._html`, :mod:`._latex`) only lay it out.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fedtheory import commands
from fedtheory.errata._rules import place as _place
from fedtheory.errata._rules import said_once, tightness_text, without_checks
from fedtheory.errata._rules import seeds_named as _seeds_named
from fedtheory.index import load_index
from fedtheory.papers import Paper, claim_references, known_papers
from fedtheory.report import check_counts, load_report, loaded_definition, unresolved
from fedtheory.safefiles import read_bounded
from fedtheory.schema import audit, claim_label, derived, file_source, replay_shown
from fedtheory.vocabulary import CHECK_KINDS, ERRATUM_MEANING, EVIDENCE_KINDS, kind_words

__all__ = [
    "CHECK_EVIDENCE",
    "ERRATUM_MEANING",
    "Corrected",
    "Erratum",
    "Evidence",
    "Figure",
    "PaperErrata",
    "Row",
    "check_paper",
    "evidence_summary",
    "load_errata_report",
    "paper_errata",
    "papers_in",
]

# What each erratum kind means: ERRATUM_MEANING, imported from fedtheory.vocabulary.

#: What a check of each kind establishes, as a counterexample's provenance (each evidence
#: kind's ``establishes``: :mod:`fedtheory.vocabulary.evidence`).
CHECK_EVIDENCE: dict[str, str] = {k.name: k.establishes for k in EVIDENCE_KINDS.values()}

# The order in which failing checks are preferred as "the" counterexample: exact first (the
# evidence kinds' order).
_EXACTNESS = CHECK_KINDS

# Counterexample fields that say how to re-run it, not what it is.
_REPLAY_FIELDS = ("replay", "seed", "preset", "check")

#: Largest figure embedded in a page (bytes); a larger file is named, not embedded.
MAX_FIGURE_BYTES = 2 * 1024 * 1024

#: Most figures embedded in one page, and most bytes of them all: the others are named only.
MAX_FIGURES_PER_PAGE = 24
MAX_PAGE_FIGURE_BYTES = 8 * 1024 * 1024

# An erratum's fields when the refuted claim declares none (a user's claim, say).
_NO_ERRATUM: dict[str, Any] = {"kind": "", "where": "", "quote": "", "location": "",
                               "hypothesis": None, "relied_on": None, "intended_holds": None}

# The figure formats a run writes: suffix -> media type (PDF: linked twin, never embedded).
_IMAGE_TYPES = {".png": "image/png", ".svg": "image/svg+xml"}
_FIGURE_SUFFIXES = (".png", ".svg", ".pdf")


@dataclass(frozen=True)
class Evidence:
    """One check of a claim as a page shows it: ``name``, ``kind``, ``outcome`` ("passed",
    "failed", "undecided", "raised", "figure") and its ``detail``."""

    name: str
    kind: str
    outcome: str
    detail: str


@dataclass(frozen=True)
class Figure:
    """A figure of a check: ``path`` as the report gives it, ``file`` where it was found (or
    None), ``media_type``, the bytes embedded (``data``, read once, checked: None when it is
    not embedded) and, when it is not, why (``note``)."""

    check: str
    path: str
    file: Path | None
    media_type: str | None
    data: bytes | None = None
    note: str = ""


@dataclass(frozen=True)
class Corrected:
    """The ``.corrected`` sibling of a refuted claim: where the paper prints it (``seed_ref``:
    its place in the page's paper, as :func:`._rules.place` says it), its statement, and its verdict
    and evidence when the report has it (``verdict`` None: not in the report)."""

    id: str
    seed_ref: str
    statement: str
    verdict: str | None
    evidence: tuple[Evidence, ...] = ()
    tightness: Mapping[str, Any] | None = None
    certified: Any = None
    finding: str = ""


@dataclass(frozen=True)
class Erratum:
    """A refuted claim of one paper, with everything its page section shows."""

    id: str
    title: str
    place: str
    kind: str
    statement: str
    restatement: str
    finding: str
    erratum: Mapping[str, Any]
    counterexample_check: Evidence | None
    counterexample: Mapping[str, Any]
    replay: Mapping[str, Any]
    other_failures: tuple[Evidence, ...]
    evidence: tuple[Evidence, ...]
    corrected: Corrected | None
    figures: tuple[Figure, ...]
    certified: Any
    tightness: Mapping[str, Any] | None
    setup: Mapping[str, Any] | None


@dataclass(frozen=True)
class Row:
    """A claim of the compact table: not refuted (confirmed, inconclusive or error)."""

    id: str
    title: str
    place: str
    kind: str
    verdict: str
    evidence: str
    tightness: Mapping[str, Any] | None
    certified: Any
    power: str
    #: Its statement (LaTeX), figures and tightness in words (:func:`._rules.tightness_text`).
    statement: str = ""
    figures: tuple[Figure, ...] = ()
    tightness_text: str = ""


@dataclass(frozen=True)
class PaperErrata:
    """Everything the errata of ``paper`` say, from the report ``source``."""

    paper: Paper
    errata: tuple[Erratum, ...]
    rows: tuple[Row, ...]
    provenance: Mapping[str, Any]
    source: str
    source_sha256: str
    counts: Mapping[str, int] = field(default_factory=dict)
    #: How many of those statements have each grade (``confirmed``, ``consistent (low
    #: power)``, ``not testable``: :func:`fedtheory.verdicts.grade_of`).
    grades: Mapping[str, int] = field(default_factory=dict)


# ----------------------------------------------------------------------------------- reading


def load_errata_report(path: Path | str) -> dict[str, Any]:
    """The report at ``path``, read as untrusted input.

    It must match the schema (:func:`fedtheory.report.load_report`), be a finished run, and
    every entry must hold up (:func:`fedtheory.schema.audit`: verdict, counterexample and
    tightness recomputed from its checks, the replay commands, the digest, and the definition
    of the claim as the index has it now). ``ValueError`` names the file, the claim and the
    field otherwise.
    """
    doc = load_report(path)
    if not doc["complete"]:
        files = sorted({f for e in doc["claims"] if (f := file_source(e)) is not None})
        again = commands.resume(path, doc["preset"], doc["seed"], claims=files,
                                options=["--json", str(path)])
        raise ValueError(f"report {path}: the run did not finish (complete: false, "
                         f"{len(doc['claims'])} claim(s)): continue it with `{again}` first")
    for k, entry in enumerate(doc["claims"]):
        problem = unresolved(entry)  # every id a loaded claim's: its definition is checked
        definition = loaded_definition(entry["id"], doc["preset"]) if problem is None else None
        if problem is None and definition is None:
            problem = f"id: {ascii(entry['id'])} has no definition here"
        problems = [problem] if problem is not None else audit(
            entry, preset=doc["preset"], seed=doc["seed"], definition=definition)
        if problems:
            more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
            raise ValueError(f"report {path}: {claim_label(doc, k)}: {problems[0]}{more}; "
                             "run it again")
    return doc


def check_paper(paper: str) -> str:
    """The seed key of ``paper``: a key (``"002"``) or a short name (``"ocs"``, any case).

    >>> check_paper("OCS"), check_paper("004")
    ('002', '004')
    >>> check_paper("xyz")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: --paper must be a seed key or short name (000 = MIFA notes, ...), got 'xyz'
    """
    papers = known_papers()  # the seeds, and the papers claim folders declared
    if isinstance(paper, str):
        if paper in papers:
            return paper
        for key, p in papers.items():
            if paper.strip().lower() in (p.short.lower(), p.short.lower().replace(" ", "-")):
                return key
    known = ", ".join(f"{k} = {p.short}" for k, p in papers.items())
    raise ValueError(f"--paper must be a seed key or short name ({known}), got {paper!r}")


def papers_in(doc: Mapping[str, Any]) -> list[str]:
    """The keys of the seed papers the report's claims cite, in key order."""
    keys = {p.key for e in doc["claims"] for p, _ in claim_references(e["id"], e["seed_ref"])}
    return sorted(keys)


# -------------------------------------------------------------------------------- evidence


def _outcome(check: Mapping[str, Any]) -> str:
    if check["error"] is not None:
        return "raised"
    if check["neutral"]:
        return "figure"
    return {True: "passed", False: "failed", None: "undecided"}[check["passed"]]


def _evidence(entry: Mapping[str, Any]) -> tuple[Evidence, ...]:
    return tuple(Evidence(c["name"], c["kind"], _outcome(c), c["detail"])
                 for c in entry["checks"])


def evidence_summary(entry: Mapping[str, Any]) -> str:
    """The checks of ``entry`` counted as a referee reads them: figures apart.

    >>> chk = {"error": None, "neutral": False, "passed": True, "kind": "exact"}
    >>> fig = {"error": None, "neutral": True, "passed": None, "kind": "figure"}
    >>> evidence_summary({"checks": [chk, chk, fig]})
    '2 of 2 checks passed (exact); 1 figure'
    """
    n = check_counts(entry["checks"])  # the report's rule: figures and observations apart
    tested = [c for c in entry["checks"] if not c["neutral"] or c["error"] is not None]
    kinds = ", ".join(dict.fromkeys(kind_words(c["kind"]) for c in tested))
    text = f"{n['passed']} of {n['checks']} check{'s' if n['checks'] != 1 else ''} passed"
    if kinds:
        text += f" ({kinds})"
    extra = [f"{n[o]} {o}" for o in ("failed", "undecided", "raised") if n[o]]
    if extra:
        text += ", " + ", ".join(extra)
    if n["figures"]:
        text += f"; {n['figures']} figure{'s' if n['figures'] != 1 else ''}"
    if n["reported"]:
        text += f"; {n['reported']} reported outside the verdict"
    return text


def power_text(entry: Mapping[str, Any], verdict: str) -> str:
    """The ``--power`` outcome of ``entry`` in a few words.

    >>> power_text({"power": None}, "confirmed")
    'not run'
    >>> power_text({"power": [{"outcome": "caught"}, {"outcome": "missed"}]}, "confirmed")
    '1 of 2 mutants caught; 1 missed'
    """
    power = entry["power"]
    if power is None:
        return "not run"
    if verdict == "refuted":
        return "n/a (refuted)"
    if not power:
        return "no stated side declared"
    counts = Counter(m["outcome"] for m in power)
    text = f"{counts['caught']} of {len(power)} mutant{'s' if len(power) != 1 else ''} caught"
    rest = [f"{counts[o]} {o}" for o in ("still true", "missed", "error") if counts[o]]
    return text + ("; " + ", ".join(rest) if rest else "")


def _smallest_failure(entry: Mapping[str, Any]) -> tuple[Mapping[str, Any] | None, int | None]:
    """The failing check whose counterexample is the most exact (symbolic, then exact, ...),
    the first such in the report's order; its index."""
    failing = [(k, c) for k, c in enumerate(entry["checks"]) if c["passed"] is False]
    if not failing:
        return None, None
    k, check = min(failing, key=lambda kc: (_EXACTNESS.index(kc[1]["kind"]), kc[0]))
    return check, k


def figure_kind(data: bytes) -> str | None:
    """The format of a figure's bytes by their magic: ``"png"``, ``"pdf"``, ``"svg"`` or None.

    >>> figure_kind(b"\\x89PNG\\r\\n\\x1a\\n..."), figure_kind(b"%PDF-1.4")
    ('png', 'pdf')
    >>> figure_kind(b"root:x:0:0:root:/root:/bin/bash")
    >>> figure_kind(b'<?xml version="1.0"?>\\n<svg xmlns="http://www.w3.org/2000/svg">')
    'svg'
    """
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if data.startswith(b"%PDF-"):
        return "pdf"
    head = data[:1024].lstrip(b"\xef\xbb\xbf \t\r\n")
    if (head.startswith(b"<?xml") or head.startswith(b"<svg")) and b"<svg" in head:
        return "svg"
    return None


@dataclass
class _Budget:
    """What a page may still embed: figures and bytes (:data:`MAX_FIGURES_PER_PAGE`,
    :data:`MAX_PAGE_FIGURE_BYTES`)."""

    figures: int = MAX_FIGURES_PER_PAGE
    bytes: int = MAX_PAGE_FIGURE_BYTES


def _figure_file(name: str, base: Path | None) -> tuple[Path | None, str]:
    """Where the figure ``name`` of a report is, under the report's own ``--report``
    directory ``base``, or why it is not taken: a path that is absolute, climbs (``..``),
    leaves ``base`` through a link, or names no regular file is refused."""
    if base is None:
        return None, "not embedded: the report records no --report directory of its run"
    rel = Path(name)
    if not name or rel.is_absolute() or ".." in rel.parts or "\\" in name:
        return None, f"not embedded: {name!r} is not a path inside the run's --report directory"
    try:
        root = base.resolve(strict=True)
        real = (base / rel).resolve(strict=True)
    except (OSError, RuntimeError):
        return None, f"not found at {name}"
    if root not in real.parents:
        return None, f"not embedded: {name} leaves the run's --report directory"
    if not real.is_file():
        return None, f"not embedded: {name} is not a regular file"
    return real, ""


def _figures(entry: Mapping[str, Any], base: Path | None,
             budget: _Budget | None = None) -> tuple[Figure, ...]:
    """The figures of ``entry``'s checks: one per drawing (a PNG and a PDF of the same name
    are one figure: the embeddable file is kept), read from the run's ``--report`` directory
    ``base`` (:func:`_figure_file`), embedded when the file's magic bytes are a PNG or an SVG,
    it is at most :data:`MAX_FIGURE_BYTES` and the page's ``budget`` allows."""
    budget = budget if budget is not None else _Budget()
    out = []
    for c in entry["checks"]:
        drawings: dict[str, list[str]] = {}
        for name in c["figures"]:
            drawings.setdefault(str(Path(name).with_suffix("")), []).append(name)
        for names in drawings.values():
            names.sort(key=lambda n: Path(n).suffix.lower() not in _IMAGE_TYPES)
            name = names[0]
            media = _IMAGE_TYPES.get(Path(name).suffix.lower())
            found, note = _figure_file(name, base)
            data = None
            if found is not None and media is None:
                note = "a format a page cannot embed"
            elif found is not None:
                data, note = _figure_bytes(found, name, media, budget)
            out.append(Figure(c["name"], name, found, media, data, note))
    return tuple(out)


def _figure_bytes(found: Path, name: str, media: str,
                  budget: _Budget) -> tuple[bytes | None, str]:
    """The bytes of the figure file ``found`` when they may be embedded, else why not."""
    if budget.figures <= 0:
        return None, f"not embedded: a page embeds at most {MAX_FIGURES_PER_PAGE} figures"
    try:
        data = read_bounded(found, "figure", MAX_FIGURE_BYTES)
    except ValueError:
        return None, f"not embedded: {name} is not a regular file of at most " \
                     f"{MAX_FIGURE_BYTES} bytes"
    kind = figure_kind(data)
    if kind is None or _IMAGE_TYPES.get(f".{kind}") != media:
        return None, f"not embedded: {name} is not a {media.split('/')[1].split('+')[0].upper()}"
    if len(data) > budget.bytes:
        return None, f"not embedded: a page embeds at most {MAX_PAGE_FIGURE_BYTES} bytes of " \
                     "figures"
    budget.figures -= 1
    budget.bytes -= len(data)
    return data, ""


def _replay(entry: Mapping[str, Any], check: Any) -> dict[str, str]:
    """The commands that re-run the check ``check`` of ``entry``, made again from its parts
    (claim id, check, preset, seed, the claim's file): never the report's own strings."""
    if not isinstance(check, str):
        return {}
    parts = (entry["id"], check, entry["preset"], entry["seed"], file_source(entry))
    try:
        return {"command": commands.replay(*parts, prog=commands.RECORD),
                "python": commands.replay_python(*parts)}
    except ValueError:
        return {}


def _erratum(entry: Mapping[str, Any], key: str, by_id: Mapping[str, Mapping[str, Any]],
             index: Mapping[str, Any], base: Path | None, budget: _Budget) -> Erratum:
    check, _ = _smallest_failure(entry)
    ce = dict((check or {}).get("counterexample") or entry["counterexample"] or {})
    name = (check or {}).get("name") or ce.get("check")
    # rebuilt from the entry's validated parts and quoted: never the stored string
    replay = replay_shown(entry, name) if isinstance(name, str) and ce.get("replay") else {}
    shown = {k: v for k, v in ce.items() if k not in _REPLAY_FIELDS}
    failing = tuple(e for e in _evidence(entry) if e.outcome == "failed"
                    and (check is None or e.name != check["name"]))
    corrected = None
    cid = entry["id"] + ".corrected"
    if cid in by_id:
        c = by_id[cid]
        corrected = Corrected(cid, _place(c, key), c["statement"], derived(c)["verdict"],
                              _evidence(c), c["tightness"], c.get("certified"), c["finding"])
    elif cid in index:
        info = index[cid]
        corrected = Corrected(cid, _place({"id": cid, "seed_ref": info.seed_ref}, key),
                              info.statement, None, (), None, None,
                              info.finding)
    erratum = {**_NO_ERRATUM, **(entry["erratum"] or {})}
    for name in ("where", "hypothesis"):  # the claim's own account: papers by their names
        if isinstance(erratum[name], str):
            erratum[name] = _seeds_named(erratum[name])
    place = erratum["location"] or _place(entry, key)
    if not erratum["quote"]:  # a declared paper's own lines for that place, as printed
        erratum["quote"] = known_papers()[key].quote_for(place)
    if place[:3] == key and place[3:5] == ", ":
        place = place[5:]
    return Erratum(
        id=entry["id"], title=entry["title"], place=place, kind=entry["kind"],
        statement=entry["statement"], restatement=entry["restatement"],
        finding=_seeds_named(entry["finding"]), erratum=erratum,
        counterexample_check=(Evidence(check["name"], check["kind"], "failed", check["detail"])
                              if check else None),
        counterexample=shown, replay=replay, other_failures=failing,
        evidence=_evidence(entry), corrected=corrected,
        figures=(own := _figures(entry, base, budget)) + (  # a drawing of the same check: once
            _figures(without_checks(by_id[cid], {f.check for f in own}), base, budget)
            if cid in by_id else ()),
        # a tightness ratio measures how close a bound that holds comes: none for a refuted one
        certified=entry.get("certified"), tightness=None, setup=entry["setup"],
    )


def paper_errata(doc: Mapping[str, Any], key: str, source: Path | str = "",
                 base: Path | str | None = None) -> PaperErrata:
    """The errata of seed ``key`` from a report ``doc`` read by :func:`load_errata_report`.

    Every claim citing the seed (its ``seed_ref``) is on its page: a refuted one as an
    :class:`Erratum`, any other in the table (:class:`Row`), except a ``.corrected`` claim whose
    refuted original is in the report (it is shown with it). ``source`` is the report's path
    (for the provenance), ``base`` the folder the figures' paths are relative to (default: the
    ``--report`` directory of the run, as the report records it in ``provenance.report_dir``;
    none recorded: no figure is embedded). Only files under it are embedded
    (:func:`_figures`), at most :data:`MAX_FIGURES_PER_PAGE` of them per page.
    """
    key = check_paper(key)
    src = Path(source) if source else None
    recorded = doc["provenance"].get("report_dir")
    base_dir = Path(base) if base is not None else (
        Path(recorded) if isinstance(recorded, str) and Path(recorded).is_absolute() else None)
    budget = _Budget()
    by_id = {e["id"]: e for e in doc["claims"]}
    index = {info.id: info for info in load_index(build=False) or ()}
    errata: list[Erratum] = []
    rows: list[Row] = []
    counts: Counter[str] = Counter()
    grades: Counter[str] = Counter()
    for entry in doc["claims"]:
        if key not in {p.key for p, _ in claim_references(entry["id"], entry["seed_ref"])}:
            continue
        cid = entry["id"]
        if cid.endswith(".corrected") and cid[: -len(".corrected")] in by_id:
            continue
        now = derived(entry)
        verdict = now["verdict"]
        counts[verdict] += 1
        if now["grade"] is not None:
            grades[now["grade"]] += 1
        if verdict == "refuted":
            errata.append(_erratum(entry, key, by_id, index, base_dir, budget))
        else:
            tight = entry["tightness"] if verdict == "confirmed" else None  # bounds that hold
            rows.append(Row(cid, entry["title"], _place(entry, key), entry["kind"],
                            verdict, evidence_summary(entry), tight,
                            entry.get("certified"), power_text(entry, verdict),
                            entry["statement"], _figures(entry, base_dir, budget),
                            tightness_text(entry) if tight else ""))
    errata = said_once(errata)
    sha = ""
    if src is not None and src.is_file():
        sha = hashlib.sha256(read_bounded(src)).hexdigest()
    return PaperErrata(known_papers()[key], tuple(errata), tuple(rows), dict(doc["provenance"]),
                       str(src or ""), sha, dict(counts), dict(grades))


def describe_value(value: Any, limit: int = 12, width: int = 400) -> str:
    """A counterexample's value in one line: lists shortened, floats to 6 digits, at most
    ``width`` characters.

    >>> describe_value([1, 2.0, "2/3"]), describe_value(list(range(20)), limit=3)
    ('[1, 2, 2/3]', '[0, 1, 2, ...] (20 values)')
    >>> describe_value("x" * 10, width=5)
    'xxxx…'
    """
    text = _describe(value, limit)
    return text if len(text) <= width else text[: width - 1] + "…"


def _describe(value: Any, limit: int) -> str:
    if isinstance(value, bool) or value is None:
        return str(value).lower() if value is not None else "null"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, list):
        body = ", ".join(_describe(v, limit) for v in value[:limit])
        return f"[{body}, ...] ({len(value)} values)" if len(value) > limit else f"[{body}]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_describe(v, limit)}" for k, v in value.items()) + "}"
    return str(value)


def flatten(ce: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """A counterexample as ``(field, value)`` rows, nested objects one level deep as
    ``outer.inner``.

    >>> flatten({"m": 2, "worse": {"m": 1, "p": [0.5]}})
    [('m', '2'), ('worse.m', '1'), ('worse.p', '[0.5]')]
    """
    rows: list[tuple[str, str]] = []
    for k, v in ce.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict) and not prefix:
            rows += flatten({kk: vv for kk, vv in v.items() if kk not in _REPLAY_FIELDS},
                            f"{name}.")
        else:
            rows.append((name, describe_value(v)))
    return rows


def certified_text(certified: Any) -> str:
    """A ``certified`` entry (``verify --certify``) in one line, or "" when there is none.

    >>> certified_text({"status": "exact", "ratio": 2.0, "lower": 0.5, "upper": 0.5})
    'stated/worst case = 2 (exact; worst case between 0.5 and 0.5)'
    >>> certified_text(None)
    ''
    """
    if certified is None:
        return ""
    if isinstance(certified, (int, float)) and not isinstance(certified, bool):
        return f"stated/worst case = {certified:.6g}"
    if not isinstance(certified, Mapping):
        return describe_value(certified)
    parts = []
    ratio = certified.get("ratio")
    head = f"stated/worst case = {describe_value(ratio)}" if ratio is not None else ""
    if certified.get("status"):
        parts.append(str(certified["status"]))
    lo, hi = certified.get("lower"), certified.get("upper")
    if lo is not None or hi is not None:
        parts.append(f"worst case between {describe_value(lo)} and {describe_value(hi)}")
    tail = f" ({'; '.join(parts)})" if parts else ""
    return (head + tail).strip() or describe_value(dict(certified))


def setup_rows(setup: Mapping[str, Any] | None) -> Sequence[Mapping[str, Any]]:
    """The rows of an experiment's set-up card (empty without one)."""
    return list((setup or {}).get("rows") or [])
