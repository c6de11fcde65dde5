"""``fedtheory ARGS`` run in the test's process, as if it had been a process of its own.

One helper for the ``cli`` fixtures of tests/test_sources.py and tests/test_errata_papers.py:
the run's exit code, stdout and stderr; afterwards the claims and papers it loaded from files
leave the registry, the declared papers, the environment and ``sys.modules``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from fedtheory import papers
from fedtheory.cli import main

Run = Callable[..., subprocess.CompletedProcess]


@contextmanager
def cli_in_process(monkeypatch: pytest.MonkeyPatch,
                   capsys: pytest.CaptureFixture[str]) -> Iterator[Run]:
    """A ``run(cwd, *args)`` of ``fedtheory ARGS`` from ``cwd``; the state restored on exit."""
    from fedtheory.claims import registry, sources

    saved = (dict(registry._REGISTRY), dict(registry._ORIGINS), list(registry._SOURCES),
             os.environ.get(sources.ENV_VAR), dict(papers._DECLARED), dict(papers._CLAIM_PAPER))
    before = set(sys.modules)

    def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        monkeypatch.chdir(cwd)
        try:
            code = main(list(args))
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 2
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, out, err)

    try:
        yield run
    finally:
        # only the claims loaded from files leave: built-in claims imported meanwhile stay
        # (the registry may have been fully discovered during the test)
        for cid, origin in list(registry._ORIGINS.items()):
            if origin.kind == "file":
                registry._REGISTRY.pop(cid, None)
                registry._ORIGINS.pop(cid, None)
        for cid, claim in saved[0].items():
            registry._REGISTRY.setdefault(cid, claim)
        for cid, origin in saved[1].items():
            registry._ORIGINS.setdefault(cid, origin)
        registry._SOURCES[:] = saved[2]
        if saved[3] is None:
            os.environ.pop(sources.ENV_VAR, None)
        else:
            os.environ[sources.ENV_VAR] = saved[3]
        for table, old in ((papers._DECLARED, saved[4]), (papers._CLAIM_PAPER, saved[5])):
            table.clear()
            table.update(old)
        for name in set(sys.modules) - before:
            if name.startswith("fedtheory_user_claims"):
                del sys.modules[name]
