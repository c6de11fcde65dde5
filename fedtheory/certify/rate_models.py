"""Rounds of federated methods as :class:`~fedtheory.certify.lyapunov.RateBuilt` (one round's
PEP, the potential's terms now and next, the progress measure)."""

from __future__ import annotations

from typing import Any

from .lyapunov import RateBuilt
from .models import (
    expectation,
    fedavg_is_step,
    quadratic_instance,
    smooth_at_origin,
    unit_vectors_summing_to_zero,
)
from .onestep import uniform_patterns
from .pep import Expr, Pep, Vec, as_fraction

__all__ = ["fedavg_is_average_model", "fedavg_is_strongly_convex_model",
           "fedpgd_convex_average_model", "fedpgd_nonconvex_average_model", "mifa_memory_model"]


def _mean_square(vectors: list[Vec], n: int) -> Expr:
    """:math:`\\frac1n\\sum_i\\|v_i\\|^2` of ``vectors`` (a heterogeneity term)."""
    total = Expr()
    for v in vectors:
        total = total + v.sq() / n
    return total


def _selected_sum(mask: tuple[bool, ...], g: list[Vec], scale: Any) -> Vec:
    """:math:`\\sum_{i:\\,\\text{mask}_i} g_i / \\text{scale}` (one pattern's aggregate)."""
    step = Vec()
    for m_, gi in zip(mask, g, strict=True):
        if m_:
            step = step + gi / scale
    return step


def fedavg_is_average_model(n: int, p: Any, eta: Any, L: Any,
                            stated: dict[str, Any] | None = None,
                            sigma2: Any = 1) -> RateBuilt:
    """FedAvg-IS with exact client gradients and independent Bernoulli(p) participation on an
    L-smooth f (:func:`~fedtheory.certify.models.fedavg_is_step`), heterogeneity
    :math:`\\|\\nabla f_i(w) - \\nabla f(w)\\|^2 \\le \\sigma_G^2` at every round's point:
    potential terms :math:`f(w) - f^\\star` (:math:`f^\\star` a value that cancels), progress
    :math:`\\|\\nabla f(w)\\|^2`; telescoping gives :math:`\\frac1T\\sum_t\\mathbb E\\|\\nabla
    f(w_t)\\|^2 \\le v(f(w_0) - f^\\star)/T + c`."""
    pep = Pep()
    m = fedavg_is_step(pep, n, [p] * n, eta, L)
    s2 = as_fraction(sigma2, "sigma2")
    for i, gi in enumerate(m["g"]):
        pep.constrain((gi - m["gbar"]).sq() - s2, f"||h_{i + 1}||^2 <= sigma_G^2")
    fstar = pep.value()
    # the floor's instance: (L/2)||x||^2 at its minimiser, unit heterogeneity summing to 0
    inst = quadratic_instance(pep, m["f"], dict(enumerate(unit_vectors_summing_to_zero(n))),
                              L) if s2 == 1 else None
    return RateBuilt(pep, (("f(w) - f*", m["f_w"] - fstar),), (m["E_f_next"] - fstar,),
                     progress=m["gbar"].sq(), stated=dict(stated or {}),
                     progress_text="||∇f(w_t)||^2", instance=inst)


