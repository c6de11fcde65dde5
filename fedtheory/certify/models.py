"""Reusable pieces of federated one-step PEPs: client vectors, the expectation over
participation patterns, and explicit quadratic instances for the lower certificates.

Each builder writes into a :class:`~fedtheory.certify.pep.Pep` and returns the expressions a
claim combines with its own stated constants (a claim's :class:`~.onestep.OneStep` is the
statement; these are the method).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory.validation import integer_at_least

from .onestep import bernoulli_patterns, uniform_patterns
from .pep import Expr, Function, Pep, Vec, as_fraction

__all__ = ["dropout_patterns", "dsgd_step", "expectation", "fedavg_is_step", "quadratic_instance",
           "rounded_rows", "smooth_at_origin", "substitution_error",
           "unit_vectors_summing_to_zero"]


def expectation(patterns: Sequence[tuple[tuple[bool, ...], Fraction]], value: Any) -> Expr:
    """:math:`\\sum_S P(S)\\,\\mathrm{value}(S)` over the enumerated participation patterns."""
    out = Expr()
    for mask, pr in patterns:
        out = out + value(mask) * pr
    return out


def smooth_at_origin(pep: Pep, n: int, L: Any) -> tuple[Function, list[Vec], Vec, Expr]:
    """An :math:`L`-smooth :math:`f = \\frac1n\\sum_i f_i` (``"smooth"`` class) with the
    client gradients :math:`g_i` at :math:`w = 0` (leaves ``g1 .. gn``), their mean
    :math:`\\nabla f(0)` and :math:`f(0)` (a leaf), the point :math:`(0, \\nabla f(0), f(0))`
    on :math:`f`: returns ``(f, g, gbar, f(0))``."""
    f = pep.function("smooth", L)
    g = [pep.vector(f"g{i + 1}") for i in range(n)]
    gbar = Vec()
    for gi in g:
        gbar = gbar + gi / n
    f_w = pep.value()
    f.add_point(Vec(), gbar, f_w)
    return f, g, gbar, f_w


def fedavg_is_step(pep: Pep, n: int, p: Sequence[Any], eta: Any, L: Any
                   ) -> dict[str, Any]:
    """One step of importance-sampled FedAvg with exact client gradients,
    :math:`w^+ = w - \\eta\\,\\frac1n\\sum_{i\\in\\mathcal A}\\nabla f_i(w)/p_i`, on an
    :math:`L`-smooth :math:`f = \\frac1n\\sum_i f_i` (``"smooth"`` class), :math:`w = 0`
    (translation invariance), independent Bernoulli(:math:`p_i`) participation, every
    pattern enumerated.

    Returns ``f`` (the function), ``g`` (the client gradients at w, leaves), ``gbar``
    (:math:`\\nabla f(w)`), ``f_w`` and ``E_f_next`` (:math:`\\mathbb E f(w^+)`, exact sum).
    Only the gradients at :math:`w` enter the step, so the clients' own functions need no
    class: their heterogeneity is imposed at :math:`w` (where the method evaluates).
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    ps = [as_fraction(v, "p") for v in p]
    if len(ps) != n:
        raise ValueError(f"p must give one probability per client (n = {n}), got {p!r}")
    eta, L = as_fraction(eta, "eta"), as_fraction(L, "L")
    f, g, gbar, f_w = smooth_at_origin(pep, n, L)

    def f_next(mask: tuple[bool, ...]) -> Expr:
        step = Vec()
        for m, gi, pi in zip(mask, g, ps, strict=True):
            if m:
                step = step + gi / (n * pi)
        return f.value(step * (-eta))

    return {"f": f, "g": g, "gbar": gbar, "f_w": f_w,
            "E_f_next": expectation(bernoulli_patterns(ps), f_next)}


