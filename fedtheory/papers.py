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
from dataclasses import dataclass

__all__ = ["PAPERS", "Paper", "paper_for", "place_in_paper", "references", "seed_keys"]


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
    """

    key: str
    short: str
    title: str
    authors: tuple[str, ...]
    affiliations: tuple[str, ...]
    kind: str
    seed_file: str
    covers: str
    year: int | None = None
    date: str | None = None
    venue: str | None = None
    arxiv: str | None = None
    not_stated: tuple[str, ...] = ()
    notes: str = ""

    def __post_init__(self) -> None:
        if not re.fullmatch(r"\d{3}", self.key):
            raise ValueError(f"paper key must be three digits, got {self.key!r}")
        if not self.seed_file.startswith(self.key + "_"):
            raise ValueError(f"seed_file {self.seed_file!r} does not start with {self.key}_")

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
        not_stated=("year", "venue", "arXiv id"),
        notes="A slide deck of the paper (it ends with 'Thank You!' and the first author's email).",
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
        arxiv="2010.13723",
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
            "The arXiv id is not printed in seed 002; it is taken from the reference list of "
            "seed 004 ('Optimal client sampling for federated learning. arXiv preprint "
            "arXiv:2010.13723, 2020'). The seed's version cites work from 2023, so it is later "
            "than that 2020 preprint."
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
        notes="Course slides; the latest work they cite is from 2022.",
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
        not_stated=("year", "venue", "arXiv id"),
        notes="The latest work it cites is from 2022.",
    ),
}

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