def fedpgd_convex_average_model(n: int, b: int, eta: Any, L: Any,
                                stated: dict[str, Any] | None = None,
                                sigma2: Any = 1) -> RateBuilt:
    """FedPGD (FedAvg with one exact local step), :math:`x^+ = x - \\frac\\eta b\\sum_{i\\in S}
    \\nabla f_i(x)`, ``b`` of ``n`` clients uniformly without replacement, on a convex
    L-smooth f (class ``smooth_strongly_convex`` with mu = 0, interpolation through
    :math:`x^\\star` and x), heterogeneity :math:`\\frac1n\\sum_i\\|\\nabla f_i(x) - \\nabla
    f(x)\\|^2 \\le \\sigma_G^2` at every round's point: potential term :math:`\\|x -
    x^\\star\\|^2`, progress :math:`f(x) - f^\\star`; telescoping gives
    :math:`\\frac1T\\sum_t\\mathbb E f(x_t) - f^\\star \\le v\\|x_0 - x^\\star\\|^2/T + c`."""
    pep = Pep()
    eta = as_fraction(eta, "eta")
    f = pep.function("smooth_strongly_convex", L, 0)
    x = pep.vector("x")
    g = [pep.vector(f"g{i + 1}") for i in range(n)]
    gbar = Vec()
    for gi in g:
        gbar = gbar + gi / n
    fx, fs = pep.value(), pep.value()
    f.add_point(Vec(), Vec(), fs)
    f.add_point(x, gbar, fx)
    pep.constrain(_mean_square([gi - gbar for gi in g], n) - as_fraction(sigma2, "sigma2"),
                  "(1/n)Σ||∇f_i - ∇f||^2 <= sigma_G^2")

    def dist(mask: tuple[bool, ...]) -> Expr:
        return (x - _selected_sum(mask, g, b) * eta).sq()

    return RateBuilt(pep, (("||x - x*||^2", x.sq()),),
                     (expectation(uniform_patterns(n, b), dist),), progress=fx - fs,
                     stated=dict(stated or {}), progress_text="f(x_t) - f*")


def fedavg_is_strongly_convex_model(n: int, p: Any, eta: Any, L: Any, mu: Any,
                                    zeta2: Any = 1) -> RateBuilt:
    """FedAvg-IS rounds (one exact local step), :math:`x^+ = x - \\frac\\eta{np}\\sum_{i\\in S}
    \\nabla f_i(x)`, independent Bernoulli(p) participation, every :math:`f_i` L-smooth and
    mu-strongly convex (class ``smooth_strongly_convex``, each its own function), :math:`x^\\star`
    the minimiser of :math:`f = \\frac1n\\sum_if_i` (:math:`\\sum_i\\nabla f_i(x^\\star) = 0`)
    with heterogeneity :math:`\\frac1n\\sum_i\\|\\nabla f_i(x^\\star)\\|^2 \\le \\zeta^2`:
    potential term :math:`\\|x - x^\\star\\|^2` (a linear rate to a floor). The lower
    certificate on the rate: identical quadratics :math:`\\frac a2\\|x\\|^2`, a in {mu, L}
    (:func:`~fedtheory.certify.lyapunov.mean_square_lower` over the patterns)."""
    from .lyapunov import mean_square_lower
    from .onestep import bernoulli_patterns

    p, eta = as_fraction(p, "p"), as_fraction(eta, "eta")
    L, mu = as_fraction(L, "L"), as_fraction(mu, "mu")
    pep = Pep()
    fs = [pep.function("smooth_strongly_convex", L, mu) for _ in range(n)]
    x = pep.vector("x")
    s = [pep.vector(f"s{i + 1}") for i in range(n - 1)]
    last = Vec()
    for si in s:
        last = last - si
    s.append(last)
    g = [pep.vector(f"g{i + 1}") for i in range(n)]
    for f, si, gi in zip(fs, s, g, strict=True):
        f.add_point(Vec(), si, pep.value())
        f.add_point(x, gi, pep.value())
    pep.constrain(_mean_square(s, n) - as_fraction(zeta2, "zeta2"),
                  "(1/n)Σ||∇f_i(x*)||^2 <= ζ^2")
    pats = bernoulli_patterns([p] * n)

    def dist(mask: tuple[bool, ...]) -> Expr:
        return (x - _selected_sum(mask, g, n * p) * eta).sq()

    def lower() -> dict[str, Any] | None:
        best = None
        for a in (mu, L):
            maps = [(pr, [[1 - eta * a * sum(mask) / (n * p)]]) for mask, pr in pats]
            r = mean_square_lower(maps, [0])
            if r is not None and (best is None or r["rho"] > best["rho"]):
                best = {"rho": r["rho"], "from": f"identical quadratics (a/2)||x||^2, a = {a}: "
                        + r["from"]}
        return best

    return RateBuilt(pep, (("||x - x*||^2", x.sq()),), (expectation(pats, dist),),
                     anchor=0, lower_rate=lower)


