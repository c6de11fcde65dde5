"""Asking git about a file's work tree (the provenance of reports and of claim files)."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

__all__ = ["git_output"]


def git_output(args: Sequence[str], cwd: Path) -> str | None:
    """``git ARGS`` run in ``cwd``: its stripped output, or None (no git, not a work tree, an
    error)."""
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                             timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None
