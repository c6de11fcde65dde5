"""The one registry of claims. Family modules call :func:`register`; everything else reads it."""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterable

from fedtheory.claims.core import Claim

__all__ = ["FAMILY_MODULES", "all_claims", "families", "get_claim", "register", "select"]

_REGISTRY: dict[str, Claim] = {}

#: family -> modules that define its claims (imported lazily, once).
FAMILY_MODULES: dict[str, tuple[str, ...]] = {
    "is": ("fedtheory.claims.importance_sampling",),
    "ocs": (
        "fedtheory.claims.ocs",
        "fedtheory.claims.ocs_theorems",
        "fedtheory.claims.ocs_experiment",
    ),
    "mifa": ("fedtheory.claims.mifa",),
    "fedavg": ("fedtheory.claims.fedavg",),
}

_loaded = False


def register(claim: Claim) -> Claim:
    """Add ``claim`` to the registry and return it. Ids are unique."""
    if claim.id in _REGISTRY and _REGISTRY[claim.id] is not claim:
        raise ValueError(f"claim id {claim.id!r} is registered twice")
    _REGISTRY[claim.id] = claim
    return claim


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for modules in FAMILY_MODULES.values():
        for mod in modules:
            try:
                importlib.import_module(mod)
            except ModuleNotFoundError as exc:
                if exc.name != mod:  # a real missing dependency, not a family not yet written
                    raise


def all_claims() -> list[Claim]:
    """Every registered claim, in family order then registration order."""
    _load()
    order = {fam: i for i, fam in enumerate(FAMILY_MODULES)}
    return sorted(_REGISTRY.values(), key=lambda c: order.get(c.family, len(order)))


def families() -> list[str]:
    """The families that have at least one registered claim."""
    seen: list[str] = []
    for c in all_claims():
        if c.family not in seen:
            seen.append(c.family)
    return seen


def get_claim(claim_id: str) -> Claim:
    """Return the claim with this id; a ValueError lists the closest ids if there is none."""
    _load()
    try:
        return _REGISTRY[claim_id]
    except KeyError:
        close = difflib.get_close_matches(claim_id, list(_REGISTRY), n=5, cutoff=0.4)
        hint = f"; closest matches: {', '.join(close)}" if close else ""
        raise ValueError(f"unknown claim id {claim_id!r}{hint}") from None


def select(ids: Iterable[str] = (), family: str | None = None) -> list[Claim]:
    """Claims named by ``ids`` and/or belonging to ``family`` (all claims if neither given)."""
    ids = list(ids)
    claims = all_claims()
    if family is not None:
        fams = families()
        if family not in fams:
            close = difflib.get_close_matches(family, fams, n=3, cutoff=0.3)
            hint = f"; closest matches: {', '.join(close)}" if close else ""
            raise ValueError(f"unknown family {family!r} (known: {', '.join(fams)}){hint}")
        claims = [c for c in claims if c.family == family]
    if ids:
        chosen = [get_claim(i) for i in ids]
        if family is not None:
            chosen = [c for c in chosen if c.family == family]
        return chosen
    return claims
