"""Certified tightness by performance estimation (PEP): the exact worst case of a one-step
inequality over a function class, with certificates checked in exact arithmetic.

* :mod:`~fedtheory.certify.pep`: the problem in exact coefficients (:class:`Pep`, leaf
  vectors :class:`Vec`, scalars :class:`Expr`, function classes :class:`Function`), its SDP
  (Clarabel) and the two certificates (rational dual multipliers; a rational instance);
* :mod:`~fedtheory.certify.onestep`: the protocol a claim implements (:class:`OneStep`,
  :class:`OutOfScope`), participation patterns, and :func:`certify` (the report's entry);
* :mod:`~fedtheory.certify.classes`: function classes (:class:`Function`) and weighted sums
  in a class of their own (:class:`Aggregate`: convex clients with a strongly convex sum,
  necessary interpolation, lower certificates from explicit functions);
* :mod:`~fedtheory.certify.recheck`: a report's certificates (one-step and rate) re-checked
  in exact arithmetic without a solver, proofs for every n re-derived from the claim's code
  (``fedtheory recheck --from REPORT.json``); :mod:`~fedtheory.certify.reported_certificates`:
  reading a certificate from a report (sizes and fractions validated before any arithmetic);
* :mod:`~fedtheory.certify.pepit_bridge`: the optional PEPit cross-check and the extra's
  availability (``pip install "fedtheory[pep]"``).
* :mod:`~fedtheory.certify.symmetric` (and :mod:`~.symmetric_pep`): client-symmetric
  certificates proved for every n (sympy), the symmetry-reduced PEP solved at any n;
* :mod:`~fedtheory.certify.lyapunov` (and :mod:`~.rate_models`): rate certificates across
  rounds, a potential found by an SDP and its constant certified exactly (``Claim.rate``).

Library maths: it imports no claim; claims describe themselves through it.
"""

from .exact import is_psd, rationalize, solve_exact
from .onestep import (
    STATUSES,
    Built,
    OneStep,
    OutOfScope,
    bernoulli_patterns,
    certify,
    certify_instance,
    refute,
    uniform_patterns,
)
from .pep import Aggregate, Expr, Function, Pep, Solution, Vec, as_fraction
from .pepit_bridge import PEP_EXTRA, gradient_descent_rate, pepit_available, require_pepit

__all__ = [
    "PEP_EXTRA", "STATUSES", "Aggregate", "Built", "Expr", "Function", "OneStep", "OutOfScope",
    "Pep",
    "Solution", "Vec", "as_fraction", "bernoulli_patterns", "certify", "certify_instance",
    "gradient_descent_rate", "is_psd", "pepit_available", "rationalize", "refute", "require_pepit",
    "solve_exact", "uniform_patterns",
]
