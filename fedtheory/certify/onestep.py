"""The protocol a claim implements to have its one-step inequality certified, and the runner.

A claim describes its inequality with a :class:`OneStep`: a ``build`` function that, for one
set of parameters (n, the participation law, the step, ...), writes the worst case as a
:class:`~fedtheory.certify.pep.Pep` (maximise the measured side, the stated side normalised)
and returns it with the stated value (:class:`Built`); the ``grid`` of parameters to try
(inside the stated step condition); and, optionally, a ``closed_form`` for the worst case that
the certified values are checked against, exactly. A claim whose statement is no such
inequality (an O(.) rate, a table, a multi-step average, sampling that depends on the data
beyond a grid) says so with :class:`OutOfScope`.

:func:`certify` solves each instance and returns the ``"certified"`` entry of the report:

* ``exact``: at every instance the lower certificate (an explicit rational instance that
  satisfies every constraint exactly) and the upper one (rational dual multipliers verified
  exactly) meet;
* ``sandwich``: both certificates hold everywhere but do not meet somewhere;
* ``upper bound only`` / ``lower bound only``: only one kind could be verified somewhere;
* ``out of scope``: with the reason.

``ratio`` is stated/worst at the instance where it is smallest (1: the bound is attained;
2: the stated side is twice the worst case).
"""

from __future__ import annotations

import itertools
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from fedtheory import solver_log
from fedtheory.vocabulary import CERTIFIED_STATUSES

from .pep import Pep, as_fraction

__all__ = ["STATUSES", "Built", "OneStep", "OutOfScope", "bernoulli_patterns", "certify",
           "certify_instance", "refute", "uniform_patterns"]

#: ``unverified``: neither certificate could be checked somewhere; ``error``: certifying
#: raised (the reason is given).
STATUSES = CERTIFIED_STATUSES


@dataclass(frozen=True)
class Built:
    """One instance's PEP (its objective: the measured side, the stated side normalised),
    the stated value, and optionally a constructed instance (``(V, F)``: the leaf vectors as
    rational rows and the function values) for the lower certificate."""

    pep: Pep
    stated: Fraction
    instance: tuple[list[list[Fraction]], list[Fraction]] | None = None
    #: An instance built from the solver's answer (e.g. a quadratic through the worst-case
    #: client vectors, rounded): ``instance_from(solution) -> (V, F)`` or None.
    instance_from: Callable[[Any], tuple[list[list[Fraction]], list[Fraction]] | None] | None \
        = None


@dataclass(frozen=True)
class OneStep:
    """How a claim's one-step inequality reads as a performance-estimation problem.

    ``description``: the function class, the participation model, the initial quantity and
    the performance metric, in a sentence or two; ``relaxation``: what is imposed only where
    the method evaluates (an assumption "for all x" then gives an upper bound, not a tight
    one), empty when nothing is; ``build(params) -> Built``; ``grid(quick) -> [params]``
    (exact values: ints, Fractions); ``closed_form(params) -> Fraction`` the worst case the
    certified values should equal (stated/worst reads off it), with ``closed_form_text``.
    """

    description: str
    build: Callable[[dict[str, Any]], Built]
    grid: Callable[[bool], list[dict[str, Any]]]
    relaxation: str = ""
    closed_form: Callable[[dict[str, Any]], Fraction] | None = None
    closed_form_text: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: Instances outside the stated condition (e.g. a larger step), reported apart
    #: (``beyond_stated_condition``): where the statement could be relaxed to.
    beyond: Callable[[bool], list[dict[str, Any]]] | None = None
    #: The worst case derived symbolically from the dual (``derive(quick) -> [result of
    #: fedtheory.certify.symbolic.derive_worst_case or fedtheory.certify.symmetric.prove,
    #: ...]``): the entry's ``derivation`` is :func:`derivation_label` of the results.
    derive: Callable[[bool], list[dict[str, Any]]] | None = None
    #: The solver-free part of ``derive``: the proofs for every n alone (``prove() ->
    #: [result of fedtheory.certify.symmetric.prove, ...]``, in the order ``derive`` lists
    #: them), which ``fedtheory recheck`` re-derives from the claim's code.
    prove: Callable[[], list[dict[str, Any]]] | None = None
    #: The function class in words (every certificate says which class it is for); empty:
    #: read off the PEP (:meth:`~.pep.Pep.class_text`).
    function_class: str = ""


