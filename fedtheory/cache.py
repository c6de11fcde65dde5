r"""The one cache of a run: values keyed by what they depend on, and the task results a run
hands in.

A :class:`Cache` holds two things:

* ``results``: the results of tasks (:mod:`fedtheory.tasks`) computed elsewhere (another
  process, a Dask worker), keyed by the task's key, handed in by the run
  (:func:`fedtheory.runner.verify_one`) so that a dataset combines them instead of computing
  them;
* values computed once and read many times (:meth:`Cache.get`): a dataset's data, keyed by
  ``("dataset", owner claim, dataset name, preset, seed)``; a claim's shared data
  (:meth:`fedtheory.claims.Context.shared`), keyed by the claim, the preset, the seed, the
  running mutant and the name. A key names everything the value depends on, so a value read
  from the cache is the value that computing it would give: nothing depends on what ran
  before.

A run makes one cache per claim it verifies (and hands it to the claim's power run), filled
with the task results it provides. Outside a run (a notebook, a figure script, a test), a
:class:`~fedtheory.claims.Context` made without a cache uses :data:`PROCESS_CACHE`: a memo of
values that are pure functions of their keys (a dataset of ``(preset, seed)``; a claim's shared
data of ``(claim, preset, seed, mutant)``), so that a figure script reads the data its claim's
checks built. It never holds task results (only a run hands those in) and nothing is ever
written into a value after it is stored.

>>> c = Cache()
>>> calls = []
>>> c.get(("x", 1), lambda: calls.append(1) or 42), c.get(("x", 1), lambda: 0), calls
(42, 42, [1])
>>> ("x", 1) in c, len(c), c.keys()
(True, 1, [('x', 1)])
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

__all__ = ["PROCESS_CACHE", "Cache"]


class Cache:
    """Values keyed by what they depend on (:meth:`get`), and the task results handed in
    (``results``: task key -> result).

    Parameters
    ----------
    results:
        Results of tasks computed elsewhere, by task key (see :mod:`fedtheory.tasks`).
    """

    def __init__(self, results: Mapping[str, Any] | None = None) -> None:
        if results is not None and not isinstance(results, Mapping):
            raise ValueError(f"results must be a mapping of task keys to results, "
                             f"got {results!r}")
        #: Task results handed in by the run (task key -> result).
        self.results: dict[str, Any] = dict(results or {})
        self._values: dict[Hashable, Any] = {}

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """The value stored under ``key``; computed by ``compute()`` and stored the first time.

        ``key`` must name everything the value depends on (``compute()`` must give the same
        value whenever it is called with that key)."""
        if key not in self._values:
            self._values[key] = compute()
        return self._values[key]

    def __contains__(self, key: Hashable) -> bool:
        return key in self._values

    def __len__(self) -> int:
        return len(self._values)

    def keys(self) -> list[Hashable]:
        """The keys of the values stored, in the order they were stored."""
        return list(self._values)

    def clear(self) -> None:
        """Forget every value (and every task result)."""
        self._values.clear()
        self.results.clear()


#: The cache of calls made outside a run (see the module docstring): pure values only.
PROCESS_CACHE = Cache()
