"""Claims: the statements of the seeds, family by family, and the registry that finds them.

The framework a claim is written with (:class:`Claim`, :class:`Context`, :class:`Evidence`,
the checks, the stated side) is :mod:`fedtheory.claimkit`, one layer below; its public names
are imported from here, their documented place. Checking happens in the framework only:
:mod:`fedtheory.claimkit.checks` turns statistics (:mod:`fedtheory.stats`) into
:class:`Evidence`, :func:`all_of` combines several outcomes of one check,
:meth:`Claim.verify` turns evidence into a :class:`Verdict`.

The framework's modules lived here before (``fedtheory.claims.core``, ``.checks``,
``.stated``, ...): importing them from their old place still works, with a
``DeprecationWarning`` naming the new one (:data:`MOVED`).

>>> from fedtheory.claims import get_claim
>>> get_claim("ocs.closed_form").family
'ocs'
"""

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from typing import Any

from fedtheory.claimkit import checks
from fedtheory.claimkit.core import (
    CHECK_KINDS,
    Check,
    CheckResult,
    Claim,
    ClaimKind,
    ClaimResult,
    Context,
    Evidence,
    Verdict,
)
from fedtheory.claimkit.evidence import Figure, all_of, combined_alpha
from fedtheory.claimkit.setup import SetupCard, SetupRow
from fedtheory.claimkit.stated import Erratum, Stated
from fedtheory.claimkit.tightness import Tightness, tightest
from fedtheory.claims.registry import all_claims, families, get_claim, register, select
from fedtheory.deprecation import MOVED as _ALL_MOVED

#: The framework modules that were here, by old name: where they are now (their rows of
#: :data:`fedtheory.deprecation.MOVED`, the one table of moves).
MOVED: dict[str, str] = {old: new for old, new in _ALL_MOVED.items()
                         if ":" not in old and old.startswith(f"{__name__}.")}


def _moved(old: str) -> types.ModuleType:
    """The module ``old`` is now, with a ``DeprecationWarning`` naming it, attributed to the
    code that imported the old name."""
    frame, level = sys._getframe(), 1
    while frame is not None and (frame.f_code.co_filename == __file__
                                 or frame.f_code.co_filename.startswith("<frozen importlib")):
        frame, level = frame.f_back, level + 1
    warnings.warn(f"{old} has moved to {MOVED[old]}: import it from there (the names users "
                  "write claims with from fedtheory.claims)", DeprecationWarning,
                  stacklevel=level)
    return importlib.import_module(MOVED[old])


class _OldPlaces(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports of a moved module's old name give the module at its new place (the same
    object, so one class is one class), with a warning."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def __init__(self) -> None:
        self._specs: dict[str, Any] = {}

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _moved(spec.name)
        # the import system gives it the old name's spec next: its own is restored below
        self._specs[module.__name__] = module.__spec__
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        module.__spec__ = self._specs.pop(module.__name__, module.__spec__)


if not any(isinstance(f, _OldPlaces) for f in sys.meta_path):
    sys.meta_path.insert(0, _OldPlaces())


def __getattr__(name: str) -> Any:
    """``CATALOG``: family -> the ids of its statements (every claim file of the package but the
    corrected ones), in reading order; derived from the claim files
    (:func:`fedtheory.claims.family_packages.contract_ids`), never written by hand. A moved
    module by its old attribute (``fedtheory.claims.stated``): the module, with a warning."""
    if name == "CATALOG":
        from fedtheory.claims.family_packages import contract_ids

        return contract_ids()
    if f"{__name__}.{name}" in MOVED:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "CATALOG",
    "CHECK_KINDS",
    "Check",
    "CheckResult",
    "Claim",
    "ClaimKind",
    "ClaimResult",
    "Context",
    "Erratum",
    "Evidence",
    "Figure",
    "SetupCard",
    "SetupRow",
    "Stated",
    "Tightness",
    "Verdict",
    "all_claims",
    "all_of",
    "checks",
    "combined_alpha",
    "families",
    "get_claim",
    "register",
    "select",
    "tightest",
]
