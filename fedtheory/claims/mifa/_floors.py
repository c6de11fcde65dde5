"""Claim-side glue of the error-floor claims of family ``mifa`` (error_floor_step,
error_floor_average(.corrected), zero_floor(.corrected)): exact numbers from the stated side,
inequality results and adversarial searches as evidence; and the erratum of the document's two
experiments. Not discovered (``_`` prefix)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import sympy as sp

from fedtheory.certify.lyapunov import RateStep
from fedtheory.certify.rate_models import fedavg_is_average_model
from fedtheory.claimkit.stated import Erratum, exact_like
from fedtheory.claims import Context, Evidence, all_of, checks
from fedtheory.claims.mifa._runs import diverged
from fedtheory.experiments.search import maximize, rationalize
from fedtheory.symbolic.inequality import InequalityResult

__all__ = ["UMIFA_ROW_DIVERGES", "admissible", "average_rate", "average_rate_closed_form",
           "average_rate_grid", "average_rate_model", "average_rate_step", "floor_evidence",
           "inequality_evidence",
           "search_evidence", "short", "stated_c_eta", "sym", "umifa_row_erratum"]

#: The derivation of the misprint: U-MIFA's row as printed at lines 22 and 47.
UMIFA_ROW_DIVERGES = (
    "U-MIFA's memory row as printed (lines 22 and 47), G_t^i = Delta_i/p_i - (1/p_i - 1) "
    "G_{t-1}^i for an active client, gives G_t^i - Delta_i = -(1/p_i - 1)(G_{t-1}^i - "
    "Delta_i): each participation multiplies the client's memory error by -(1/p_i - 1), of "
    "modulus > 1 for every p_i < 1/2, so with Delta_i near its limit the error grows "
    "geometrically (E||error||^2 grows by (1 - p)/p per round, mifa.zero_floor.corrected) "
    "and U-MIFA and U-MIFAm diverge for every p < 1/2, whatever the problem, beta or the "
    "tables' start (two of the document's three panels, p = 0.01 and its stated p = 0.1). The "
    "seed names the method SAGA (lines 115-121, 'SAG, SAGA'; the rate table's 'SAGA/U-MIFA', "
    "lines 189 and 203), whose table stores Delta_i and whose direction is "
    "u_bar + sum_active (w_i/p_i)(Delta_i - u_i) (fedtheory.algorithms.saga, "
    "mifa.saga_equivalence.corrected): the row is misprinted (read: the table keeps Delta_i, "
    "the correction -(1/p_i - 1) u_i enters the direction only). The sentence 'U-MIFAm works "
    "better in practice' (line 55) is not what is wrong: under the SAGA reading it is tested "
    "by the checks saga_reading_p* (per panel, where in the beta range it holds)")


def umifa_row_erratum(under_saga: str, intended_holds: bool | None) -> Erratum:
    """The erratum of mifa.quadratic_experiment and mifa.logistic_experiment: a misprinted
    definition on lines 22 and 47 (not a false empirical sentence), with what the SAGA
    reading found on that set-up (``under_saga``)."""
    return Erratum(
        "typo",
        f"{UMIFA_ROW_DIVERGES}. {under_saga}",
        quote=r"\frac{1}{p_i} \Delta w_t^{(i)} - \left(\frac{1}{p_i} - 1 \right) G_{t-1}^{(i)}",
        location=("000, line 22 (iii, U-MIFA's memory row) and line 47 (v, U-MIFAm's, the "
                  "same row); the sentence it undoes: line 55"),
        intended_holds=intended_holds)


def admissible(ctx: Context, eta: Any, L: Any, tau_max: Any) -> Any:
    r"""Whether a MIFA path satisfies the stated condition
    :math:`1-\eta L-\eta^2L^2\tau_{\max}^2\ge0`, relaxed under the step mutant to
    :math:`\eta \le s\,\eta_{\max}(\tau_{\max})`, i.e. the condition at :math:`\eta/s`
    (elementwise for arrays; exact for Fractions)."""
    from fedtheory.theory.mifa import condition

    s = exact_like(ctx.step_limit(Fraction(1)), eta)
    return condition(eta / s, L, tau_max) >= 0


def short(x: Any, digits: int = 40) -> str:
    """An exact number as its string, or, when that is longer than ``digits`` characters, as
    a 15-digit decimal marked approximate (the check compares the exact values)."""
    text = str(x)
    return text if len(text) <= digits else f"~{float(x):.15g}"


def stated_c_eta(ctx: Context, n: int, p: Any, L: Any) -> tuple[Any, Any]:
    """The stated :math:`c = K(1/p-1)/n` (constant ``c_two`` = K) and the largest stated step
    :math:`s/(L(1+c))` (``ctx.step_limit``), in the arithmetic of ``p`` (exact for
    Fractions)."""
    c = exact_like(ctx.const("c_two"), p) / n * (1 / p - 1)
    return c, exact_like(ctx.step_limit(Fraction(1)), p) / (L * (1 + c))


def sym(x: Fraction) -> sp.Rational:
    """A Fraction as a sympy Rational."""
    return sp.Rational(x.numerator, x.denominator)


def inequality_evidence(res: InequalityResult, *, what: str, slack: sp.Expr,
                        counterexample: Callable[[dict[str, Fraction]], dict[str, Any]],
                        detail: str = "") -> Evidence:
    """Evidence from :func:`~fedtheory.symbolic.inequality.prove_nonnegative` on ``slack`` (the
    stated side minus the exact value): proved (with the proof), violated (with the concrete
    instance that ``counterexample`` builds from the violating point), or searched."""
    text = f"{what}: slack = {slack} >= 0: {res.status} ({res.method}); {detail}".rstrip("; ")
    if res.status == "violated":
        point = {k: Fraction(v) for k, v in res.instance.items()}
        ce = {**counterexample(point), "slack": str(res.value)}
        return Evidence(False, str(res.value), ">= 0", text, counterexample=ce)
    return Evidence(True, str(slack), ">= 0", text, proof=res.proof,
                    data={"smallest_slack": str(res.smallest)})


def search_evidence(ctx: Context, stream: str, bounds: Sequence[tuple[float, float]],
                    ratio_float: Callable[[np.ndarray], float],
                    ratio_exact: Callable[[Any], tuple[Fraction | None, dict[str, Any]]], *,
                    what: str, starts: int = 6, maxiter: int = 100) -> Evidence:
    """An adversarial search for the largest ratio measured/stated over a parametrised family
    (seeded starts from ``ctx.rng(stream)``, L-BFGS-B from each), with an exact re-check of the
    best point found (rationalised with denominators up to 1000, or up to 10^9 where that gives
    a larger exact ratio): the check fails only when the exact ratio exceeds 1.

    ``ratio_exact`` maps the rational point to (exact ratio or None when undefined, the
    instance with its measured and stated values)."""
    with np.errstate(invalid="ignore", over="ignore"):  # undefined ratios count as -inf
        best = maximize(ratio_float, bounds, ctx.rng(stream), starts=starts, maxiter=maxiter)
    # the rationalised point: small denominators, unless finer ones keep a worse ratio (a
    # search may end near an edge of the domain that rounding to 1/1000 crosses)
    checked = [ratio_exact(rationalize(best["x"], md)) for md in (1000, 10**9)]
    ratio, inst = max(checked, key=lambda ri: -np.inf if ri[0] is None else ri[0])
    detail = (f"{what}: {best['evaluations']} evaluations from {starts} seeded starts; best "
              f"float ratio {best['value']:.6g}, exact re-check at the rationalised point: "
              f"{'undefined' if ratio is None else f'{float(ratio):.6g}'}")
    if ratio is None:
        return Evidence(True, None, "<= 1", detail + " (0/0: nothing to bound)",
                        data={"instance": inst})
    ok = ratio <= 1
    # the statement's side at the instance checked (what a mutant changes), beside the ratio
    stated = {"ratio": "<= 1", "stated at the instance": inst.get("stated", inst.get("rhs"))}
    return Evidence(ok, float(ratio), stated, detail, counterexample=None if ok else inst,
                    ratio=float(ratio), instance=inst)


def floor_evidence(out: dict[str, Any], ce: dict[str, Any]) -> Evidence:
    r"""'FedAvg-IS keeps a floor, MIFA and U-MIFA do not' on the runs ``out`` of
    :func:`~fedtheory.claims.mifa._runs.floor_comparison`, combined by
    :func:`~fedtheory.claims.all_of` (each test at the default level, the level of the whole
    their sum): FedAvg-IS :math:`\mathbb E\|\nabla f(w_T)\|^2 \ge F/2` (one-sided), MIFA and
    U-MIFA :math:`\le F/100` (one-sided), :math:`F` the exact stationary FedAvg-IS floor. A rule
    whose runs overflow has no zero floor: those runs are the counterexample (``ce`` describes
    the set-up)."""
    F = out["floor"]
    final = {k: out[k][-1] for k in ("fedavg_is", "mifa", "umifa")}
    parts = [("FedAvg-IS keeps a floor", checks.check_lower_bound(
        final["fedavg_is"], F / 2, what="FedAvg-IS E||∇f(w_T)||^2 >= F/2", counterexample=ce))]
    for k, name in (("mifa", "MIFA"), ("umifa", "U-MIFA")):
        v = final[k]
        if diverged(v):
            bad = int(np.sum(~np.isfinite(v) | (v > 1e100)))
            parts.append((f"{name} has no floor", Evidence(
                False, "diverged", f"<= F/100 = {F / 100:.4g}",
                f"{name}: diverged ({bad}/{v.size} runs overflow by round {out['T']})",
                counterexample={**ce, "rule": name, "runs_overflowed": bad,
                                "replicas": int(v.size)})))
            continue
        parts.append((f"{name} has no floor", checks.check_upper_bound(
            v, F / 100, what=f"{name} E||∇f(w_T)||^2 <= F/100", counterexample={
                **ce, "rule": name})))
    ev = all_of(parts)
    ev.detail = f"p = {out['p']}, η = {out['eta']}, T = {out['T']}, F = {F:.4g}: " + ev.detail
    return ev


# ------------------------------------------------------- the averaged floors' rate certificates


def average_rate_step(params: dict[str, Any]) -> tuple[int, Fraction, Fraction, Fraction]:
    """FedAvg-IS rounds of mifa.error_floor_average(.corrected)'s rate certificates at
    ``params`` (n, p, θ): ``(n, L, c, η)`` with L = 1, c = (2/n)(1/p - 1) and
    η = θ/(L(1 + c)).

    >>> average_rate_step({"n": 2, "p": Fraction(1, 2), "theta": Fraction(1)})
    (2, Fraction(1, 1), Fraction(1, 1), Fraction(1, 2))
    """
    n, p_, theta, L_ = params["n"], params["p"], params["theta"], Fraction(1)
    c = Fraction(2, n) * (1 / p_ - 1)
    return n, L_, c, theta / (L_ * (1 + c))


def average_rate_grid(quick: bool) -> list[dict[str, Any]]:
    """The instances (n, p, θ) both averaged-floor claims certify (the full preset adds one)."""
    grid = [{"n": 2, "p": Fraction(1, 4), "theta": Fraction(1)},
            {"n": 3, "p": Fraction(1, 2), "theta": Fraction(1)}]
    return grid if quick else [*grid, {"n": 2, "p": Fraction(1, 2), "theta": Fraction(1, 2)}]


def average_rate_closed_form(params: dict[str, Any]) -> dict[str, Any]:
    """The best potential and floor: v = 1/(η(1 - θ'/2)), c = ηLc/(4(1 - θ'/2)) σ_G^2 with
    θ' = ηL(1 + c/2) (the exact one-step worst case of mifa.error_floor_step telescoped)."""
    _, _, c, eta_ = average_rate_step(params)
    t2 = eta_ * (1 + c / 2)
    return {"potential": [1 / (eta_ * (1 - t2 / 2))], "constant": eta_ * c / (4 * (1 - t2 / 2))}


