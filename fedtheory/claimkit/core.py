"""Claim, Check, Evidence and Verdict: the vocabulary every family module uses.

A :class:`Claim` is one statement of a seed document, registered once under the id that
``docs/claims.md`` gives it. Its checks are plain functions ``check(ctx) -> Evidence``; each
gathers one kind of evidence (symbolic, exact, convex, Monte Carlo or a figure).
:meth:`Claim.verify` runs the checks and combines their evidence into a :class:`Verdict`:

* ``confirmed``: every check passed;
* ``refuted``: at least one check failed; the failing evidence carries a counterexample
  (concrete inputs a reader can re-run and the numbers measured on them). A check that raised
  beside it does not hide the refutation: it is listed with it;
* ``inconclusive``: no check failed, but one could not decide (for instance a Monte Carlo
  interval too wide to say anything, or a derivation that does not reach the stated bound:
  "unproven", :meth:`Evidence.unproven`, which is never a refutation);
* ``error``: a check raised, or a solver failed, and no other check refuted the claim.

Every failed check's counterexample carries ``replay``: the command (and the Python call) that
re-runs exactly that check with the same preset and seed, and prints the measured and stated
values.

The framework's records and rules are in rooms of their own (:mod:`.context`, the context a
check is given; :mod:`.results`, the records and the rules that combine them; :mod:`.running`,
a check and its run; :mod:`.claim`, the claim and its verification); this module gathers their
names in one import, as before.
"""

from __future__ import annotations

from fedtheory.claimkit.claim import Claim
from fedtheory.claimkit.context import MUTANT_READ, Context
from fedtheory.claimkit.evidence import Evidence, Figure
from fedtheory.claimkit.results import (
    BOUND_KINDS,
    CheckResult,
    ClaimResult,
    _jsonable,
    combine,
    grade,
    tightness,
)
from fedtheory.claimkit.running import Check, KindMismatch, replay_command
from fedtheory.vocabulary import CHECK_KINDS, PRESETS, ClaimKind, Verdict

__all__ = [
    "BOUND_KINDS", "CHECK_KINDS", "MUTANT_READ", "PRESETS", "Check", "CheckResult", "Claim",
    "ClaimKind", "ClaimResult", "Context", "Evidence", "Figure", "KindMismatch", "Verdict",
    "_jsonable", "combine", "grade", "replay_command", "tightness",
]
