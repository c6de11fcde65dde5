"""``fedau.objective_inconsistency`` (seed 001, Theorem 1): with time-constant weights omega_n
and Bernoulli(p_n) participation, Algorithm 1 minimises h = (1/P) sum_n omega_n p_n F_n."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import sympy as sp

from fedtheory.claimkit.stated import Stated
from fedtheory.claims import Claim, ClaimKind, Context, Evidence, all_of, checks
from fedtheory.experiments.fedau_runs import fixed_point_run, quadratic_instance
from fedtheory.symbolic.fedau_derivations import derive_fixed_point, is_zero
from fedtheory.theory.fedau import expected_fixed_point

CLAIM = Claim(
    id="fedau.objective_inconsistency", family="fedau",
    seed_ref="001, Theorem 1 (informal) and 'Implicit weighting due to partial participation'",
    title="Time-constant weights omega_n: Algorithm 1 minimises h = (1/P) sum omega_n p_n F_n; "
          "omega = 1/p recovers f, omega = 1 favours frequent participants",
    statement=(r"1_t^n\sim\mathrm{Bernoulli}(p_n),\ \omega_t^n=\omega_n:\ "
               r"\text{Algorithm 1 minimises } h(x)=\frac1P\sum_n\omega_np_nF_n(x),\ "
               r"P=\sum_n\omega_np_n"),
    kind=ClaimKind.IDENTITY,
    contract=(
        "(Theorem 1): with time-constant weights ω_n and Bernoulli(p_n) participation, FedAvg with "
        "pluggable weights minimises h(x) = (1/P) Σ ω_n p_n F_n(x), P = Σ ω_n p_n. ω_n = 1/p_n "
        "recovers f; ω_n = 1 is biased toward frequent participants."
    ),
    finding=("Confirmed exactly on quadratics with one local step: the expected update's "
             "fixed point is argmin h for every step size (sympy, exact enumeration, engine "
             "Monte Carlo); omega = 1/p recovers argmin f and omega = 1 leans toward the "
             "frequent participants. With I > 1 local steps each client's weight picks up the "
             "drift factor (1-(1-gamma a_n)^I)/(I gamma a_n): the fixed point differs from "
             "argmin h by O(gamma) and reaches it only as gamma -> 0."),
    expected="confirmed",
    # the implicit weight p_n and the pluggable weight omega_n of h
    stated=Stated(factors=("p_n", "omega_n")),
    derivation=r"""
**Reading.** "Minimises $h$" is read on heterogeneous quadratics
$F_n(x) = \frac12\sum_ka_{nk}(x_k-c_{nk})^2$, where the dynamics are affine and the claim is
exact: the expectation of the iterate converges to the fixed point of the expected update.
With $I$ exact local steps of size $\gamma$ a client's update is
$\Delta_n = -B_n(x-c_n)$, $B_n = 1-(1-\gamma a_n)^I$, and since $1_t^n$ is independent of
$x_t$, $\mathbb E[x_{t+1}\mid x_t] = x_t - \frac\eta N\sum_n\omega_np_nB_n(x_t-c_n)$. Its fixed
point is $x^\dagger = \sum_n\omega_np_nB_nc_n/\sum_n\omega_np_nB_n$ (per coordinate).

* One local step ($B_n = \gamma a_n$): $x^\dagger = \arg\min h$ **exactly**, for every
  $\gamma$, $\eta$ in the stable range.
