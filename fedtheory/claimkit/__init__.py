"""The claim framework: what a claim file is written with, apart from the claims themselves.

A claim (:class:`Claim`) is checked by checks (plain functions ``check(ctx) -> Evidence``,
given a :class:`Context`); :mod:`fedtheory.claimkit.checks` turns statistics
(:mod:`fedtheory.stats`) into :class:`Evidence`, :func:`all_of` combines several outcomes of
one check, :meth:`Claim.verify` turns evidence into a :class:`Verdict`. The stated side
(:mod:`~fedtheory.claimkit.stated`), ``--power`` mutants (:mod:`~fedtheory.claimkit.power`),
readings, set-up cards and the "better" comparisons (:mod:`~fedtheory.claimkit.headroom`) are
here too. The families of claims are in :mod:`fedtheory.claims` (one layer above), with the
registry that finds them; users import the names below from :mod:`fedtheory.claims`, their
documented place.
"""

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
from fedtheory.claimkit.stated import Erratum, Mutant, Stated
from fedtheory.claimkit.tightness import Tightness, tightest

__all__ = [
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
    "Mutant",
    "SetupCard",
    "SetupRow",
    "Stated",
    "Tightness",
    "Verdict",
    "all_of",
    "checks",
    "combined_alpha",
    "tightest",
]
