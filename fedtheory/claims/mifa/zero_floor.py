"""``mifa.zero_floor`` (seed 000, 'Zero error floor for MIFA'): MIFA, exact gradients:
E[(1/(T-1))Σ_{t=1}^{T-1}||∇f(w_t)||^2] <= 2(f(w_1)-f*)/(ηT-1) if 1 - ηL - η²L²τ_max² >= 0;
FedAvg-IS keeps a floor, MIFA and U-MIFA do not.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from fedtheory.claimkit.stated import Erratum, Stated, exact_like
from fedtheory.claims import Claim, ClaimKind, Context, Evidence, Figure
from fedtheory.claims.mifa._runs import floor_comparison, mifa_long_runs
from fedtheory.symbolic.error_floor import derive_zero_floor_sum, zero_floor_t2_inequality
from fedtheory.symbolic.inequality import prove_nonnegative
from fedtheory.symbolic.mifa_symbols import L, eta
from fedtheory.theory.mifa import ZF_TINY, condition, exact_mifa_paths

from ._common import pathwise_upper_bound
from ._floors import admissible, floor_evidence, inequality_evidence, sym

CLAIM = Claim(
    id="mifa.zero_floor", family="mifa", seed_ref="000, 'Zero error floor for MIFA'",
    title=("MIFA, exact gradients: E[(1/(T-1))Σ_{t=1}^{T-1}||∇f(w_t)||^2] <= 2(f(w_1)-f*)/(ηT-1) "
           "if 1 - ηL - η²L²τ_max² >= 0; FedAvg-IS keeps a floor, MIFA and U-MIFA do not"),
    statement=(r"\mathbb E\Big[\frac1{T-1}\sum_{t=1}^{T-1}\|\nabla f(w_t)\|^2\Big]\le"
               r"\frac{2(f(w_1)-f^\star)}{\eta T-1}\ \text{ if }\ 1-\eta L-\eta^2L^2"
               r"\tau_{\max}^2\ge0;\ \text{FedAvg-IS keeps an error floor, MIFA and U-MIFA"
               r" do not}"),
    kind=ClaimKind.UPPER_BOUND,
    contract=(
        "MIFA with exact gradients: E[(1/(T−1)) Σ_{t=1}^{T−1} ‖∇f(w_t)‖²] ≤ 2(f(w_1) − f*)/(ηT − "
        "1) as printed, under 1 − ηL − η²L²τ_max² ≥ 0 (τ = staleness); and, qualitatively, "
        "FedAvg-IS keeps an error floor that MIFA and U-MIFA do not."
    ),
    expected="refuted",
    # the 2 of 2(f(w_1) - f*) and the condition on the step (and the realised staleness)
    stated=Stated({"two": 2}, step="1 - eta L - eta^2 L^2 tau_max^2 >= 0"),
    erratum=Erratum(
        "typo",
        "'Zero error floor for MIFA', the final bound: the denominator eta T - 1 is a typo for "
        "eta (T - 1) (dividing (eta/2) sum_{t=1}^{T-1} ||grad f(w_t)||^2 <= f(w_1) - f* by "
        "T - 1); as printed the right side is negative for T < 1/eta, where the bound fails "
        "on every path with a non-stationary iterate (exact: T = 2). The fixed statement, "
        "from t = 1, holds on every instance tested (mifa.zero_floor.corrected; the document's "
        "proof of it has a gap, its windows reaching round 0). Separately, the qualitative "
        "'U-MIFA has no error floor' is false for p < 1/2",
        quote=(r"\mathbb{E} \left[\frac{1}{T-1} \sum_{t=1}^{T-1} \|\nabla f(w_t)\|^2 \right] "
               r"\leq \frac{2(f(w_1) - f^*)}{\eta T - 1}"),
        location="000, section 'ii) Zero error floor for MIFA', the display after 'We get,'",
        intended_holds=True),
    finding=(
        'The printed denominator eta T - 1 is negative for T < 1/eta, where the bound fails on '
        'every path with a non-stationary iterate; summing from t = 0 gives the bound with eta (T'
        ' - 1) (mifa.zero_floor.corrected).'
    ),
    restatement=(
        "Under Bernoulli(p) participation tau_max is unbounded: the condition 1 - eta L - "
        "eta^2 L^2 tau_max^2 >= 0 is read on the realised tau_max of each path, so the "
        "bound is tested on every path where the condition holds (the document's derivation "
        "is pathwise) and in conditional expectation on that event; the memory is filled "
        "by every client at round 0. The qualitative part ('FedAvg-IS keeps an error "
        "floor, MIFA and U-MIFA do not') is read as: E||grad f(w_T)||^2 >= F/2 for "
        "FedAvg-IS and <= F/100 for MIFA and U-MIFA at the document's p = 0.1, eta = 0.02, F "
        "the exact stationary FedAvg-IS floor."
    ),
    derivation=(
        r"Tested as printed. Readings: (a) memory initialised by every client at round 0 "
        r"($G_0^{(i)} = \nabla f_i(w_0)$); the document's sum starts at $t = 1$ and uses $f(w_1)$, "
        r"so round 0 is the initialisation round; $\tau(t,i)$ = $t$ minus the last round "
        r"$\le t$ in which $i$ took part (round 0 counts). (b) Under $\mathrm{Bernoulli}(p)$ "
        r"participation $\tau_{\max}$ is unbounded: it is the realised max over $t \le T-1$ and "
        r"$i$ of one run, so the condition is an event; the document's derivation is pathwise "
        r"(every step holds for each participation sequence), so the statement is tested on "
        r"each path and in conditional expectation on the event. (c) Dividing "
        r"$\frac\eta2\sum_{t=1}^{T-1}\|\nabla f(w_t)\|^2 \le f(w_1) - f^\star$ by $T - 1$ gives "
        r"$\frac{2(f(w_1)-f^\star)}{\eta(T-1)}$, not $/(\eta T - 1)$: the printed right side is "
        r"negative for $T < 1/\eta$ (the document's $\eta = 0.02$: $T < 50$), where the statement "
        r"fails on every path with a non-stationary iterate; for $T > 1/\eta$ it is weaker "
        r"than $\eta(T-1)$ ($\eta < 1$). (d) The window: "
        r"$w_t - w_{t-\tau} = -\eta\sum_{j=t-\tau}^{t-1}G_j$ ($\tau$ terms); the seed sums to "
        r"$t$ ($\tau+1$ terms) yet counts $\tau_{\max}^2$, and its windows reach $j \le 0$, "
        r"rounds the descent term $\sum_{t\ge1}\|G_t\|^2$ does not cover. Summing from $t = 0$ "
        r"fixes both (see mifa.zero_floor.corrected). (e) Qualitatively: FedAvg-IS keeps a "
        r"floor, MIFA does not; U-MIFA as printed multiplies a client's memory error by "
        r"$-(1/p - 1)$ each time it takes part, so $\mathbb E\|\text{error}\|^2$ grows like "
        r"$\big(\frac{1-p}p\big)^t$ and U-MIFA diverges for $p < 1/2$ (the document's $p = 0.1$). "
        r"Floor criteria at horizon $T$: 'keeps a floor' = $\mathbb E\|\nabla f(w_T)\|^2 \ge$ "
        r"half the exact stationary FedAvg-IS floor $F$; 'no floor' = "
        r"$\mathbb E\|\nabla f(w_T)\|^2 \le F/100$."),
)


@CLAIM.check("symbolic")
def _zero_floor_symbolic(ctx: Context) -> Evidence:
    """The printed bound as an inequality at T = 2 (two clients f_i = (L/2)(w ∓ 1)^2, any
    path): printed - exact >= 0 searched over η, L with the stated condition (exact
    rationals); the derivation's denominator and windows in the detail."""
    d = derive_zero_floor_sum()
    seed_w = d["windows"]["seed"]
    s = sym(ctx.step_limit(Fraction(1)))
    t2 = zero_floor_t2_inequality(sym(ctx.const("two")))
    # the path where both clients take part at round 1 has tau_max = 0: condition eta L <= s
    res = prove_nonnegative(t2["slack"], {eta: (0, 1), L: (0, 1)}, conditions=[eta * L <= s])

    def instance(pt: dict[str, Fraction]) -> dict[str, Any]:
        e, l_ = pt[str(eta)], pt[str(L)]
        at = {eta: e, L: l_}
        return {"n": 2, "f_i": "(L/2)(w - c_i)^2, c = (1, -1)", "L": str(l_),
                "eta": str(e), "T": 2, "w0": str(1 / (1 - e * l_)), "w1 - w*": 1,
                "path": "both clients at round 1 (tau_max = 0)", "p": "any",
                "lhs": str(t2["lhs"].subs(at)), "rhs": str(t2["rhs"].subs(at))}

    return inequality_evidence(
        res, what="printed - exact (T = 2)", slack=t2["slack"], counterexample=instance,
        detail=(f"derived bound {d['derived']} vs printed {d['printed']} (ratio "
                f"{d['ratio_printed_over_derived']}); printed < 0 <= left side when "
                f"{d['printed_negative_when']}; the document's window also counts each ||G_j||^2 "
                f"up to {seed_w['max_coefficient']} times (τ = {d['tau']}) and reaches rounds "
                f"j = {seed_w['uncovered']} not covered by the descent term"))


