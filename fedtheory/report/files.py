"""Writing a report's files: atomically, and only where nothing is or a regular file is.

Every file is written atomically (:func:`atomic_write_text`: a temporary file in the same
folder, then :func:`os.replace`), so a reader never sees half a report and concurrent runs never
mix their results: the last one to finish wins. A symbolic link, a device (``/dev/null``), a
FIFO, a socket or a directory at an output's path is an error naming the option, before any
work (:func:`check_writable_file`, :func:`check_writable_dir`) and again at the rename
(:mod:`fedtheory.safefiles`); fedtheory never writes through a link nor replaces one.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Sequence
from pathlib import Path

from fedtheory.safefiles import check_output_dir, check_output_file

__all__ = ["atomic_write_text", "check_writable_dir", "check_writable_file"]


def atomic_write_text(path: Path | str, text: str, option: str = "output") -> Path:
    """Write ``text`` to ``path`` atomically: a temporary file in the same folder, then rename.

    A reader sees the old file or the new one, never a mixture; the folder is created if needed.
    Only a path that names nothing or a regular file is written: a symbolic link, a device
    (``/dev/null``), a FIFO, a socket or a directory there is an
    :class:`~fedtheory.safefiles.UnsafePath` naming ``option`` and the path (checked before the
    temporary file is made and again just before the rename), and nothing is replaced.
    """
    path = Path(path)
    check_output_file(path, option)
    path.parent.mkdir(parents=True, exist_ok=True)
    # open(..., "x") rather than mkstemp: the file gets the user's umask (mkstemp's is 0600)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        with open(tmp, "x", encoding="utf-8") as fh:
            fh.write(text)
        check_output_file(path, option)  # again: it may have been replaced meanwhile
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def _probe_dir(directory: Path) -> str | None:
    """Create ``directory`` if needed and try to write in it; return the problem, or None."""
    if directory.exists() and not directory.is_dir():
        return f"{directory} exists and is not a directory"
    for parent in directory.parents:
        if parent.exists() and not parent.is_dir():
            return f"{parent} is not a directory"
        if parent.exists():
            break
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".fedtheory-probe-", dir=directory)
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        return f"cannot write in {directory}: {exc.strerror or exc}"
    return None


def check_writable_file(path: Path | str, option: str) -> None:
    """Raise ``ValueError`` naming ``option`` unless a file can be written at ``path``.

    Run before any work, so that a bad output path is found in a second, not after the run.
    """
    check_output_file(path, option)  # a link, a device, a FIFO, a directory: refused
    path = Path(path)
    problem = _probe_dir(path.parent if str(path.parent) else Path("."))
    if problem:
        raise ValueError(f"{option} {path}: {problem}")
    if path.exists() and not os.access(path, os.W_OK):
        raise ValueError(f"{option} {path}: file is not writable")


def check_writable_dir(directory: Path | str, option: str,
                       files: Sequence[str] = ("report.md",)) -> None:
    """Raise ``ValueError`` naming ``option`` unless ``directory`` (and its ``figures/``) can be
    written, and each of its ``files`` names nothing yet or a regular file
    (:func:`fedtheory.safefiles.check_output_file`)."""
    check_output_dir(directory, option)
    check_output_dir(Path(directory) / "figures", option)
    for name in files:
        check_output_file(Path(directory) / name, option)
    directory = Path(directory)
    problem = _probe_dir(directory) or _probe_dir(directory / "figures")
    if problem:
        raise ValueError(f"{option} {directory}: {problem}")
