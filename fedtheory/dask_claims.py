"""Claim files for a Dask cluster's workers (imported only where ``distributed`` is).

A run that verifies claims from files outside the package (``fedtheory verify PATH``,
``--claims``) sends the files themselves, with the ``_`` helper modules beside them, to every
worker, present and future, as a worker plugin: each worker writes them into its local
directory and finds them through :data:`~fedtheory.claims.sources.ENV_VAR`, so a cluster on
other machines needs no shared file system. (On a cluster whose workers do share the file
system, the same path works too: the files are then simply read twice.)
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

from fedtheory.claims.sources import ENV_VAR, unpack

__all__ = ["ClaimFiles"]


class ClaimFiles(WorkerPlugin):
    """Ship ``files`` (:func:`fedtheory.claims.sources.bundle`) to each worker."""

    name = "fedtheory-claim-files"

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = dict(files)

    def setup(self, worker: Any) -> None:
        folder = tempfile.mkdtemp(prefix="fedtheory-claims-",
                                  dir=getattr(worker, "local_directory", None))
        os.environ[ENV_VAR] = os.pathsep.join(unpack(self.files, folder))
