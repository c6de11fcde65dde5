"""The families of claims, as their packages declare them: the one source of "which claims
exist" is the claim files (:func:`fedtheory.claim_files.file_ids`); this module adds what a
family says about itself.

A family is a package ``fedtheory/claims/<family>/`` whose ``__init__.py`` may declare
``FAMILY = Family(...)``: its title (what the family is about), its place among the families
and the reading order of its claims (the last parts of their ids; a claim file it does not name
follows the ones it names, by id, so a new claim needs no edit here), and the introduction the
contract (``docs/claims.md``) prints before its claims. A family without ``FAMILY`` comes after
the declared ones, by name, with no title. Nothing here imports a claim module: only the family
packages' ``__init__`` files, which hold no claims.

>>> declaration("ocs").title
'optimal client sampling'
>>> contract_ids()["fedau"][:2]
('fedau.objective_inconsistency', 'fedau.weight_mean')
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from fedtheory.claim_files import file_ids

__all__ = ["CORRECTED", "Family", "contract_ids", "declaration", "declared_families", "order_key"]

#: The suffix of a corrected statement's id (``<id>.corrected``).
CORRECTED = ".corrected"

_PACKAGE = "fedtheory.claims"


@dataclass(frozen=True)
class Family:
    """What a family of claims declares about itself (``FAMILY`` in its ``__init__.py``).

    Parameters
    ----------
    title:
        What the family is about, in a few words (headings of the contract and the catalogue).
    position:
        Its place among the families (smaller first; ties by name).
    order:
        The reading order of its claims: last parts of ids (``"closed_form"`` for
        ``ocs.closed_form``). Claims it does not name follow, by id; a corrected claim follows
        the one it corrects.
    intro:
        Text the contract prints under the family's heading, before its claims (Markdown).
    """

    title: str = ""
    position: int = 1_000_000
    order: tuple[str, ...] = ()
    intro: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.title, str) or not isinstance(self.intro, str):
            raise TypeError("Family: title and intro must be strings")
        if isinstance(self.position, bool) or not isinstance(self.position, int):
            raise TypeError(f"Family: position must be an integer, got {self.position!r}")
        object.__setattr__(self, "order", tuple(self.order))
        if len(set(self.order)) != len(self.order):
            raise ValueError(f"Family: order names a claim twice: {self.order}")


_UNDECLARED = Family()
_CACHE: dict[str, Family] = {}


def declaration(name: str) -> Family:
    """The declaration of family ``name`` (its package's ``FAMILY``); an empty one for a family
    that declares none or has no package here (a claim file's, an entry point's)."""
    if name not in _CACHE:
        found: Any = None
        if name in {i.split(".", 1)[0] for i in file_ids()}:
            found = getattr(importlib.import_module(f"{_PACKAGE}.{name}"), "FAMILY", None)
        if found is not None and not isinstance(found, Family):
            raise TypeError(f"{_PACKAGE}.{name}.FAMILY must be a Family, got "
                            f"{type(found).__name__}")
        _CACHE[name] = found or _UNDECLARED
    return _CACHE[name]


def _family_key(name: str) -> tuple[int, str]:
    return declaration(name).position, name


def declared_families(extra: tuple[str, ...] | list[str] = ()) -> list[str]:
    """The families of the package's claim files (and ``extra`` ones), in their declared order."""
    names = {i.split(".", 1)[0] for i in file_ids()} | set(extra)
    return sorted(names, key=_family_key)


def order_key(claim_id: str) -> tuple[int, str, int, str, int, str]:
    """Sort key of a claim id: its family's place, then the family's reading order, each
    ``.corrected`` claim right after the one it corrects."""
    fam, _, rest = claim_id.partition(".")
    base = rest.removesuffix(CORRECTED)
    order = declaration(fam).order
    pos = order.index(base) if base in order else len(order)
    return (*_family_key(fam), pos, base, int(rest != base), claim_id)


def contract_ids() -> dict[str, tuple[str, ...]]:
    """Family -> the ids of its statements (every claim file but the corrected ones), in
    reading order; derived from the file names, nothing imported but the family packages."""
    ids = sorted((i for i in file_ids() if not i.endswith(CORRECTED)), key=order_key)
    out: dict[str, tuple[str, ...]] = {}
    for claim_id in ids:
        fam = claim_id.split(".", 1)[0]
        out[fam] = (*out.get(fam, ()), claim_id)
    return out
