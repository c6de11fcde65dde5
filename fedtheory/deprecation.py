"""Names that moved: the old place keeps working, with a ``DeprecationWarning`` naming the new.

A public name (``docs/api.md``) that moves stays importable from where users imported it.
Every move is one entry of :data:`MOVED`, the one table of moves (``tests/test_public_api.py``
imports each old place and checks the warning and the object); the old place is a *shim*:

* a whole module that moved (``fedtheory/scaffold.py`` is now ``fedtheory/claim_skeleton.py``)
  keeps a file of three lines at its old path::

      '''Deprecated: now :mod:`fedtheory.claim_skeleton`.'''
      from fedtheory.deprecation import moved
      moved(globals())

  and :data:`MOVED` holds ``"fedtheory.scaffold": "fedtheory.claim_skeleton"``;
* single names of a module that stays (``"fedtheory.claims.core:Claim":
  "fedtheory.framework.core:Claim"``) are served by the same call at the end of that module.

:func:`moved` gives the module a module-level ``__getattr__`` (PEP 562): a name the module does
not define itself is looked up in the table, imported from its new place on each access (so
every access warns, never the first only) and returned, with a ``DeprecationWarning`` pointing
at the line of the user's code that asked for it. The new place is imported with
:mod:`importlib` only when a name is asked for, so a shim costs nothing and imports no circle;
the layer contract places top-level shim modules above every layer, so that no module of
fedtheory imports an old place.

This is a foundation module: it imports the standard library only.

>>> import types, warnings
>>> old = types.ModuleType("old_place")
>>> moved(vars(old), {"sqrt": "math:sqrt"})
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     old.sqrt(4.0)
2.0
>>> print(caught[0].message)
old_place.sqrt has moved: import it as `from math import sqrt` (the old place is deprecated)
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["MOVED", "moved", "moves_of", "new_place"]

#: The one table of moves: old place -> new place. A key ``"pkg.module"`` (a whole module)
#: maps to the module that replaces it (every name of the new module is served at the old
#: one); a key ``"pkg.module:name"`` maps to ``"new.module:name"`` (the name may change). Add
#: a row here and call :func:`moved` in the old module; nothing else is edited.
MOVED: dict[str, str] = {
    # issue 31: the `fedtheory new` claim skeleton generator, apart from SCAFFOLD the algorithm
    "fedtheory.scaffold": "fedtheory.claim_skeleton",
    # issue 31: certificates read from a report, apart from the claims' checks (claims.checks)
    "fedtheory.certify.checks": "fedtheory.certify.reported_certificates",
    # issue 31: the claim framework in its own package, apart from the families; these old
    # places have no file (git follows the move): fedtheory.claims' import hook serves them,
    # the same module object, with one warning at import (tests/test_claimkit.py)
    **{f"fedtheory.claims.{m}": f"fedtheory.claimkit.{m}"
       for m in ("checks", "core", "evidence", "headroom", "power", "readings", "setup",
                 "stated")},
}

# names a module keeps for itself: never forwarded to the new place
_OWN = frozenset({"__path__", "__file__", "__spec__", "__loader__", "__package__",
                  "__builtins__", "__cached__", "__wrapped__", "__warningregistry__"})


def moves_of(module: str, table: Mapping[str, str] | None = None) -> tuple[str | None,
                                                                           dict[str, str]]:
    """The moves of the old module ``module`` in ``table`` (default :data:`MOVED`): the module
    that replaces it as a whole (or None) and its single moved names, ``name -> "new:Name"``.

    >>> moves_of("fedtheory.scaffold")
    ('fedtheory.claim_skeleton', {})
    >>> moves_of("a", {"a:x": "b:y", "c:x": "d:x"})
    (None, {'x': 'b:y'})
    """
    table = MOVED if table is None else table
    names = {key.split(":", 1)[1]: new for key, new in table.items()
             if ":" in key and key.split(":", 1)[0] == module}
    return table.get(module), names


def new_place(old: str, table: Mapping[str, str] | None = None) -> str:
    """Where the old place ``old`` (``"module:name"``) is now, as ``"module:name"``.
    ``KeyError`` naming it for a place that did not move.

    >>> new_place("fedtheory.scaffold:skeleton")
    'fedtheory.claim_skeleton:skeleton'
    """
    module, _, name = old.partition(":")
    whole, names = moves_of(module, table)
    if name in names:
        return names[name]
    if whole is not None and name:
        return f"{whole}:{name}"
    raise KeyError(f"{old!r} did not move (no row of fedtheory.deprecation.MOVED)")


def _message(old_module: str, name: str, target: str) -> str:
    module, _, new_name = target.partition(":")
    statement = (f"from {module} import {new_name}" if new_name == name
                 else f"from {module} import {new_name} as {name}")
    return (f"{old_module}.{name} has moved: import it as `{statement}` "
            f"(the old place is deprecated)")


def moved(module_globals: dict[str, Any], names: Mapping[str, str] | None = None) -> None:
    """Serve the moved names of the module whose ``globals()`` are ``module_globals`` from
    their new places, each access with a ``DeprecationWarning`` naming the new place.

    The moves are the rows of :data:`MOVED` for this module (``names``, ``name ->
    "new.module:Name"``, adds to them; ``tests/test_public_api.py`` requires every such
    name to have its row in :data:`MOVED` too, where the documentation reads it). Call it
    last in the module: a ``__getattr__`` the module already defines is kept and asked first,
    for the names it answers. A name the module defines itself is never forwarded, and ``dir()``
    does not list the moved names (a tool that reads every name it lists, as a doctest finder
    does, would warn on each). ``ValueError`` for a module with no move at all (a shim without
    its row).
    """
    module = module_globals["__name__"]
    whole, single = moves_of(module)
    single = {**single, **(names or {})}
    for name, target in single.items():
        if ":" not in target or not name.isidentifier():
            raise ValueError(f"move {module}:{name} -> {target!r}: want 'new.module:Name'")
    if whole is None and not single:
        raise ValueError(f"{module} calls fedtheory.deprecation.moved but has no row in "
                         f"fedtheory.deprecation.MOVED")
    own: Callable[[str], Any] | None = module_globals.get("__getattr__")

    def __getattr__(name: str) -> Any:
        if own is not None:
            try:
                return own(name)
            except AttributeError:
                pass
        if name in single:
            target = single[name]
        elif whole is not None and name not in _OWN:
            if name == "__all__":  # `from old import *`: each name then warns on its own
                return list(getattr(importlib.import_module(whole), "__all__", ()))
            target = f"{whole}:{name}"
        else:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        new_module, _, new_name = target.partition(":")
        try:
            value = getattr(importlib.import_module(new_module), new_name)
        except AttributeError:
            raise AttributeError(f"module {module!r} has no attribute {name!r}") from None
        warnings.warn(_message(module, name, target), DeprecationWarning, stacklevel=2)
        return value

    module_globals["__getattr__"] = __getattr__
