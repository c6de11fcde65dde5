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

__all__ = ["PEP_EXTRA", "gradient_descent_pep", "gradient_descent_rate",
           "gradient_descent_value_pep", "pepit_available", "pepit_examples", "require_pepit",
           "sgd_pep"]

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


def gradient_descent_value_pep(L: Any, h: Any, n: int) -> Pep:
    """``n`` gradient steps on an :math:`L`-smooth convex :math:`f`: maximise
    :math:`f(x_n) - f_\\star` subject to :math:`\\|x_0 - x_\\star\\|^2 \\le 1`. Worst case
    :math:`L/(2(2nLh + 1))` for :math:`0 < h \\le 1/L` (PEPit's ``gradient_descent``
    example; Drori and Teboulle 2014)."""
    L, h = as_fraction(L, "L"), as_fraction(h, "h")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    pep = Pep()
    f = pep.function("smooth_strongly_convex", L, 0)
    f_star = pep.value()
    f.add_point(Vec(), Vec(), f_star)
    x = pep.vector("x0")
    pep.constrain(x.sq() - 1, "||x0 - x*||^2 <= 1")
    for _ in range(n):
        x = x - f.oracle(x)[0] * h
    pep.maximize(f.value(x) - f_star)
    return pep


def sgd_pep(L: Any, mu: Any, gamma: Any, v2: Any, R2: Any, n: int) -> Pep:
    """One SGD step on :math:`F = \\frac1n\\sum_if_i`, :math:`f_i` :math:`L`-smooth
    :math:`\\mu`-strongly convex, the index uniform: maximise
    :math:`\\mathbb E\\|x_1 - x_\\star\\|^2` subject to :math:`\\|x_0 - x_\\star\\|^2 \\le R^2`
    and :math:`\\frac1n\\sum_i\\|\\nabla f_i(x_\\star)\\|^2 \\le v^2` (``v2``, ``R2``: the
    squares). PEPit's ``sgd`` example; its empirically tight value is
    :math:`(\\gamma\\frac{L-\\mu}2R + \\sqrt{(1 - \\gamma\\frac{L+\\mu}2)^2R^2 +
    \\gamma^2v^2})^2`."""
    L, mu, gamma = as_fraction(L, "L"), as_fraction(mu, "mu"), as_fraction(gamma, "gamma")
    v2, R2 = as_fraction(v2, "v2"), as_fraction(R2, "R2")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    pep = Pep()
    fs = [pep.function("smooth_strongly_convex", L, mu) for _ in range(n)]
    s = [pep.vector(f"s{i + 1}") for i in range(n - 1)]
    last = Vec()
    for si in s:
        last = last - si
    s.append(last)  # sum_i grad f_i(x*) = 0
    for f, si in zip(fs, s, strict=True):
        f.add_point(Vec(), si, pep.value())
    x0 = pep.vector("x0")
    pep.constrain(x0.sq() - R2, "||x0 - x*||^2 <= R^2")
    var = s[0].sq()
    for si in s[1:]:
        var = var + si.sq()
    pep.constrain(var / n - v2, "mean ||grad f_i(x*)||^2 <= v^2")
    dist = (x0 - fs[0].oracle(x0)[0] * gamma).sq()
    for f in fs[1:]:
        dist = dist + (x0 - f.oracle(x0)[0] * gamma).sq()
    pep.maximize(dist / n)
    return pep


def pepit_examples(name: str, **kw: float) -> float:
    """PEPit's own example ``name`` (``"gradient_descent"``: ``L, gamma, n``;
    ``"sgd"``: ``L, mu, gamma, v, R, n``; ``"gradient_descent_strongly_convex"``:
    ``L, mu, gamma``, one step, the contraction of the squared distance), solved by
    PEPit with Clarabel; its worst-case value."""
    require_pepit()
    if name == "gradient_descent_strongly_convex":
        return gradient_descent_rate(kw["L"], kw["mu"], kw["gamma"])
    if name == "gradient_descent":
        from PEPit.examples.unconstrained_convex_minimization.gradient_descent import (
            wc_gradient_descent,
        )
        return float(wc_gradient_descent(L=kw["L"], gamma=kw["gamma"], n=int(kw["n"]),
                                         solver="CLARABEL", verbose=-1)[0])
    if name == "sgd":
        from PEPit.examples.stochastic_and_randomized_convex_minimization.sgd import wc_sgd
        return float(wc_sgd(L=kw["L"], mu=kw["mu"], gamma=kw["gamma"], v=kw["v"],
                            R=kw["R"], n=int(kw["n"]), solver="CLARABEL", verbose=-1)[0])
    raise ValueError(f"unknown PEPit example {name!r}")
