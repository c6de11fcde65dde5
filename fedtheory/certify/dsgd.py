r"""Seed 002's Theorem 13 (DSGD with partial participation, strongly convex) as a PEP.

The recursion (20) reads, at the step :math:`\eta \le \eta_{\max}(\gamma)`,

.. math::

    \mathbb E\|r^{k+1}\|^2 \le (1 - \mu\eta)\|r^k\|^2
    + \eta^2\Big(\frac{\beta_1}{\gamma} - \beta_2\Big),\quad
    \beta_1 = \sum_i w_i^2\big(c_1L(1+M)Z_i + \sigma^2\big),\ \beta_2 = c_2L\sum_i w_i^2Z_i,

so its two parts are certified apart (:func:`recursion_one_step`):

* ``part = "contraction"``: no heterogeneity at the optimum (:math:`Z_i = 0`), no noise
  floor (:math:`\sigma = 0`), :math:`\|r^k\|^2 \le 1`: the worst factor
  :math:`\max\mathbb E\|r^{k+1}\|^2` against the stated :math:`1 - \mu\eta`;
* ``part = "additive"``: everything free, normalised by :math:`L\sum_i w_i^2Z_i \le 1`:
  :math:`\max\ \mathbb E\|r^{k+1}\|^2 - (1 - \mu\eta)\|r^k\|^2` (what the step adds beyond the
  stated contraction, for every :math:`r^k`) against the stated
  :math:`\eta^2(\beta_1/\gamma - \beta_2)`.

Sampling: ``"uniform"`` is the seed's independent uniform sampling (:math:`p_i = m/n`,
Definition 11's :math:`\gamma = m/n`); ``"ocs"`` fixes the ratios of the clients' weighted
gradient norms :math:`\|w_i\nabla f_i(x)\|` (constraints) so that the optimal probabilities
(7) and :math:`\gamma` are numbers (a grid of ratios: one PEP per ratio, never all ratios).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from .models import dsgd_step, expectation
from .onestep import Built, OneStep, bernoulli_patterns
from .pep import Pep, Vec, as_fraction

__all__ = ["THEOREM13_NOTES", "descent_one_step", "recursion_one_step", "theorem13_grid",
           "theorem15_grid"]

#: ``probabilities(norms, m) -> p``: the OCS probabilities (7) for given norms (the claim
#: passes the toolkit's exact implementation; the library layer does not import the theory).
Probabilities = Callable[[Sequence[Fraction], int], Sequence[Fraction]]


def _sampling(params: dict[str, Any], probabilities: Probabilities | None
              ) -> tuple[list[Fraction], Fraction]:
    r"""The probabilities and :math:`\gamma = m/(\alpha(n - m) + m)` of the instance."""
    n, m, w = len(params["w"]), params["m"], [as_fraction(v, "w") for v in params["w"]]
    if params.get("ratios") is None:
        return [Fraction(m, n)] * n, Fraction(m, n)
    if probabilities is None:
        raise ValueError("OCS ratios need the probabilities (7)")
    u = [as_fraction(v, "ratios") for v in params["ratios"]]
    p = [as_fraction(v, "p") for v in probabilities(u, m)]
    A = sum((ui * ui * (1 - pi) / pi for ui, pi in zip(u, p, strict=True) if pi), Fraction(0))
    B = Fraction(n - m, m) * sum((ui * ui for ui in u), Fraction(0))
    gamma = Fraction(1) if m >= n or B == 0 else m / ((A / B) * (n - m) + m)
    del w
    return p, gamma


def _form(d: dict[str, Any], e: Any, a: Fraction, k: int) -> Any:
    """The quadratic form of ``e`` (its constant dropped) in ``y`` at identical quadratics
    of curvature ``a`` (by polarisation; floating point)."""
    def val(y: Sequence[Fraction]) -> float:
        V, F = d["instance"](y, a)
        G = [[vi[0] * vj[0] for vj in V] for vi in V]
        return float(e.evaluate(G, F) - e.c)

    Q = np.zeros((k, k))
    unit = [[Fraction(int(i == j)) for j in range(k)] for i in range(k)]
    for i in range(k):
        Q[i, i] = val(unit[i])
    for i in range(k):
        for j in range(i + 1, k):
            both = [x + y for x, y in zip(unit[i], unit[j], strict=True)]
            Q[i, j] = Q[j, i] = (val(both) - Q[i, i] - Q[j, j]) / 2
    return Q


def _curvatures(w: Sequence[Fraction], mu: Fraction, L: Fraction, heterogeneous: bool
                ) -> list[tuple[Fraction, ...]]:
    r"""The clients' curvatures to try on a line, Theorem 13's class: each
    :math:`a_i \in \{0, \mu, L\}` (and :math:`\mu/w_i` when that is at most
    :math:`L`: one client carrying the sum's strong convexity alone) with
    :math:`\sum_iw_ia_i \ge \mu`; the last client curved when the clients are
    heterogeneous (its centre makes :math:`x^\star = 0` the minimiser). Identical
    curvatures first (the subclass's instances), at most 64."""
    n = len(w)
    levels = sorted({Fraction(0), mu, L, *(mu / wi for wi in w if mu / wi <= L)})
    out: list[tuple[Fraction, ...]] = [(mu,) * n, (L,) * n]
    for a in itertools.product(levels, repeat=n):
        if sum((wi * ai for wi, ai in zip(w, a, strict=True)), Fraction(0)) >= mu and (
                not heterogeneous or a[-1] > 0) and a not in out:
            out.append(a)
        if len(out) >= 64:
            break
    return out


def _line_instance(pep: Pep, d: dict[str, Any], curvatures: Sequence[Any]
                   ) -> tuple[list[list[Fraction]], list[Fraction], list[dict[str, Any]]] | None:
    r"""The best instance among quadratics on a line (each candidate: the clients'
    curvatures): the objective and every constraint are quadratic forms in
    :math:`y = (r, c_1, \dots)`; the largest objective under the constraints is found in
    floating point (a generalised eigenproblem after maximising over :math:`r`), rounded,
    and shrunk to satisfy the normalisation exactly; the best exact value wins. Returns
    ``(V, F, functions)``, the functions the explicit quadratics (checked in the class by
    :meth:`~.pep.Pep.check_witness`)."""
    assert pep.objective is not None
    k = d["free"]
    best: tuple[Fraction, Any] | None = None
    for a in curvatures:
        Q0 = _form(d, pep.objective, a, k)
        norms = [_form(d, e, a, k) for e, _ in pep.constraints]
        N = sum(norms, np.zeros((k, k)))
        cands = []
        if k == 1:
            cands.append(np.ones(1))
        else:  # maximise over r for fixed centres, then the centres (generalised eigen)
            qrr, qrc, Qcc = Q0[0, 0], Q0[0, 1:], Q0[1:, 1:]
            S = Qcc - np.outer(qrc, qrc) / qrr if qrr < 0 else Qcc
            Ncc = N[1:, 1:]
            w_, U = np.linalg.eigh(Ncc)
            if w_.min() <= 1e-12:
                continue
            Nh = U @ np.diag(w_ ** -0.5) @ U.T
            ev, E = np.linalg.eigh(Nh @ S @ Nh)
            c = Nh @ E[:, -1]
            rr = -qrc @ c / qrr if qrr < 0 else 0.0
            cands += [np.concatenate([[rr], c]), np.concatenate([[-rr], -c])]
        for y in cands:
            y = y / max(1e-12, float(np.sqrt(max(y @ N @ y, 1e-24))))
            yq = [Fraction(float(v)).limit_denominator(10**6) for v in y]
            V, F = d["instance"](yq, a)
            s = pep.shrink_factor(V, F)
            if s is None:
                continue
            yq = [s * v for v in yq]
            V, F = d["instance"](yq, a)
            fns = d["witness"](yq, a)
            val = pep.check_witness(V, F, fns)
            if val is not None and (best is None or val > best[0]):
                best = (val, (V, F, fns))
    return None if best is None else best[1]


def recursion_one_step(c1: Any, c2: Any, step_of: Callable[..., Fraction], grid: Callable[
        [bool], list[dict[str, Any]]], probabilities: Probabilities | None = None,
        closed_form: Callable[[dict[str, Any]], Fraction | None] | None = None,
        closed_form_text: str = "", notes: tuple[str, ...] = ()) -> OneStep:
    r"""The :class:`~.onestep.OneStep` of recursion (20) with constants :math:`c_1, c_2`
    (``beta1_Z``, ``beta2_Z``) and the step limit ``step_of(W=, M=, L=, gamma=)``; a grid
    row is ``{"part", "w", "m", "M", "sigma2", "mu", "theta"}`` (``L = 1``, the step
    :math:`\theta\,\eta_{\max}`) plus ``"ratios"`` for OCS (``probabilities`` then needed).
    """
    c1, c2 = as_fraction(c1, "c1"), as_fraction(c2, "c2")

    def build(params: dict[str, Any]) -> Built:
        part = params["part"]
        if part not in ("contraction", "additive"):
            raise ValueError(f"part must be 'contraction' or 'additive', got {part!r}")
        w = [as_fraction(v, "w") for v in params["w"]]
        M, mu = as_fraction(params["M"], "M"), as_fraction(params["mu"], "mu")
        sigma2 = as_fraction(params.get("sigma2", 0), "sigma2") if part == "additive" \
            else Fraction(0)
        L = Fraction(1)
        p, gamma = _sampling(params, probabilities)
        eta = as_fraction(params["theta"], "theta") * step_of(W=max(w), M=M, L=L, gamma=gamma)
        pep = Pep()
        d = dsgd_step(pep, w, p, eta, L, mu, M, sigma2, heterogeneous=part == "additive",
                      convex_components=True)
        curvatures = _curvatures(w, mu, L, part == "additive")
        if params.get("ratios") is not None:  # ||w_i g_i|| = u_i ||w_1 g_1|| (both ways)
            u = [as_fraction(v, "ratios") for v in params["ratios"]]
            base = (d["g"][0] * w[0]).sq()
            for i in range(1, len(w)):
                e = (d["g"][i] * w[i]).sq() - base * (u[i] * u[i] / (u[0] * u[0]))
                pep.constrain(e, f"||w{i + 1} g{i + 1}||^2 <= ratio^2 ||w1 g1||^2")
                pep.constrain(-e, f"||w{i + 1} g{i + 1}||^2 >= ratio^2 ||w1 g1||^2")
        if part == "contraction":
            pep.constrain(d["r2"] - 1, "||r||^2 <= 1")
            pep.maximize(d["E_dist"])
            return Built(pep, 1 - mu * eta, instance_from=lambda sol: _line_instance(
                pep, d, curvatures))
        s2z = sum((Z * (wi * wi) for Z, wi in zip(d["Z"], w, strict=True)), d["r2"] * 0)
        pep.constrain(s2z * L - 1, "L sum_i w_i^2 Z_i <= 1")
        pep.maximize(d["E_dist"] - d["r2"] * (1 - mu * eta))
        S2 = sum((wi * wi for wi in w), Fraction(0))
        beta1 = c1 * (1 + M) + sigma2 * S2  # at L sum w_i^2 Z_i = 1
        return Built(pep, eta * eta * (beta1 / gamma - c2),
                     instance_from=lambda sol: _line_instance(pep, d, curvatures))

    return OneStep(
        description=(
            "one DSGD step from x^k (x* = 0), clients f_i L-smooth and convex, f = sum_i "
            "w_i f_i mu-strongly convex (L = 1; Theorem 13's class), noise independent with "
            "E||xi_i||^2 <= M||grad f_i||^2 + sigma^2, independent sampling with p_i = m/n "
            "(uniform; gamma = m/n) or the OCS probabilities (7) at fixed ratios of "
            "||w_i grad f_i(x)|| (one PEP per ratio), every pattern enumerated; two parts: "
            "the contraction (Z_i = 0, sigma = 0, ||r||^2 <= 1: worst E||r+||^2 vs 1 - mu eta)"
            " and the additive constant (L sum w_i^2 Z_i <= 1: worst E||r+||^2 - (1 - mu eta)"
            "||r||^2 over every r vs eta^2 (beta_1/gamma - beta_2))"),
        build=build, grid=grid,
        relaxation=(
            "none in the class: the clients' smooth-convex interpolation inequalities and "
            "the sum's (L, mu) ones at the shared points are necessary, so every upper "
            "certificate holds for the theorem's class; they are not known to be sufficient, "
            "so a lower certificate is an explicit function of the class (quadratics on a "
            "line, their curvatures 0 <= a_i <= L with sum_i w_i a_i >= mu checked exactly), "
            "never a Gram matrix alone"),
        function_class=("Theorem 13's: every f_i L-smooth and convex, f = sum_i w_i f_i "
                        "mu-strongly convex (L = 1)"),
        closed_form=closed_form, closed_form_text=closed_form_text, notes=notes)


#: What the certified entries of Theorem 13 (original and corrected) say of the model.
THEOREM13_NOTES: tuple[str, ...] = (
    "uniform sampling is the seed's independent uniform sampling (p_i = m/n, every one "
    "of the 2^n patterns; gamma = m/n by Definition 11), not b-of-n without replacement",
    "OCS: the probabilities (7) depend on the gradient norms, so each OCS instance fixes "
    "the ratios ||w_i grad f_i(x)|| (equality constraints) and certifies that one ratio; "
    "a grid of ratios, never all of them: at most 'sandwich' per grid, nothing claimed "
    "between the grid points",
    "certified on Theorem 13's own class (f_i L-smooth and convex, f mu-strongly convex; "
    "not the subclass with every f_i mu-strongly convex, which the toolkit modelled "
    "before): the contraction factor is not tight there either: the worst factor (Z = 0, "
    "sigma = 0) lies below the stated 1 - mu eta (stated/worst 1.11-1.2 on the quick "
    "grid: 5/8 against 3/4 at w = (1/2, 1/2), attained by f_1 = 0, f_2 = x^2/2; the "
    "subclass's worst case there is 19/32); the additive constant is the tight part "
    "(original, equal weights: the stated value is attained by an instance of the class; "
    "the upper certificate is within 1e-7 of it: the least-weight multipliers that "
    "certify it exactly are irrational (2 - sqrt 3)/2, so no rational one was found)",
)

def theorem13_grid(quick: bool) -> list[dict[str, Any]]:
    """The instances of recursion (20): both parts, equal and unequal weights, uniform
    sampling at n = 2, 3, 4 (``m`` of ``n`` in expectation), and two OCS norm ratios
    (n = 2, m = 1: the probabilities (7) fixed by the ratio); ``mu = 1/2``, ``L = 1``."""
    F = Fraction
    h = F(1, 2)
    eq = {2: (h, h), 3: (F(1, 3),) * 3, 4: (F(1, 4),) * 4}
    rows: list[dict[str, Any]] = [
        {"part": "contraction", "w": eq[2], "m": 1, "M": 0, "mu": h, "theta": 1},
        {"part": "contraction", "w": eq[4], "m": 2, "M": 1, "mu": h, "theta": 1},
        {"part": "additive", "w": eq[2], "m": 1, "M": 0, "sigma2": 1, "mu": h, "theta": 1},
        {"part": "additive", "w": (F(3, 4), F(1, 4)), "m": 1, "M": 0, "sigma2": 0, "mu": h,
         "theta": 1},
        {"part": "additive", "w": eq[2], "m": 1, "M": 1, "sigma2": 0, "mu": h, "theta": 1},
        {"part": "additive", "w": eq[3], "m": 1, "M": 0, "sigma2": 0, "mu": h, "theta": 1},
        {"part": "additive", "w": eq[2], "m": 1, "M": 0, "sigma2": 0, "mu": h, "theta": 1,
         "ratios": (1, 2)},
        {"part": "additive", "w": eq[2], "m": 1, "M": 0, "sigma2": 0, "mu": h, "theta": 1,
         "ratios": (1, 4)},
    ]
    if not quick:
        rows += [
            {"part": "contraction", "w": eq[3], "m": 1, "M": 0, "mu": h, "theta": h},
            {"part": "contraction", "w": (F(3, 4), F(1, 4)), "m": 1, "M": 1, "mu": F(1, 4),
             "theta": 1},
            {"part": "additive", "w": eq[4], "m": 2, "M": 0, "sigma2": 1, "mu": h,
             "theta": h},
            {"part": "additive", "w": (F(3, 4), F(1, 4)), "m": 1, "M": 1, "sigma2": 0,
             "mu": h, "theta": 1},
            {"part": "additive", "w": eq[3], "m": 2, "M": 1, "sigma2": 0, "mu": h, "theta": 1},
            {"part": "additive", "w": (F(1, 2), F(1, 4), F(1, 4)), "m": 1, "M": 0,
             "sigma2": 1, "mu": h, "theta": 1},
            {"part": "additive", "w": eq[2], "m": 1, "M": 0, "sigma2": 0, "mu": h, "theta": 1,
             "ratios": (1, 1)},
        ]
    return rows


def descent_one_step(descent_half: Any, beta_half: Any,
                     grid: Callable[[bool], list[dict[str, Any]]],
                     probabilities: Probabilities | None = None,
                     notes: tuple[str, ...] = ()) -> OneStep:
    r"""The :class:`~.onestep.OneStep` of Theorem 15's descent (24) with exact gradients
    (:math:`M = \sigma = 0`):

    .. math::

        \mathbb E f(x^{k+1}) - f(x^k) + \eta\Big(1 - \frac{c_dL\eta}{\gamma}\Big)
        \|\nabla f(x^k)\|^2 \le \eta^2\,\frac{c_\beta L}{\gamma}(1 - \gamma)W\rho,

    :math:`f` :math:`L`-smooth (class ``smooth``; the clients' own functions are
    :math:`f` plus a linear term, so only their gradients at :math:`x^k` matter and
    Assumption 9, :math:`\sum_iw_i\|\nabla f_i(x) - \nabla f(x)\|^2 \le \rho = 1`, is imposed
    there: exact), the step :math:`\eta = \theta\gamma/L`; a grid row is ``{"w", "m",
    "theta"}`` (+ ``"ratios"`` for OCS)."""
    cd, cb = as_fraction(descent_half, "descent_half"), as_fraction(beta_half, "beta_half")

    def build(params: dict[str, Any]) -> Built:
        w = [as_fraction(v, "w") for v in params["w"]]
        p, gamma = _sampling(params, probabilities)
        L = Fraction(1)
        eta = as_fraction(params["theta"], "theta") * gamma / L
        pep = Pep()
        f = pep.function("smooth", L)
        g = [pep.vector(f"g{i + 1}") for i in range(len(w))]
        gbar = Vec()
        for wi, gi in zip(w, g, strict=True):
            gbar = gbar + gi * wi
        f0 = pep.value()
        f.add_point(Vec(), gbar, f0)
        rho = sum(((gi - gbar).sq() * wi for wi, gi in zip(w, g, strict=True)),
                  gbar.sq() * 0)
        pep.constrain(rho - 1, "sum_i w_i ||g_i - grad f||^2 <= rho = 1")
        if params.get("ratios") is not None:
            u = [as_fraction(v, "ratios") for v in params["ratios"]]
            base = (g[0] * w[0]).sq()
            for i in range(1, len(w)):
                e = (g[i] * w[i]).sq() - base * (u[i] * u[i] / (u[0] * u[0]))
                pep.constrain(e, f"||w{i + 1} g{i + 1}|| <= ratio ||w1 g1||")
                pep.constrain(-e, f"||w{i + 1} g{i + 1}|| >= ratio ||w1 g1||")

        def value(mask: tuple[bool, ...]) -> Any:
            step = Vec()
            for m_, gi, wi, pi in zip(mask, g, w, p, strict=True):
                if m_:
                    step = step + gi * (wi / pi)
            return f.value(step * (-eta))

        pep.maximize(expectation(bernoulli_patterns(p), value) - f0
                     + gbar.sq() * (eta * (1 - cd * L * eta / gamma)))
        return Built(pep, eta * eta * cb * L / gamma * (1 - gamma) * max(w))

    return OneStep(
        description=(
            "one DSGD step with exact gradients (M = sigma = 0), f L-smooth (L = 1), "
            "Assumption 9 at x^k with rho = 1, independent sampling p_i = m/n (gamma = m/n) "
            "or the OCS probabilities at fixed ratios of ||w_i grad f_i(x)||, every pattern; "
            "metric E f(x+) - f(x) + eta(1 - L eta/(2 gamma))||grad f||^2 against "
            "eta^2 (L/(2 gamma))(1 - gamma) W rho, eta = theta gamma/L"),
        build=build, grid=grid,
        relaxation=("none for the noise-free statement (the clients' functions enter only "
                    "through their gradients at x^k); the noisy one (M, sigma > 0) is not "
                    "modelled: its worst case over noise laws is no finite PEP here"),
        notes=notes)


def theorem15_grid(quick: bool) -> list[dict[str, Any]]:
    """Theorem 15's instances: equal and unequal weights, m of n = 2, 3, 4 in expectation,
    the step gamma/L (theta = 1) and half of it, two OCS norm ratios."""
    F = Fraction
    h = F(1, 2)
    rows: list[dict[str, Any]] = [
        {"w": (h, h), "m": 1, "theta": 1},
        {"w": (F(3, 4), F(1, 4)), "m": 1, "theta": 1},
        {"w": (F(1, 3),) * 3, "m": 2, "theta": 1},
        {"w": (h, h), "m": 1, "theta": 1, "ratios": (1, 2)},
        {"w": (h, h), "m": 1, "theta": 1, "ratios": (1, 4)},
    ]
    if not quick:
        rows += [{"w": (F(1, 4),) * 4, "m": 2, "theta": 1}, {"w": (h, h), "m": 1, "theta": h},
                 {"w": (F(1, 2), F(1, 4), F(1, 4)), "m": 1, "theta": 1}]
    return rows