@dataclass(frozen=True)
class OutOfScope:
    """A statement the PEP builder does not take, and why."""

    reason: str


def bernoulli_patterns(p: Sequence[Any]) -> list[tuple[tuple[bool, ...], Fraction]]:
    """Every participation pattern of independent Bernoulli(p_i) clients, with its exact
    probability (all 2^n, zero-probability ones dropped).

    >>> bernoulli_patterns([Fraction(1, 2)])
    [((False,), Fraction(1, 2)), ((True,), Fraction(1, 2))]
    """
    ps = [as_fraction(v, "p") for v in p]
    if not ps or any(not 0 < v <= 1 for v in ps):
        raise ValueError(f"p must be a non-empty list of probabilities in (0, 1], got {p!r}")
    out = []
    for mask in itertools.product((False, True), repeat=len(ps)):
        pr = Fraction(1)
        for m, v in zip(mask, ps, strict=True):
            pr *= v if m else 1 - v
        if pr:
            out.append((mask, pr))
    return out


def uniform_patterns(n: int, b: int) -> list[tuple[tuple[bool, ...], Fraction]]:
    """Every set of ``b`` of ``n`` clients, equally likely (sampling without replacement).

    >>> [(m, str(p)) for m, p in uniform_patterns(2, 1)]
    [((False, True), '1/2'), ((True, False), '1/2')]
    """
    if not 0 <= b <= n or n < 1:
        raise ValueError(f"need 0 <= b <= n, n >= 1, got n = {n}, b = {b}")
    sets = list(itertools.combinations(range(n), b))
    out = [(tuple(i in s for i in range(n)), Fraction(1, len(sets))) for s in sets]
    return sorted(out)


def _fmt(params: dict[str, Any]) -> dict[str, Any]:
    return {k: (str(v) if isinstance(v, Fraction) else [str(x) for x in v]
                if isinstance(v, (list, tuple)) else v) for k, v in params.items()}


def _scaled_witness(fns: list[dict[str, Any]], s: Fraction) -> list[dict[str, Any]]:
    """The quadratics of an instance scaled by ``s`` (:math:`s^2f(x/s)`: the same Hessian,
    ``s`` times the linear part, ``s^2`` times the constant)."""
    return [{"hessian": f["hessian"], "linear": [s * v for v in f["linear"]],
             "constant": s * s * f["constant"]} for f in fns]


def _gram_or_factor(pep: Pep, rp: tuple[Fraction, Any, Any]) -> dict[str, Any]:
    """:meth:`~.pep.Pep.round_primal`'s instance named for what it is: the Gram
    ``matrix`` itself or a factor (``vectors``, :math:`G = VV^\\top`)."""
    val, M, F = rp
    if len(M) == pep.n_vec and all(len(row) == pep.n_vec for row in M) and all(
            M[i][j] == M[j][i] for i in range(len(M)) for j in range(i)) and \
            pep.check_gram(M, F) == val:
        return {"matrix": M, "values": F}
    return {"vectors": M, "values": F}


def _lower(built: Built, sol: Any) -> tuple[Fraction, str, Any] | None:
    """The best lower certificate: ``(value, where from, the instance)``. Where the PEP's
    interpolation is only necessary (:attr:`~.pep.Pep.interpolation`), only instances
    with explicit functions count (the Gram matrix alone proves nothing there)."""
    pep = built.pep
    exact = pep.interpolation == "exact"
    lows: list[tuple[Fraction, str, Any]] = []
    rp = pep.round_primal(sol) if exact else None
    if rp is not None:
        lows.append((rp[0], "the PEP's worst-case Gram matrix, rounded (checked exactly)",
                     _gram_or_factor(pep, rp)))
    for a in ([] if exact else pep.lift_candidates()):
        sub = pep.lifted(a)  # a subclass with exact interpolation: its Gram matrix counts
        try:
            rl = sub.round_primal(sub.solve("certify (lifted)"))
        except RuntimeError:
            continue
        if rl is not None:
            lows.append((rl[0], "the worst-case Gram matrix of the subclass f_i - (a_i/2)"
                         "||x||^2 convex, sum_i w_i a_i = mu (rounded, checked exactly)",
                         {**_gram_or_factor(sub, rl), "moduli": a}))
    made = [(built.instance, "a constructed instance")]
    if built.instance_from is not None:
        made.append((built.instance_from(sol), "an instance built from the PEP's worst case"))
    for inst, where in made:
        if inst is None:
            continue
        V, F = inst[0], inst[1]
        fns = inst[2] if len(inst) > 2 else None
        if fns is None and not exact:
            continue

        def value(V: Any, F: Any, fns: Any) -> Fraction | None:
            return pep.check_primal(V, F) if fns is None else pep.check_witness(V, F, fns)

        v = value(V, F, fns)
        if v is None:  # a rounded normalisation broke: shrink the instance to fit
            sf = pep.shrink_factor(V, F)
            if sf is None:
                continue
            V, F = [[sf * x for x in row] for row in V], [sf * sf * x for x in F]
            fns = None if fns is None else _scaled_witness(fns, sf)
            v = value(V, F, fns)
        if v is not None:
            lows.append((v, where + (" (explicit quadratics, checked in the class)"
                                     if fns is not None else ""),
                         {"vectors": V, "values": F, **({"functions": fns} if fns else {})}))
    return max(lows, key=lambda t: t[0]) if lows else None


