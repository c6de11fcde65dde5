"""The repository's own files, for tests that read the source tree: the files git tracks
(``git ls-files``), so that whatever else sits in a work tree (a virtualenv, a link, a report,
an editor's backup) can neither break nor influence them. Outside a git checkout (an unpacked
source archive) every file is the repository's, except the folders tools make."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: What tools write into a source tree (skipped by the walk outside a git checkout).
_MADE_DIRS = {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", ".hypothesis",
              "build", "dist", ".fedtheory", ".ipynb_checkpoints", ".benchmarks"}


def _git_files(root: Path) -> list[str] | None:
    """The tracked files under ``root`` (relative POSIX paths), or None when ``root`` is not
    in a git work tree (or git is missing)."""
    try:
        proc = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--full-name", "."],
                              capture_output=True, timeout=60, check=False)
        top = subprocess.run(["git", "-C", str(root), "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0 or top.returncode != 0:
        return None
    prefix = Path(root).resolve().relative_to(Path(top.stdout.strip()).resolve()).as_posix()
    names = [n for n in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if n]
    if prefix != ".":
        names = [n[len(prefix) + 1:] for n in names if n.startswith(prefix + "/")]
    return sorted(names)


def _walk(root: Path) -> list[str]:
    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _MADE_DIRS and not d.endswith(".egg-info"))
        for name in files:
            if name == ".git":  # a worktree's pointer to its repository
                continue
            out.append((Path(folder) / name).relative_to(root).as_posix())
    return sorted(out)


def repository_files(root: Path = ROOT, under: str = "") -> list[str]:
    """The repository's files (relative POSIX paths from ``root``), only those under the
    folder ``under`` when given: the tracked ones in a git checkout, else every file."""
    names = _git_files(root)
    if names is None:
        names = _walk(root)
    if under:
        names = [n for n in names if n.startswith(under.rstrip("/") + "/")]
    return names


def repository_paths(under: str, pattern: str = "*", root: Path = ROOT) -> list[Path]:
    """The repository's files directly in the folder ``under`` whose names match the glob
    ``pattern``, as sorted paths (what ``sorted((root / under).glob(pattern))`` gives, minus the
    files the repository does not hold)."""
    folder = under.rstrip("/")
    return sorted(root / n for n in repository_files(root, folder)
                  if "/" not in n[len(folder) + 1:] and Path(n).match(pattern))


def read_text(root: Path, name: str) -> str | None:
    """A repository file's text (a tracked link: the path it names, as git stores it); None
    for a file that is not UTF-8 text or is gone from the work tree."""
    path = root / name
    try:
        if path.is_symlink():
            return os.readlink(path)
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None
