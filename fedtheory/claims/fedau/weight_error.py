"""``fedau.weight_error`` (seed 001, Theorem 3): (1/(NT)) sum_t sum_n E[(p_n omega_t^n - 1)^2]
= O(K log T / T + (1/N) sum_n (1 - p_n)^{2K}) for Algorithm 2's weights."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import sympy as sp

from fedtheory.claimkit.stated import Stated
from fedtheory.claims import Claim, ClaimKind, Context, Evidence, all_of, checks
from fedtheory.experiments.fedau_runs import weight_error_samples
from fedtheory.symbolic.fedau_derivations import K as K_sym
from fedtheory.symbolic.fedau_derivations import derive_bernoulli_weight, is_zero
from fedtheory.symbolic.fedau_derivations import p as p_sym
from fedtheory.theory.fedau import bernoulli_weight_error, corollary4_K

#: The grid of the exact checks: p (the sup over p probes p ~ 1/K), K and T.
P_GRID = (0.02, 0.05, 0.1, 0.2, 0.5, 0.9)
K_GRID = (2, 4, 8, 16, 32)
T_GRID = (125, 250, 500, 1000)
#: Largest log-log slope in K of sup_{p,T} V T / (K-factor log T) that counts as bounded.
K_SLOPE_MAX = 0.5

CLAIM = Claim(
    id="fedau.weight_error", family="fedau",
    seed_ref="001, Theorem 3",
    title="Weight error of Algorithm 2: O(K log T / T + (1/N) sum_n (1-p_n)^{2K}) "
          "(variance + bias)",
    statement=(r"\frac1{NT}\sum_{t=0}^{T-1}\sum_{n=1}^N\mathbb E\big[(p_n\omega_t^n-1)^2\big]"
               r"\le\mathcal O\Big(\frac{K\log T}{T}+\frac1N\sum_{n=1}^N(1-p_n)^{2K}\Big),"
               r"\ T\ge2"),
    kind=ClaimKind.UPPER_BOUND,
    contract=(
        "(Theorem 3): (1/(NT)) Σ_t Σ_n E[(p_n ω_t^n − 1)²] = O(K log T / T + (1/N) Σ(1 − "
        "p_n)^{2K}); show both terms and the bias–variance trade-off in K."
    ),
    finding=("Consistent with the O-bound, with the bias term exact: the weight error tends "
             "to (1/N) sum (1-p_n)^{2K} (constant 1, attained; a larger exponent fails for "
             "every hidden constant). The remainder V decays like "
             "log T / T (fitted exponent about -0.88 at T <= 1000) and sup over p of "
             "V T / (K log T) is about 0.19 for K = 8..32: the factor K is needed for a bound "
             "uniform in p (without it the supremum grows linearly in K), not for fixed p. "
             "The best K (p = 0.1, 0.3, 0.5) is 12 at T = 100 and 24 at T = 1000, below "
             "Corollary 4's 22 and 33."),
    expected="confirmed",
    # the exponent 2 of the bias term (larger is stronger: (1-p)^{eK} decreases in e) and
    # the factor K of the variance term
    stated=Stated({"bias_exponent": 2}, factors=("K",), stronger={"bias_exponent": "larger"}),
    derivation=r"""
**What is checkable.** Theorem 3 is an $\mathcal O(\cdot)$ statement with no explicit
constant (the slides give none), under Bernoulli participation. We check it exactly, one
client at a time (the left side is the average over clients of
$e(p,K,T) = \frac1T\sum_{t<T}\mathbb E[(p\omega_t-1)^2]$):

* **Exact weight error.** The intervals are i.i.d. $\min(G,K)$, so
  $\mathbb E[(p\omega_t-1)^2]$ is computed exactly (float64) from the law of the recorded
  intervals (`fedtheory.theory.fedau.bernoulli_weight_error`); Monte Carlo of
  `fedau_weights` agrees with it (two-sided).
