"""The claim index: what ``fedtheory list``, ``show ID`` and an unknown id need, without
importing every claim module.

Importing the claims costs seconds (sympy, numpy, scipy, cvxpy and every claim module), while
the command line's cheap answers need only ids and texts. Two sources serve them, both correct
when a claim file is added, removed or edited:

* **Ids from file names.** A claim lives in ``fedtheory/claims/<family>/<name>.py`` and its id
  is ``<family>.<name>`` (``<name>_corrected.py`` holds ``<family>.<name>.corrected``);
  discovery (:mod:`fedtheory.claims.registry`) refuses a claim file that breaks this rule. So
  the registered ids are among the ids the directory listing gives (:func:`file_ids`), and an
  unknown id is answered without importing any claim.
* **Cached texts.** Every claim's family, kind, title, seed reference, statement, finding,
  derivation and checks, and a digest of what its report entries must repeat
  (:func:`fedtheory.schema.definition_digest`), written as JSON in the user's cache folder
  (:func:`cache_dir`: ``$FEDTHEORY_CACHE_DIR``, else ``platformdirs.user_cache_dir``), one
  file per installed package (its folder and version: :func:`cache_path`), whenever every
  claim has been imported anyway, and stamped with a fingerprint of the package's sources
  (path, size and modification time of every ``.py`` file: :func:`fingerprint`). A cache whose
  fingerprint differs is never read. ``list`` rebuilds a stale cache (importing the claims
  once); ``show ID`` imports only the module of ``ID``; ``verify`` refreshes it for free.

Nothing is ever written inside the installed package: a file left there outlives
``pip uninstall`` and turns the leftover folder into a namespace package that hides the next
(editable) install.

This module imports nothing heavier than the standard library until a claim must be imported.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import importlib
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fedtheory.claim_files import (
    claim_id_for_module,
    file_ids,
    package_dir,
    unknown_id_message,
)
from fedtheory.vocabulary import PRESETS
from fedtheory.vocabulary.record import INDEX_FIELDS

__all__ = [
    "CACHE_ENV",
    "CACHE_NAME",
    "CheckInfo",
    "ClaimInfo",
    "cache_dir",
    "cache_path",
    "check_family",
    "check_ids",
    "claim_id_for_module",
    "file_ids",
    "fingerprint",
    "load_index",
    "lookup",
    "unknown_id_message",
]

#: The cache file's name: ``claim-index-<tag>.json`` in :func:`cache_dir`, ``<tag>`` naming
#: the package's folder and version.
CACHE_NAME = "claim-index-{tag}.json"

#: The environment variable that names the cache folder (instead of the user's cache folder).
CACHE_ENV = "FEDTHEORY_CACHE_DIR"

#: Bumped when the cache's layout changes (an old cache is then rebuilt).
_FORMAT = 1



@dataclass(frozen=True)
class CheckInfo:
    """One check of a claim, as ``show`` prints it."""

    name: str
    kind: str
    description: str = ""


#: The fields of :class:`ClaimInfo` beside the record's texts (INDEX_FIELDS): where the claim
#: is defined, its pinned verdict, its checks, and the digests of its definition.
INDEX_ONLY = ("module", "expected", "checks", "definition")


@dataclass(frozen=True)
class ClaimInfo:
    """What the command line shows of a claim without importing it.

    The attributes are the texts of a claim's definition its report entries repeat
    (:data:`fedtheory.vocabulary.record.INDEX_FIELDS`; ``kind`` as its value), and
    :data:`INDEX_ONLY`; ``definition`` maps each preset to the digest of what the
    claim's report entries must repeat (:func:`fedtheory.schema.definition_digest`).
    """

    id: str
    module: str
    family: str
    kind: str
    title: str
    seed_ref: str
    statement: str
    finding: str = ""
    derivation: str = ""
    restatement: str = ""
    expected: str | None = None
    checks: tuple[CheckInfo, ...] = ()
    definition: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["checks"] = [{"name": c.name, "kind": c.kind, "description": c.description}
                       for c in self.checks]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ClaimInfo:
        checks = tuple(CheckInfo(**c) for c in d["checks"])
        return cls(**{**d, "checks": checks, "definition": dict(d["definition"])})


def _live_ids() -> set[str]:
    """Ids registered in this process (none unless the registry was loaded here)."""
    reg = sys.modules.get("fedtheory.claims.registry")
    return set(getattr(reg, "_REGISTRY", {})) if reg is not None else set()


def has_entry_points() -> bool:
    """Whether an installed package ships claims (the ``fedtheory.claims`` entry-point group:
    :mod:`fedtheory.claims.sources`); reading the installed metadata imports no claim."""
    from importlib.metadata import entry_points

    return bool(entry_points(group="fedtheory.claims"))


def load_entry_points() -> list[Any]:
    """Register the claims of every ``fedtheory.claims`` entry point (importing them) and
    return them; none (and nothing imported) when no package ships claims."""
    if not has_entry_points():
        return []
    from fedtheory.claims import registry

    registry._load_entry_points()
    return [c for c in registry.all_claims() if registry.origin_of(c.id) is not None
            and registry.origin_of(c.id).kind == "entry point"]


def check_ids(ids: Sequence[str]) -> None:
    """Raise ``ValueError`` for the first of ``ids`` that no claim file names (nor this process
    registered, nor an installed entry point ships), with the closest matches, without
    importing any claim of the package."""
    known: dict[str, str] | None = None
    for claim_id in ids:
        if claim_id in _live_ids():
            continue
        if known is None:
            known = file_ids()
        if claim_id not in known and not (load_entry_points() and claim_id in _live_ids()):
            raise ValueError(unknown_id_message(claim_id, [*known, *_live_ids()]))


def check_family(family: str) -> None:
    """Raise ``ValueError`` (the registry's wording) unless some claim file (or registered
    claim, or entry point) belongs to ``family``."""
    if family not in {i.split(".", 1)[0] for i in [*file_ids(), *_live_ids()]}:
        load_entry_points()
    fams = sorted({i.split(".", 1)[0] for i in file_ids()}
                  | {i.split(".", 1)[0] for i in _live_ids()})
    if family not in fams:
        close = difflib.get_close_matches(family, fams, n=3, cutoff=0.3)
        hint = f"; closest matches: {', '.join(close)}" if close else ""
        raise ValueError(f"unknown family {family!r} (known: {', '.join(fams)}){hint}")


# ------------------------------------------------------------------------------------ the cache


def fingerprint(root: Path | None = None) -> str:
    """A digest of the package's sources: the relative path, size and modification time (ns)
    of every ``.py`` file under ``root`` (the package folder), byte code excluded."""
    root = root or package_dir()
    rows: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                rows.append(f"{os.path.relpath(path, root)}\0{st.st_size}\0{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(rows).encode("utf-8")).hexdigest()


def cache_dir() -> Path:
    """The folder of the claim index: ``$FEDTHEORY_CACHE_DIR`` when set, else the user's cache
    folder (``platformdirs.user_cache_dir("fedtheory")``: ``~/.cache/fedtheory`` on Linux,
    ``$XDG_CACHE_HOME/fedtheory`` when that is set)."""
    given = os.environ.get(CACHE_ENV)
    if given:
        return Path(given)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("fedtheory", appauthor=False))


def cache_path(root: Path | None = None) -> Path:
    """The index file of the package at ``root`` (default: the one that runs) in
    :func:`cache_dir`: one per package folder and version, so two installs (a virtualenv's
    and an editable checkout, say) never share one."""
    from fedtheory import __version__

    root = Path(root or package_dir()).resolve()
    tag = hashlib.sha256(f"{root}\0{__version__}".encode()).hexdigest()[:16]
    return cache_dir() / CACHE_NAME.format(tag=tag)


def _read_cache(root: Path, fp: str) -> list[ClaimInfo] | None:
    try:
        doc = json.loads(cache_path(root).read_text(encoding="utf-8"))
        if doc.get("format") != _FORMAT or doc.get("fingerprint") != fp:
            return None
        return [ClaimInfo.from_dict(d) for d in doc["claims"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # missing, stale or unreadable: rebuilt


def _write_cache(root: Path, fp: str, infos: Sequence[ClaimInfo]) -> Path | None:
    """Write the cache atomically in :func:`cache_dir`, best effort: its path, or None when it
    could not be written (every ``list`` then imports the claims)."""
    text = json.dumps({"format": _FORMAT, "fingerprint": fp,
                       "claims": [i.to_dict() for i in infos]}, ensure_ascii=False)
    path = cache_path(root)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        return None
    return path


def info_from_claim(claim: Any, module: str | None = None) -> ClaimInfo:
    """A claim's :class:`ClaimInfo` (``claim`` a :class:`fedtheory.claims.Claim`)."""
    from fedtheory.schema import definition_digest, definition_of

    texts = {name: getattr(claim, name) for name in INDEX_FIELDS if name != "kind"}
    return ClaimInfo(
        **texts,
        module=module or type(claim).__module__,
        kind=claim.kind.value,
        expected=claim.expected.value if claim.expected is not None else None,
        checks=tuple(CheckInfo(c.name, c.kind, c.description) for c in claim.checks),
        definition={p: definition_digest(definition_of(claim, p)) for p in PRESETS},
    )


