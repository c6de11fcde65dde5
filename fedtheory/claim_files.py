"""Claim ids from file names: the rule discovery enforces and the command line relies on.

A built-in claim lives in ``fedtheory/claims/<family>/<name>.py`` and its id is
``<family>.<name>`` (``<name>_corrected.py`` holds ``<family>.<name>.corrected``). The claim
registry (:mod:`fedtheory.claims.registry`) refuses a claim file that breaks this rule, and the
claim index (:mod:`fedtheory.index`) answers ``show ID`` and an unknown id from the directory
listing alone. Both read the rule here, a foundation module that imports only the standard
library (so neither depends on the other, and nothing heavy is imported to apply it).
"""

from __future__ import annotations

import ast
import difflib
import os
from collections.abc import Iterable
from pathlib import Path

__all__ = ["claim_id_for_module", "file_ids", "helper_files", "package_dir",
           "unknown_id_message"]

_CLAIMS_PACKAGE = "fedtheory.claims"
_CORRECTED = "_corrected"


def package_dir() -> Path:
    """The folder of the ``fedtheory`` package that runs."""
    return Path(__file__).resolve().parent


def claim_id_for_module(module: str) -> str | None:
    """The claim id a module of :mod:`fedtheory.claims` must hold, or None for a module outside
    the family sub-packages (the vocabulary: ``core``, ``power``, ...).

    >>> claim_id_for_module("fedtheory.claims.mifa.zero_floor_corrected")
    'mifa.zero_floor.corrected'
    >>> claim_id_for_module("fedtheory.claims.ocs.closed_form")
    'ocs.closed_form'
    >>> claim_id_for_module("fedtheory.claims.core") is None
    True
    """
    prefix = _CLAIMS_PACKAGE + "."
    if not module.startswith(prefix):
        raise ValueError(f"module {module!r} is not under {_CLAIMS_PACKAGE}")
    parts = module[len(prefix):].split(".")
    if len(parts) < 2:
        return None
    leaf = parts[-1]
    if leaf.endswith(_CORRECTED) and len(leaf) > len(_CORRECTED):
        parts[-1:] = [leaf[: -len(_CORRECTED)], "corrected"]
    return ".".join(parts)


def file_ids(root: Path | None = None) -> dict[str, str]:
    """Every claim id the files under ``root/claims`` name (``root``: the package folder),
    mapped to its module, sorted by id.

    Walks the family sub-packages the way discovery does (folders with an ``__init__.py``;
    names starting with ``_`` are helpers, skipped), without importing anything. A module that
    defines no claim is listed too: the listing is a superset of the registered ids.
    """
    base = (root or package_dir()) / "claims"
    out: dict[str, str] = {}

    def walk(folder: Path, parts: list[str]) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        for e in entries:
            if e.name.startswith(("_", ".")):
                continue
            if e.is_dir() and (Path(e.path) / "__init__.py").is_file():
                walk(Path(e.path), [*parts, e.name])
            elif e.is_file() and e.name.endswith(".py") and parts:
                module = ".".join([_CLAIMS_PACKAGE, *parts, e.name[:-3]])
                claim_id = claim_id_for_module(module)
                if claim_id is not None:
                    out[claim_id] = module

    walk(base, [])
    return dict(sorted(out.items()))


def unknown_id_message(claim_id: str, known: Iterable[str]) -> str:
    """``unknown claim id 'x'; closest matches: a, b`` (the registry's wording).

    >>> unknown_id_message("ocs.closed_from", ["ocs.closed_form", "is.unbiased"])
    "unknown claim id 'ocs.closed_from'; closest matches: ocs.closed_form"
    """
    close = difflib.get_close_matches(claim_id, list(known), n=5, cutoff=0.4)
    hint = f"; closest matches: {', '.join(close)}" if close else ""
    return f"unknown claim id {claim_id!r}{hint}"


def helper_files(path: Path | str) -> list[Path]:
    """The helper modules beside the claim file ``path``, whose code its verdicts depend on:
    every ``_*.py`` file of its folder (``__init__.py`` too), and every module of its folder it
    imports (``import x`` / ``from x import ...`` with ``x.py`` or the package ``x/`` there: all
    the package's ``.py`` files), sorted, the file itself left out. A file that cannot be read
    or parsed names only the ``_*.py`` files.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> for name in ("claim.py", "_shared.py", "tools.py", "other.py"):
    ...     _ = (d / name).write_text("import tools\\n" if name == "claim.py" else "")
    >>> [p.name for p in helper_files(d / "claim.py")]
    ['_shared.py', 'tools.py']
    """
    p = Path(path).resolve()
    folder = p.parent
    found = {f for f in folder.glob("_*.py") if f.is_file()}
    try:
        tree = ast.parse(p.read_bytes(), filename=str(p))
    except (OSError, SyntaxError, ValueError):
        tree = None
    names = set()
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    for name in names:
        if (folder / f"{name}.py").is_file():
            found.add(folder / f"{name}.py")
        elif (folder / name / "__init__.py").is_file():
            found.update(f for f in (folder / name).rglob("*.py") if f.is_file())
    found.discard(p)
    return sorted(found)