def fedpgd_nonconvex_average_model(n: int, b: int, eta: Any, L: Any,
                                   stated: dict[str, Any] | None = None,
                                   sigma2: Any = 1) -> RateBuilt:
    """FedPGD, :math:`x^+ = x - \\frac\\eta b\\sum_{i\\in S}\\nabla f_i(x)`, ``b`` of ``n``
    clients uniformly without replacement, on an L-smooth f (class ``smooth``, not
    necessarily convex; a point per pattern), heterogeneity :math:`\\frac1n\\sum_i\\|\\nabla
    f_i(x) - \\nabla f(x)\\|^2 \\le \\sigma^2` at every round's point: potential term
    :math:`f(x) - f^\\star`, progress :math:`\\|\\nabla f(x)\\|^2`."""
    pep = Pep()
    eta = as_fraction(eta, "eta")
    f, g, gbar, fx = smooth_at_origin(pep, n, L)
    pep.constrain(_mean_square([gi - gbar for gi in g], n) - as_fraction(sigma2, "sigma2"),
                  "(1/n)Σ||∇f_i - ∇f||^2 <= sigma^2")

    def f_next(mask: tuple[bool, ...]) -> Expr:
        return f.value(_selected_sum(mask, g, b) * (-eta))

    E_next = expectation(uniform_patterns(n, b), f_next)
    fstar = pep.value()
    # the floor's instance: (L/2)||x||^2 at its minimiser, unit heterogeneity summing to 0
    inst = quadratic_instance(pep, f, dict(enumerate(unit_vectors_summing_to_zero(n))), L) \
        if as_fraction(sigma2, "sigma2") == 1 else None
    return RateBuilt(pep, (("f(x) - f*", fx - fstar),), (E_next - fstar,),
                     progress=gbar.sq(), stated=dict(stated or {}),
                     progress_text="||∇f(x_t)||^2", instance=inst)


def mifa_memory_model(n: int, p: Any, eta: Any, L: Any) -> RateBuilt:
    """MIFA with exact gradients and independent Bernoulli(p) participation, a memory table
    across rounds: the participants refresh their entry :math:`m_i \\leftarrow \\nabla
    f_i(w_t)`, then :math:`w_{t+1} = w_t - \\eta\\frac1n\\sum_im_i`; every :math:`f_i`
    L-smooth (class ``smooth``, each its own function, a point per pattern). Potential terms
    :math:`f(w) - f^\\star` and the memory error :math:`\\sum_i\\|m_i - \\nabla f_i(w)\\|^2`
    (the entries held before the round, at the current point), progress
    :math:`\\|\\nabla f(w)\\|^2`; no heterogeneity bound: a zero floor is certified by
    :math:`c = 0`."""
    from .onestep import bernoulli_patterns

    p, eta = as_fraction(p, "p"), as_fraction(eta, "eta")
    pep = Pep()
    fs = [pep.function("smooth", L) for _ in range(n)]
    g = [pep.vector(f"g{i + 1}") for i in range(n)]
    mem = [pep.vector(f"m{i + 1}") for i in range(n)]
    fw = []
    for f, gi in zip(fs, g, strict=True):
        fw.append(pep.value())
        f.add_point(Vec(), gi, fw[-1])
    fstar = pep.value()
    f_now = Expr()
    for v in fw:
        f_now = f_now + v / n
    err_now = Expr()
    for mi, gi in zip(mem, g, strict=True):
        err_now = err_now + (mi - gi).sq()
    gbar = Vec()
    for gi in g:
        gbar = gbar + gi / n
    pats = bernoulli_patterns([p] * n)
    f_next, err_next = Expr(), Expr()
    for mask, pr in pats:
        new = [gi if m_ else mi for m_, gi, mi in zip(mask, g, mem, strict=True)]
        G = Vec()
        for v in new:
            G = G + v / n
        x = G * (-eta)
        for f, v in zip(fs, new, strict=True):
            gn, fn = f.oracle(x)
            f_next = f_next + fn * (pr / n)
            err_next = err_next + (v - gn).sq() * pr
    return RateBuilt(pep, (("f(w) - f*", f_now - fstar), ("Σ_i ||m_i - ∇f_i(w)||^2", err_now)),
                     (f_next - fstar, err_next), progress=gbar.sq(),
                     progress_text="||∇f(w_t)||^2")
