"""The kinds of evidence a check may gather: one file each in this folder, found by listing it.

Each module here (a name not starting with ``_``) declares ``KIND``, an :class:`EvidenceKind`:
its name (the module's name, the ``kind`` field of a report's check), its place in the order
(which also says which failing check is "the" counterexample of a page: the most exact first),
the words a page or a summary uses for it, and what it implies for the rules that read it. So
adding a kind of evidence is one new file here: :class:`~fedtheory.claims.Check` accepts it,
the report schema admits it, the summaries count it and the errata pages name it.

>>> CHECK_KINDS
('symbolic', 'exact', 'convex', 'monte_carlo', 'figure')
>>> EVIDENCE_KINDS["monte_carlo"].words
'monte carlo'
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["CHECK_KINDS", "EVIDENCE_KINDS", "EvidenceKind", "discover", "kind_words",
           "kinds_where"]


@dataclass(frozen=True)
class EvidenceKind:
    """One kind of evidence (the module ``fedtheory/vocabulary/evidence/<name>.py``).

    Parameters
    ----------
    name:
        The kind's name: the ``kind`` of a check and of its report entry; the module's name.
    order:
        Its place among the kinds (ascending); the most exact first: a page shows the failing
        check of the smallest order as the counterexample.
    words:
        How a page or a summary names it (``"monte carlo"``).
    establishes:
        What a check of this kind establishes, as a counterexample's provenance on an errata
        page (``"a Monte Carlo test at the stated level"``).
    description:
        What such a check does (documentation).
    exact_values:
        Its values are exact (shown as fractions on a page): symbolic and exact arithmetic.
    solves:
        It must solve a convex program (:mod:`fedtheory.solver_log`): one that solved none
        is an error, and a report entry claiming otherwise is refused.
    shows:
        A picture: neutral (it shows, it does not test), counted as a figure.
    sampled:
        A simulation judged at a stated level: a ratio above 1 of a passing check is
        "attained within Monte Carlo error".
    """

    name: str
    order: int
    words: str
    establishes: str
    description: str = ""
    exact_values: bool = False
    solves: bool = False
    shows: bool = False
    sampled: bool = False

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", self.name):
            raise ValueError(f"evidence kind name must be a lower-case identifier, got "
                             f"{self.name!r}")


def discover(paths: Iterable[str], package: str = __name__) -> dict[str, EvidenceKind]:
    """The kinds declared by the modules of ``package`` found in ``paths`` (its folder), by
    ``order``: each module's ``KIND``, whose name must be the module's."""
    found: dict[str, EvidenceKind] = {}
    for info in pkgutil.iter_modules(list(paths)):
        if info.name.startswith("_"):
            continue
        kind = getattr(importlib.import_module(f"{package}.{info.name}"), "KIND", None)
        if not isinstance(kind, EvidenceKind):
            raise TypeError(f"{package}.{info.name} declares no KIND (an EvidenceKind)")
        if kind.name != info.name:
            raise ValueError(f"{package}.{info.name}: its KIND is named {kind.name!r}; the "
                             "name of an evidence kind is its module's")
        found[kind.name] = kind
    ordered = sorted(found.values(), key=lambda k: (k.order, k.name))
    orders = [k.order for k in ordered]
    if len(set(orders)) != len(orders):
        pairs = [(k.name, k.order) for k in ordered]
        raise ValueError(f"two evidence kinds share an order: {pairs}")
    return {k.name: k for k in ordered}


#: Every kind of evidence, by name, in order.
EVIDENCE_KINDS: dict[str, EvidenceKind] = discover(__path__)

#: Their names, in order: the ``kind`` a check may declare.
CHECK_KINDS: tuple[str, ...] = tuple(EVIDENCE_KINDS)


def kinds_where(flag: str) -> tuple[str, ...]:
    """The names of the kinds whose attribute ``flag`` (``"shows"``, ``"solves"``, ...) is
    true.

    >>> kinds_where("exact_values")
    ('symbolic', 'exact')
    """
    return tuple(k.name for k in EVIDENCE_KINDS.values() if getattr(k, flag))


def kind_words(name: str) -> str:
    """How a page names the evidence kind ``name`` (its ``words``; an unknown name with its
    underscores as spaces).

    >>> kind_words("monte_carlo"), kind_words("other_kind")
    ('monte carlo', 'other kind')
    """
    kind = EVIDENCE_KINDS.get(name)
    return kind.words if kind is not None else name.replace("_", " ")
