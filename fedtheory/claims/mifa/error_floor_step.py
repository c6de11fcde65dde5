"""``mifa.error_floor_step`` (seed 000, 'Non-zero error floor for Partial Client Participation'
(one step)): FedAvg-IS one step: E f(w_{t+1}) - f(w_t) <= -(η/2)||∇f||^2 + (η^2 L c/2) σ_G^2.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from fedtheory import stats
from fedtheory.claims import Claim, ClaimKind, Context, Evidence
from fedtheory.experiments import mifa_experiments as mx
from fedtheory.symbolic.error_floor import derive_fedavg_is_step
from fedtheory.symbolic.mifa_symbols import is_zero
from fedtheory.theory.mifa import floor_problems, one_step_fedavg_is, step_bound

from ._common import fmt_frac

CLAIM = Claim(
    id="mifa.error_floor_step", family="mifa",
    seed_ref="000, 'Non-zero error floor for Partial Client Participation' (one step)",
    title="FedAvg-IS one step: E f(w_{t+1}) - f(w_t) <= -(η/2)||∇f||^2 + (η^2 L c/2) σ_G^2",
    statement=(r"\mathbb E f(w_{t+1})-f(w_t)\le-\frac\eta2\|\nabla f(w_t)\|^2"
               r"+\frac{\eta^2Lc}{2}\sigma_G^2,\quad c=\frac2n\Big(\frac1p-1\Big),"
               r"\quad\text{if }\eta L(1+c)\le1"),
    kind=ClaimKind.UPPER_BOUND,
    expected="confirmed",
    derivation=(
        r"$G_t = \frac1n\sum_{i\in\mathcal A(t)}\nabla f_i(w_t)/p$, independent "
        r"$\mathrm{Bernoulli}(p)$. Indicator algebra: $\mathbb E\,G_t = \nabla f$, "
        r"$\mathbb E\|G_t\|^2 = \|\nabla f\|^2 + \frac1{n^2}\big(\frac1p - 1\big)\sum_i"
        r"\|\nabla f_i\|^2$; exactly $\sum_i\|\nabla f_i\|^2 = \sum_i\|h_i\|^2 + n\|\nabla f\|^2$ "
        r"($h_i = \nabla f_i - \nabla f$ sums to 0), which the seed bounds by "
        r"$2n\sigma_G^2 + 2n\|\nabla f\|^2$. With the $L$-smooth upper model the seed's bound "
        r"minus the exact model value is $\frac\eta2\|\nabla f\|^2\big(1 - \eta L(1 + c/2)\big)"
        r" + \frac{\eta^2Lc}4\sigma_G^2 \ge 0$ when $\eta L(1+c) \le 1$. (The seed's first "
        r"'$\le$' is an equality.) $\sigma_G^2$ is read per client, "
        r"$\sigma_G^2 = \max_i\|\nabla f_i(w_t) - \nabla f(w_t)\|^2$ at the current point. "
        r"Checked at the largest allowed $\eta = 1/(L(1+c))$ on an isotropic quadratic "
        r"(Hessians $LI$: the smoothness model is exact, $\|h_i\|^2$ equal) and on "
        r"heterogeneous Hessians, $p \in \{0.1, 0.5\}$: exactly over all $2^{10}$ patterns "
        r"(float) and $2^3$ patterns (rationals), and by Monte Carlo."),
)


@CLAIM.check("symbolic")
def _floor_step_symbolic(ctx: Context) -> Evidence:
    """From indicators to the bound (n = 2..4): moments, decomposition, slack >= 0."""
    ok = True
    for n in range(2, 5):
        d = derive_fedavg_is_step(n)
        ok &= is_zero(d["E_G"] - d["gbar"]) and d["step1_residual"] == 0
        ok &= d["step2_residual"] == 0 and d["slack_residual"] == 0
        ok &= bool(d["grad_margin_over_1_minus_theta"].is_nonnegative)
        ok &= bool(d["slack_coef_sigma"].is_nonnegative)
    d = derive_fedavg_is_step(3)
    return Evidence(
        passed=ok, measured=str(d["slack"]), theoretical=">= 0",
        detail=(f"E||G||^2 = ||∇f||^2 + (1/n^2)(1/p-1)Σ||∇f_i||^2 and Σ||∇f_i||^2 = "
                f"Σ||h_i||^2 + n||∇f||^2 derived for n = 2..4; seed bound - exact model = "
                f"{d['slack']} (n=3), non-negative for η = θ/(L(1+c)), θ ≤ 1: {ok}"),
    )


@CLAIM.check("symbolic", "exact_enumeration")
def _floor_step_exact(ctx: Context) -> Evidence:
    """Rationals: n = 3, p = 1/3, d = 2 diagonal quadratics, η = 1/(L(1+c)), all 2^3 patterns."""
    A = mx.fractions([[1, "1/2"], ["1/4", 1], ["3/4", "1/3"]])
    cen = mx.fractions([[1, 0], [-1, 2], [0, -2]])
    w = mx.fractions(["1/2", "-1/3"])
    n, Lr, pr = 3, Fraction(1), Fraction(1, 3)
    c = Fraction(2, n) * (1 / pr - 1)
    eta_r = 1 / (Lr * (1 + c))

    def f(x: np.ndarray) -> Fraction:
        return sum(sum(A[i] * (x - cen[i]) ** 2) / 2 for i in range(n)) / n

    g = A * (w - cen)
    gbar = g.sum(axis=0) / n
    s2 = max(sum((g[i] - gbar) ** 2) for i in range(n))

    def step(m: np.ndarray) -> Fraction:
        G = sum(g[i] / pr for i in range(n) if m[i]) / n if m.any() else 0 * gbar
        return f(w - eta_r * G) - f(w)

    value = mx.exact_expectation(step, n, pr)
    bound = -eta_r / 2 * sum(gbar**2) + eta_r**2 * Lr * c / 2 * s2
    ok = value <= bound
    return Evidence(passed=ok, measured=str(value), theoretical=str(bound),
                    detail=f"exact E f(w+) - f(w) = {value} <= {bound}: {ok} (η = {eta_r})",
                    counterexample=None if ok else {"A": fmt_frac(A), "centers": fmt_frac(cen),
                                                    "w": fmt_frac(w), "p": "1/3"})


@CLAIM.check("symbolic", "enumeration_n10")
def _floor_step_enum(ctx: Context) -> Evidence:
    """n = 10: all 1024 patterns (float), two quadratics, p in {0.1, 0.5}, 5 points each."""
    rng = ctx.rng("enum")
    masks = mx.all_masks(10)
    rows = []
    ok = True
    worst = np.inf
    for name, prob in floor_problems(rng):
        for p_val in (0.1, 0.5):
            probs = mx.mask_probabilities(masks, p_val)
            for _ in range(5):
                w = prob.x_star + rng.standard_normal(prob.d) * rng.uniform(0.1, 3.0)
                eta_max, s2, bound = step_bound(prob, w, p_val)
                val = float(probs @ one_step_fedavg_is(prob, w, masks, p_val, eta_max))
                good = val <= bound + 1e-12 * max(1.0, abs(bound))
                ok &= good
                worst = min(worst, (bound - val) / abs(bound))
                rows.append({"problem": name, "p": p_val, "w": w, "eta": eta_max,
                             "sigma_G2": s2, "value": val, "bound": bound, "holds": good})
    bad = [r for r in rows if not r["holds"]]
    return Evidence(passed=ok, measured=min(r["bound"] - r["value"] for r in rows),
                    theoretical=">= 0",
                    detail=(f"{len(rows)} exact expectations over 2^10 patterns at η_max; "
                            f"smallest relative slack (bound - E)/|bound| = {worst:.3g}"),
                    counterexample=bad[0] if bad else None, data={"cases": rows})


@CLAIM.check("monte_carlo", "one_step")
def _floor_step_mc(ctx: Context) -> Evidence:
    """Engine FedAvg-IS with Bernoulli(0.1) masks, n = 10, isotropic quadratic, η = η_max."""
    from fedtheory.participation import BernoulliParticipation

    rng = ctx.rng("mc")
    name, prob = floor_problems(rng)[0]
    p_val = 0.1
    w = prob.x_star + rng.standard_normal(prob.d)
    eta_max, s2, bound = step_bound(prob, w, p_val)
    R = ctx.size(quick=20_000, full=200_000)
    proc = BernoulliParticipation(p_val, n=prob.n)
    masks, _ = proc.step(proc.init(rng, R), rng)
    samples = one_step_fedavg_is(prob, w, masks, p_val, eta_max)
    ce = {"seed": ctx.seed, "problem": name, "w": w, "p": p_val, "eta": eta_max,
          "sigma_G2": s2, "replicas": R}
    return stats.check_upper_bound(samples, bound, counterexample=ce,
                                   what="E f(w_{t+1}) - f(w_t)")