def _text(x: Any) -> Any:
    """An instance or certificate with its fractions as strings (nested lists, dicts)."""
    if isinstance(x, dict):
        return {k: _text(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_text(v) for v in x]
    return str(x) if isinstance(x, Fraction) else x


def _certificate(pep: Pep, up: tuple[Fraction, list[Fraction]] | None,
                 low: tuple[Fraction, str, Any] | None) -> dict[str, Any]:
    """Both certificates in exact form (fractions as strings), for ``fedtheory recheck``:
    the upper one as the nonzero multipliers ``[[constraint index, value], ...]`` of the
    constraints in the PEP's order (:meth:`~.pep.Pep.all_constraints`), the lower one as
    the instance (a Gram ``matrix``, or ``vectors``, with the function ``values``, and the
    explicit ``functions`` where the class needs them)."""
    out: dict[str, Any] = {"kind": "pep", "interpolation": pep.interpolation,
                           "gram_size": pep.n_vec, "values": pep.n_val,
                           "constraints": len(pep.all_constraints())}
    if up is not None:
        out["upper"] = {"bound": str(up[0]),
                        "multipliers": [[k, str(v)] for k, v in enumerate(up[1]) if v]}
    if low is not None:
        out["lower"] = {"value": str(low[0]), **_text(low[2])}
    return out


def refute(step: OneStep, params: dict[str, Any], scale: Any) -> dict[str, Any] | None:
    r"""A tightened statement (the stated side times ``scale``, e.g. a constant below the
    worst case) against the PEP's own certified instance: the counterexample (the instance's
    exact value above the tightened side) or None when the instance does not refute it.

    .. math::

        \text{refuted} \iff \text{value}(\text{instance}) > \text{scale}\cdot
        \text{stated}.
    """
    scale = as_fraction(scale, "scale")
    if scale < 0:
        raise ValueError(f"scale must be >= 0, got {scale}")
    built = step.build(params)
    low = _lower(built, built.pep.solve("refute"))
    if low is None or low[0] <= built.stated * scale:
        return None
    return {"params": _fmt(params), "value": str(low[0]), "stated": str(built.stated),
            "tightened": str(built.stated * scale), "from": low[1],
            "instance": _text(low[2])}


def certify_instance(step: OneStep, params: dict[str, Any]) -> dict[str, Any]:
    """Solve one instance and certify its worst case both ways (exact arithmetic)."""
    t0 = time.perf_counter()
    built = step.build(params)
    pep = built.pep
    sol = pep.solve("certify")
    low = _lower(built, sol)
    up = pep.round_dual(sol.duals, target=None if low is None else low[0])
    if low is not None and (up is None or up[0] > low[0]):
        # the solver's multipliers (the centre of the optimal face) did not round exactly:
        # the least-weight multipliers certifying the lower value often do
        # the least-weight multipliers certifying the lower value, then a simple fraction
        # next to the solver's value (a worst case the rounded instance only approaches)
        guess = Fraction(sol.value).limit_denominator(10**4)
        for target in dict.fromkeys([low[0], *([guess] if guess > low[0] else [])]):
            if up is not None and up[0] <= target:
                break
            lam = pep.sparse_dual(float(target))
            up2 = None if lam is None else pep.round_dual(lam, target=target)
            if up2 is not None and (up is None or up2[0] < up[0]):
                up = up2
    if low is None and (up is None or up[0] > Fraction(sol.value).limit_denominator(10**4)):
        # no lower certificate to aim at: least-weight multipliers just above the solver's
        # value (a valid upper bound whatever it is; tighter than a loose rounding)
        target = Fraction(sol.value + 1e-6 * max(1.0, abs(sol.value))).limit_denominator(
            10**6)
        lam = pep.sparse_dual(float(target))
        up2 = None if lam is None else pep.round_dual(lam, target=target)
        if up2 is not None and (up is None or up2[0] < up[0]):
            up = up2
    upper = None if up is None else up[0]
    lower = None if low is None else low[0]
    if lower is not None and upper is not None:
        if lower > upper:  # both certificates cannot hold: a bug, never a report
            raise RuntimeError(f"certificates cross at {params}: lower {lower} > upper {upper}")
        status = "exact" if lower == upper else "sandwich"
    else:
        status = "upper bound only" if upper is not None else (
            "lower bound only" if lower is not None else "unverified")
    stated = built.stated
    worst = upper if upper is not None else lower
    out = {
        "params": _fmt(params), "status": status, "stated": str(stated),
        "solver_value": sol.value, "lower": None if lower is None else str(lower),
        "upper": None if upper is None else str(upper),
        "ratio": None if not worst else float(stated / worst),
        "lower_from": None if low is None else low[1],
        "constraints": len(pep.all_constraints()), "gram_size": pep.n_vec,
        "function_class": pep.class_text(),
        "interpolation": pep.interpolation,
        "certificate": _certificate(pep, up, low),
        "seconds": round(time.perf_counter() - t0, 3),
    }
    if low is not None and low[0] > stated:
        # the statement fails: the PEP's own instance, re-checked exactly, is the
        # counterexample (stated < worst)
        out["counterexample"] = {
            "value": str(low[0]), "stated": str(stated), "from": low[1],
            "instance": _text(low[2])}
    if step.closed_form is not None:
        cf = step.closed_form(params)
        if cf is not None:
            # exact: equal to both certificates; otherwise inside them (never contradicted)
            out["closed_form"] = str(cf)
            out["closed_form_holds"] = (lower == cf == upper) if status == "exact" else (
                lower is not None and upper is not None and lower <= cf <= upper)
    return out


def certify(step: OneStep | OutOfScope | None, quick: bool = True) -> dict[str, Any]:
    """The report's ``"certified"`` entry for a claim's one-step description (see the module
    docstring); ``None`` (a claim that does not describe itself) is out of scope."""
    t0 = time.perf_counter()
    if step is None or isinstance(step, OutOfScope):
        reason = ("the claim describes no one-step inequality to the PEP builder"
                  if step is None else step.reason)
        return {"status": "out of scope", "reason": reason, "ratio": None, "lower": None,
                "upper": None, "instances": [], "solver": None, "seconds": 0.0,
                "function_class": None}
    with solver_log.recording() as log:
        out = _certify_rows(step, quick, t0)
    # the solves, and what the solver printed (kept here, never on the terminal)
    out["solves"] = len(log)
    out["solver_messages"] = [e for e in log if e.get("messages")][:20]
    return out


def _certify_rows(step: OneStep, quick: bool, t0: float) -> dict[str, Any]:
    """:func:`certify`'s entry from the instances of the grid (a recording around it)."""
    rows = [certify_instance(step, params) for params in step.grid(quick)]
    statuses = {r["status"] for r in rows}
    if statuses == {"exact"}:
        status = "exact"
    elif statuses <= {"exact", "sandwich"}:
        status = "sandwich"
    elif "unverified" in statuses or ("upper bound only" in statuses
                                      and "lower bound only" in statuses):
        status = "unverified"
    else:
        status = "upper bound only" if "upper bound only" in statuses else "lower bound only"
    rated = [r for r in rows if r["ratio"] is not None]
    tight = min(rated, key=lambda r: r["ratio"]) if rated else None
    ratios = {Fraction(r["stated"]) / Fraction(r["upper"]) for r in rows
              if r["status"] == "exact" and Fraction(r["upper"])}
    out = {
        "status": status, "ratio": None if tight is None else tight["ratio"],
        "lower": None if tight is None else tight["lower"],
        "upper": None if tight is None else tight["upper"],
        "stated": None if tight is None else tight["stated"],
        "at": None if tight is None else tight["params"],
        "instances": rows, "solver": "CLARABEL via cvxpy; certificates in exact rationals",
        "description": step.description, "relaxation": step.relaxation,
        "function_class": step.function_class or (rows[0]["function_class"] if rows else None),
        "interpolation": ("exact" if all(r["interpolation"] == "exact" for r in rows)
                          else "necessary"),
        "seconds": round(time.perf_counter() - t0, 3),
    }
    bad = [r for r in rows if "counterexample" in r]
    if bad:
        out["refuted"] = (f"stated < worst at {len(bad)} of {len(rows)} instances (the PEP's "
                          "own instance, re-checked in exact arithmetic, exceeds the stated "
                          "side)")
        out["counterexample"] = {"params": bad[0]["params"], **bad[0]["counterexample"]}
    if rows and all("part" in r["params"] for r in rows):
        parts: dict[str, Any] = {}
        for r in rows:
            parts.setdefault(r["params"]["part"], []).append(r)
        out["by_part"] = {k: {
            "statuses": sorted({r["status"] for r in rs}),
            "ratio_min": min((r["ratio"] for r in rs if r["ratio"] is not None), default=None),
            "ratio_max": max((r["ratio"] for r in rs if r["ratio"] is not None), default=None),
            "instances": len(rs)} for k, rs in parts.items()}
    n_exact = sum(r["status"] == "exact" for r in rows)
    if len(ratios) == 1:
        (r,) = ratios
        out["finding"] = (f"the stated side is exactly {r}x the worst case at every exact "
                          f"instance ({n_exact} of {len(rows)})")
    elif ratios:
        out["finding"] = (f"stated/worst ranges over [{min(ratios)}, {max(ratios)}] on the "
                          f"exact instances ({n_exact} of {len(rows)})")
    if step.closed_form is not None:
        with_cf = [r for r in rows if "closed_form" in r]
        ok = bool(with_cf) and all(r["closed_form_holds"] for r in with_cf)
        out["closed_form"] = {"text": step.closed_form_text, "holds": ok,
                              "instances": len(with_cf),
                              "exactly": sum(r["status"] == "exact" for r in with_cf)}
    if step.derive is not None:
        derived = step.derive(quick)
        out["derived"] = derived
        out["derivation"] = derivation_label(derived)
        out["seconds"] = round(time.perf_counter() - t0, 3)
    elif step.closed_form is not None:
        out["derivation"] = "instances only"
    if step.notes:
        out["notes"] = list(step.notes)
    if step.beyond is not None:
        out["beyond_stated_condition"] = [_beyond(step, q) for q in step.beyond(quick)]
        out["seconds"] = round(time.perf_counter() - t0, 3)
    return out


def derivation_label(derived: Sequence[dict[str, Any]]) -> str:
    """The entry's ``derivation``: ``"proof for every n"`` when every derived result is one
    (:func:`fedtheory.certify.symmetric.prove`), ``"symbolic"`` when every one holds and some
    is a fit in one parameter (:mod:`~fedtheory.certify.symbolic`), else ``"instances
    only"``; a result that contradicts its closed form holds nowhere."""
    if not derived or any(d.get("closed_form_equal") is False for d in derived):
        return "instances only"
    labels = {d["derivation"] for d in derived}
    if labels == {"proof for every n"}:
        return "proof for every n"
    return "symbolic" if labels <= {"symbolic", "proof for every n"} else "instances only"


def _beyond(step: OneStep, params: dict[str, Any]) -> dict[str, Any]:
    """One instance outside the stated condition: certified like the others, or the
    solver's word that the worst case is unbounded there (not a certificate)."""
    try:
        with warnings.catch_warnings():  # an unbounded PEP's inaccuracy warnings
            warnings.simplefilter("ignore")
            return certify_instance(step, params)
    except Exception as exc:  # noqa: BLE001 - an unbounded PEP is the finding, not an error
        return {"params": _fmt(params), "status": "unbounded (solver status, no certificate)",
                "detail": f"{type(exc).__name__}: {exc}"[:200]}