def quadratic_instance(pep: Pep, f: Function, free: dict[int, Sequence[Fraction]],
                       a: Any, values: dict[int, Fraction] | None = None,
                       linear: Vec | None = None
                       ) -> tuple[list[list[Fraction]], list[Fraction]]:
    """An explicit instance where ``f`` is the quadratic :math:`\\frac a2\\|x\\|^2 +
    \\langle b, x\\rangle` (``b`` the combination ``linear`` of free leaves, default 0): the
    free leaves are given (``free``: leaf index -> rational row), every point's gradient leaf
    is :math:`a x + b` and value leaf :math:`\\frac a2\\|x\\|^2 + \\langle b, x\\rangle`;
    ``values`` fixes other value leaves. Returns ``(V, F)`` for :meth:`Pep.check_primal`."""
    a = as_fraction(a, "a")
    dim = len(next(iter(free.values()))) if free else 1
    rows: dict[int, list[Fraction]] = {k: [Fraction(v) for v in r] for k, r in free.items()}
    F: dict[int, Fraction] = dict(values or {})

    def row(v: Vec) -> list[Fraction]:
        out = [Fraction(0)] * dim
        for k, c in v.c.items():
            out = [o + c * x for o, x in zip(out, rows[k], strict=True)]
        return out

    b = row(linear) if linear is not None else [Fraction(0)] * dim
    for pt in f.points:
        x = row(pt.x)
        gx = [a * v + bv for v, bv in zip(x, b, strict=True)]
        if len(pt.g.c) == 1 and next(iter(pt.g.c.values())) == 1 and \
                next(iter(pt.g.c)) not in rows:
            rows[next(iter(pt.g.c))] = gx
        if len(pt.f.a) == 1 and next(iter(pt.f.a.values())) == 1 and not pt.f.q:
            F[next(iter(pt.f.a))] = a / 2 * sum((v * v for v in x), Fraction(0)) + sum(
                (v * bv for v, bv in zip(x, b, strict=True)), Fraction(0))
    missing = [k for k in range(pep.n_vec) if k not in rows]
    if missing:
        raise ValueError(f"leaves {missing} have no value in the instance")
    return ([rows[k] for k in range(pep.n_vec)],
            [F.get(k, Fraction(0)) for k in range(pep.n_val)])