@CLAIM.check("exact", "exact_enumeration")
def _zero_floor_exact(ctx: Context) -> Evidence:
    """Rationals: n = 2, f_i = (w ∓ 1)^2/2, w_0 = 1, η = 1/50 (seed's), T = 2, every path."""
    t = ZF_TINY
    paths = exact_mifa_paths(t["T"], t["eta"], t["A"], t["centers"], t["w0"])
    two = ctx.const("two")
    rows = []
    ok, held = True, 0
    for pth in paths:
        cond = admissible(ctx, t["eta"], 1, pth["tau_max"])
        lhs = sum(pth["grad_norm2"][1:]) / (t["T"] - 1)
        rhs = two * pth["gap1"] / (t["eta"] * t["T"] - 1)
        if cond:
            held += 1
            ok &= lhs <= rhs
        rows.append({"patterns": pth["patterns"], "tau_max": pth["tau_max"],
                     "condition": str(condition(t["eta"], 1, pth["tau_max"])),
                     "lhs": str(lhs), "rhs": str(rhs)})
    return Evidence(
        passed=ok, measured=rows[0]["lhs"], theoretical=rows[0]["rhs"],
        detail=(f"{len(rows)} paths, condition holds on {held}; LHS = {rows[0]['lhs']} > 0 > "
                f"printed RHS = {rows[0]['rhs']} (a negative bound: no ratio)"),
        counterexample=None if ok else {
            "n": 2, "f_i": "(1/2)(w - c_i)^2, c = (1, -1)", "L": 1, "w0": 1, "eta": "1/50",
            "T": 2, "p": "any", "paths": rows},
    )