* $I>1$ local steps: $B_n = I\gamma a_n - \binom I2\gamma^2a_n^2 + \dots$, so local steps add
  the client-drift factor $(1-(1-\gamma a_n)^I)/(I\gamma a_n)$ to each client's weight and
  $x^\dagger\ne\arg\min h$ in general; it tends to $\arg\min h$ as $\gamma\to0$ (the
  difference is $O(\gamma)$; Theorem 1's "properly chosen learning rates").
* $\omega_n = 1/p_n$ gives $h = f$; $\omega_n = 1$ gives $h\propto\sum_np_nF_n$, which moves
  the minimiser toward the frequent participants' optima.

**Checks.** (symbolic) sympy derives the expected update from the indicators
($\mathbb E1_n = p_n$), solves its fixed point and compares it with the stationary point of
the stated $h$ ($N=3$ scalar clients, $I=1$); for $I=2$ it shows the fixed point differs and
its $\gamma\to0$ limit is $\arg\min h$; $\omega=1/p$ gives $\arg\min f$. (exact) enumeration
of all $2^N$ participation patterns of one round in exact rationals ($N = 4$): the expected
update is affine with the stated fixed point. (Monte Carlo) the engine (`fedavg_weighted`,
one local step, no gradient noise, 1000 replicas; full: 20000) on a heterogeneous diagonal
quadratic with $p_n$ correlated with the optima: $\mathbb E[x_T]$ equals $\arg\min h$ (two-sided,
Bonferroni over coordinates) for $\omega = 1$, $1/p$ and random weights; paired over the same
participation draws, $\|x_T-\arg\min f\|^2$ is smaller with $\omega = 1/p$ than with
$\omega = 1$, and with $\omega=1$ the iterate leans toward the frequent participants.
""",
)


def _stated_argmin(ctx: Context, a: Any, c: Any, p: Any, w: Any) -> Any:
    """Stationary point of the stated h for scalar clients (sympy or Fraction)."""
    pw = [ctx.factor("omega_n", w[i]) * ctx.factor("p_n", p[i]) for i in range(len(a))]
    num = sum(pw[i] * a[i] * c[i] for i in range(len(a)))
    den = sum(pw[i] * a[i] for i in range(len(a)))
    return num / den


@CLAIM.check("symbolic")
def _fixed_point(ctx: Context) -> Evidence:
    """sympy, N = 3 scalar quadratics: fixed point of the expected update (one local step) =
    argmin of the stated h; omega = 1/p gives argmin f; with I = 2 local steps the fixed point
    differs and tends to argmin h as gamma -> 0."""
    d1 = derive_fixed_point(3, 1)
    a, c, p, w = d1["a"], d1["c"], d1["p"], d1["omega"]
    stated = _stated_argmin(ctx, a, c, p, w)
    one_step = is_zero(d1["fixed_point"] - stated)
    recovers_f = is_zero(d1["argmin_h"].subs({w[i]: 1 / p[i] for i in range(3)})
                         - d1["argmin_f"])
    d2 = derive_fixed_point(2, 2)
    stated2 = _stated_argmin(ctx, d2["a"], d2["c"], d2["p"], d2["omega"])
    differs = not is_zero(d2["fixed_point"] - d2["argmin_h"])
    limit = is_zero(d2["gamma_to_zero"] - stated2)
    ok = one_step and recovers_f and limit
    detail = (f"one local step: fixed point = argmin h: {one_step}; omega = 1/p gives "
              f"argmin f: {recovers_f}; I = 2: fixed point != argmin h: {differs}, "
              f"gamma -> 0 limit = argmin h: {limit}")
    data = {"fixed_point_I2": str(d2["fixed_point"])}
    ce = None
    if not ok:
        # a failed simplification refutes only where the two sides differ at a point
        at = {a[0]: 1, a[1]: 2, a[2]: 3, c[0]: 0, c[1]: 1, c[2]: 5, p[0]: sp.Rational(1, 10),
              p[1]: sp.Rational(1, 2), p[2]: sp.Rational(9, 10), w[0]: 1, w[1]: 2, w[2]: 3}
        at2 = {d2["a"][0]: 1, d2["a"][1]: 3, d2["c"][0]: -1, d2["c"][1]: 4,
               d2["p"][0]: sp.Rational(1, 5), d2["p"][1]: sp.Rational(2, 3),
               d2["omega"][0]: 2, d2["omega"][1]: 1}
        diffs = {"one local step": sp.simplify((d1["fixed_point"] - stated).subs(at)),
                 "omega = 1/p": sp.simplify(
                     (d1["argmin_h"].subs({w[i]: 1 / p[i] for i in range(3)})
                      - d1["argmin_f"]).subs(at)),
                 "gamma -> 0 limit": sp.simplify((d2["gamma_to_zero"] - stated2).subs(at2))}
        differ = {k: str(v) for k, v in diffs.items() if v != 0}
        if not differ:
            return Evidence.unproven(str(d1["fixed_point"]), str(sp.simplify(stated)),
                                     detail + " (sympy could not reduce a difference to 0; "
                                     "they agree at the rational instance tried)", data=data)
        ce = {"instance": {str(k): str(v) for k, v in at.items()},
              "instance_I2": {str(k): str(v) for k, v in at2.items()},
              "fixed_point": str(d1["fixed_point"].subs(at)),
              "stated_argmin_h": str(sp.sympify(stated).subs(at)),
              "differences": differ}
    return Evidence(ok, str(d1["fixed_point"]), str(sp.simplify(stated)), detail,
                    counterexample=ce, data=data)


@CLAIM.check("exact", "exact_enumeration")
def _enumeration(ctx: Context) -> Evidence:
    """Exact rationals, N = 4 scalar clients: E[x+ | x] by enumerating the 2^4 participation
    patterns at two points x; the affine map's fixed point equals the stated argmin h."""
    a = [Fraction(1), Fraction(2), Fraction(1, 2), Fraction(3)]
    c = [Fraction(-2), Fraction(0), Fraction(3), Fraction(5)]
    p = [Fraction(1, 10), Fraction(1, 2), Fraction(4, 5), Fraction(1, 3)]
    gamma, eta = Fraction(1, 10), Fraction(1)
    cases = {"omega = 1": [Fraction(1)] * 4, "omega = 1/p": [1 / x for x in p],
             "omega = (1, 3, 2, 1/2)": [Fraction(1), Fraction(3), Fraction(2), Fraction(1, 2)]}
    parts = []
    for name, w in cases.items():
        def expected(x: Fraction, w: list[Fraction] = w) -> Fraction:
            tot = Fraction(0)
            for pattern in range(16):
                ind = [(pattern >> i) & 1 for i in range(4)]
                prob = Fraction(1)
                for i in range(4):
                    prob *= p[i] if ind[i] else 1 - p[i]
                step = sum(w[i] * ind[i] * (-gamma * a[i] * (x - c[i])) for i in range(4))
                tot += prob * (x + eta / 4 * step)
            return tot

        y0, y1 = expected(Fraction(0)), expected(Fraction(1))
        slope = y1 - y0  # E[x+] = y0 + slope x
        fixed = y0 / (1 - slope)
        stated = _stated_argmin(ctx, a, c, p, w)
        parts.append((name, Evidence(fixed == stated, str(fixed), str(stated),
                                     f"{name}: exact fixed point {fixed} vs stated {stated}",
                                     counterexample=None if fixed == stated else
                                     {"a": [str(x) for x in a], "c": [str(x) for x in c],
                                      "p": [str(x) for x in p], "omega": [str(x) for x in w],
                                      "fixed_point": str(fixed), "stated": str(stated)})))
    return all_of(parts)


@CLAIM.check("monte_carlo")
def _engine(ctx: Context) -> Evidence:
    """Engine runs (fedavg_weighted, one local step): E[x_T] = stated argmin h for omega = 1,
    1/p and random weights (two-sided); paired over the same draws, omega = 1/p is closer to
    argmin f than omega = 1, which leans toward the frequent participants."""
    inst = quadratic_instance()
    A, c, p = inst["A"], inst["c"], inst["p"]
    R = ctx.size(quick=1000, full=20000)
    T = ctx.size(quick=300, full=600)
    seed = int(ctx.rng("participation").integers(2**31))
    omegas = {"omega = 1": np.ones(6), "omega = 1/p": 1 / p,
              "omega random": ctx.rng("omega").uniform(0.5, 2.0, 6)}
    lr, glr = 0.05, 1.0
    parts = []
    finals = {}
    for name, w in omegas.items():
        x = fixed_point_run(A, c, p, w, lr=lr, global_lr=glr, rounds=T, replicas=R, seed=seed)
        finals[name] = x
        stated = np.array([_stated_argmin(ctx, A[:, k], c[:, k], p, w) for k in range(2)])
        parts.append((name, ctx.check_mean(x, stated, what=f"E[x_T], {name}",
                                           counterexample={"omega": w.tolist(), "T": T,
                                                           "lr": lr, "replicas": R})))
    x_f = expected_fixed_point(A, c, np.ones(6), np.ones(6), lr)  # argmin f (one step)
    d_is = np.sum((finals["omega = 1/p"] - x_f) ** 2, axis=1)
    d_one = np.sum((finals["omega = 1"] - x_f) ** 2, axis=1)
    parts.append(("1/p closer to argmin f than 1", checks.check_less(
        d_is, d_one, what="||x_T - argmin f||^2: omega=1/p minus omega=1 (paired)")))
    # leaning: the first coordinate's optimum grows with p, so omega = 1 moves x_1 up
    lean = finals["omega = 1"][:, 0] - x_f[0]
    parts.append(("omega = 1 leans to frequent participants", checks.check_lower_bound(
        lean, 0.0, what="x_T[0] - argmin f[0] under omega = 1 (p_n grows with c_n[0])")))
    return all_of(parts)
