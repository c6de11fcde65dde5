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

A claim file imports the helper modules of its folder by a plain ``import _common`` or
``from _common import x`` (:func:`helper_import`): a name starting with ``_`` whose ``.py``
file sits in the importing file's folder is that file, imported once per folder under a name
of its own (``fedtheory_user_claims.<folder tag>._common``), so two folders' ``_common.py`` do
not collide. The folder is never put on :data:`sys.path`, and a helper named like a module
Python already finds (``_thread.py``, ``_pytest.py`` ...) is refused, naming the file.

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

import builtins
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
    "helper_import",
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


def _folder_tag(folder: Path) -> str:
    return hashlib.sha256(str(folder).encode()).hexdigest()[:10]


def _check_helper_name(name: str, file: Path) -> None:
    """``ImportError`` naming ``file`` when the helper ``name`` would shadow a module Python
    finds without the folder (the standard library's ``_thread``, an installed package)."""
    taken = name in sys.stdlib_module_names or name in sys.builtin_module_names
    if not taken:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        # the folder itself on sys.path (a run started in it: '' is the working folder)
        # finds the helper, which is no clash
        taken = spec is not None and (spec.origin is None
                                      or Path(spec.origin).resolve() != file.resolve())
    if taken:
        raise ImportError(f"helper module {file} is named like the module {name!r} Python "
                          "already imports (the standard library or an installed package); "
                          "rename it (e.g. _my_" + name.lstrip("_") + ".py)")


def _exec_file(p: Path, name: str) -> Any:
    """Import the file ``p`` as ``sys.modules[name]``, its imports of ``_``-prefixed helpers
    of its folder served by :func:`helper_import`."""
    spec = importlib.util.spec_from_file_location(name, p)
    if spec is None or spec.loader is None:
        raise ImportError(f"claim file {p}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    module.__fedtheory_sha256__ = _sha256(p)
    module.__builtins__ = {**builtins.__dict__, "__import__": helper_import(p.parent)}
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def helper_import(folder: str | Path) -> Any:
    """The ``__import__`` a claim file (or helper) of ``folder`` runs with: ``import _x`` and
    ``from _x import y`` (absolute, a top-level name starting with ``_``) with ``folder/_x.py``
    present import that file, as ``fedtheory_user_claims.<folder tag>._x``, again when it
    changed; every other import is Python's own. A helper named like a module Python already
    finds is an ``ImportError`` naming it."""
    base = Path(folder).resolve()
    tag = _folder_tag(base)
    real = builtins.__import__

    def scoped(name: str, globals: Any = None, locals: Any = None,  # noqa: A002
               fromlist: Any = (), level: int = 0) -> Any:
        top = name.partition(".")[0]
        file = base / f"{top}.py"
        if level or not top.startswith("_") or top.startswith("__") or not file.is_file():
            return real(name, globals, locals, fromlist, level)
        if name != top:
            raise ImportError(f"helper module {file}: {name!r} names a sub-module; a helper "
                              "is one .py file")
        _check_helper_name(top, file)
        full = f"{_USER_PREFIX}.{tag}.{top}"
        module = sys.modules.get(full)
        if module is None or getattr(module, "__fedtheory_sha256__", None) != _sha256(file):
            module = _exec_file(file, full)
        return module

    return scoped


def load_file(path: str | Path) -> tuple[list[Any], Origin]:
    """Import one claim file (once per process, again if the file changed) and return its
    claims and their origin. Its ``import _helper`` lines find the ``_*.py`` files of its
    folder (:func:`helper_import`).

    An import error is re-raised as ``ImportError`` naming the file (its cause chained)."""
    p = Path(path).resolve()
    name = module_name_for(p)
    module = sys.modules.get(name)
    if module is not None and getattr(module, "__fedtheory_sha256__", None) != _sha256(p):
        module = None  # the file changed since it was imported here: import it again
    if module is None:
        try:
            module = _exec_file(p, name)
        except BaseException as exc:
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
    source>``, ``k`` the source's index, so that two sources' files never collide. The helper
    modules beside the claim files (:func:`fedtheory.claim_files.helper_files`) go with them."""
    out: dict[str, bytes] = {}
    for k, path in enumerate(paths):
        base = Path(path).resolve()
        root = base.parent if base.is_file() else base
        files = set(claim_files(base))
        files.update(h for f in list(files) for h in helper_files(f)
                     if h.relative_to(f.parent).parts[0].startswith("_"))
        for f in sorted(files):
            out[f"{k}/{f.relative_to(root).as_posix()}"] = f.read_bytes()
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
