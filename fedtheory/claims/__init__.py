"""Claims: the statements of the seeds, their checks, and the registry.

Checking happens here only: :mod:`fedtheory.claims.checks` turns statistics
(:mod:`fedtheory.stats`) into :class:`Evidence`, :func:`all_of` combines several outcomes of
one check, :meth:`Claim.verify` turns evidence into a :class:`Verdict`.

>>> from fedtheory.claims import get_claim
>>> get_claim("ocs.closed_form").family
'ocs'
"""

from fedtheory.claims import checks
from fedtheory.claims.core import (
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
from fedtheory.claims.evidence import Figure, all_of, combined_alpha
from fedtheory.claims.registry import all_claims, families, get_claim, register, select
from fedtheory.claims.setup import SetupCard, SetupRow
from fedtheory.claims.stated import Erratum, Stated


def __getattr__(name: str) -> dict[str, tuple[str, ...]]:
    """``CATALOG``: family -> the ids of its statements (every claim file of the package but the
    corrected ones), in reading order; derived from the claim files
    (:func:`fedtheory.claims.family_packages.contract_ids`), never written by hand."""
    if name == "CATALOG":
        from fedtheory.claims.family_packages import contract_ids

        return contract_ids()
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
    "Verdict",
    "all_claims",
    "all_of",
    "checks",
    "combined_alpha",
    "families",
    "get_claim",
    "register",
    "select",
]
