"""The optional ``pep`` extra (PEPit): its availability, and PEPit's own gradient-descent
example beside the same problem written with :class:`~fedtheory.certify.pep.Pep`.

``fedtheory verify --certify`` needs the extra (``pip install "fedtheory[pep]"``: PEPit and
Clarabel); :func:`require_pepit` raises the one-line error that says so.
"""

from __future__ import annotations

import importlib.util
from fractions import Fraction
from typing import Any

from .pep import Pep, Vec, as_fraction

__all__ = ["PEP_EXTRA", "gradient_descent_pep", "gradient_descent_rate", "pepit_available",
           "require_pepit"]

#: What to install for ``--certify``.
PEP_EXTRA = 'pip install "fedtheory[pep]"'


def pepit_available() -> bool:
    """Whether PEPit and Clarabel are importable."""
    return all(importlib.util.find_spec(m) is not None for m in ("PEPit", "clarabel"))


def require_pepit() -> None:
    """Raise ImportError with the install line when the ``pep`` extra is missing."""
    if not pepit_available():
        raise ImportError(f"--certify needs the optional 'pep' extra (PEPit, Clarabel): "
                          f"{PEP_EXTRA}")


def gradient_descent_pep(L: Any, mu: Any, h: Any) -> Pep:
    """One gradient step :math:`x_1 = x_0 - h\\nabla f(x_0)` on an :math:`L`-smooth
    :math:`\\mu`-strongly convex :math:`f`: maximise :math:`\\|x_1 - x_\\star\\|^2` subject to
    :math:`\\|x_0 - x_\\star\\|^2 \\le 1` (:math:`x_\\star = 0`, :math:`\\nabla f(x_\\star) =
    0`). Worst case :math:`\\max\\{(1 - h\\mu)^2, (1 - hL)^2\\}` (PEPit's example)."""
    L, mu, h = as_fraction(L, "L"), as_fraction(mu, "mu"), as_fraction(h, "h")
    pep = Pep()
    f = pep.function("smooth_strongly_convex", L, mu)
    f.add_point(Vec(), Vec(), pep.value())
    x0 = pep.vector("x0")
    g0, _ = f.oracle(x0)
    pep.constrain(x0.sq() - 1, "||x0 - x*||^2 <= 1")
    pep.maximize((x0 - g0 * h).sq())
    return pep


def gradient_descent_rate(L: float, mu: float, h: float, use_pepit: bool = True) -> float:
    """The worst-case contraction of one gradient step, by PEPit (its
    ``gradient_descent`` example's set-up, Clarabel) or, with ``use_pepit=False``, by
    :func:`gradient_descent_pep`.

    .. math::

        \\tau(L, \\mu, h) = \\max\\{(1 - h\\mu)^2, (1 - hL)^2\\}.
    """
    if not (L > 0 and 0 <= mu < L and h > 0):
        raise ValueError(f"need L > 0, 0 <= mu < L, h > 0, got L = {L}, mu = {mu}, h = {h}")
    if not use_pepit:
        return gradient_descent_pep(Fraction(L).limit_denominator(10**6),
                                    Fraction(mu).limit_denominator(10**6),
                                    Fraction(h).limit_denominator(10**6)).solve("gd").value
    require_pepit()
    # optional heavy dependency (the pep extra): imported only here
    from PEPit import PEP
    from PEPit.functions import SmoothStronglyConvexFunction

    problem = PEP()
    func = problem.declare_function(SmoothStronglyConvexFunction, L=L, mu=mu)
    xs = func.stationary_point()
    x0 = problem.set_initial_point()
    problem.set_initial_condition((x0 - xs) ** 2 <= 1)
    x1 = x0 - h * func.gradient(x0)
    problem.set_performance_metric((x1 - xs) ** 2)
    return float(problem.solve(verbose=0, wrapper="cvxpy", solver="CLARABEL"))