* **Bias term: exact, constant 1.** $\omega_t\to\omega_\infty = (1-(1-p)^K)/p$ a.s. and
  $|\omega_t|\le K$, so $e(p,K,T)\to(p\omega_\infty-1)^2 = (1-p)^{2K}$ as $T\to\infty$
  (sympy): the bias term is the limit, attained with constant 1 (ratio 1). The exponent's
  strengthening direction is up ($(1-p)^{eK}$ decreases in $e$): a variant with $e>2$ is
  false whatever the hidden constant, since letting $T\to\infty$ the bound would need
  $(1-p)^{2K}\le C(1-p)^{eK}$ for every $K$, and along $p = 1/2$ the ratio
  $2^{(e-2)K}$ is unbounded (sympy: its limit in $K$ is $\infty$); a variant with $e<2$ is
  looser and proved.
* **Variance term.** $V = e - (1-p)^{2K}$. Exactly computed on $p\in\{0.02,\dots,0.9\}$,
  $K\in\{2,\dots,32\}$, $T\in\{125,\dots,1000\}$: $V\,T/\log T$ is fitted as
  $C_1 + C_0/\log T$ (least squares, the slope's standard error from the residuals), the
  plain power law $V\propto T^s$ is fitted too (median $s\approx-0.88$, against $-0.86$ for
  $\log T/T$ at $T = 1000$), and
  $\sup_{p,T} V\,T/(K\log T)$ is about $0.19$ at every $K$ (reached near $p\approx 2/K$). The
  $K$ of the variance term is needed for a bound uniform in $p$: without it the same supremum
  grows linearly in $K$. Criterion (finite data cannot refute an $\mathcal O$): the log-log
  slope in $K$ (from 8 to 32) of $\sup_{p,T}V\,T/(\text{stated }K\text{ factor}\cdot\log T)$
  must be at most 1/2 (about 0 with the factor $K$, about 1 without), and the $T$-slope of
  the same supremum at most 1/4 (rate $\log T/T$, not slower).
* **Best $K$.** For each $T$ the $K$ minimising the exact weight error (bias-variance
  trade-off) is reported beside Corollary 4's $\lceil\log_cT\rceil$ (data).
""",
)


def _stated_bias(ctx: Context, q: Any, K: Any) -> Any:
    e = ctx.const("bias_exponent")
    if isinstance(q, sp.Basic):
        return q ** (sp.Rational(e.numerator, e.denominator) * K)
    return q ** (float(e) * K)


@CLAIM.check("symbolic", "bias_limit")
def _bias(ctx: Context) -> Evidence:
    """sympy: the T -> oo limit of E[(p omega_t - 1)^2] is (p omega_oo - 1)^2 = (1-p)^{2K}
    (renewal weight); the stated bias term with exponent e bounds it with a constant uniform
    in (p, K) iff e <= 2 (ratio 1 at e = 2; for e > 2 the family p = 1/2, K -> oo has ratio
    2^{(e-2)K} -> oo); the exact weight error at T = 2000 approaches the limit."""
    d = derive_bernoulli_weight()
    limit = d["bias_squared"]
    e = ctx.const("bias_exponent")
    stated = _stated_bias(ctx, 1 - p_sym, K_sym)
    equal = is_zero(limit - stated)
    # numeric approach to the limit (the last rounds of the exact weight error)
    tail = bernoulli_weight_error(0.3, 4, 2000)[-1]
    approach = bool(abs(tail - 0.7**8) < 0.05 * 0.7**8)
    if not approach:  # the exact computation disagrees with the derived limit: a library bug
        raise RuntimeError(f"exact weight error at T = 2000 (p = 0.3, K = 4) is {tail!r}, "
                           f"not near its derived limit 0.7^8 = {0.7**8!r}")
    e_sym = sp.Rational(e.numerator, e.denominator)
    # along p = 1/2 (T -> oo, the variance term vanishes): limit / stated = 2^{(e - 2) K}
    growth = sp.limit(sp.Integer(2) ** ((e_sym - 2) * K_sym), K_sym, sp.oo)
    rows = [{"K": k, "ratio": str(sp.Integer(2) ** ((e_sym - 2) * k))} for k in (1, 4, 16, 32)]
    if e <= 2:
        proof = ("(1-p)^{2K} - stated = 0 identically" if equal else
                 f"exponent {e} <= 2: (1-p)^(eK) >= (1-p)^(2K) for 0 <= 1-p <= 1, K >= 1")
        return Evidence(True, str(limit), str(stated),
                        f"limit (1-p)^(2K) vs stated bias term {stated}: equal {equal}; exact "
                        f"e_t at t = 1999 (p = 0.3, K = 4) = {tail:.6g} vs limit {0.7**8:.6g}",
                        ratio=1.0 if equal else float(0.7 ** (8 - 4 * float(e))),
                        instance={"p": 0.3, "K": 4, "T": "oo"}, proof=proof,
                        data={"family_p_half": rows})
    return Evidence(False, str(limit), str(stated),
                    f"exponent {e} > 2: as T -> oo the weight error tends to (1-p)^(2K) "
                    f"(derived), which exceeds C (1-p)^({e}K) for every constant C: along "
                    f"p = 1/2 the ratio is 2^(({e}-2)K), limit in K: {growth}",
                    ratio=float(2 ** ((float(e) - 2) * 32)),
                    instance={"p": 0.5, "K": 32, "T": "oo"},
                    counterexample={"family": "p = 1/2 (every client), T -> oo, K = 1, 2, ...",
                                    "limit_of_lhs": "(1/2)^(2K)",
                                    "stated_bias_term": f"(1/2)^({e}K)",
                                    "ratio": f"2^(({e}-2)K)", "ratio_limit_in_K": str(growth),
                                    "rows": rows},
                    data={"family_p_half": rows})


# A pure memo (one process): the value is a function of the arguments only, never of what
# ran before, and is not modified by its readers (issue 18: the one cache keeps the rest).
@functools.lru_cache(maxsize=1)
def _variance_table() -> dict[str, Any]:
    """Exact V(p, K, T) = e - (1-p)^{2K} on the grid, and the best K per T (deterministic,
    computed once per process: it does not depend on the seed or the stated side)."""
    Ts = np.array(T_GRID)
    V = np.empty((len(P_GRID), len(K_GRID), len(Ts)))
    for i, p in enumerate(P_GRID):
        for j, K in enumerate(K_GRID):
            e = bernoulli_weight_error(p, K, int(Ts[-1]))
            cm = np.cumsum(e) / np.arange(1, Ts[-1] + 1)
            V[i, j] = cm[Ts - 1] - (1 - p) ** (2 * K)
    best = []
    Ks = (2, 4, 8, 12, 16, 24, 32, 48)
    for T in (100, 1000):
        pv = (0.1, 0.3, 0.5)
        L = [float(np.mean([np.mean(bernoulli_weight_error(p, K, T)) for p in pv])) for K in Ks]
        best.append({"T": T, "p": list(pv), "best_K": Ks[int(np.argmin(L))],
                     "corollary4_K": corollary4_K(T, min(pv)), "error_by_K": dict(zip(Ks, L,
                                                                                    strict=True))})
    return {"V": V, "best": best}


@CLAIM.check("exact", "variance_rate")
def _variance(ctx: Context) -> Evidence:
    """Exact weight error on the grid: V T / log T fitted as C1 + C0 / log T; the sup over
    p and T of V T / (K-factor log T) is bounded in K (log-log slope <= 1/2 from K = 8 to
    32) and in T (slope <= 1/4); best K per T beside Corollary 4's."""
    tab = _variance_table()
    V = tab["V"]
    Ts = np.array(T_GRID, dtype=float)
    Kf = np.array([float(ctx.factor("K", float(K))) for K in K_GRID])
    norm = V * Ts / np.log(Ts) / Kf[None, :, None]  # (p, K, T)
    sup_pT = norm.max(axis=(0, 2))  # per K
    k_slope = float(np.log(sup_pT[-1] / sup_pT[2]) / np.log(K_GRID[-1] / K_GRID[2]))
    sup_pK = norm.max(axis=(0, 1))  # per T
    t_slope = float(np.polyfit(np.log(Ts), np.log(sup_pK), 1)[0])
    # OLS fit V T / log T = C1 + C0 / log T at each (p, K)
    X = np.column_stack([np.ones_like(Ts), 1 / np.log(Ts)])
    fits = []
    for i, p in enumerate(P_GRID):
        for j, K in enumerate(K_GRID):
            y = V[i, j] * Ts / np.log(Ts)
            coef, res, *_ = np.linalg.lstsq(X, y, rcond=None)
            dof = len(Ts) - 2
            s2 = float(res[0]) / dof if res.size else 0.0
            se = math.sqrt(s2 * np.linalg.inv(X.T @ X)[0, 0])
            # and the plain power law V ~ T^s (s = -1 + 1/log T for log T / T)
            ok_v = bool(np.all(V[i, j] > 0))
            s_fit, s_se = (math.nan, math.nan)
            if ok_v:
                Z = np.column_stack([np.ones_like(Ts), np.log(Ts)])
                b, r2, *_ = np.linalg.lstsq(Z, np.log(V[i, j]), rcond=None)
                s2v = float(r2[0]) / dof if r2.size else 0.0
                s_fit, s_se = float(b[1]), math.sqrt(s2v * np.linalg.inv(Z.T @ Z)[1, 1])
            fits.append({"p": p, "K": K, "C1": float(coef[0]), "C1_se": se,
                         "C0": float(coef[1]), "exponent": s_fit, "exponent_se": s_se})
    worst = int(np.argmax(norm[:, :, -1].max(axis=1)))
    ok_k = k_slope <= K_SLOPE_MAX
    ok_t = t_slope <= 0.25
    factor = "K" if float(ctx.factor("K", 2.0)) == 2.0 else "1"
    ev_k = Evidence(ok_k, k_slope, f"slope <= {K_SLOPE_MAX} for the variance term "
                                   f"{factor} log T / T",
                    f"sup_(p,T) V T/(K-factor log T) per K {np.round(sup_pT, 4).tolist()}: "
                    f"log-log slope in K (8 -> 32) {k_slope:.3f}",
                    ratio=float(sup_pT.max()), instance={"K": K_GRID[int(np.argmax(sup_pT))],
                                                         "p": P_GRID[worst], "T": T_GRID[-1]},
                    counterexample=None if ok_k else {
                        "p_grid": list(P_GRID), "K": list(K_GRID), "T": list(T_GRID),
                        "sup_normalised": sup_pT.tolist(), "slope": k_slope})
    ev_t = Evidence(ok_t, t_slope, 0.25,
                    f"sup_(p,K) per T {np.round(sup_pK, 4).tolist()}: log-log slope in T "
                    f"{t_slope:.3f}", counterexample=None if ok_t else {
                        "T": list(T_GRID), "sup_normalised": sup_pK.tolist()})
    ex = np.array([f["exponent"] for f in fits])
    ex_se = np.array([f["exponent_se"] for f in fits])
    ev_t.detail += (f"; fitted exponent of V in T over T = {list(T_GRID)}: median "
                    f"{np.nanmedian(ex):.3f}, range [{np.nanmin(ex):.3f}, {np.nanmax(ex):.3f}] "
                    f"(largest s.e. {np.nanmax(ex_se):.3f}; log T / T has "
                    f"{-1 + 1 / math.log(T_GRID[-1]):.3f} at T = {T_GRID[-1]})")
    ev = all_of([("K growth", ev_k), ("T rate", ev_t)])
    ev.data.update({"fits": fits, "best_K": tab["best"]})
    return ev


@CLAIM.check("monte_carlo")
def _simulated(ctx: Context) -> Evidence:
    """fedau_weights on Bernoulli masks (p = 0.1, 0.5, 0.9; T = 100; K = 3 and oo): the
    per-replica weight error has the exactly computed mean (two-sided: it validates the
    exact computation the other checks use)."""
    R = ctx.size(quick=2000, full=20000)
    p = np.array([0.1, 0.5, 0.9])
    T = 100
    parts = []
    for K in (3.0, float("inf")):
        s = weight_error_samples(p, K, T, R, ctx.rng(f"K={K}"))
        exact = float(np.mean([np.mean(bernoulli_weight_error(x, K, T)) for x in p]))
        parts.append((f"K={K}", checks.check_identity(
            s, exact, what=f"weight error, p={p.tolist()}, T={T}",
            counterexample={"K": K, "p": p.tolist(), "T": T, "replicas": R})))
    return all_of(parts)
