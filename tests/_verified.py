r"""One verification per claim per test session, shared by every test that reads it.

A claim's quick verification (``claim.verify(preset="quick", seed=0)``) is deterministic: the
same id, preset and seed give the same result, bit for bit (the registry's replay test holds
every claim to that). Several tests read it: ``tests/test_registry.py::test_quick_verdict``,
the power test (whose :func:`~fedtheory.claimkit.power.power` needs it as its base), and the
family tests. Each used to run it again; :class:`Verified` runs it once per session and hands
each test its own copy.

Under pytest-xdist the workers are separate processes: the results are pickled into a directory
that all workers of the session share (next to their ``tmp_path`` roots), one file per key,
written under an exclusive lock on the key (``fcntl.flock``). A worker that asks for a result
another worker is computing waits for it instead of computing it again; a worker that finds
the file reads it. Where locks are unavailable (no ``fcntl``), or a result does not pickle,
each process keeps its own copy (correct, only slower).

What is shared is exactly what the tests would have computed: the result of one call of
``claim.verify(preset, seed, figure_dir=...)`` (figures are always written, into the shared
directory, so that a test can check that they exist), and of ``power(claim, preset, seed,
base=that result)``. Every caller gets a deep copy: a test that edits its result (e.g. sets
``res.power``) cannot change what the next test reads.

Usage (the ``verified`` fixture of ``tests/conftest.py``)::

    def test_something(verified):
        res = verified.result(get_claim("ocs.closed_form"))   # quick preset, seed 0
        out = verified.power(get_claim("ocs.closed_form"))    # power(claim, "quick", 0)
"""

from __future__ import annotations

import contextlib
import copy
import os
import pickle
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fedtheory.claimkit.power import power as _power
from fedtheory.claims import Claim, ClaimResult

try:  # POSIX; elsewhere each process keeps its own results
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

__all__ = ["Verified"]

Key = tuple[str, str, str, int]


class Verified:
    """Quick (or any preset's) verification results and power tables, computed once per
    session.

    ``shared``: a directory every xdist worker of the session sees (None: this process only).
    ``figures``: where the checks write their figures.
    """

    def __init__(self, figures: Path, shared: Path | None = None) -> None:
        self.figures = Path(figures)
        self.shared = Path(shared) if shared is not None and fcntl is not None else None
        if self.shared is not None:
            self.shared.mkdir(parents=True, exist_ok=True)
        self._memo: dict[Key, Any] = {}
        #: keys computed in this process (the rest were read from another worker's file)
        self.computed: list[Key] = []

    # -- public ---------------------------------------------------------------------------
    def result(self, claim: Claim, preset: str = "quick", seed: int = 0) -> ClaimResult:
        """``claim.verify(preset=preset, seed=seed, figure_dir=...)``, a private copy."""
        return copy.deepcopy(self._get(("verify", claim.id, preset, seed),
                                       lambda: self._verify(claim, preset, seed)))

    def power(self, claim: Claim, preset: str = "quick", seed: int = 0) -> list[dict[str, Any]]:
        """``power(claim, preset, seed, base=self.result(claim, preset, seed))``, a copy."""
        def run() -> list[dict[str, Any]]:
            base = self._get(("verify", claim.id, preset, seed),
                             lambda: self._verify(claim, preset, seed))
            return _power(claim, preset, seed, base=copy.deepcopy(base))
        return copy.deepcopy(self._get(("power", claim.id, preset, seed), run))

    # -- internals ------------------------------------------------------------------------
    def _verify(self, claim: Claim, preset: str, seed: int) -> ClaimResult:
        where = self.figures / f"{_safe(claim.id)}-{preset}-{seed}"
        where.mkdir(parents=True, exist_ok=True)
        return claim.verify(preset=preset, seed=seed, figure_dir=where)

    def _get(self, key: Key, compute: Any) -> Any:
        if key in self._memo:
            return self._memo[key]
        if self.shared is None:
            value = self._memo[key] = compute()
            self.computed.append(key)
            return value
        path = self.shared / f"{key[0]}-{_safe(key[1])}-{key[2]}-{key[3]}.pickle"
        with _locked(path.with_suffix(".lock")):
            if path.exists():
                with path.open("rb") as f:
                    value = pickle.load(f)
            else:
                value = compute()
                self.computed.append(key)
                try:
                    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
                except Exception:  # noqa: BLE001 - an unpicklable result stays in this process
                    data = None
                if data is not None:
                    tmp = path.with_suffix(f".{os.getpid()}.tmp")
                    tmp.write_bytes(data)
                    os.replace(tmp, path)
        self._memo[key] = value
        return value


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
