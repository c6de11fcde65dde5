r"""Where claims come from: the package, an installed package's entry point, or a user's files.

A researcher's lemma does not have to live inside fedtheory. Three sources feed the one
registry (:mod:`fedtheory.claims.registry`), under the same rules (a file that fails to import
is an error naming the file; a claim id is unique across all sources, a clash is an error
naming both places):

* **built in**: ``fedtheory/claims/<family>/<name>.py``, found by discovery;
* **entry point**: an installed distribution declares, in its ``pyproject.toml``,

  .. code-block:: toml

      [project.entry-points."fedtheory.claims"]
      mylemmas = "mylemmas.claims"        # a module (its CLAIM / CLAIMS), or a Claim object

  and its claims are listed with the built-in ones, under their own family;
* **file**: a ``.py`` file, or a directory of them (``_``-prefixed files are helpers and are
  skipped, as in the package; sub-directories are walked), given on the command line
  (``fedtheory verify ./my_lemma.py``, ``--claims DIR``) or with :func:`add_sources`. A file
  defines ``CLAIM`` (one claim) or ``CLAIMS`` (a sequence of claims); a file defining neither
  is an error.

Worker processes find the same files through the environment variable :data:`ENV_VAR` (the
paths, :data:`os.pathsep`-separated), which :func:`add_sources` sets: a process pool started
by fork, spawn or forkserver inherits it. A Dask cluster's workers are sent the files
themselves (:mod:`fedtheory.executors`).

Every claim's :class:`Origin` (the kind of source, the file, its SHA-256 and those of the
helper modules beside it, and the git commit of a file in a git work tree with whether it was
dirty) goes into its report entry, so a verdict names the file that produced it, and ``verify
--resume`` keeps an entry only while they hash the same.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from fedtheory import sandbox
from fedtheory.claim_files import helper_files
from fedtheory.claimkit.core import Claim
from fedtheory.gitinfo import git_output

__all__ = [
    "ENTRY_POINT_GROUP",
    "ENV_VAR",
    "Origin",
    "bundle",
    "claim_files",
    "claims_of_module",
    "entry_point_claims",
    "env_sources",
    "file_origin",
    "load_file",
    "module_name_for",
    "unpack",
]

#: The entry-point group an installed package ships claims through.
ENTRY_POINT_GROUP = "fedtheory.claims"

#: Claim files and directories of this run (os.pathsep-separated), for worker processes.
ENV_VAR = "FEDTHEORY_CLAIMS"

#: Where user claim modules are put in ``sys.modules`` (never a real package).
_USER_PREFIX = "fedtheory_user_claims"


@dataclass(frozen=True)
class Origin:
    """Where a claim was defined: ``kind`` ("built in", "entry point" or "file"), its module,
    the file and its SHA-256, the entry point's name, and, for a file in a git work tree, the
    commit and whether the file differs from it (``dirty``; untracked counts as dirty)."""

    kind: str
    module: str
    path: str | None = None
    sha256: str | None = None
    entry_point: str | None = None
    commit: str | None = None
    dirty: bool | None = None
    #: The helper modules beside the file (:func:`fedtheory.claim_files.helper_files`): name
    #: relative to the file's folder -> SHA-256 (None: no file).
    helpers: dict[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        """One line: ``file /x/my.py (sha256 ab12cd34..., commit 1234567, dirty)``."""
        where = {"built in": f"built in ({self.module})",
                 "entry point": f"entry point {self.entry_point} ({self.module})",
                 }.get(self.kind, f"file {self.path}")
        bits = [f"sha256 {self.sha256[:12]}..."] if self.sha256 else []
        if self.commit:
            bits.append(f"commit {self.commit[:10]}" + (", dirty" if self.dirty else ""))
        return where + (f" ({', '.join(bits)})" if bits else "")


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def file_origin(path: str | Path | None, kind: str, module: str,
                entry_point: str | None = None, git: bool = True) -> Origin:
    """The :class:`Origin` of a claim defined in ``path`` (None: unknown file). With ``git``,
    a file inside a git work tree records the commit and whether the file is dirty."""
    if path is None:
        return Origin(kind, module, entry_point=entry_point)
    p = Path(path).resolve()
    commit = dirty = None
    if git and p.is_file():
        commit = git_output(["rev-parse", "HEAD"], p.parent)
        if commit is not None:
            status = git_output(["status", "--porcelain", "--", p.name], p.parent)
            dirty = None if status is None else bool(status)
    helpers = {f.relative_to(p.parent).as_posix(): _sha256(f) or "" for f in helper_files(p)}
    return Origin(kind, module, str(p), _sha256(p), entry_point, commit, dirty,
                  {k: v for k, v in helpers.items() if v})


def module_name_for(path: str | Path) -> str:
    """The ``sys.modules`` name a claim file is imported under: unique per absolute path
    (two ``lemma.py`` in different folders do not collide), stable across processes.

    >>> module_name_for("/tmp/a/my-lemma.py").startswith("fedtheory_user_claims.my_lemma_")
    True
    """
    p = Path(path).resolve()
    stem = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in p.stem) or "claims"
    tag = hashlib.sha256(str(p).encode()).hexdigest()[:10]
    return f"{_USER_PREFIX}.{stem}_{tag}"


def claim_files(path: str | Path) -> list[Path]:
    """The claim files ``path`` names: itself (a ``.py`` file) or, for a directory, every
    ``.py`` file under it whose name and folders do not start with ``_`` or ``.``, sorted.
    ``ValueError`` naming the path when it does not exist or is not a ``.py`` file or a
    directory, or when a directory holds no claim file."""
    p = Path(path)
    if p.is_file():
        if p.suffix != ".py":
            raise ValueError(f"claim source {str(path)!r} is not a .py file or a directory")
        return [p.resolve()]
    if p.is_dir():
        found = sorted(f.resolve() for f in p.rglob("*.py")
                       if not any(part.startswith(("_", ".")) for part in
                                  f.relative_to(p).parts))
        if not found:
            raise ValueError(f"claim source {str(path)!r}: no claim file (*.py) in it")
        return found
    raise ValueError(f"claim source {str(path)!r} does not exist")


def claims_of_module(module: Any, where: str) -> list[Any]:
    """The claims a module defines: ``CLAIM``, or the sequence ``CLAIMS``. ``ValueError``
    naming ``where`` if it defines neither, or something that is not a claim."""
    found: list[Any] = []
    if getattr(module, "CLAIM", None) is not None:
        found.append(module.CLAIM)
    extra = getattr(module, "CLAIMS", None)
    if extra is not None:
        if isinstance(extra, Claim) or not isinstance(extra, Iterable):
            raise ValueError(f"{where}: CLAIMS must be a list of claims, got {extra!r}")
        found.extend(extra)
    if not found:
        raise ValueError(f"{where} defines no claim: a claim file sets CLAIM = Claim(...) "
                         "(or CLAIMS = [...])")
    bad = [c for c in found if not isinstance(c, Claim)]
    if bad:
        raise ValueError(f"{where}: CLAIM/CLAIMS must hold fedtheory Claim objects, got "
                         f"{type(bad[0]).__name__}")
    return found


def load_file(path: str | Path) -> tuple[list[Any], Origin]:
    """Import one claim file (once per process, again if the file changed) and return its
    claims and their origin.

    An import error is re-raised as ``ImportError`` naming the file (its cause chained)."""
    p = Path(path).resolve()
    name = module_name_for(p)
    module = sys.modules.get(name)
    sha = _sha256(p)
    if module is not None and getattr(module, "__fedtheory_sha256__", None) != sha:
        module = None  # the file changed since it was imported here: import it again
    if module is None:
        spec = importlib.util.spec_from_file_location(name, p)
        if spec is None or spec.loader is None:
            raise ImportError(f"claim file {p}: cannot be imported")
        module = importlib.util.module_from_spec(spec)
        module.__fedtheory_sha256__ = sha
        sys.modules[name] = module  # dataclasses and pickling look the module up by name
        try:
            spec.loader.exec_module(module)
        except BaseException as exc:
            del sys.modules[name]
            if not sandbox.own_error(exc):  # the user's Ctrl-C; a file's sys.exit() is its error
                raise
            raise ImportError(f"claim file {p} failed to import: {type(exc).__name__}: "
                              f"{exc}") from exc
    return claims_of_module(module, f"claim file {p}"), file_origin(p, "file", name)


def entry_point_claims() -> list[tuple[list[Any], Origin]]:
    """The claims every installed ``fedtheory.claims`` entry point provides, with their
    origin. An entry point that fails to load is an ``ImportError`` naming it."""
    out = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            obj = ep.load()
        except Exception as exc:
            raise ImportError(f"entry point {ep.name} = {ep.value!r} (group "
                              f"{ENTRY_POINT_GROUP}) failed to load: {type(exc).__name__}: "
                              f"{exc}") from exc
        where = f"entry point {ep.name} = {ep.value!r}"
        if isinstance(obj, Claim):
            claims, module = [obj], ep.module
        elif isinstance(obj, (list, tuple)):
            claims, module = list(obj), ep.module
        else:
            claims, module = claims_of_module(obj, where), obj.__name__
        mod = sys.modules.get(module)
        out.append((claims, file_origin(getattr(mod, "__file__", None), "entry point",
                                        module, entry_point=ep.name)))
    return out


def env_sources() -> list[str]:
    """The claim sources of this run as the environment passes them to workers."""
    raw = os.environ.get(ENV_VAR, "")
    return [s for s in raw.split(os.pathsep) if s]


def bundle(paths: Iterable[str | Path]) -> dict[str, bytes]:
    """The claim files of ``paths`` as ``{name: bytes}`` to send to machines that do not see
    this file system (a Dask cluster's workers): each name is ``<k>/<path relative to its
    source>``, ``k`` the source's index, so that two sources' files never collide."""
    out: dict[str, bytes] = {}
    for k, path in enumerate(paths):
        base = Path(path).resolve()
        for f in claim_files(base):
            rel = f.name if base.is_file() else f.relative_to(base).as_posix()
            out[f"{k}/{rel}"] = f.read_bytes()
    return out


def unpack(files: dict[str, bytes], folder: str | Path) -> list[str]:
    """Write a :func:`bundle` under ``folder`` and return the sources to load (one folder per
    original source). A name that would leave ``folder`` is a ``ValueError``."""
    root = Path(folder).resolve()
    sources: list[str] = []
    for name, data in sorted(files.items()):
        target = (root / name).resolve()
        if root not in target.parents:
            raise ValueError(f"claim file name {name!r} leaves the folder {root}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        src = str(root / name.split("/", 1)[0])
        if src not in sources:
            sources.append(src)
    return sources
