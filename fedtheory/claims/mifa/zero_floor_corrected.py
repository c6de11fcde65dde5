"""``mifa.zero_floor.corrected`` (seed 000, 'Zero error floor for MIFA' (derived here)): MIFA,
exact gradients, memory filled at round 0: on every path with 1 - ηL - η²L²τ_max² >= 0,
(1/T)Σ_{t=0}^{T-1}||∇f(w_t)||^2 <= 2(f(w_0)-f*)/(ηT); FedAvg-IS keeps a floor, MIFA does not,
U-MIFA does not only when p > 1/2.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy as sp

from fedtheory import stats
from fedtheory.claims import Claim, ClaimKind, Context, Evidence
from fedtheory.experiments.mifa_runs import (
    diverged,
    floor_comparison,
    floor_verdicts,
    mifa_long_runs,
)
from fedtheory.symbolic.error_floor import derive_zero_floor_sum
from fedtheory.symbolic.memory_error_recursion import derive_memory_error_recursion
from fedtheory.symbolic.mifa_symbols import is_zero, p
from fedtheory.theory.mifa import condition, exact_mifa_paths

from ._common import ALPHA, pathwise_upper_bound

CLAIM = Claim(
    id="mifa.zero_floor.corrected", family="mifa", seed_ref="000, 'Zero error floor for MIFA' "
    "(derived here)",
    title=("MIFA, exact gradients, memory filled at round 0: on every path with "
           "1 - ηL - η²L²τ_max² >= 0, (1/T)Σ_{t=0}^{T-1}||∇f(w_t)||^2 <= 2(f(w_0)-f*)/(ηT); "
           "FedAvg-IS keeps a floor, MIFA does not, U-MIFA does not only when p > 1/2"),
    statement=(r"1-\eta L-\eta^2L^2\tau_{\max}^2\ge0\ \Rightarrow\ \frac1T\sum_{t=0}^{T-1}"
               r"\|\nabla f(w_t)\|^2\le\frac{2(f(w_0)-f^\star)}{\eta T}\ \text{(pathwise)};\ "
               r"\mathbb E\,e_{t+1}^2=\tfrac{1-p}{p}\,e_t^2\ \text{for U-MIFA's memory}"),
    kind=ClaimKind.UPPER_BOUND,
    expected="confirmed",
    derivation=(
        r"Per path (no expectation needed): $L$-smoothness and "
        r"$\langle x,y\rangle = \frac12\big(\|x\|^2 + \|y\|^2 - \|x-y\|^2\big)$ give "
        r"$f(w_{t+1}) - f(w_t) \le -\frac\eta2\|\nabla f(w_t)\|^2 - \frac\eta2(1-\eta L)"
        r"\|G_t\|^2 + \frac\eta2\|\nabla f(w_t) - G_t\|^2$; Jensen and $L$-smoothness give "
        r"$\|\nabla f(w_t) - G_t\|^2 \le \frac{L^2}n\sum_i\|w_t - w_{t-\tau(t,i)}\|^2 \le "
        r"\frac{L^2\eta^2}n\sum_i\tau(t,i)\sum_{j=t-\tau(t,i)}^{t-1}\|G_j\|^2$. Summed over "
        r"$t = 0, \dots, T-1$ every $\|G_j\|^2$ ($0 \le j \le T-2$) appears in at most "
        r"$\tau_{\max}$ windows, so the error terms total at most "
        r"$\frac{\eta^3L^2\tau_{\max}^2}2\sum_{j<T}\|G_j\|^2$, cancelled by the descent term "
        r"under the condition; telescoping from $f(w_0)$ gives the bound with $\eta T$, with no "
        r"boundary term (round 0 has $\nabla f - G_0 = 0$). The condition is on the realised "
        r"$\tau_{\max}$ (unbounded under Bernoulli participation). U-MIFA: a client's memory "
        r"error $e = \nabla f_i - G^{(i)}$ becomes $(1 - 1_i/p)e$, so $\mathbb E\,e^2$ is "
        r"multiplied by $\frac{1-p}p$ each round (plus the drift of $\nabla f_i$): it contracts "
        r"only for $p > 1/2$. Checks: sympy (window counts, memory recursion), every path of a "
        r"small rational instance, a Monte Carlo pathwise check ($n = 10$, $p = 0.1$), and "
        r"floors at $p = 0.6$ (U-MIFA converges), $p = 0.5$ (grows slowly), $p = 0.1$ "
        r"(diverges)."),
)


@CLAIM.check("symbolic")
def _zf_corr_symbolic(ctx: Context) -> Evidence:
    """Window counts from t = 0 (≤ τ, nothing uncovered); U-MIFA's memory factor (1-p)/p."""
    d = derive_zero_floor_sum()
    w0 = d["windows"]["exact_from_0"]
    r = derive_memory_error_recursion()
    ok_w = w0["max_coefficient"] <= d["tau"] and not w0["uncovered"]
    ok_r = (is_zero(r["umifa_factor"] - (1 - p) / p)
            and is_zero(r["mifa_second_moment"] - (1 - p) * sp.Symbol("e", real=True) ** 2)
            and r["umifa_grows_when"] == (p < sp.Rational(1, 2)))
    return Evidence(
        passed=ok_w and ok_r, measured={"windows": w0, "umifa_factor": str(r["umifa_factor"])},
        theoretical={"max_coefficient": d["tau"], "umifa_factor": "(1-p)/p"},
        detail=(f"windows from t = 0 (T = {d['T']}, τ = {d['tau']}): coefficients "
                f"{w0['coefficients']}, uncovered {w0['uncovered']}; U-MIFA error after a round"
                f" {r['umifa_error_after']}, E e+^2 = {r['umifa_second_moment']}, grows when "
                f"{r['umifa_grows_when']}; MIFA/SAGA: {r['mifa_second_moment']}"),
    )


