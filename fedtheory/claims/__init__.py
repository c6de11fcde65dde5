"""Claims: the statements of the seeds, their checks, and the registry.

>>> from fedtheory.claims import get_claim
>>> get_claim("ocs.closed_form").family
'ocs'
"""

from fedtheory.claims.catalog import CATALOG, FINISHED_FAMILIES
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
from fedtheory.claims.registry import all_claims, families, get_claim, register, select

__all__ = [
    "CATALOG",
    "CHECK_KINDS",
    "FINISHED_FAMILIES",
    "Check",
    "CheckResult",
    "Claim",
    "ClaimKind",
    "ClaimResult",
    "Context",
    "Evidence",
    "Verdict",
    "all_claims",
    "families",
    "get_claim",
    "register",
    "select",
]
