r"""The power of a verdict: would the checks have caught a plausible mistake in the statement?

For a claim that declares its stated side (:class:`~fedtheory.claimkit.stated.Stated`),
:func:`power` re-runs every check against each mutant of the statement
(:meth:`Stated.mutants`) and classifies the outcome:

* ``"caught"``: the mutant is refuted; ``by`` names the failing checks and ``instance`` is the
  counterexample. When no failing check saw the mutated part take another value (it never
  read it, or read a factor equal to 1, a constant equal to 0: the mutant did not change the
  statement on that instance), the entry says so (``statement_unchanged``): the catch is then
  not evidence about the mutated part;
* ``"still true"``: no check failed and a check that read the mutated part (through
  :meth:`Context.const` / ``factor`` / ``step_limit``) *proved* the mutated statement exactly
  (:attr:`Evidence.proof`: a sympy sign argument or an exhaustive exact enumeration), so the
  mutant is a true, looser (or tighter but still valid) statement; ``by`` names the proofs.
  Failing a proof, an *exact adversarial search* of the mutated statement that found no
  violation (:attr:`Evidence.search`: what it covered, the largest ratio it reached) counts as
  the weaker evidence; ``instance`` then says ``"evidence": "exact search"``, not ``"proof"``;
* ``"missed"``: no check failed and nothing proved the mutant: a defect of the checks (they
  could not tell the stated formula from the mistake), to be fixed by adding the instance that
  catches it;
* ``"error"``: a check raised on the mutant.

The false-alarm level of every Monte Carlo check is unchanged under a mutant, so "caught" is
as reliable as a refutation of the claim itself. An undecided check (``passed`` None, e.g. an
``unproven`` derivation) catches nothing. Only the checks that read the mutated part (or
looked at the mutant) run again under a mutant; the others' results are the statement's own.

A refuted claim gets no power table: its statement already fails, so "caught" would say
nothing (:func:`power` returns ``[]`` for it, and reports print "n/a").
"""

from __future__ import annotations

from typing import Any

from fedtheory import vocabulary
from fedtheory.cache import Cache
from fedtheory.claimkit.core import MUTANT_READ, Claim, ClaimResult, Verdict
from fedtheory.claimkit.stated import Mutant

__all__ = ["OUTCOMES", "mutant_outcome", "power"]

#: The outcomes a mutant can have (see the module docstring).
OUTCOMES = vocabulary.POWER_OUTCOMES


def mutant_outcome(mutant: Mutant, res: ClaimResult) -> dict[str, Any]:
    """Classify one mutant's verification result (see the module docstring)."""
    entry: dict[str, Any] = {"mutant": mutant.name, "kind": mutant.kind, "target": mutant.target,
                             "scale": str(mutant.scale)}
    failed = [c for c in res.checks if c.passed is False]
    if failed:
        entry.update(outcome="caught", by=[c.name for c in failed],
                     instance=res.counterexample,
                     statement_unchanged=not any(mutant.target in c.mutated for c in failed))
        return entry
    if res.verdict is Verdict.ERROR:
        entry.update(outcome="error", by=[c.name for c in res.errors],
                     instance={"error": res.errors[0].detail if res.errors else ""})
        return entry
    # a proof counts only if its check read the mutated part (else it proved something else)
    read = [c for c in res.checks if c.passed is True and mutant.target in c.reads]
    proofs = [c for c in read if c.proof]
    if proofs:
        entry.update(outcome="still true", by=[c.name for c in proofs],
                     instance={"evidence": "proof",
                               "proof": "; ".join(str(c.proof) for c in proofs)})
        return entry
    searches = [c for c in read if c.search]
    if searches:
        entry.update(outcome="still true", by=[c.name for c in searches],
                     instance={"evidence": "exact search",
                               "search": "; ".join(str(c.search) for c in searches),
                               "closest": res.tightness})
        return entry
    entry.update(outcome="missed", by=[], instance={
        "verdict": res.verdict.value,
        "closest": res.tightness,
    })
    return entry


def power(claim: Claim, preset: str = "quick", seed: int = 0,
          base: ClaimResult | None = None, cache: Cache | None = None) -> list[dict[str, Any]]:
    """Run ``claim``'s checks against each mutant of its stated side; one entry per mutant
    (empty when the claim declares no stated side, or when ``base``, the claim's own result,
    is refuted: a power table of a false statement means nothing). ``cache``: the run's
    (:class:`~fedtheory.cache.Cache`: the datasets the checks read, built once with the
    statement's own checks; default: the process's)."""
    if claim.stated is None:
        return []
    if base is None:
        base = claim.verify(preset=preset, seed=seed, cache=cache)
    if base.verdict is Verdict.REFUTED:
        return []
    # A check that read neither the mutated part nor the mutant itself gives the same outcome
    # under the mutant (its stated side is read through the context only, its shared data
    # depend on the preset and seed only): its base result is reused, the others run again.
    complete = (base.preset == preset and base.seed == seed
                and [c.name for c in base.checks] == [c.name for c in claim.checks])
    out = []
    for mutant in claim.stated.mutants(claim.kind.value):
        reuse = None
        if complete:
            reuse = {c.name: c for c in base.checks if c.error is None
                     and mutant.target not in c.reads and MUTANT_READ not in c.reads}
        res = claim.verify(preset=preset, seed=seed, mutant=mutant, reuse=reuse,
                           cache=cache)
        out.append(mutant_outcome(mutant, res))
    return out
