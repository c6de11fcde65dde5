"""The one registry of claims, filled by discovery: adding a claim is adding a file.

Every claim file is imported on first use: the modules of the sub-packages
``fedtheory/claims/<family>/`` as :func:`fedtheory.claim_files.file_ids` lists them (the one
listing of which claims exist; :func:`claim_modules`), where each claim lives in a file of
its own named after it (``fedtheory/claims/mifa/zero_floor.py`` holds ``mifa.zero_floor``;
its corrected statement ``mifa.zero_floor.corrected`` lives beside it in
``zero_floor_corrected.py``). A claim module defines its claim as the module attribute
``CLAIM``; modules whose name starts with ``_`` are helpers and are not imported by discovery.
A module that fails to import is an
error, never skipped, and so is a ``CLAIM`` whose id is not the one its file names
(:func:`fedtheory.claim_files.claim_id_for_module`): the command line relies on it to answer
``fedtheory show ID`` and an unknown id without importing every claim (:mod:`fedtheory.index`).
:func:`register` adds a claim defined elsewhere (a test's, a notebook's) to this process only.

Claims also come from outside the package (:mod:`fedtheory.claims.sources`): installed
packages' ``fedtheory.claims`` entry points (loaded with the built-in claims) and claim files or
directories (:func:`add_sources`, the command line's ``PATH`` arguments and ``--claims``). A
family folder under the package without ``__init__.py`` is an error, never skipped. Every
claim's origin (:func:`origin_of`) goes into its report entry.
"""

from __future__ import annotations

import difflib
import importlib
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from fedtheory.claim_files import claim_id_for_module, file_ids, unknown_id_message
from fedtheory.claimkit.core import Claim
from fedtheory.claims.family_packages import order_key
from fedtheory.claims.sources import (
    ENV_VAR,
    Origin,
    claim_files,
    entry_point_claims,
    env_sources,
    file_origin,
    load_file,
)

__all__ = ["add_sources", "all_claims", "claim_modules", "discovered", "families", "get_claim",
           "origin_of", "register", "select", "sources"]

_REGISTRY: dict[str, Claim] = {}

#: Claim id -> the module discovery found it in.
_DISCOVERED: dict[str, str] = {}

#: Claim id -> where it was defined (built-in claims: filled on demand by origin_of).
_ORIGINS: dict[str, Origin] = {}

#: Claim files and directories added in this process (absolute paths), in order.
_SOURCES: list[str] = []

_loaded = False


def register(claim: Claim, origin: Origin | None = None) -> Claim:
    """Add ``claim`` to the registry and return it. Ids are unique across every source: a
    second claim with the same id is a ``ValueError`` naming where both come from.
    ``origin``: where it was defined (:mod:`fedtheory.claims.sources`); None for a claim made
    in this process (a test's, a notebook's)."""
    if not isinstance(claim, Claim):
        raise TypeError(f"register() takes a Claim, got {type(claim).__name__}")
    if claim.id in _REGISTRY and _REGISTRY[claim.id] is not claim:
        first = _ORIGINS.get(claim.id)
        here = f" ({origin.describe()})" if origin is not None else ""
        there = f" ({first.describe()})" if first is not None else ""
        raise ValueError(f"claim id {claim.id!r} is defined twice: first{there}, then{here}; "
                         "ids are unique across the package, entry points and claim files")
    _REGISTRY[claim.id] = claim
    if origin is not None:
        _ORIGINS[claim.id] = origin
    return claim


def origin_of(claim_id: str) -> Origin | None:
    """Where the registered claim ``claim_id`` was defined (None: made in this process)."""
    origin = _ORIGINS.get(claim_id)
    if origin is None and claim_id in _DISCOVERED:  # built in: its file, hashed on demand
        module = _DISCOVERED[claim_id]
        path = getattr(sys.modules.get(module), "__file__", None)
        origin = _ORIGINS[claim_id] = file_origin(path, "built in", module, git=False)
    return origin


def add_sources(paths: Iterable[str | Path]) -> list[Claim]:
    """Load the claims of ``paths`` (claim files, or directories of them:
    :func:`fedtheory.claims.sources.claim_files`), register them, and return them in order.

    The paths are also put in the environment (:data:`~fedtheory.claims.sources.ENV_VAR`),
    so that worker processes of this run find the same claims. Loading a file twice returns
    its claims again (no clash with itself)."""
    out: list[Claim] = []
    builtin = file_ids()  # a file may not redefine a built-in claim (imported lazily)
    for path in paths:
        files = claim_files(path)
        key = str(Path(path).resolve())
        for f in files:
            claims, origin = load_file(f)
            for claim in claims:
                if claim.id in builtin:
                    raise ValueError(
                        f"claim id {claim.id!r} is defined twice: built in "
                        f"({builtin[claim.id]}), then ({origin.describe()}); ids are unique "
                        "across the package, entry points and claim files")
                known = _REGISTRY.get(claim.id)
                if known is not None and known is not claim and \
                        getattr(_ORIGINS.get(claim.id), "path", None) == origin.path:
                    del _REGISTRY[claim.id]  # the same file, edited and loaded again
                if _REGISTRY.get(claim.id) is not claim:
                    register(claim, origin)
                _ORIGINS[claim.id] = origin  # the file as this run read it
                out.append(claim)
        if key not in _SOURCES:  # loaded without error: a source of this run
            _SOURCES.append(key)
    if _SOURCES:
        os.environ[ENV_VAR] = os.pathsep.join(_SOURCES)
    return out


def sources() -> list[str]:
    """The claim files and directories added in this process (absolute paths)."""
    return list(_SOURCES)


