"""fedtheory: check the theory of federated learning under partial client participation.

Each statement of the seed documents is a registered :class:`~fedtheory.claims.Claim` with
symbolic (sympy), exact, convex (cvxpy) and Monte Carlo evidence; ``fedtheory verify`` runs
them. The names below are imported from :mod:`fedtheory.claims` when first used, so that
``import fedtheory`` (and the command line's ``--help``, ``list``, ``show``) does not import the
claim machinery.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers; at run time, __getattr__ below
    from fedtheory.claims import Claim, Evidence, Verdict, all_claims, get_claim, select

__version__ = "0.1.0"

#: Public names of :mod:`fedtheory.claims`, re-exported here on first use.
_FROM_CLAIMS = ("Claim", "Evidence", "Verdict", "all_claims", "get_claim", "select")

__all__ = ["Claim", "Evidence", "Verdict", "__version__", "all_claims", "get_claim", "select"]


def __getattr__(name: str) -> Any:
    if name in _FROM_CLAIMS:
        value = getattr(importlib.import_module("fedtheory.claims"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'fedtheory' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_FROM_CLAIMS})
