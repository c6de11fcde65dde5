"""The provenance of a report: where and when its results were made (:func:`provenance`).

Every report carries it in a field of its own: the fedtheory version, the git commit and
whether the tree was dirty, the preset and seed, Python, the packages and BLAS that computed
it, the command and the time.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fedtheory.gitinfo import git_output

__all__ = ["provenance"]


#: Packages whose versions go into the provenance (those that compute or render evidence).
_PACKAGES = ("numpy", "scipy", "sympy", "cvxpy", "clarabel", "matplotlib", "scikit-learn",
             "numba")


def _source_tree() -> dict[str, Any]:
    """The git commit of the fedtheory source that runs, and whether its tree was dirty.

    Only when the imported package lives in a git work tree (an editable install or a clone on
    ``sys.path``); an installed wheel has no commit to report.
    """
    pkg = Path(__file__).resolve().parent.parent  # fedtheory/, above this package
    top = git_output(["rev-parse", "--show-toplevel"], pkg)
    if top is None or not (Path(top) / "fedtheory" / "__init__.py").exists():
        return {"commit": None, "dirty": None, "source": str(pkg)}
    commit = git_output(["rev-parse", "HEAD"], pkg)
    status = git_output(["status", "--porcelain", "--untracked-files=no"], pkg)
    # an untracked claim file inside the package changes what runs: it counts as dirty
    loose = git_output(["ls-files", "--others", "--exclude-standard", "--", "claims"], pkg)
    if status is not None and loose is not None:
        status += "".join(line for line in loose.splitlines() if line.endswith(".py"))
    return {"commit": commit, "dirty": None if status is None else bool(status), "source": top}


def _package_versions() -> dict[str, str | None]:
    from importlib import metadata

    out: dict[str, str | None] = {}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def _compiled_kernels() -> bool:
    """Whether the simulator uses the optional numba kernels (the same numbers either way)."""
    from fedtheory.compiled import numba_enabled

    return numba_enabled()


def _blas() -> list[dict[str, Any]]:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        return []
    keep = ("internal_api", "version", "architecture", "num_threads", "threading_layer")
    return [{k: d.get(k) for k in keep} for d in threadpool_info() if d.get("user_api") == "blas"]


def provenance(seed: int, preset: str, *, argv: Sequence[str] | None = None,
               jobs: int | None = None) -> dict[str, Any]:
    """Where and when a result was made: version, commit, preset, seed, platform, time.

    >>> p = provenance(0, "quick")
    >>> sorted(p)[:5]
    ['argv', 'blas', 'blas_threads_in_checks', 'commit', 'compiled_kernels']
    >>> p["seed"], p["preset"]
    (0, 'quick')
    """
    from fedtheory import __version__

    tree = _source_tree()
    return {
        "fedtheory_version": __version__,
        "commit": tree["commit"],
        "dirty": tree["dirty"],
        "source": tree["source"],
        "preset": preset,
        "seed": seed,
        "jobs": jobs,
        "time": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "packages": _package_versions(),
        "blas": _blas(),
        "blas_threads_in_checks": 1,
        "compiled_kernels": _compiled_kernels(),
        "argv": list(sys.argv if argv is None else argv),
        "cwd": os.getcwd(),
        "pid": os.getpid(),
    }
