r"""Seed 002, Theorems 13, 15, 17 and 18 on exact instances: catalogues, search, proof checks.

Where :mod:`fedtheory.experiments.ocs_theorems` estimates a theorem's one-step conditional
expectation by Monte Carlo from a fixed iterate, this module evaluates it exactly: on the
one-dimensional rational instances of :mod:`fedtheory.theory.ocs_exact` (every participation
pattern enumerated), in catalogues of named cases (the counterexamples CE13 and CE17 and the
cases where a bound is attained), by a seeded adversarial search over instance parameters whose
best point is re-checked in exact arithmetic, and by the symbolic proof checks of the corrected
theorems. :func:`register_exact_checks` adds these checks to a theorem's claim.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory.claims.core import Context, Evidence
from fedtheory.experiments.ocs_theorems import INCREMENT_TEXT
from fedtheory.experiments.search import rationalize
from fedtheory.theory.ocs_exact import LineInstance, dsgd_exact, fedavg_exact
from fedtheory.theory.ocs_theorems import (
    DsgdTheorem,
    FedavgTheorem,
)

__all__ = [
    "CE13_CASE",
    "CE13_NOISY_CASE",
    "CE17_CASE",
    "CE17_FAMILY",
    "DSGD_CONVEX_SEARCH",
    "DSGD_CORRECTED_CASES",
    "DSGD_NONCONVEX_CASES",
    "DSGD_NONCONVEX_SEARCH",
    "DSGD_UNIFORM_TIGHT_CASES",
    "ExactCase",
    "FEDAVG_CONVEX_CASES",
    "FEDAVG_CONVEX_SEARCH",
    "FEDAVG_NONCONVEX_CASES",
    "FEDAVG_NONCONVEX_SEARCH",
    "SearchFamily",
    "adversarial_search",
    "evaluate_case",
    "exact_check",
    "proof_check",
    "register_exact_checks",
    "search_budget",
]


@dataclass(frozen=True)
class ExactCase:
    r"""A named one-dimensional instance evaluated exactly (:mod:`fedtheory.theory.ocs_exact`):
    DSGD when ``R`` is None, else FedAvg with ``R`` local steps; the step is ``theta`` times the
    theorem's largest (any ``theta > 0`` for Theorem 15), :math:`\eta_g` ``g_scale`` times its
    smallest."""

    name: str
    instance: LineInstance
    R: int | None = None
    theta: Fraction = Fraction(1)
    g_scale: Fraction = Fraction(1)

    def describe(self) -> dict[str, Any]:
        out = {"case": self.name, **self.instance.describe(), "theta": str(self.theta)}
        if self.R is not None:
            out.update(R=self.R, g_scale=str(self.g_scale))
        return out


def evaluate_case(theorem: DsgdTheorem | FedavgTheorem, case: ExactCase,
                  exact: bool = True) -> dict[str, Any]:
    """The theorem on one case (:func:`~fedtheory.theory.ocs_exact.dsgd_exact` or
    :func:`~fedtheory.theory.ocs_exact.fedavg_exact`)."""
    theta = case.theta if exact else float(case.theta)
    if case.R is None:
        if not isinstance(theorem, DsgdTheorem):
            raise ValueError(f"case {case.name!r} is a DSGD case, got {theorem.label}")
        return dsgd_exact(theorem, case.instance, theta, exact)
    if not isinstance(theorem, FedavgTheorem):
        raise ValueError(f"case {case.name!r} is a FedAvg case, got {theorem.label}")
    g = case.g_scale if exact else float(case.g_scale)
    return fedavg_exact(theorem, case.instance, case.R, theta, g, exact)


def _exact_strings(out: dict[str, Any]) -> dict[str, Any]:
    return {k: (str(v) if isinstance(v, Fraction) else v) for k, v in out.items()}


def exact_check(ctx: Context, theorem: DsgdTheorem | FedavgTheorem,
                cases: Sequence[ExactCase]) -> Evidence:
    r"""The theorem as the claim states it (:meth:`DsgdTheorem.restated`: under ``--power`` a
    mutant of it) on named instances, in exact rational arithmetic: it fails on the first case
    where the bounded quantity exceeds the right-hand side; ``ratio`` is the largest
    (lhs - rhs + increment)/increment (1 = the bound attained)."""
    thm = theorem.restated(ctx)
    rows, failing, best, stated = [], [], None, {}
    for case in cases:
        out = evaluate_case(thm, case)
        ratio = out["ratio"]
        stated[case.name] = str(out["rhs"])
        rows.append(f"{case.name}: {thm.bounds.label} = {float(out['lhs']):.6g} vs "
                    f"{float(out['rhs']):.6g} (ratio {float(ratio):.4f}, gamma = "
                    f"{float(out['gamma']):.4g})")
        if out.get("ok", True) and (best is None or ratio > best[0]):
            best = (ratio, case, out)
        if not out["holds"]:
            failing.append((case, out))
    ce = None
    if failing:
        case, out = failing[0]
        ce = {**case.describe(), "theorem": thm.label, "lhs": str(out["lhs"]),
              "rhs": str(out["rhs"]), "lhs_float": float(out["lhs"]),
              "rhs_float": float(out["rhs"]), "gamma": str(out["gamma"]),
              "eta": str(out["eta"]), "constants": {k: str(v) for k, v in thm.constants.items()}}
    ratio, case, out = best if best is not None else (None, None, {})
    return Evidence(
        passed=not failing, measured=None if ratio is None else float(ratio),
        # the statement's right-hand side on every case (what a mutant changes), beside the
        # ratio it must not exceed
        theoretical={"ratio": "<= 1", "stated rhs": stated},
        detail=(f"{thm.label}, exact rational arithmetic (every noise sign pattern and the "
                f"sampling's closed-form moments enumerated, gamma exact), {len(cases)} cases: "
                + "; ".join(rows) + f". Ratio = (lhs - rhs + increment)/increment, the increment "
                f"being {INCREMENT_TEXT}"),
        counterexample=ce, ratio=None if ratio is None else float(ratio),
        instance=None if case is None else {**case.describe(), **_exact_strings(
            {k: out[k] for k in ("lhs", "rhs", "gamma", "eta")})},
        data={"cases": [c.name for c in cases]},
    )


# ----------------------------------------------------------------------------- the search
@dataclass(frozen=True)
class SearchFamily:
    r"""The one-dimensional instances an adversarial search may visit.

    ``curvature``: ``"convex"`` (:math:`a_i \in [1/20, 1]`, every :math:`f_i` strongly convex)
    or ``"identical"`` (:math:`a_i = \pm 1`, finite :math:`\rho`, convex or concave); ``ns``
    the client counts; ``Rs`` the local steps (empty: DSGD); ``theta_max`` the largest
    multiple of the theorem's step (1 with a step condition; Theorem 15 allows any step).
    """

    curvature: str
    ns: tuple[int, ...] = (2, 3, 4)
    Rs: tuple[int, ...] = ()
    theta_max: float = 1.0
    full_m: bool = False  # allow m = n (full participation, gamma = 1)

    def __post_init__(self) -> None:
        if self.curvature not in ("convex", "identical"):
            raise ValueError(f"curvature must be 'convex' or 'identical', got {self.curvature!r}")


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -40.0, 40.0)))


def _decode(vec: np.ndarray, n: int, m: int, R: int | None, noise: str, sign: int,
            family: SearchFamily) -> ExactCase:
    """A search vector as an admissible exact case (rationals with small denominators)."""
    z = np.exp(vec[:n] - vec[:n].max())
    w = [max(Fraction(1, 500), rationalize(v, 500)) for v in z / z.sum()]
    w[int(np.argmax(z))] += 1 - sum(w)
    if family.curvature == "convex":
        a = [rationalize(0.05 + 0.95 * _sigmoid(v), 100) for v in vec[n:2 * n]]
    else:
        a = [Fraction(sign)] * n
    c = [rationalize(2 * np.tanh(v), 100) for v in vec[2 * n:3 * n]]
    rest = vec[3 * n:]
    abar = sum(wi * ai for wi, ai in zip(w, a, strict=True))
    xs = sum(wi * ai * ci for wi, ai, ci in zip(w, a, c, strict=True)) / abar
    x = xs + rationalize(float(np.clip(np.sinh(rest[0]), -30, 30)), 1000)
    root = rationalize(1.5 * _sigmoid(rest[1]), 100)
    M, s2 = (root**2, Fraction(0)) if noise == "relative" else \
        (Fraction(0), root**2) if noise == "additive" else (Fraction(0), Fraction(0))
    theta = min(Fraction(family.theta_max).limit_denominator(100),
                max(Fraction(1, 1000), rationalize(family.theta_max * _sigmoid(rest[2]), 1000)))
    g_scale = 1 + rationalize(2 * _sigmoid(rest[3]), 100) if R is not None else Fraction(1)
    inst = LineInstance(w, a, c, x, m, M, s2)
    return ExactCase(f"search n={n} m={m}" + (f" R={R}" if R else "") + f" noise={noise}",
                     inst, R, theta, g_scale)


def _float_ratio(theorem: DsgdTheorem | FedavgTheorem, case: ExactCase) -> float:
    """The float ratio of a case (-inf where it certifies nothing or rounding dominates)."""
    out = evaluate_case(theorem, case, exact=False)
    inc, lhs = out["increment"], out["lhs"]
    if not out.get("ok", True) or not inc > 1e-9 * max(1.0, abs(lhs), abs(out["rhs"] - inc)):
        return -np.inf
    return float(out["ratio"])


def adversarial_search(ctx: Context, theorem: DsgdTheorem | FedavgTheorem,
                       family: SearchFamily, budget: tuple[int, int]) -> Evidence:
    r"""Seeded hill climbing for the instance that makes the stated bound tightest.

    ``budget = (restarts, steps)`` per preset's choice. Each restart draws a client count, a
    budget :math:`m`, the local steps, a noise kind (none, relative :math:`M`, additive
    :math:`\sigma^2`; FedAvg with :math:`nR > 6` noise-free, to keep the :math:`2^{nR}` noise
    patterns few) and, for identical curvatures, their sign; then climbs the float ratio
    (lhs - rhs + increment)/increment over the weights, curvatures, centres, iterate, noise
    level, step multiple and :math:`\eta_g` multiple (Gaussian proposals, step halved after
    misses). The best instance found is re-checked in exact rational arithmetic, which alone
    decides: a ratio above 1 there is a counterexample.
    """
    thm = theorem.restated(ctx)
    rng = ctx.rng("adversarial-search/" + theorem.name)
    restarts, steps = budget
    best: tuple[float, ExactCase] | None = None
    evaluations = 0
    for _ in range(restarts):
        n = int(rng.choice(family.ns))
        m = int(rng.integers(1, n + 1 if family.full_m else n))
        R = int(rng.choice(family.Rs)) if family.Rs else None
        noise = str(rng.choice(["none", "relative", "additive"]))
        if R is not None and n * R > 6:  # at most 2^6 noisy local paths per evaluation
            noise = "none"
        sign = int(rng.choice([1, -1])) if family.curvature == "identical" else 1
        vec = rng.standard_normal(3 * n + 4)
        vec[3 * n + 2] = 3.0  # start at the largest step
        case = _decode(vec, n, m, R, noise, sign, family)
        cur = _float_ratio(thm, case)
        evaluations += 1
        scale = 1.0
        for _ in range(steps):
            prop = vec + scale * rng.standard_normal(vec.shape)
            cand = _decode(prop, n, m, R, noise, sign, family)
            val = _float_ratio(thm, cand)
            evaluations += 1
            if val > cur:
                vec, cur, case = prop, val, cand
            else:
                scale = max(0.05, scale * 0.8)
        if np.isfinite(cur) and (best is None or cur > best[0]):
            best = (cur, case)
    if best is None:
        return Evidence(None, None, "<= 1", f"{thm.label}: no admissible instance found in "
                        f"{evaluations} evaluations")
    out = evaluate_case(thm, best[1])
    ratio = out["ratio"]
    ce = None
    if not out["holds"]:
        ce = {**best[1].describe(), "theorem": thm.label, "lhs": str(out["lhs"]),
              "rhs": str(out["rhs"]), "lhs_float": float(out["lhs"]),
              "rhs_float": float(out["rhs"]), "gamma": str(out["gamma"]),
              "eta": str(out["eta"]), "constants": {k: str(v) for k, v in thm.constants.items()}}
    return Evidence(
        passed=bool(out["holds"]), measured=float(ratio),
        theoretical={"ratio": "<= 1", "stated rhs at the instance": str(out["rhs"])},
        detail=(f"{thm.label}: adversarial search, {restarts} seeded hill-climbing restarts, "
                f"{evaluations} float evaluations over one-dimensional instances "
                f"({family.curvature} curvatures, n in {list(family.ns)}"
                + (f", R in {list(family.Rs)}" if family.Rs else "")
                + f"); the best (float ratio {best[0]:.6f}) re-checked exactly: ratio "
                f"{float(ratio):.6f} ({'holds' if out['holds'] else 'VIOLATED'}); ratio = "
                f"(lhs - rhs + increment)/increment, the increment being {INCREMENT_TEXT}"),
        counterexample=ce, ratio=float(ratio),
        instance={**best[1].describe(), **_exact_strings(
            {k: out[k] for k in ("lhs", "rhs", "gamma", "eta")})},
        search=None if ce else (
            f"{thm.label}: {restarts} hill-climbing restarts, {evaluations} evaluations over "
            f"one-dimensional {family.curvature}-curvature instances (n in {list(family.ns)}"
            + (f", R in {list(family.Rs)}" if family.Rs else "")
            + f"), the best re-checked exactly: largest ratio {float(ratio):.4f} < 1"),
    )


# ----------------------------------------------------------------------------- the catalogue
_F = Fraction


def search_budget(ctx: Context, method: str) -> tuple[int, int]:
    """``(restarts, steps)`` of :func:`adversarial_search` for ``"dsgd"`` or ``"fedavg"``."""
    quick = {"dsgd": (6, 25), "fedavg": (40, 40)}
    full = {"dsgd": (30, 60), "fedavg": (300, 80)}
    return ctx.size(quick, full)[method]


def _line_case(name: str, weights: Sequence[Any], curvatures: Sequence[Any],
               centers: Sequence[Any], x: Any, m: int, M: Any = 0, sigma2: Any = 0,
               R: int | None = None, theta: Any = 1) -> ExactCase:
    return ExactCase(name, LineInstance(weights, curvatures, centers, x, m, M, sigma2), R,
                     _F(theta))


_U4 = [_F(1, 4)] * 4
_C4 = [-1, 0, 0, 1]
_SKEW4 = [_F(7, 10), _F(1, 10), _F(1, 10), _F(1, 10)]

#: Theorem 13's counterexample (two clients, weights (3/4, 1/4), x^k = 1/2, exact gradients).
CE13_CASE = _line_case("CE13: w = (3/4, 1/4), c = (0, 1), x^k = 1/2, m = 1, exact gradients",
                       [_F(3, 4), _F(1, 4)], [1, 1], [0, 1], _F(1, 2), 1)

#: Where (20) is attained (w = 1/n at x*: exact gradients, or noise that dominates).
DSGD_UNIFORM_TIGHT_CASES = [
    _line_case("n=2 uniform at x*, exact gradients", [_F(1, 2)] * 2, [1, 1], [0, 1], _F(1, 2),
               1),
    _line_case("n=4 uniform at x*, additive noise sigma^2 = 100", _U4, [1] * 4, _C4, 0, 1,
               sigma2=100),
    _line_case("n=4 uniform at x*, relative noise M = 1/4", _U4, [1] * 4, _C4, 0, 1, M=_F(1, 4)),
]

#: Theorem 13 fails far more with relative noise: one heavy client (w = 97/100), M = 1.
CE13_NOISY_CASE = _line_case("w = (97/100, 3/100), c = (-5/3, 8/5), x^k = 0, m = 1, relative "
                             "noise M = 1", [_F(97, 100), _F(3, 100)], [1, 1],
                             [_F(-5, 3), _F(8, 5)], 0, 1, M=1)

#: The corrected (20): its tightest cases and far iterates with m > n/2 (where a step
#: above the stated limit breaks the contraction).
DSGD_CORRECTED_CASES = [
    *DSGD_UNIFORM_TIGHT_CASES,
    _line_case("n=4 uniform, m=3, x^k = x* + 10, exact gradients", _U4, [1] * 4, _C4, 10, 3),
    _line_case("skewed w = (7/10, 1/10, 1/10, 1/10) near x*, exact gradients", _SKEW4,
               [1, _F(1, 2), 1, _F(1, 4)], [0, 1, -1, 2], _F(1, 10), 1),
    CE13_NOISY_CASE,
]

#: Theorem 15: attained at x* (A_i = L I, w = 1/n) and, with full participation and exact
#: gradients, at every x^k and step; full participation with relative noise away from x*.
DSGD_NONCONVEX_CASES = [
    _line_case("A_i = L I, w = 1/n, at x*, relative noise M = 1/4", _U4, [1] * 4, _C4, 0, 2,
               M=_F(1, 4)),
    _line_case("A_i = L I, w = 1/n, at x*, additive noise sigma^2 = 1/4", _U4, [1] * 4, _C4, 0, 2,
               sigma2=_F(1, 4)),
    _line_case("m = n, exact gradients, x^k = x* + 5", _U4, [1] * 4, _C4, 5, 4),
    _line_case("m = n, exact gradients, x^k = x* + 5, twice the step", _U4, [1] * 4, _C4, 5, 4,
               theta=2),
    _line_case("m = n, relative noise M = 1/4, x^k = x* + 5", _U4, [1] * 4, _C4, 5, 4,
               M=_F(1, 4)),
    _line_case("concave (A_i = -L I) near the stationary point, M = 1/4", _U4, [-1] * 4, _C4,
               _F(1, 10), 2, M=_F(1, 4)),
]

#: Theorem 17's counterexample (eight clients, m = 1, R = 2, at x*).
CE17_CASE = _line_case("CE17: n=8, w = 1/8, c = +1, -1, ..., m = 1, R = 2, x^k = x*, exact "
                       "gradients", [_F(1, 8)] * 8, [1] * 8, [1, -1] * 4, 0, 1, R=2)

#: The family of CE17 with more clients (the missing 1/gamma grows with n).
CE17_FAMILY = [CE17_CASE] + [
    _line_case(f"CE17 family: n={n}, w = 1/n, m = 1, R = 2, x^k = x*, exact gradients",
               [_F(1, n)] * n, [1] * n, [1, -1] * (n // 2), 0, 1, R=2) for n in (12, 16)]

#: The corrected (27): near x* (its Z and sigma^2 terms), uniform and skewed weights.
FEDAVG_CONVEX_CASES = [
    _line_case("n=4 uniform, m=1, R=2, at x*, exact gradients", _U4, [1] * 4, [1, -1, 1, -1],
               0, 1, R=2),
    _line_case("n=4 uniform, m=1, R=2, at x*, additive noise sigma^2 = 1/4", _U4, [1] * 4,
               [1, -1, 1, -1], 0, 1, sigma2=_F(1, 4), R=2),
    _line_case("skewed w = (7/10, 1/10, 1/10, 1/10), m=1, R=2, near x*", _SKEW4,
               [1, _F(1, 2), 1, _F(1, 4)], [0, 1, -1, 2], _F(1, 10), 1, R=2),
]

#: Theorem 18: at x* (A_i = L I), W/gamma > 1 (W = 7/10, equal updates w_i|U_i|, m = 1:
#: gamma = 1/4), and near the stationary point of a concave f.
FEDAVG_NONCONVEX_CASES = [
    _line_case("A_i = L I, w = 1/n, at x*, additive noise sigma^2 = 1/4, R=2", _U4, [1] * 4, _C4,
               0, 1, sigma2=_F(1, 4), R=2),
    _line_case("W/gamma = 2.8: w = (7/10, 1/10, 1/10, 1/10), equal w_i|grad f_i|, m=1, R=2",
               _SKEW4, [1] * 4, [_F(-1, 7), 1, -1, 1], 0, 1, R=2),
    _line_case("concave (A_i = -L I) near the stationary point, exact gradients, R=2", _U4,
               [-1] * 4, _C4, _F(1, 10), 1, R=2),
]

#: The adversarial searches' instance families.
DSGD_CONVEX_SEARCH = SearchFamily("convex", (2, 3, 4))
DSGD_NONCONVEX_SEARCH = SearchFamily("identical", (2, 3, 4), theta_max=3.0, full_m=True)
FEDAVG_CONVEX_SEARCH = SearchFamily("convex", (2, 3), Rs=(2, 3))
FEDAVG_NONCONVEX_SEARCH = SearchFamily("identical", (2, 3), Rs=(2, 3), full_m=True)


# ----------------------------------------------------------------------------- claim checks
def proof_check(ctx: Context, theorem: DsgdTheorem | FedavgTheorem,
                prove: Callable[..., Any], chain: str) -> Evidence:
    r"""A theorem's bound proved as an inequality from its proof's lemmas, with the constants,
    factors and step limit *as the claim states them* (a mutant under ``--power``).

    ``prove(constants, [step_scale=...], [factor=...])`` returns an object with ``proved``,
    ``proof`` and ``summary`` (:mod:`fedtheory.symbolic.ocs_dsgd_proofs`,
    :mod:`fedtheory.symbolic.ocs_fedavg_proofs`). Passed with the proof when proved;
    *unproven* (:meth:`Evidence.unproven`) otherwise: a point where the abstract chain fails is
    no instance of the theorem, so this check never refutes.
    """
    consts = {k: ctx.const(k) for k in theorem.constants}
    kw: dict[str, Any] = {}
    if theorem.step is not None:
        kw["step_scale"] = ctx.step_limit(Fraction(1))
    if theorem.factors:
        kw["factor"] = ctx.factor
    res = prove(consts, **kw)
    steps = (f"steps up to {kw['step_scale']} x the stated limit" if "step_scale" in kw
             else "every step")
    detail = (f"{theorem.label}, {chain}; constants "
              f"{ {k: str(v) for k, v in consts.items()} }, {steps}: {res.summary}. A "
              "statement the chain does not prove is left undecided by this check (no "
              "abstract point is an instance of the theorem)")
    if not res.proved:
        return Evidence.unproven("not proved", "slack >= 0", detail)
    return Evidence(passed=True, measured="proved", theoretical="slack >= 0", detail=detail,
                    proof=res.proof)


def register_exact_checks(claim: Any, theorem: DsgdTheorem | FedavgTheorem,
                          cases: Sequence[ExactCase], family: SearchFamily, method: str) -> None:
    """Add a theorem claim's checks ``exact_instances`` (:func:`exact_check` on ``cases``)
    and ``adversarial_search`` (:func:`adversarial_search` over ``family``, budget
    :func:`search_budget` of ``method``)."""

    def _exact_instances(ctx: Context) -> Evidence:
        """Exact rational evaluation on named one-dimensional instances (the tightest the
        statement admits, and its counterexamples)."""
        return exact_check(ctx, theorem, cases)

    def _adversarial_search(ctx: Context) -> Evidence:
        """Seeded hill climbing over one-dimensional instances for the largest ratio, the best
        re-checked exactly."""
        return adversarial_search(ctx, theorem, family, search_budget(ctx, method))

    claim.check("exact", "exact_instances")(_exact_instances)
    claim.check("exact", "adversarial_search")(_adversarial_search)