@CLAIM.check("monte_carlo", "as_printed_long_run")
def _zero_floor_mc(ctx: Context) -> Evidence:
    """n = 10, p = 0.1, η = 0.01, T = 300 > 1/η: conditional mean on the event, per path."""
    eta_val, p_val = 0.01, 0.1
    r = mifa_long_runs(ctx, eta_val=eta_val, p_val=p_val, stream="as-printed")
    T_val = r["T"]
    lhs = r["grad_norm2"][1:T_val].mean(axis=0)
    rhs = exact_like(ctx.const("two"), eta_val) * r["f_gap"][1] / (eta_val * T_val - 1)
    ce = {"seed": ctx.seed, "n": 10, "p": p_val, "eta": eta_val, "T": T_val,
          "replicas": r["R"], "problem": "QuadraticProblem.heterogeneous(10, 5, L=1, mu=0.1, "
          "sigma_G2=1)", "w0": "x* + 5 e/sqrt(d)"}
    # the condition at eta/s: the stated one, or the relaxed one under the step mutant
    s = float(ctx.step_limit(Fraction(1)))
    ev, cond, viol = pathwise_upper_bound(
        r, eta_val / s, lhs, rhs, ce, what="E[(1/(T-1))Σ_{t>=1}||∇f(w_t)||^2 | condition]",
        instance={k: ce[k] for k in ("n", "p", "eta", "T", "problem", "w0")})
    ev.detail += (f"; condition held on {int(cond.sum())}/{r['R']} paths (τ_max from "
                  f"{int(r['tau_max'].min())} to {int(r['tau_max'].max())}); pathwise "
                  f"violations among them: {viol}")
    return ev


@CLAIM.check("monte_carlo", "floor_qualitative")
def _zero_floor_qualitative(ctx: Context) -> Evidence:
    """The seed's p = 0.1, η = 0.02: FedAvg-IS floor, MIFA none, U-MIFA none (as printed)."""
    out = floor_comparison(ctx, 0.1)
    ev = floor_evidence(out, {"seed": ctx.seed, "n": 10, "p": 0.1, "eta": 0.02, "T": out["T"],
                              "replicas": out["R"], "x0": "x* + 1",
                              "problem": "isotropic quadratic, Hessians I, ||h_i||^2 = 1"})
    ev.figures = [Figure("mifa.floor_experiment", "floors", {"results": [out]},
                         caption="The median squared gradient norm over the replicas and its "
                         "10-90% band: FedAvg-IS settles at its stationary floor (dotted), MIFA "
                         "goes to zero (no floor); U-MIFA as printed diverges at p < 1/2 (a "
                         "triangle marks where it leaves the plot). The dashed and dash-dotted "
                         "lines are the printed floor and the derived one.")]
    ev.theoretical = {"floor_F": out["floor"], "FedAvg-IS": ">= F/2", "MIFA": "<= F/100",
                      "U-MIFA": "<= F/100"}
    return ev
