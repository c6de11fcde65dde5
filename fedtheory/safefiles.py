"""Files from outside, read and written without harm: output paths and bounded reads.

**Outputs** (``verify --json``, ``--report``, the run record, ``catalogue --out``, ``errata
--out``): a file is written only where nothing exists yet or where a *regular file* is: a path
that names a character device (``/dev/null``), a FIFO, a socket, a directory, or a **symbolic
link** (whatever it points to) is refused with a message naming the option and the path
(:func:`check_output_file`), before any work and again when the file is written. A link is
refused rather than written through so that an output can never replace, nor write into,
anything but the file the user named; directories (``--report DIR``, ``errata --out DIR``)
may be reached through a link, and the files inside them follow the rule above.

**Inputs** (reports): read only from a regular file of at most :data:`MAX_REPORT_BYTES`,
with a read of at most that many bytes plus one (:func:`read_bounded`): ``/dev/zero``, a FIFO
or a 30 GB file is an error in a millisecond, never a growing process.

>>> check_output_file("", "--json")
Traceback (most recent call last):
...
fedtheory.safefiles.UnsafePath: --json must be a file path, got ''
>>> check_output_file("/dev/null", "--json")
Traceback (most recent call last):
...
fedtheory.safefiles.UnsafePath: --json /dev/null exists and is a character device, not a \
regular file: give the path of a file to write
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["MAX_REPORT_BYTES", "UnsafePath", "check_output_dir", "check_output_file",
           "file_kind", "read_bounded"]

#: The largest report read back (bytes): a full run's report is a few megabytes.
MAX_REPORT_BYTES = 64 * 1024 * 1024


class UnsafePath(ValueError):
    """An output or input path that is not (or is no longer) what may be written or read."""


def file_kind(mode: int) -> str:
    """What an ``lstat`` mode names, in words.

    >>> file_kind(stat.S_IFIFO), file_kind(stat.S_IFREG)
    ('a FIFO', 'a regular file')
    """
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISREG, "a regular file")):
        if test(mode):
            return name
    return "not a regular file"


def check_output_file(path: Path | str, option: str) -> None:
    """Raise :class:`UnsafePath` naming ``option`` unless ``path`` is a file path that names
    nothing yet or a regular file (not a link, a device, a FIFO, a socket or a directory)."""
    if not isinstance(path, (str, os.PathLike)) or str(path) in ("", "."):
        raise UnsafePath(f"{option} must be a file path, got {str(path)!r}")
    if str(path).endswith(os.sep):
        raise UnsafePath(f"{option} {path}: ends with {os.sep!r}: a directory, not a file")
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):  # nothing there (a parent says why)
        return
    except OSError as exc:
        raise UnsafePath(f"{option} {path}: {exc.strerror or exc}") from None
    if stat.S_ISREG(mode):
        return
    what = file_kind(mode)
    if stat.S_ISLNK(mode):
        raise UnsafePath(f"{option} {path} is a symbolic link: fedtheory writes no output "
                         "through a link; give the path of the file itself")
    raise UnsafePath(f"{option} {path} exists and is {what}, not a regular file: give the "
                     "path of a file to write")


def check_output_dir(path: Path | str, option: str) -> None:
    """Raise :class:`UnsafePath` naming ``option`` unless ``path`` is a directory path that
    names nothing yet or a directory (possibly through a link)."""
    if not isinstance(path, (str, os.PathLike)) or str(path) == "":
        raise UnsafePath(f"{option} must be a directory path, got {str(path)!r}")
    try:
        mode = os.stat(path).st_mode
    except NotADirectoryError:  # a parent is a file: the caller's probe names it
        return
    except FileNotFoundError:
        if os.path.islink(path):
            raise UnsafePath(f"{option} {path} is a symbolic link to nothing") from None
        return
    except OSError as exc:
        raise UnsafePath(f"{option} {path}: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(mode):
        raise UnsafePath(f"{option} {path} exists and is {file_kind(mode)}, not a directory")


def read_bounded(path: Path | str, what: str = "report",
                 limit: int = MAX_REPORT_BYTES) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them: ``UnsafePath``
    (a ``ValueError``) naming ``what`` and the path when it is missing, not a regular file, or
    larger. The file is opened without following a FIFO's writer (``O_NONBLOCK``) and checked
    by ``fstat`` on the open descriptor; then at most ``limit + 1`` bytes are read."""
    path = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise UnsafePath(f"{what} {path} does not exist") from None
    except OSError as exc:
        raise UnsafePath(f"{what} {path} is not readable: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePath(f"{what} {path} is {file_kind(st.st_mode)}, not a regular file")
        if st.st_size > limit:
            raise UnsafePath(f"{what} {path} is {st.st_size} bytes, more than the "
                             f"{limit} a {what} may have")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise UnsafePath(f"{what} {path} is not readable: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise UnsafePath(f"{what} {path} grew past the {limit} bytes a {what} may have")
    return data