@CLAIM.check("symbolic", "exact_enumeration")
def _zf_corr_exact(ctx: Context) -> Evidence:
    """Rationals: n = 2, a = (1, 1/2), c = (1, -1), w_0 = 2, T = 4, η in {1/10, 1/3}: all paths."""
    A = [Fraction(1), Fraction(1, 2)]
    cen = [Fraction(1), Fraction(-1)]
    rows, ok, held = [], True, 0
    for eta_r in (Fraction(1, 10), Fraction(1, 3)):
        for pth in exact_mifa_paths(4, eta_r, A, cen, Fraction(2)):
            if condition(eta_r, 1, pth["tau_max"]) < 0:
                continue
            held += 1
            lhs = sum(pth["grad_norm2"]) / 4
            rhs = 2 * pth["gap0"] / (eta_r * 4)
            if lhs > rhs:
                ok = False
                rows.append({"eta": str(eta_r), "patterns": pth["patterns"],
                             "lhs": str(lhs), "rhs": str(rhs)})
    return Evidence(passed=ok, measured=held, theoretical="no violation",
                    detail=f"{held} paths satisfy the condition; violations: {len(rows)}",
                    counterexample=rows[0] if rows else None)


@CLAIM.check("monte_carlo", "pathwise")
def _zf_corr_mc(ctx: Context) -> Evidence:
    """n = 10, p = 0.1, η = 0.01: every path with the condition; conditional mean one-sided."""
    eta_val, p_val = 0.01, 0.1
    r = mifa_long_runs(ctx, eta_val=eta_val, p_val=p_val, stream="corrected")
    T_val = r["T"]
    lhs = r["grad_norm2"][:T_val].mean(axis=0)
    rhs = float(2 * r["f_gap"][0, 0] / (eta_val * T_val))
    ce = {"seed": ctx.seed, "n": 10, "p": p_val, "eta": eta_val, "T": T_val, "replicas": r["R"]}
    ev, cond, viol = pathwise_upper_bound(
        r, eta_val, lhs, rhs, ce, what="E[(1/T)Σ_{t<T}||∇f(w_t)||^2 | condition]", rtol=1e-12)
    ev.detail += (f"; condition held on {int(cond.sum())}/{r['R']} paths; pathwise "
                  f"violations: {viol}; largest ratio lhs/rhs = {np.max(lhs[cond] / rhs):.4g}")
    return ev


@CLAIM.check("monte_carlo", "floors_by_p")
def _zf_corr_floors(ctx: Context) -> Evidence:
    """p = 0.6: FedAvg-IS floor, MIFA and U-MIFA none; p in {0.5, 0.1}: U-MIFA has no zero floor."""
    hi = floor_comparison(ctx, 0.6, stream="p06")
    ok_hi, detail_hi, data_hi = floor_verdicts(hi)
    parts = [detail_hi]
    ok = ok_hi
    data = {"p=0.6": data_hi}
    for p_val in (0.5, 0.1):
        out = floor_comparison(ctx, p_val, stream=f"p{p_val}")
        v = out["umifa"][-1]
        F = out["floor"]
        if diverged(v):
            parts.append(f"p = {p_val}: U-MIFA diverged (overflow by round {out['T']})")
            data[f"p={p_val}"] = "diverged"
            continue
        ev = stats.check_lower_bound(v, F / 100, what=f"p = {p_val}: U-MIFA E||∇f(w_T)||^2")
        parts.append(ev.detail)
        data[f"p={p_val}"] = float(np.mean(v))
        ok &= bool(ev.passed)
    return Evidence(passed=ok, measured=data, theoretical="see detail", detail="; ".join(parts),
                    alpha=ALPHA, counterexample=None if ok else {"seed": ctx.seed,
                                                                  "measured": data})