def average_rate_model(claim: Any, params: dict[str, Any],
                       constant: Callable[[dict[str, Any], Fraction, Fraction, Fraction], Any]
                       ) -> Any:
    """The certificate model of an averaged-floor claim at ``params``: FedAvg-IS rounds
    (:func:`average_rate_step`), potential v (f(w) - f*) with the stated v = two/η and the
    stated floor ``constant(constants, η, L, c)`` (``claim``'s stated constants, so a mutant
    changes it)."""
    assert claim.stated is not None
    st = claim.stated.constants
    n, L_, c, eta_ = average_rate_step(params)
    return fedavg_is_average_model(n, params["p"], eta_, L_, stated={
        "potential": [Fraction(st["two"]) / eta_], "constant": constant(st, eta_, L_, c)})


def average_rate(build: Callable[[dict[str, Any]], Any], stated_floor: str,
                 note: str) -> RateStep:
    """The rate certificate of an averaged-floor claim (``verify --certify``): ``build`` (the
    claim's :func:`average_rate_model`), its stated floor in words and the note on what the
    certificate shows."""
    return RateStep(
        description=("FedAvg-IS rounds, exact client gradients, independent Bernoulli(p) "
                     "participation (all 2^n patterns), f L-smooth (L = 1), heterogeneity "
                     "||∇f_i(w_t) - ∇f(w_t)||^2 <= σ_G^2 = 1 at every round's point, "
                     "η = θ/(L(1+c)); potential v (f(w) - f*) with E V_{t+1} <= V_t - "
                     "||∇f(w_t)||^2 + c_floor, so (1/T)Σ E||∇f(w_t)||^2 <= v (f(w_0) - f*)/T "
                     f"+ c_floor; stated: v = 2/η, c_floor = {stated_floor}"),
        build=build,
        grid=average_rate_grid,
        closed_form=average_rate_closed_form,
        closed_form_text=("best potential v = 1/(η(1 - θ'/2)) and floor ηLc/(4(1 - θ'/2)) "
                          "σ_G^2, θ' = ηL(1 + c/2); at the stated v = 2/η the certified floor "
                          "is ηLc/2 σ_G^2 (at_stated_potential)"),
        notes=(note,),
    )
