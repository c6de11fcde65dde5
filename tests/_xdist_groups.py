"""``--dist loadgroup`` that honours ``@pytest.mark.xdist_group`` under pytest 9.

pytest-xdist groups a test by appending ``@<group>`` to its node id on the worker
(``item._nodeid``), and its scheduler reads the group back from the id. pytest 9 keeps node ids
elsewhere (``Node._id``), so with pytest-xdist 3.8 the suffix is silently lost and every test
is its own group: tests meant to share one worker's caches (tests/_verified.py, a claim
family's datasets) are spread over all workers. This module passes the groups by another way:

* each worker writes ``{node id: group}`` of its collected items marked ``xdist_group`` into a
  folder the controller handed it (``workerinput``), as one JSON file, before it reports its
  collection;
* the controller's scheduler (:class:`MarkedGroups`, a ``LoadGroupScheduling``) reads the
  files when it first splits the collection into work units, and puts every test of a group
  in one unit. An id that already carries ``@group`` (a pytest-xdist that works) and unmarked
  tests are left to ``LoadGroupScheduling``.

The hooks live in tests/conftest.py; they do nothing unless the run is ``--dist loadgroup``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from xdist.scheduler import LoadGroupScheduling

#: the ``workerinput`` key of the folder of group files
KEY = "fedtheory_xdist_groups"


def group_of(item: Any) -> str | None:
    """The group of a collected item, as pytest-xdist names it (several marks: joined)."""
    names = {str(m.args[0] if m.args else m.kwargs.get("name", "default"))
             for m in item.iter_markers("xdist_group")}
    return "_".join(sorted(names)) if names else None


def write_groups(folder: str | Path, worker: str, items: Iterable[Any]) -> Path:
    """Write ``{node id: group}`` of the marked ``items`` to ``folder/<worker>.json``."""
    groups = {item.nodeid: g for item in items if (g := group_of(item)) is not None}
    path = Path(folder) / f"{worker}.json"
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(groups), encoding="utf-8")
    os.replace(tmp, path)  # whole or absent
    return path


def read_groups(folder: str | Path) -> dict[str, str]:
    """Every worker's ``{node id: group}`` (the workers collect the same tests)."""
    out: dict[str, str] = {}
    for path in sorted(Path(folder).glob("*.json")):
        out.update(json.loads(path.read_text(encoding="utf-8")))
    return out


class MarkedGroups(LoadGroupScheduling):
    """``LoadGroupScheduling`` whose groups are read from the workers' group files."""

    def __init__(self, config: Any, log: Any, folder: str | Path) -> None:
        super().__init__(config, log)
        self._folder = Path(folder)
        self._groups: dict[str, str] | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self._groups is None:  # first called once every worker has reported its collection
            self._groups = read_groups(self._folder)
        group = self._groups.get(nodeid)
        return group if group is not None else super()._split_scope(nodeid)