def _load_env_sources() -> None:
    """A worker process: load the claim files its parent's run added (from the environment)."""
    todo = [s for s in env_sources() if s not in _SOURCES]
    if todo:
        add_sources(todo)


def _load_entry_points() -> None:
    for claims, origin in entry_point_claims():
        for claim in claims:
            if _REGISTRY.get(claim.id) is not claim:
                register(claim, origin)


def claim_modules(package: str = "fedtheory.claims") -> list[str]:
    """The names of the modules discovery imports: the claim files of the family sub-packages
    (:func:`fedtheory.claim_files.file_ids`, the one listing of which claims exist; the
    vocabulary modules beside them hold no claim, ``_``-prefixed helpers are skipped), sorted.
    A folder of ``.py`` files without ``__init__.py`` is a ``ValueError``.

    >>> "fedtheory.claims.registry" in claim_modules()
    False
    """
    if package != "fedtheory.claims":
        raise ValueError(f"claim_modules lists the claims of fedtheory.claims, not {package!r} "
                         "(claims from elsewhere: a claim file, a folder, an entry point)")
    pkg = importlib.import_module(package)
    for root in pkg.__path__:
        _refuse_folders_without_init(Path(root))
    return sorted(file_ids().values())


def _refuse_folders_without_init(root: Path) -> None:
    """A folder of claim files under the package without ``__init__.py`` would be skipped by
    discovery without a word: a ``ValueError`` names it instead (nothing is ever skipped)."""
    for folder in sorted(p for p in root.rglob("*") if p.is_dir()):
        rel = folder.relative_to(root).parts
        if any(part.startswith(("_", ".")) for part in rel):
            continue
        if any(folder.glob("*.py")) and not (folder / "__init__.py").is_file():
            raise ValueError(
                f"{folder} holds claim files but no __init__.py: a family is a package "
                f"(add an empty {folder / '__init__.py'}), or give the folder with --claims")


def _import_claim_module(name: str) -> None:
    """Import one claim module and register its ``CLAIM`` (if it has one); a claim not named
    after its file is a ``ValueError``, an import error propagates (never skipped)."""
    module = importlib.import_module(name)
    claim = getattr(module, "CLAIM", None)
    if claim is None:
        return
    want = claim_id_for_module(name)
    if getattr(claim, "id", None) != want:
        where = getattr(module, "__file__", None) or name
        must = (f"this file must hold {want!r}" if want is not None else
                "it must live in a family sub-package")
        raise ValueError(
            f"{where} defines claim {getattr(claim, 'id', claim)!r}, but a claim file "
            f"is named after its claim: {must} (a claim lives in "
            "fedtheory/claims/<family>/<name>.py as <family>.<name>; "
            "<name>_corrected.py holds <family>.<name>.corrected)")
    if _REGISTRY.get(claim.id) is not claim:
        register(claim)
    _DISCOVERED[claim.id] = name


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    try:
        for name in claim_modules():
            _import_claim_module(name)
        _load_entry_points()
        _load_env_sources()
    except BaseException:
        _loaded = False  # asked again, discovery raises again: never a partial registry
        raise


def _load_one(claim_id: str) -> None:
    """Import the module of ``claim_id`` alone, found by the file-name rule
    (:func:`fedtheory.claim_files.file_ids`): ``fedtheory verify ID`` and a worker process need one
    claim, not every claim (whose imports cost seconds). Discovery of every claim still runs
    where the file does not hold the claim it names (and then raises its error)."""
    if _loaded or claim_id in _REGISTRY:
        return
    module = file_ids().get(claim_id)
    if module is not None:
        _import_claim_module(module)
    if claim_id not in _REGISTRY:
        _load_env_sources()
    if claim_id not in _REGISTRY:
        _load()


def discovered() -> dict[str, str]:
    """Claim id -> module of every claim discovery found (claims added with :func:`register`
    are not among them)."""
    _load()
    return dict(_DISCOVERED)


def all_claims() -> list[Claim]:
    """Every registered claim: families and ids in the order their family packages declare
    (:func:`fedtheory.claims.family_packages.order_key`), the contract's (``docs/claims.md``)."""
    _load()
    return sorted(_REGISTRY.values(), key=lambda c: order_key(c.id))


def families() -> list[str]:
    """The families that have at least one registered claim."""
    seen: list[str] = []
    for c in all_claims():
        if c.family not in seen:
            seen.append(c.family)
    return seen


def get_claim(claim_id: str) -> Claim:
    """Return the claim with this id; a ValueError lists the closest ids if there is none.

    Only the claim's own module is imported (and what it imports), unless every claim was
    imported already."""
    _load_one(claim_id)
    try:
        return _REGISTRY[claim_id]
    except KeyError:
        raise ValueError(unknown_id_message(claim_id, _REGISTRY)) from None


def select(ids: Iterable[str] = (), family: str | None = None) -> list[Claim]:
    """Claims named by ``ids``, or belonging to ``family``, or all claims if neither is given.

    Giving both is a ``ValueError``: ids with a family would silently select only part of what
    was named.
    """
    ids = list(ids)
    if ids and family is not None:
        raise ValueError(f"give claim ids or a family, not both (ids {', '.join(ids)}, "
                         f"family {family!r})")
    if ids:
        return [get_claim(i) for i in ids]
    claims = all_claims()
    if family is not None:
        fams = families()
        if family not in fams:
            close = difflib.get_close_matches(family, fams, n=3, cutoff=0.3)
            hint = f"; closest matches: {', '.join(close)}" if close else ""
            raise ValueError(f"unknown family {family!r} (known: {', '.join(fams)}){hint}")
        claims = [c for c in claims if c.family == family]
    return claims
