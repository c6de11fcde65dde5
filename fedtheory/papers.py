"""The five seed documents the claims come from, and how a claim's ``seed_ref`` names them.

Every :class:`~fedtheory.claims.Claim` has a ``seed_ref`` such as ``"002, eq. (7)"``: the
three-digit number of a seed document (the number that starts the name of the text the
statements were read from, ``002_<hash>.txt``), a comma, and the place in that document. Some
claims cite several seeds, separated by ``"; "`` (``"000, setup (i); 002, eq. (2) and
Lemma 1"``). This module turns those numbers into
:class:`Paper` records, so that a claim can be traced to its source from inside the repository.

The metadata was read from the seed files themselves. What a file does not state (authors of the
unsigned notes, years and venues of the others) is left as ``None`` and listed in
:attr:`Paper.not_stated` rather than filled in from memory.

>>> paper_for("002, eq. (7)").short
'OCS'
>>> place_in_paper("002, eq. (7)")
'eq. (7)'
>>> [(p.key, place) for p, place in references("000, tables (FedPGD row); 003, Theorem 3")]
[('000', 'tables (FedPGD row)'), ('003', 'Theorem 3')]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "PAPERS",
    "Paper",
    "check_paper_fields",
    "claim_references",
    "declare",
    "declared_paper",
    "known_papers",
    "paper_for",
    "place_in_paper",
    "references",
    "seed_keys",
]


@dataclass(frozen=True)
class Paper:
    """One seed document.

    Parameters
    ----------
    key:
        The seed number, as in the file name and in ``seed_ref`` (``"002"``).
    short:
        A short name for tables (``"OCS"``).
    title:
        The full title as the document prints it.
    authors:
        The authors in the order printed; empty when the document is unsigned.
    affiliations:
        The institutions printed with the authors (one entry per institution).
    kind:
        What sort of document the seed is: ``"paper"``, ``"slides"``, ``"notes"``, ...
    seed_file:
        The name of the seed text the statements were read from (``<key>_<hash>.txt``; the
        texts are not distributed with the repository: the title, authors and arXiv id
        identify the document, the hash the version of its text).
    covers:
        What the document contains that the claims draw on.
    year:
        The year the document states for itself, or None (the default) when it states none.
    date:
        A full date printed on the document, or None.
    venue:
        The venue the document states for itself, or None.
    arxiv:
        An arXiv identifier, or None; :attr:`notes` says where it was found.
    not_stated:
        The fields the document itself does not give.
    notes:
        Anything else worth knowing about the metadata (where a field was found, hints about
        the document's date).
    url:
        An address of the document other than its arXiv page (the venue's page), or None.
    quotes:
        For a declared paper (your own, :func:`declare`): the lines it prints, as
        ``(place, text)`` pairs (a dict is accepted), shown "as printed" beside the claim whose
        ``seed_ref`` names that place.

    Notes
    -----
    A paper of your own takes a key of lower-case letters, digits and ``-`` (not three digits:
    those are the seeds') and no ``seed_file``::

        PAPER = Paper(key="li2020", short="Li et al. 2020", title="On the Convergence of FedAvg "
                      "on Non-IID Data", authors=("Xiang Li", "Kaixuan Huang"), venue="ICLR",
                      year=2020, arxiv="1907.02189", quotes={"Lemma 5": "..."})

    Every field is checked when the paper is made (:func:`check_paper_fields`): a declared
    paper's text comes from a claim folder, untrusted.
    """

    key: str
    short: str
    title: str
    authors: tuple[str, ...]
    affiliations: tuple[str, ...] = ()
    kind: str = "paper"
    seed_file: str = ""
    covers: str = ""
    year: int | None = None
    date: str | None = None
    venue: str | None = None
    arxiv: str | None = None
    not_stated: tuple[str, ...] = ()
    notes: str = ""
    url: str | None = None
    quotes: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        check_paper_fields(self)

    @property
    def is_seed(self) -> bool:
        """Whether this is one of the five seed documents (a three-digit key) rather than a
        paper a claim folder declares (:func:`declare`)."""
        return bool(re.fullmatch(r"\d{3}", self.key))

    @property
    def text_version(self) -> str | None:
        """The version of the seed text the statements were read from (the hash in its name),
        or None for a declared paper.

        >>> PAPERS["000"].text_version
        '170771278ac75f31'
        """
        if not self.seed_file:
            return None
        return self.seed_file.removeprefix(self.key + "_").split(".", 1)[0]

    @property
    def link(self) -> str | None:
        """The address a reader follows: the arXiv abstract page, else :attr:`url`."""
        return self.arxiv_url or self.url

    @property
    def publication(self) -> str:
        """Venue and year, or, for notes and slides, what the document is and its date.

        >>> PAPERS["001"].publication
        'International Conference on Learning Representations (ICLR), 2024'
        >>> PAPERS["000"].publication
        'notes, unsigned, dated July 26, 2021'
        """
        if self.venue:
            return f"{self.venue}, {self.year}" if self.year else self.venue
        what = self.kind + ("" if self.authors else ", unsigned")
        if self.date:
            return f"{what}, dated {self.date}"
        return f"{what}, {self.year}" if self.year else f"{what}, no date stated"

    @property
    def citation(self) -> str:
        """The document cited as a reader cites it: authors, title, venue and year, and its
        arXiv id or address; for notes and slides what they are and their date (never the
        name of the text file the statements were read from: :attr:`text_version` keeps it).

        >>> PAPERS["002"].citation  # doctest: +NORMALIZE_WHITESPACE
        'Wenlin Chen, Samuel Horváth, Peter Richtárik. Optimal Client Sampling for Federated
        Learning. Transactions on Machine Learning Research (TMLR), 2022. arXiv:2010.13723.'
        >>> PAPERS["000"].citation  # doctest: +NORMALIZE_WHITESPACE
        'Federated Learning with Partial Client Participation. Notes, unsigned, dated July 26,
        2021.'
        """
        head = (", ".join(self.authors) + ". ") if self.authors else ""
        pub = self.publication
        if not self.venue:  # "Notes, unsigned, ...": a sentence of its own
            pub = pub[:1].upper() + pub[1:]
        out = f"{head}{self.title.rstrip('.')}. {pub}."
        if self.arxiv:
            out += f" arXiv:{self.arxiv}."
        elif self.url:
            out += f" {self.url}"
        return out

    def quote_for(self, place: str) -> str:
        """The lines the paper's declaration quotes for ``place`` ("" when it quotes none)."""
        return dict(self.quotes).get(place.strip(), "")

    @property
    def author_line(self) -> str:
        """The authors joined for display, or ``"unsigned notes"`` when there are none.

        >>> PAPERS["001"].author_line
        'Shiqiang Wang, Mingyue Ji'
        >>> PAPERS["000"].author_line
        'unsigned notes'
        """
        return ", ".join(self.authors) if self.authors else "unsigned notes"

    @property
    def arxiv_url(self) -> str | None:
        """The arXiv abstract page, or None.

        >>> PAPERS["002"].arxiv_url
        'https://arxiv.org/abs/2010.13723'
        """
        return f"https://arxiv.org/abs/{self.arxiv}" if self.arxiv else None


_USER_KEY = re.compile(r"[a-z][a-z0-9-]{0,39}")
_ARXIV = re.compile(r"(\d{4}\.\d{4,5}|[a-z-]+(\.[A-Z]{2})?/\d{7})(v\d+)?")
_URL = re.compile(r"https?://[^\s<>\"'`\\]{1,490}")
_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                      "\u2066-\u2069]")
#: Longest text of each field of a paper (characters); a quoted passage may take several lines.
MAX_FIELD = {"short": 60, "title": 300, "kind": 40, "covers": 2000, "notes": 2000,
             "date": 60, "venue": 200, "author": 200, "place": 200, "quote": 4000}
MAX_AUTHORS, MAX_QUOTES = 100, 200


def _text(value: object, field: str, limit: int, *, lines: bool = False,
          empty: bool = False) -> str:
    if not isinstance(value, str):
        raise ValueError(f"paper field {field} must be a string, got {type(value).__name__} "
                         f"{ascii(value)[:80]}")
    if not empty and not value.strip():
        raise ValueError(f"paper field {field} must not be empty")
    if len(value) > limit:
        raise ValueError(f"paper field {field} has {len(value)} characters, at most {limit}")
    bad = _CONTROL.search(value if lines else value.replace("\n", "\x00"))
    if bad is not None:
        raise ValueError(f"paper field {field} holds the control character "
                         f"{ascii(bad.group())} ({ascii(value)[:80]})")
    return value


def _texts(value: object, field: str, limit: int, most: int) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise ValueError(f"paper field {field} must be a list of strings, got "
                         f"{ascii(value)[:80]}")
    if len(value) > most:
        raise ValueError(f"paper field {field} has {len(value)} entries, at most {most}")
    return tuple(_text(v, f"{field}[{k}]", limit) for k, v in enumerate(value))


def check_paper_fields(paper: Paper) -> None:
    """Check every field of ``paper`` (types, lengths, no control character, the key's and
    the arXiv id's form, an ``http(s)`` address); lists become tuples and a dict of quotes
    ``(place, text)`` pairs. ``ValueError`` naming the field and its value otherwise.

    >>> Paper(key="mine", short="x", title="t", authors=["A. B."], year=2020.5)
    Traceback (most recent call last):
    ...
    ValueError: paper field year must be a whole year, got 2020.5
    """
    def put(name: str, value: object) -> None:
        object.__setattr__(paper, name, value)

    key = paper.key
    if not isinstance(key, str) or not (re.fullmatch(r"\d{3}", key) or _USER_KEY.fullmatch(key)):
        raise ValueError(f"paper key must be three digits (a seed) or lower-case letters, "
                         f"digits and '-' (at most 40, a letter first), got {ascii(key)[:80]}")
    seed = bool(re.fullmatch(r"\d{3}", key))
    if not isinstance(paper.seed_file, str):
        raise ValueError(f"paper field seed_file must be a string, got {ascii(paper.seed_file)}")
    if seed and not paper.seed_file:
        raise ValueError(f"paper key {key!r} is three digits, which name the seed documents: "
                         "a paper of your own takes a key of letters, digits and '-'")
    if seed and not paper.seed_file.startswith(key + "_"):
        raise ValueError(f"seed_file {paper.seed_file!r} does not start with {key}_")
    if not seed and paper.seed_file:
        raise ValueError(f"paper {key}: seed_file is for the seed documents only "
                         f"(three-digit keys), got {ascii(paper.seed_file)[:80]}")
    for name in ("short", "title"):
        _text(getattr(paper, name), name, MAX_FIELD[name])
    _text(paper.kind, "kind", MAX_FIELD["kind"])
    for name in ("covers", "notes"):
        _text(getattr(paper, name), name, MAX_FIELD[name], lines=True, empty=True)
    put("authors", _texts(paper.authors, "authors", MAX_FIELD["author"], MAX_AUTHORS))
    put("affiliations", _texts(paper.affiliations, "affiliations", MAX_FIELD["author"],
                               MAX_AUTHORS))
    put("not_stated", _texts(paper.not_stated, "not_stated", MAX_FIELD["place"], 20))
    for name in ("date", "venue"):
        if getattr(paper, name) is not None:
            _text(getattr(paper, name), name, MAX_FIELD[name])
    year = paper.year
    if year is not None and (isinstance(year, bool) or not isinstance(year, int)
                             or not 1000 <= year <= 2999):
        raise ValueError(f"paper field year must be a whole year, got {ascii(year)[:40]}")
    if paper.arxiv is not None and (not isinstance(paper.arxiv, str)
                                    or not _ARXIV.fullmatch(paper.arxiv)):
        raise ValueError(f"paper field arxiv must be an arXiv id (2306.03401), got "
                         f"{ascii(paper.arxiv)[:80]}")
    if paper.url is not None and (not isinstance(paper.url, str)
                                  or not _URL.fullmatch(paper.url)):
        raise ValueError(f"paper field url must be an http(s) address without spaces or "
                         f"quotes (at most 500 characters), got {ascii(paper.url)[:80]}")
    quotes = paper.quotes
    if isinstance(quotes, dict):
        quotes = tuple(quotes.items())
    if isinstance(quotes, str) or not isinstance(quotes, (list, tuple)) or \
            not all(isinstance(q, (list, tuple)) and len(q) == 2 for q in quotes):
        raise ValueError(f"paper field quotes must map places to quoted lines "
                         f"({{'Lemma 5': '...'}}), got {ascii(quotes)[:80]}")
    if len(quotes) > MAX_QUOTES:
        raise ValueError(f"paper field quotes has {len(quotes)} entries, at most {MAX_QUOTES}")
    put("quotes", tuple((_text(p, "quotes (a place)", MAX_FIELD["place"]).strip(),
                         _text(t, f"quotes[{ascii(p)[:40]}]", MAX_FIELD["quote"], lines=True))
                        for p, t in quotes))


PAPERS: dict[str, Paper] = {
    "000": Paper(
        key="000",
        short="MIFA notes",
        title="Federated Learning with Partial Client Participation",
        authors=(),
        affiliations=(),
        kind="notes",
        year=2021,
        date="July 26, 2021",
        seed_file="000_170771278ac75f31.txt",
        covers=(
            "FedAvg with importance sampling (1/p_i weights), MIFA and unbiased MIFA (U-MIFA) and "
            "their momentum variants MIFAm and U-MIFAm; the bias of MIFA's memory, the error of "
            "the aggregate, the error floor of FedAvg-IS and the zero floor of MIFA; a quadratic "
            "and a logistic-regression experiment; rates tables (FedGD, FedPGD, SAGA/U-MIFA, "
            "ZeroSarah) for convex and non-convex objectives."
        ),
        not_stated=("authors", "affiliations", "venue", "arXiv id"),
        notes="Unsigned notes; the only metadata printed is the title and the date.",
    ),
    "001": Paper(
        key="001",
        short="FedAU",
        title=(
            "A Lightweight Method for Tackling Unknown Participation Statistics in "
            "Federated Averaging"
        ),
        authors=("Shiqiang Wang", "Mingyue Ji"),
        affiliations=(
            "IBM T. J. Watson Research Center, Yorktown Heights, NY, USA",
            "Department of ECE, University of Utah, Salt Lake City, UT, USA",
        ),
        kind="slides",
        seed_file="001_f79394592d098546.txt",
        covers=(
            "FedAvg with pluggable aggregation weights (Algorithm 1); the objective minimised "
            "with time-constant weights (Theorem 1); FedAU's online weight estimate with cutoff K "
            "(Algorithm 2); convergence error (Theorem 2), weight error (Theorem 3) and "
            "convergence of FedAU (Corollary 4); experiments with Bernoulli, Markovian and cyclic "
            "participation on SVHN, CIFAR-10, CIFAR-100 and CINIC-10."
        ),
        year=2024,
        venue="International Conference on Learning Representations (ICLR)",
        arxiv="2306.03401",
        url="https://openreview.net/forum?id=ZKEuFKfCKA",
        not_stated=("year", "venue", "arXiv id (in this file)"),
        notes=(
            "The seed text is the authors' slide deck of the paper (it ends with 'Thank You!' "
            "and the first author's email); year, venue and arXiv id are the paper's: arXiv "
            "2306.03401 (submitted 6 June 2023, v3 15 April 2024), published at ICLR 2024 "
            "(a spotlight; OpenReview ZKEuFKfCKA)."
        ),
    ),
    "002": Paper(
        key="002",
        short="OCS",
        title="Optimal Client Sampling for Federated Learning",
        authors=("Wenlin Chen", "Samuel Horváth", "Peter Richtárik"),
        affiliations=(
            "Department of Engineering, University of Cambridge, UK",
            "Department of Empirical Inference, Max Planck Institute for Intelligent Systems, "
            "Tübingen, Germany",
            "Department of Machine Learning, Mohamed bin Zayed University of Artificial "
            "Intelligence, Abu Dhabi, UAE",
            "CEMSE Division, King Abdullah University of Science and Technology, Thuwal, "
            "Saudi Arabia",
        ),
        kind="paper",
        year=2022,
        venue="Transactions on Machine Learning Research (TMLR)",
        arxiv="2010.13723",
        url="https://openreview.net/forum?id=8GvRCWKHIL",
        seed_file="002_6300c07eb64b5185.txt",
        covers=(
            "Optimal client sampling (OCS): the variance of importance-sampled aggregation "
            "(Lemma 1, eq. (6)), the optimal independent sampling in closed form (eq. (7), "
            "Lemma 20), its approximation AOCS (Algorithm 2), the improvement factor "
            "(Definition 11), convergence of DSGD (Theorems 13, 15) and FedAvg (Theorems 17, 18) "
            "with OCS, and experiments (Section 5, Appendix F)."
        ),
        not_stated=("year", "venue", "arXiv id (in this file)"),
        notes=(
            "The arXiv id is not printed in seed 002; it is in the reference list of seed 004 "
            "('Optimal client sampling for federated learning. arXiv preprint "
            "arXiv:2010.13723, 2020'). The journal version is headed 'Published in Transactions "
            "on Machine Learning Research (08/2022)' (reviewed on OpenReview, 8GvRCWKHIL); the "
            "seed's text is that version without its header."
        ),
    ),
    "003": Paper(
        key="003",
        short="Lecture 14",
        title="Optimization for Deep Learning, Lecture 14: Federated Learning",
        authors=("Kun Yuan",),
        affiliations=("Peking University",),
        kind="lecture slides",
        seed_file="003_7a5cfc011cb6ce0b.txt",
        covers=(
            "FedAvg (Algorithm 1) and its convergence under data heterogeneity (Theorem 1, "
            "Karimireddy et al. 2020), SCAFFOLD (Algorithm 2, Theorem 2), FedAvg with partial "
            "client participation (Algorithm 3, Theorem 3), client sampling."
        ),
        not_stated=("year", "venue", "arXiv id"),
        notes="Course slides of a lecture series; no date is printed and the latest work they "
              "cite is from 2022.",
    ),
    "004": Paper(
        key="004",
        short="FL-FDMS",
        title="Combating Client Dropout in Federated Learning via Friend Model Substitution",
        authors=("Heqiang Wang", "Jie Xu"),
        affiliations=(
            "Department of Electrical and Computer Engineering, University of Miami, "
            "Coral Gables, FL, USA",
        ),
        kind="paper",
        seed_file="004_5d793473b6273e42.txt",
        covers=(
            "Client dropout as model substitution (eq. (5)), convergence with substituted "
            "updates (Theorem 1), friendship (Definition 1), the FL-FDMS algorithm (Section 5.1), "
            "the probability of choosing a non-friend (Lemma 2), reducing the similarity "
            "computation (Theorem 2), experiments (Section 6)."
        ),
        year=2022,
        venue="arXiv preprint",
        arxiv="2205.13222",
        not_stated=("year", "venue", "arXiv id"),
        notes=(
            "The latest work it cites is from 2022. arXiv 2205.13222 (first version 26 May "
            "2022; v3 carries this title). A submission to TMLR (OpenReview fAJJMzAnKf, 2023) "
            "was withdrawn by the authors: no peer-reviewed venue is known."
        ),
    ),
}

# Papers a claim folder declares (its key -> the paper), and which claim cites which.
_DECLARED: dict[str, Paper] = {}
_CLAIM_PAPER: dict[str, str] = {}


def declare(paper: Paper, claim_ids: Sequence[str]) -> Paper:
    """Record ``paper`` (declared by a claim file or the ``_paper.py`` beside it) as the paper
    of the claims ``claim_ids``: their ``seed_ref`` is then a place in it (``"Lemma 5"``),
    unless it starts with a seed number. A key that is a seed's, or another paper's with
    other fields, is a ``ValueError``.

    >>> mine = declare(Paper(key="doc-mine", short="mine", title="My notes", authors=()),
    ...                ["doc.mine"])
    >>> [(p.key, place) for p, place in claim_references("doc.mine", "Lemma 5")]
    [('doc-mine', 'Lemma 5')]
    """
    if not isinstance(paper, Paper):
        raise ValueError(f"a declared paper must be a fedtheory Paper, got "
                         f"{type(paper).__name__}")
    if paper.is_seed:
        raise ValueError(f"paper key {paper.key!r} is a seed's: a declared paper takes a key "
                         "of letters, digits and '-'")
    known = _DECLARED.get(paper.key)
    if known is not None and known != paper:
        raise ValueError(f"paper key {paper.key!r} is declared twice with different fields "
                         f"({known.title!r}, then {paper.title!r})")
    _DECLARED[paper.key] = paper
    for cid in claim_ids:
        _CLAIM_PAPER[cid] = paper.key
    return paper


def declared_paper(claim_id: str) -> Paper | None:
    """The paper declared for the claim ``claim_id`` (:func:`declare`), or None."""
    key = _CLAIM_PAPER.get(claim_id)
    return _DECLARED.get(key) if key is not None else None


def known_papers() -> dict[str, Paper]:
    """The seeds and the papers declared in this process, by key."""
    return {**PAPERS, **_DECLARED}


def claim_references(claim_id: str, seed_ref: str) -> tuple[tuple[Paper, str], ...]:
    """Every ``(paper, place)`` the claim ``claim_id`` cites: its ``seed_ref`` read as seed
    references (:func:`references`) when it starts with a seed number, else as one place in the
    paper its file declares. ``ValueError`` when it does neither, saying how to declare one."""
    if isinstance(seed_ref, str) and _LEADING.match(seed_ref):
        return references(seed_ref)
    paper = declared_paper(claim_id)
    if paper is None:
        raise ValueError(
            f"claim {claim_id}: seed_ref {ascii(seed_ref)[:120]} names no paper: start it with "
            "a seed number ('002, eq. (7)'), or declare the paper in the claim file or a "
            "_paper.py beside it (PAPER = Paper(key=..., title=..., authors=...): "
            "docs/lemmas.md)")
    return ((paper, seed_ref.strip()),)


_LEADING = re.compile(r"\s*(\d+)\s*(?:,\s*|$)")
_SPLIT = re.compile(r";\s*(?=\d{3}\s*(?:,|$))")


def _leading(seed_ref: str) -> tuple[str, str]:
    """Split ``seed_ref`` into its leading seed number and the rest."""
    if not isinstance(seed_ref, str):
        raise ValueError(f"seed_ref must be a string, got {seed_ref!r}")
    m = _LEADING.match(seed_ref)
    if m is None:
        raise ValueError(
            f"seed_ref {seed_ref!r} does not start with a seed number (e.g. '002, eq. (7)')"
        )
    return m.group(1), seed_ref[m.end():].strip()


def paper_for(seed_ref: str) -> Paper:
    """The paper named by the leading seed number of ``seed_ref``.

    >>> paper_for("003, Theorem 3").authors
    ('Kun Yuan',)
    >>> paper_for("007, eq. (1)")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: seed_ref '007, eq. (1)' names seed '007', which is not one of 000, 001, ...
    """
    key, _ = _leading(seed_ref)
    try:
        return PAPERS[key]
    except KeyError:
        known = ", ".join(sorted(PAPERS))
        raise ValueError(
            f"seed_ref {seed_ref!r} names seed {key!r}, which is not one of {known}"
        ) from None


def place_in_paper(seed_ref: str) -> str:
    """The rest of ``seed_ref`` after its leading seed number and comma.

    For a claim citing several seeds this is everything after the first number, other seeds
    included; :func:`references` splits them.

    >>> place_in_paper("002, Appendix B, proof of Lemma 20")
    'Appendix B, proof of Lemma 20'
    >>> place_in_paper("000, tables (FedPGD row); 003, Theorem 3")
    'tables (FedPGD row); 003, Theorem 3'
    >>> place_in_paper("002")
    ''
    """
    paper_for(seed_ref)  # validates the number
    return _leading(seed_ref)[1]


def references(seed_ref: str) -> tuple[tuple[Paper, str], ...]:
    """Every ``(paper, place)`` that ``seed_ref`` cites, in order.

    Parts are separated by ``";"`` followed by a three-digit seed number; a ``";"`` followed by
    anything else stays inside the place.

    >>> [(p.short, s) for p, s in references("002, eq. (7); corrects Lemma 20; 003, Theorem 3")]
    [('OCS', 'eq. (7); corrects Lemma 20'), ('Lecture 14', 'Theorem 3')]
    """
    return tuple((paper_for(part), place_in_paper(part)) for part in _SPLIT.split(seed_ref))


def seed_keys(seed_ref: str) -> tuple[str, ...]:
    """The keys of every seed ``seed_ref`` cites, in order, without repeats.

    >>> seed_keys("000, setup (i); 002, eq. (2) and Lemma 1; 003, Algorithm 3")
    ('000', '002', '003')
    """
    keys: list[str] = []
    for paper, _ in references(seed_ref):
        if paper.key not in keys:
            keys.append(paper.key)
    return tuple(keys)