def unit_vectors_summing_to_zero(n: int) -> list[list[Fraction]]:
    """``n >= 2`` rational unit vectors that sum to zero (equal heterogeneity at the
    optimum: the floor's worst case). n = 2, 3, 4 as tabled; an even n >= 6 is n/2 pairs
    :math:`\\pm e_1`; an odd n >= 5 is the three of n = 3 (in four coordinates) and
    (n - 3)/2 pairs :math:`\\pm e_1`.

    >>> [sum(v * v for v in r) for r in unit_vectors_summing_to_zero(3)]
    [Fraction(1, 1), Fraction(1, 1), Fraction(1, 1)]
    >>> for n in (5, 6):
    ...     vs = unit_vectors_summing_to_zero(n)
    ...     print(n, len(vs), {sum(v * v for v in r) for r in vs}, [sum(c) for c in zip(*vs)])
    5 5 {Fraction(1, 1)} [Fraction(0, 1), Fraction(0, 1), Fraction(0, 1), Fraction(0, 1)]
    6 6 {Fraction(1, 1)} [Fraction(0, 1)]
    """
    integer_at_least("n", n, 2)
    h, one, zero = Fraction(1, 2), Fraction(1), Fraction(0)
    three = [[one, zero, zero, zero], [-h, h, h, h], [-h, -h, -h, -h]]
    if n == 3:
        return three
    if n == 4:
        return [[one, zero], [-one, zero], [zero, one], [zero, -one]]
    if n % 2 == 0:
        return [[one], [-one]] * (n // 2)
    return three + [[one, zero, zero, zero], [-one, zero, zero, zero]] * ((n - 3) // 2)


def dropout_patterns(K: int, D: int, law: str) -> list[tuple[tuple[bool, ...], Fraction]]:
    """The dropout law: ``"uniform"`` (``D`` of ``K`` dropped uniformly at random) or
    ``"fixed"`` (the last ``D`` clients dropped: a fixed set, the worst law for a bound
    that must hold for every law independent of the round's samples). True = active."""
    if not 1 <= D < K:
        raise ValueError(f"need 1 <= D < K, got K = {K}, D = {D}")
    if law == "uniform":
        return uniform_patterns(K, K - D)
    if law == "fixed":
        return [(tuple(i < K - D for i in range(K)), Fraction(1))]
    raise ValueError(f"law must be 'uniform' or 'fixed', got {law!r}")


def substitution_error(pep: Pep, K: int, D: int, law: str, rule: str) -> Expr:
    """:math:`\\mathbb E\\|e_t\\|^2` of one round with ``D`` of ``K`` clients dropped, over
    the client updates :math:`\\Delta^j` (leaves; their Gram matrix stands for the second
    moments :math:`\\mathbb E\\langle\\Delta^i, \\Delta^j\\rangle`, so noise is covered), with
    the dropped updates replaced by ``rule``: ``"naive"`` (the active mean; constraint
    :math:`\\|\\Delta^i - \\Delta^j\\|^2 \\le \\sigma_P^2 = 1` for every pair) or ``"friend"``
    (the first active client, a true friend: :math:`\\|\\Delta^k - \\Delta^{\\phi(k)}\\|^2 \\le
    \\sigma_F^2 = 1` for every pair the law uses).
    :math:`e_t = \\Delta_t - \\bar\\Delta_t`."""
    if rule not in ("naive", "friend"):
        raise ValueError(f"rule must be 'naive' or 'friend', got {rule!r}")
    pats = dropout_patterns(K, D, law)
    d = [pep.vector(f"Delta{j + 1}") for j in range(K)]
    pairs: set[tuple[int, int]] = set()
    if rule == "naive":
        pairs = {(i, j) for i in range(K) for j in range(i + 1, K)}

    def err(mask: tuple[bool, ...]) -> Expr:
        act = [j for j in range(K) if mask[j]]
        e = Vec()
        for k in range(K):
            if mask[k]:
                continue
            if rule == "naive":
                sub = Vec()
                for j in act:
                    sub = sub + d[j] / len(act)
            else:
                sub = d[act[0]]
                pairs.add((min(k, act[0]), max(k, act[0])))
            e = e + (sub - d[k]) / K
        return e.sq()

    out = expectation(pats, err)
    for i, j in sorted(pairs):
        pep.constrain((d[i] - d[j]).sq() - 1, f"||Delta{i + 1} - Delta{j + 1}||^2 <= 1")
    return out


def rounded_rows(G: Any, leaves: Sequence[int], den: int = 10**6) -> dict[int, list[Fraction]]:
    """Rational vectors for ``leaves`` whose Gram matrix approximates ``G`` restricted to them
    (an eigen-factor, rounded to denominator ``den``): the free vectors of an instance built
    from a PEP's worst case."""
    sub = np.asarray(G)[np.ix_(list(leaves), list(leaves))]
    w, U = np.linalg.eigh((sub + sub.T) / 2)
    keep = w > 1e-9 * max(float(w.max()), 1e-12)
    V = U[:, keep] * np.sqrt(w[keep]) if keep.any() else np.zeros((len(leaves), 1))
    return {k: [Fraction(float(v)).limit_denominator(den) for v in row]
            for k, row in zip(leaves, V, strict=True)}


def dsgd_step(pep: Pep, w: Sequence[Any], p: Sequence[Any], eta: Any, L: Any, mu: Any,
              M: Any, sigma2: Any, heterogeneous: bool = True,
              convex_components: bool = False) -> dict[str, Any]:
    r"""One DSGD step with independent partial participation (seed 002's eq. (6)),
    :math:`x^+ = x - \eta\sum_{i\in S}\frac{w_i}{p_i}(\nabla f_i(x) + \xi_i)`, from
    :math:`r = x - x^\star` (:math:`x^\star = 0`, translation invariance), every pattern of
    independent Bernoulli(:math:`p_i`) participation enumerated; the noise is independent
    across clients, zero-mean, :math:`\mathbb E\|\xi_i\|^2 \le M\|\nabla f_i(x)\|^2 +
    \sigma^2` (Assumption 7), taken at its largest second moment (the only moment the
    squared distance reads).

    Classes: by default every :math:`f_i` is :math:`L`-smooth and :math:`\mu`-strongly
    convex (class ``smooth_strongly_convex``; interpolation exact), so :math:`f =
    \sum_i w_if_i` is too; with ``convex_components`` (Theorem 13's own class) every
    :math:`f_i` is :math:`L`-smooth convex and only :math:`f` is :math:`\mu`-strongly
    convex (an :class:`~.classes.Aggregate`: necessary conditions; lower certificates from
    the explicit quadratics of ``witness``);
    :math:`x^\star` minimises :math:`f` (:math:`\sum_i w_i\nabla f_i(x^\star) = 0`, the last
    client's gradient there written through the others) and, when ``heterogeneous``, each
    :math:`f_i` has a minimiser :math:`x_i^\star` (a point with gradient 0) so that
    :math:`Z_i = f_i(x^\star) - f_i^\star` is an expression; otherwise :math:`x^\star`
    minimises every :math:`f_i` (:math:`Z_i = 0`).

    Returns ``r`` (leaf), ``g`` (:math:`\nabla f_i(x)`), ``Z`` (expressions), ``E_dist``
    (:math:`\mathbb E\|r^+\|^2`, exact sum) and ``r2`` (:math:`\|r\|^2`).
    """
    ws = [as_fraction(v, "w") for v in w]
    ps = [as_fraction(v, "p") for v in p]
    n = len(ws)
    if n < 1 or len(ps) != n:
        raise ValueError(f"w and p must give one value per client, got {w!r}, {p!r}")
    if any(v <= 0 for v in ws) or sum(ws) != 1:
        raise ValueError(f"w must be positive and sum to 1, got {w!r}")
    eta, M, sigma2 = as_fraction(eta, "eta"), as_fraction(M, "M"), as_fraction(sigma2, "sigma2")
    if M < 0 or sigma2 < 0:
        raise ValueError(f"M and sigma2 must be >= 0, got {M}, {sigma2}")
    mu_i = 0 if convex_components else mu
    fs = [pep.function("smooth_strongly_convex", L, mu_i) for _ in range(n)]
    if convex_components:
        pep.aggregate(fs, ws, "smooth_strongly_convex", L, mu)
    r = pep.vector("r")
    r_leaf = pep.n_vec - 1
    g_leaves = list(range(pep.n_vec, pep.n_vec + n))
    g = [pep.vector(f"g{i + 1}") for i in range(n)]
    Z: list[Expr] = []
    if heterogeneous and n > 1:
        s_leaves = list(range(pep.n_vec, pep.n_vec + n - 1))
        s = [pep.vector(f"s{i + 1}") for i in range(n - 1)]
        last = Vec()
        for wi, si in zip(ws, s, strict=False):
            last = last - si * (wi / ws[-1])
        s.append(last)
    else:
        s_leaves = []
        s = [Vec() for _ in range(n)]
    z_leaves: list[int] = []
    fx_vals, fs_vals, fm_vals = [], [], []
    for i, f in enumerate(fs):
        fx_vals.append(pep.n_val)
        f.add_point(r, g[i], pep.value())
        fs_vals.append(pep.n_val)
        f_star_i = pep.value()
        f.add_point(Vec(), s[i], f_star_i)
        if heterogeneous and n > 1:
            fm_vals.append(pep.n_val)
            f_min = pep.value()
            z_leaves.append(pep.n_vec)
            f.add_point(pep.vector(f"z{i + 1}"), Vec(), f_min)
            Z.append(f_star_i - f_min)
        else:
            Z.append(Expr())

    def dist(mask: tuple[bool, ...]) -> Expr:
        step = Vec()
        for m, gi, wi, pi in zip(mask, g, ws, ps, strict=True):
            if m:
                step = step + gi * (wi / pi)
        return (r - step * eta).sq()

    noise = Expr()
    for gi, wi, pi in zip(g, ws, ps, strict=True):
        noise = noise + (gi.sq() * M + sigma2) * (wi * wi / pi)
    def centres(y: Sequence[Fraction], a: Sequence[Fraction]) -> list[Fraction]:
        cs = [Fraction(v) for v in y[1:]] if len(s_leaves) else [Fraction(0)] * (n - 1)
        if n == 1:
            return [Fraction(0)]
        if not s_leaves:
            return [*cs, Fraction(0)]
        if a[-1] == 0:
            raise ValueError("the last client's curvature must be > 0 (its centre makes "
                             "x* = 0 the minimiser)")
        return [*cs, -sum((wi * ai * ci for wi, ai, ci in zip(ws, a, cs, strict=False)),
                          Fraction(0)) / (ws[-1] * a[-1])]

    def curv(a: Any) -> list[Fraction]:
        if isinstance(a, (list, tuple)):
            if len(a) != n:
                raise ValueError(f"give one curvature per client ({n}), got {a!r}")
            return [as_fraction(v, "a") for v in a]
        return [as_fraction(a, "a")] * n

    def instance(y: Sequence[Fraction], a: Any) -> tuple[list[list[Fraction]], list[Fraction]]:
        """The leaves at quadratics :math:`f_i = \\frac{a_i}2(x - c_i)^2` on a line
        (``a`` one curvature for every client or one each; in the class when
        :math:`\\mu \\le a_i \\le L`, or, with ``convex_components``, :math:`0 \\le a_i \\le
        L` and :math:`\\sum_iw_ia_i \\ge \\mu`), ``y = (r, c_1, ..., c_{n-1})`` (the last
        centre makes :math:`\\sum_i w_ia_ic_i = 0`; ``y = (r,)`` without heterogeneity)."""
        av = curv(a)
        rv = Fraction(y[0])
        cs = centres(y, av)
        rows: dict[int, Fraction] = {r_leaf: rv}
        F: dict[int, Fraction] = {}
        for i in range(n):
            rows[g_leaves[i]] = av[i] * (rv - cs[i])
            F[fx_vals[i]] = av[i] / 2 * (rv - cs[i]) ** 2
            F[fs_vals[i]] = av[i] / 2 * cs[i] ** 2
            if i < len(s_leaves):
                rows[s_leaves[i]] = -av[i] * cs[i]
            if z_leaves:
                rows[z_leaves[i]] = cs[i]
                F[fm_vals[i]] = Fraction(0)
        return ([[rows[k]] for k in range(pep.n_vec)], [F[k] for k in range(pep.n_val)])

    def witness(y: Sequence[Fraction], a: Any) -> list[dict[str, Any]]:
        """The functions of :func:`instance` (for :meth:`~.pep.Pep.check_witness`)."""
        av = curv(a)
        return [{"hessian": [[ai]], "linear": [-ai * ci], "constant": ai * ci * ci / 2}
                for ai, ci in zip(av, centres(y, av), strict=True)]

    return {"r": r, "g": g, "Z": Z, "r2": r.sq(), "instance": instance, "witness": witness,
            "free": 1 + len(s_leaves),
            "E_dist": expectation(bernoulli_patterns(ps), dist) + noise * (eta * eta)}
