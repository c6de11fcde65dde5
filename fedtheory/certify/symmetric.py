r"""Client-symmetric certificates: one-step worst cases proved for **every** n at once.

A federated one-step inequality is usually symmetric in the clients: permuting them maps
the problem to itself, so an optimal certificate can be taken symmetric too (multipliers
that depend on a participation pattern :math:`S` only through its size, the same multiplier
on every client's constraint). Such a certificate is a handful of rational functions of
:math:`n, p, \eta, L, \dots`, and this module checks it **symbolically, for every n**:

* the problem is written once, over *abstract* vectors (:class:`Form`: quadratic forms over
  names, linear in named function values): per client (``"g"``: client i's vector,
  ``"Σg"``: the sum over all clients), per pattern (``"σg"``: the sum over the participating
  clients; pattern-local vectors such as the gradient at the pattern's point, and values),
  and shared vectors;
* the expectation over independent Bernoulli(p) participation acts on a per-pattern form
  through the two moments :math:`\mathbb E 1_i = p`, :math:`\mathbb E 1_i1_j = p^2`
  (:math:`i\ne j`): :math:`\mathbb E\langle\sigma_t,\sigma_{t'}\rangle = (p-p^2)\sum_i
  \langle x_i^t, x_i^{t'}\rangle + p^2\langle\Sigma_t,\Sigma_{t'}\rangle`, ...;
* a client-symmetric quadratic form :math:`\sum_i x_i^\top A x_i + s^\top B s +
  2s^\top C u + u^\top D u` (:math:`s = \sum_i x_i`, :math:`u` shared) is PSD when
  :math:`A \succeq 0` and :math:`M = \begin{pmatrix} nA + n^2B & nC\\ nC^\top & D
  \end{pmatrix} \succeq 0` (write :math:`x_i = m + r_i`, :math:`\sum_i r_i = 0`): two
  matrices whose size does not depend on n.

The certificate :math:`\text{SOS} = \text{bound} - \text{objective} + \sum_k\lambda_kC_k`
is then proved: the function values cancel identically; each pattern's local vectors are
eliminated by an :math:`LDL^\top` step whose pivots are proved non-negative (their sum of
squares, e.g. :math:`\sum_S P(S)/(4L)\|b_S - \dots\|^2`); what is left, in expectation,
is a client-symmetric form, proved PSD as above by :math:`LDL^\top` with pivots proved
non-negative; the multipliers are proved non-negative. Non-negativity of a rational function
on the stated range is proved by a change of variables onto the positive orthant (e.g.
:math:`p = 1/(1+q)`, :math:`n = 1 + m`, :math:`\theta = 1/(1+s)`): every factor of the
numerator and denominator then has coefficients of one sign (:func:`nonnegative`).

A lower certificate for every n is an instance: a symmetric Gram matrix of the client
vectors (:math:`\langle x_i, x_i\rangle = X`, :math:`\langle x_i, x_j\rangle = Y`) and the
pattern-local vectors and values written through the others (e.g. the quadratic
:math:`\frac L2\|x\|^2`); its constraints are checked and its value is the bound
identically.

:mod:`~fedtheory.certify.symmetric_pep` solves the same symmetry-reduced problem numerically
at a given n (seconds at n = 8 where the full PEP grows as :math:`4^n`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

__all__ = ["Form", "Instance", "SymForm", "SymmetricStep", "add", "client_sum",
           "derive_multiplier", "dot", "expect", "nonnegative", "prove", "sq", "symmetric_psd"]

Lin = Mapping[str, Any]


def _key(x: str, y: str) -> tuple[str, str]:
    return (x, y) if x <= y else (y, x)


@dataclass
class Form:
    """A scalar over abstract vectors: :math:`\\sum q_{xy}\\langle x, y\\rangle + \\sum a_v v
    + c` (``q`` keyed by sorted name pairs; ``a`` over value names)."""

    q: dict[tuple[str, str], Any] = field(default_factory=dict)
    a: dict[str, Any] = field(default_factory=dict)
    c: Any = 0

    def __add__(self, o: Form | Any) -> Form:
        o = o if isinstance(o, Form) else Form(c=o)
        q, a = dict(self.q), dict(self.a)
        for k, v in o.q.items():
            q[k] = q.get(k, 0) + v
        for k, v in o.a.items():
            a[k] = a.get(k, 0) + v
        return Form(q, a, self.c + o.c)

    __radd__ = __add__

    def __mul__(self, s: Any) -> Form:
        return Form({k: v * s for k, v in self.q.items()}, {k: v * s for k, v in self.a.items()},
                    self.c * s)

    __rmul__ = __mul__

    def __sub__(self, o: Form | Any) -> Form:
        return self + (o if isinstance(o, Form) else Form(c=o)) * -1

    def __truediv__(self, s: Any) -> Form:
        return self * (sp.Integer(1) / s)

    def __neg__(self) -> Form:
        return self * -1

    def names(self) -> set[str]:
        return {x for k in self.q for x in k}

    def matrix(self, names: Sequence[str]) -> sp.Matrix:
        """The symmetric matrix of the quadratic part over ``names`` (every name of the form
        must be among them)."""
        idx = {x: i for i, x in enumerate(names)}
        missing = self.names() - set(idx)
        if missing:
            raise ValueError(f"names {sorted(missing)} not in {list(names)}")
        M = sp.zeros(len(names), len(names))
        for (x, y), v in self.q.items():
            if x == y:
                M[idx[x], idx[x]] += v
            else:
                M[idx[x], idx[y]] += sp.Rational(1, 2) * v
                M[idx[y], idx[x]] += sp.Rational(1, 2) * v
        return M

    def subs(self, vecs: Mapping[str, Lin], values: Mapping[str, Form]) -> Form:
        """Substitute vectors by linear combinations and values by forms."""
        out = Form(c=self.c)
        for (x, y), v in self.q.items():
            out = out + dot(vecs.get(x, {x: 1}), vecs.get(y, {y: 1})) * v
        for k, v in self.a.items():
            out = out + (values[k] if k in values else Form(a={k: 1})) * v
        return out


def add(*ls: Lin, scale: Sequence[Any] | None = None) -> dict[str, Any]:
    """``Σ_k scale_k ls_k`` (scale 1 by default)."""
    out: dict[str, Any] = {}
    for k, l_ in enumerate(ls):
        s = 1 if scale is None else scale[k]
        for x, v in l_.items():
            out[x] = out.get(x, 0) + s * v
    return out


def dot(l1: Lin, l2: Lin) -> Form:
    """:math:`\\langle l_1, l_2\\rangle` as a form."""
    q: dict[tuple[str, str], Any] = {}
    for x, a in l1.items():
        for y, b in l2.items():
            k = _key(x, y)
            q[k] = q.get(k, 0) + a * b
    return Form(q)


def sq(l_: Lin) -> Form:
    """:math:`\\|l\\|^2` as a form."""
    return dot(l_, l_)


@dataclass
class SymForm:
    """A client-symmetric form: :math:`\\sum_i x_i^\\top A x_i + s^\\top B s + 2 s^\\top C u
    + u^\\top D u + a^\\top F + c` over the client types (``A``, ``B``: k x k), the shared
    vectors (``D``: m x m; ``C``: k x m) and the shared values ``a``."""

    A: sp.Matrix
    B: sp.Matrix
    C: sp.Matrix
    D: sp.Matrix
    a: dict[str, Any]
    c: Any

    def __add__(self, o: SymForm) -> SymForm:
        a = dict(self.a)
        for k, v in o.a.items():
            a[k] = a.get(k, 0) + v
        return SymForm(self.A + o.A, self.B + o.B, self.C + o.C, self.D + o.D, a,
                       self.c + o.c)

    def __mul__(self, s: Any) -> SymForm:
        return SymForm(self.A * s, self.B * s, self.C * s, self.D * s,
                       {k: v * s for k, v in self.a.items()}, self.c * s)

    def reduced(self, n: Any) -> tuple[sp.Matrix, sp.Matrix]:
        """``(A, M)``: the form is PSD when both are (see the module docstring)."""
        M = sp.Matrix(sp.BlockMatrix([[n * self.A + n**2 * self.B, n * self.C],
                                      [n * self.C.T, self.D]])) if self.D.rows else \
            n * self.A + n**2 * self.B
        return self.A.applyfunc(sp.cancel), M.applyfunc(sp.cancel)


@dataclass(frozen=True)
class Instance:
    """A lower certificate for every n: the client vectors' symmetric Gram matrix (``X``:
    :math:`\\langle x_i^t, x_i^{t'}\\rangle`, ``Y``: :math:`i \\ne j`, ``Z``: with the
    shared vectors, ``W``: among them), the pattern-local vectors and values written through
    the others (``local``, ``local_values``) and the shared values; ``function``: why the
    pattern constraints hold (e.g. "f = (L/2)||x||^2, in the class")."""

    X: sp.Matrix
    Y: sp.Matrix
    Z: sp.Matrix
    W: sp.Matrix
    local: Mapping[str, Lin] = field(default_factory=dict)
    local_values: Mapping[str, Form] = field(default_factory=dict)
    values: Mapping[str, Any] = field(default_factory=dict)
    function: str = ""


@dataclass(frozen=True)
class SymmetricStep:
    """A client-symmetric one-step PEP with its symmetric certificate.

    ``objective``: a per-pattern form (its expectation over the patterns is maximised);
    ``pattern_constraints``: per-pattern forms (``<= 0`` for every pattern) with their
    multipliers (per pattern, times P(S)); ``client_constraints``: per-client forms (``<= 0``
    for every client; ``summed``: one constraint, their sum) with their multipliers;
    ``bound_text``: the closed form the certified bound is compared with (``closed_form``).
    """

    clients: tuple[str, ...]
    shared: tuple[str, ...]
    local: tuple[str, ...]
    local_values: tuple[str, ...]
    objective: Form
    pattern_constraints: tuple[tuple[Form, Any, str], ...]
    client_constraints: tuple[tuple[Form, Any, str, bool], ...]
    n: sp.Symbol
    p: Any
    #: the change of variables onto the positive orthant: ``{symbol: expression}``
    positive: Mapping[sp.Symbol, Any]
    closed_form: Any = None
    instance: Instance | None = None
    range_text: str = ""

    def pattern_names(self) -> list[str]:
        return [*self.local, *(f"σ{t}" for t in self.clients),
                *(f"Σ{t}" for t in self.clients), *self.shared]

    def client_names(self) -> list[str]:
        return [*self.clients, *(f"Σ{t}" for t in self.clients), *self.shared]


def _zeros(r: int, c: int) -> sp.Matrix:
    return sp.zeros(r, c)


def _blank(step: SymmetricStep) -> tuple[Any, Any, Any, Any, dict[str, int], dict[str, int]]:
    """Zero blocks ``A, B`` (clients x clients), ``C`` (clients x shared), ``D`` (shared x
    shared) of a client-symmetric form of ``step``, and the index of each client and shared
    name."""
    k, m = len(step.clients), len(step.shared)
    return (_zeros(k, k), _zeros(k, k), _zeros(k, m), _zeros(m, m),
            {t: i for i, t in enumerate(step.clients)}, {u: i for i, u in enumerate(step.shared)})


def expect(step: SymmetricStep, form: Form, pi1: Any, pi2: Any) -> SymForm:
    """The expectation of a per-pattern form without local vectors (moments ``pi1`` =
    E 1_i, ``pi2`` = E 1_i 1_j, i != j) as a client-symmetric form."""
    A, B, C, D, ti, ui = _blank(step)

    def kind(x: str) -> tuple[str, int]:
        if x in ui:
            return "u", ui[x]
        if x[:1] in ("σ", "Σ") and x[1:] in ti:
            return x[:1], ti[x[1:]]
        raise ValueError(f"{x!r} is no pattern-level name of {step.pattern_names()}")

    for (x, y), v in form.q.items():
        (kx, ix), (ky, iy) = kind(x), kind(y)
        h = v if x == y else v / 2  # each of the two symmetric entries
        if kx == "u" and ky == "u":
            D[ix, iy] += h
            if ix != iy:
                D[iy, ix] += h
            continue
        if kx == "u" or ky == "u":
            (kt, it), iu = ((kx, ix), iy) if ky == "u" else ((ky, iy), ix)
            C[it, iu] += (pi1 if kt == "σ" else 1) * v / 2
            continue
        both_sigma = kx == ky == "σ"
        one_sigma = (kx == "σ") != (ky == "σ")
        fb = pi2 if both_sigma else pi1 if one_sigma else 1
        fa = (pi1 - pi2) if both_sigma else 0
        for i, j in ([(ix, iy), (iy, ix)] if x != y else [(ix, iy)]):
            B[i, j] += fb * h
            A[i, j] += fa * h
    a = {k_: v for k_, v in form.a.items()}
    bad = set(a) & set(step.local_values)
    if bad:
        raise ValueError(f"local values {sorted(bad)} left in an expectation")
    return SymForm(A, B, C, D, a, form.c)


def client_sum(step: SymmetricStep, form: Form) -> SymForm:
    """:math:`\\sum_i` of a per-client form, as a client-symmetric form."""
    n = step.n
    A, B, C, D, ti, ui = _blank(step)

    def kind(x: str) -> tuple[str, int]:
        if x in ui:
            return "u", ui[x]
        if x in ti:
            return "x", ti[x]
        if x[:1] == "Σ" and x[1:] in ti:
            return "Σ", ti[x[1:]]
        raise ValueError(f"{x!r} is no client-level name of {step.client_names()}")

    for (x, y), v in form.q.items():
        (kx, ix), (ky, iy) = kind(x), kind(y)
        h = v if x == y else v / 2
        pairs = [(ix, iy), (iy, ix)] if x != y else [(ix, iy)]
        if kx == "u" and ky == "u":
            for i, j in pairs:
                D[i, j] += n * h
        elif kx == "u" or ky == "u":
            kt, it, iu = (kx, ix, iy) if ky == "u" else (ky, iy, ix)
            C[it, iu] += (1 if kt == "x" else n) * v / 2
        elif kx == ky == "x":
            for i, j in pairs:
                A[i, j] += h
        else:  # <x_i, Σ> sums to <Σ, Σ>; <Σ, Σ> to n <Σ, Σ>
            for i, j in pairs:
                B[i, j] += (n if kx == ky == "Σ" else 1) * h
    return SymForm(A, B, C, D, {k_: n * v for k_, v in form.a.items()}, n * form.c)


def nonnegative(e: Any, positive: Mapping[sp.Symbol, Any]) -> bool:
    """A proof that the rational function ``e`` is >= 0 on the range: after the change of
    variables ``positive`` (onto non-negative new variables), every irreducible factor of
    the numerator and denominator has coefficients of one sign, the signs multiplying to
    +1 (factors of even power need no sign). False means *not proved*.

    >>> q = sp.Symbol("q", nonnegative=True)
    >>> p = sp.Symbol("p")
    >>> nonnegative(1 - p, {p: 1 / (1 + q)}), nonnegative(p - sp.Rational(1, 2), {p: 1 / (1 + q)})
    (True, False)
    """
    e = sp.cancel(sp.sympify(e).subs(dict(positive)))
    if e == 0:
        return True
    num, den = sp.fraction(sp.together(e))
    sign = 1
    for part in (num, den):
        coeff, factors = sp.factor_list(sp.expand(part))
        if coeff < 0:
            sign = -sign
        for fac, mult in factors:
            if mult % 2 == 0:
                continue
            cs = sp.Poly(fac, *sorted(fac.free_symbols, key=str)).coeffs() if \
                fac.free_symbols else [fac]
            if all(c >= 0 for c in cs):
                continue
            if all(c <= 0 for c in cs):
                sign = -sign
                continue
            return False
    return sign > 0


def _ldl_psd(S: sp.Matrix, positive: Mapping[sp.Symbol, Any]
             ) -> tuple[bool, list[str]]:
    """``S`` PSD on the range by symmetric elimination: the pivots (proved >= 0) or why not."""
    S = sp.Matrix(S).applyfunc(sp.cancel)
    n = S.rows
    pivots = []
    for k in range(n):
        piv = sp.cancel(S[k, k])
        if piv == 0:
            if any(sp.cancel(S[k, j]) != 0 for j in range(k + 1, n)):
                return False, pivots + [f"pivot {k} is 0 with a non-zero row"]
            pivots.append("0")
            continue
        if not nonnegative(piv, positive):
            return False, pivots + [f"pivot {k} = {sp.factor(piv)} not proved >= 0"]
        pivots.append(str(sp.factor(piv)))
        for i in range(k + 1, n):
            for j in range(k + 1, n):
                S[i, j] = sp.cancel(S[i, j] - S[i, k] * S[k, j] / piv)
    return True, pivots


def symmetric_psd(f: SymForm, n: Any, positive: Mapping[sp.Symbol, Any]
                  ) -> tuple[bool, dict[str, list[str]]]:
    """A client-symmetric form proved PSD for every n on the range (``A`` and ``M``)."""
    A, M = f.reduced(n)
    okA, pa = _ldl_psd(A, positive)
    okM, pm = _ldl_psd(M, positive)
    return okA and okM, {"A": pa, "M": pm}


def _cert_sos(step: SymmetricStep) -> tuple[Form, list[SymForm]]:
    """The per-pattern part of SOS - bound (before the expectation: ``-objective + Σ_k
    κ_k C_k``) and the client-symmetric parts (``μ Σ_i H_i``: a multiplier on each client's
    constraint, or one on their sum, is the same algebra)."""
    per = -step.objective
    for form, kappa, _ in step.pattern_constraints:
        per = per + form * kappa
    return per, [client_sum(step, form) * mu for form, mu, _, _ in step.client_constraints]


def _reduce(step: SymmetricStep) -> tuple[SymForm, bool, bool, list[str]]:
    """SOS - bound as a client-symmetric form after eliminating each pattern's local
    vectors: ``(total, local values cancel, local pivots >= 0, the local pivots)``."""
    pos = step.positive
    per, syms = _cert_sos(step)
    local_cancel = all(sp.cancel(per.a.get(v, 0)) == 0 for v in step.local_values)
    names = step.pattern_names()
    P = per.matrix(names)
    nl = len(step.local)
    local_ok, local_piv = _ldl_psd(P[:nl, :nl], pos)
    rest = P[nl:, nl:]
    if nl:
        Pll = P[:nl, :nl]
        if Pll.det() == 0:
            local_ok = False
            local_piv.append("singular local block")
        else:
            rest = rest - P[nl:, :nl] * Pll.inv() * P[:nl, nl:]
    rest = rest.applyfunc(sp.cancel)
    nonlocal_names = names[nl:]
    rform = Form()
    for i, x in enumerate(nonlocal_names):
        for j, y in enumerate(nonlocal_names):
            if j < i:
                continue
            v = rest[i, j] * (1 if i == j else 2)
            if v != 0:
                rform.q[_key(x, y)] = v
    rform.a = {k: v for k, v in per.a.items() if k not in step.local_values}
    rform.c = per.c
    total = expect(step, rform, step.p, step.p**2)
    for s_ in syms:
        total = total + s_
    return total, local_cancel, local_ok, local_piv


def derive_multiplier(make: Any, name: str = "mu") -> tuple[Any, list[Any]]:
    r"""The multiplier ``make(λ)`` leaves free, derived rather than restated: the roots in
    λ of the reduced matrices' leading pivots (:math:`A`'s, then :math:`M`'s), tried in turn;
    the first at which :func:`prove` succeeds, ``(λ or None, the roots tried)``. (The bound
    :math:`c_0 - \sum\lambda_kc_k` decreases as a multiplier on a constraint with a negative
    constant grows, so the best certificate sits where a pivot reaches 0.)"""
    lam = sp.Symbol(name)
    step = make(lam)
    total, _, _, _ = _reduce(step)
    A, M = total.reduced(step.n)
    roots: list[Any] = []
    for X in (A, M):
        if X.rows:
            for r in sp.solve(sp.cancel(X[0, 0]), lam):
                if r not in roots:
                    roots.append(sp.factor(r))
    for r in roots:
        if prove(make(r))["derivation"] == "proof for every n":
            return r, roots
    return None, roots


def prove(step: SymmetricStep) -> dict[str, Any]:
    """Prove the step's symmetric certificate for every n (module docstring): ``{"derivation":
    "proof for every n" | "instances only", "worst": the certified bound, "checks": {...},
    "multipliers": {...}, "pivots": {...}, "attained": bool | None, "closed_form_equal":
    bool | None}``."""
    pos = step.positive
    # 1. pattern-local values cancel in every pattern; eliminate the local vectors
    total, local_cancel, local_ok, local_piv = _reduce(step)
    # 2. shared values cancel (E 1 = 1 already applied: a per-pattern coefficient is kept)
    shared_cancel = all(sp.cancel(v) == 0 for v in total.a.values())
    worst = sp.factor(sp.cancel(-total.c))  # SOS = bound + total.c + (PSD part)
    total.c = 0
    psd, pivots = symmetric_psd(total, step.n, pos)
    mults = {lab: k for _, k, lab in step.pattern_constraints}
    mults.update({lab: mu for _, mu, lab, _ in step.client_constraints})
    nonneg = all(nonnegative(v, pos) for v in mults.values())
    ok = local_cancel and shared_cancel and local_ok and psd and nonneg
    out: dict[str, Any] = {
        "derivation": "proof for every n" if ok else "instances only",
        "worst": str(worst),
        "range": step.range_text,
        "multipliers": {k: str(sp.factor(v)) for k, v in mults.items()},
        "checks": {"values_cancel": local_cancel and shared_cancel,
                   "local_pivots_nonnegative": local_ok, "symmetric_psd": psd,
                   "multipliers_nonnegative": nonneg},
        "pivots": {"local (per pattern, times P(S))": local_piv, **pivots},
    }
    out["closed_form_equal"] = None if step.closed_form is None else bool(
        sp.cancel(worst - step.closed_form) == 0)
    out["attained"] = None if step.instance is None else attained(step, worst)
    if step.instance is not None:
        out["instance"] = step.instance.function
    if not ok:
        out["reason"] = "a step of the symbolic proof fails (see checks)"
    return out


def _evaluate(step: SymmetricStep, f: SymForm, inst: Instance) -> Any:
    """A client-symmetric form at the symmetric Gram matrix of ``inst``."""
    n = step.n
    sx = n * inst.X                          # Σ_i <x_i, x_i>
    ss = n * inst.X + n * (n - 1) * inst.Y   # <Σ, Σ>
    su = n * inst.Z                          # <Σ, u>
    tr = lambda M, G: sum((M[i, j] * G[i, j] for i in range(M.rows)  # noqa: E731
                           for j in range(M.cols)), sp.Integer(0))
    val = tr(f.A, sx) + tr(f.B, ss) + 2 * tr(f.C, su) + tr(f.D, inst.W)
    val += sum((v * inst.values.get(k, 0) for k, v in f.a.items()), sp.Integer(0)) + f.c
    return sp.cancel(val)


def _evaluate_pattern(step: SymmetricStep, g: Form, inst: Instance, k: Any) -> Any:
    """A per-pattern form without local names at the symmetric Gram matrix of ``inst``, for
    a pattern of ``k`` clients."""
    n = step.n
    ti = {t: i for i, t in enumerate(step.clients)}
    ui = {x: i for i, x in enumerate(step.shared)}

    def inner(x: str, y: str) -> Any:
        if x in ui and y in ui:
            return inst.W[ui[x], ui[y]]
        if x in ui or y in ui:
            (t, sh) = (y, x) if x in ui else (x, y)
            return (k if t[0] == "σ" else n) * inst.Z[ti[t[1:]], ui[sh]]
        i, j = ti[x[1:]], ti[y[1:]]
        X, Y = inst.X[i, j], inst.Y[i, j]
        if x[0] == y[0] == "σ":
            return k * X + k * (k - 1) * Y
        if x[0] == y[0] == "Σ":
            return n * X + n * (n - 1) * Y
        return k * X + k * (n - 1) * Y

    return sp.cancel(sum((v * inner(x, y) for (x, y), v in g.q.items()), sp.Integer(0))
                     + g.c)


def attained(step: SymmetricStep, worst: Any) -> bool:
    """The lower certificate for every n: the instance's Gram matrix is PSD, its pattern
    constraints hold identically (a form <= 0 whatever the vectors), its client constraints
    hold, and its objective is ``worst`` identically."""
    inst = step.instance
    assert inst is not None
    pos = step.positive
    n = step.n
    # the Gram matrix: X - Y >= 0 (the differences) and the mean block
    mean = sp.Matrix(sp.BlockMatrix([[inst.X + (n - 1) * inst.Y, n * inst.Z],
                                     [n * inst.Z.T, n * inst.W]])) if inst.W.rows else \
        inst.X + (n - 1) * inst.Y
    if not (_ldl_psd(inst.X - inst.Y, pos)[0] and _ldl_psd(mean, pos)[0]):
        return False
    vals = {k: Form(c=v) for k, v in inst.values.items()}
    vals.update(inst.local_values)
    k = sp.Symbol("k", nonnegative=True)
    u = sp.Symbol("u_k", nonnegative=True)
    for form, _, _ in step.pattern_constraints:
        # <= 0 for every pattern: at the Gram matrix, for a pattern of any size 0 <= k <= n
        # (k = n u/(1 + u), u >= 0)
        g = form.subs(inst.local, vals)
        if any(sp.cancel(v) != 0 for v in g.a.values()):
            return False
        v = _evaluate_pattern(step, g, inst, k)
        if v != 0 and not nonnegative(sp.cancel(-v.subs(k, n * u / (1 + u))), pos):
            return False
    for form, _, _, summed in step.client_constraints:
        v = _evaluate(step, client_sum(step, form), inst)
        if not nonnegative(-(v if summed else v / n), pos):
            return False
    obj = step.objective.subs(inst.local, vals)
    return sp.cancel(_evaluate(step, expect(step, obj, step.p, step.p**2), inst) - worst) == 0