def _from_registry() -> list[ClaimInfo]:
    """The discovered claims of this process's registry, in its order."""
    from fedtheory.claims import registry

    claims = registry.all_claims()
    modules = registry.discovered()
    return [info_from_claim(c, modules[c.id]) for c in claims if c.id in modules]


def refresh(root: Path | None = None) -> bool:
    """Write the cache from this process's registry when it is stale (call once every claim is
    imported anyway: it costs a few milliseconds then). True when written."""
    root = root or package_dir()
    fp = fingerprint(root)
    if _read_cache(root, fp) is not None:
        return False
    return _write_cache(root, fp, _from_registry()) is not None


def load_index(build: bool = True) -> list[ClaimInfo] | None:
    """Every discovered claim's :class:`ClaimInfo`, in the registry's order.

    From the registry when this process has loaded it, else from a fresh cache; else, with
    ``build``, by importing every claim (and writing the cache), without it None.
    """
    reg = sys.modules.get("fedtheory.claims.registry")
    if reg is not None and getattr(reg, "_loaded", False):
        return _from_registry()
    root = package_dir()
    fp = fingerprint(root)
    cached = _read_cache(root, fp)
    if cached is not None or not build:
        return cached
    infos = _from_registry()
    _write_cache(root, fp, infos)
    return infos


def lookup(claim_id: str) -> ClaimInfo:
    """The claim ``claim_id``: from the index when it is fresh, else by importing its module
    alone. ``ValueError`` with the closest ids when no claim has this id."""
    check_ids([claim_id])
    index = load_index(build=False)
    if index is not None:
        for info in index:
            if info.id == claim_id:
                return info
    reg = sys.modules.get("fedtheory.claims.registry")
    if reg is not None and claim_id in getattr(reg, "_REGISTRY", {}):
        return info_from_claim(reg._REGISTRY[claim_id])
    module = file_ids().get(claim_id)
    if module is not None:
        claim = getattr(importlib.import_module(module), "CLAIM", None)
        if claim is not None and getattr(claim, "id", None) == claim_id:
            return info_from_claim(claim, module)
    from fedtheory.claims.registry import get_claim  # a file without its claim: ask discovery

    return info_from_claim(get_claim(claim_id))
