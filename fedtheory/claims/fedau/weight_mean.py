"""``fedau.weight_mean``: Algorithm 2's long-run weight is (1 - (1-p)^K)/p under Bernoulli
participation (renewal argument), so p omega - 1 -> -(1-p)^K and omega -> 1/p as K -> oo."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import sympy as sp

from fedtheory.algorithms.fedau import fedau_state
from fedtheory.claimkit.stated import Stated, exact_like
from fedtheory.claims import Claim, ClaimKind, Context, Evidence, all_of, checks
from fedtheory.experiments.fedau_runs import omega_after_intervals, sample_masks
from fedtheory.participation import CyclicParticipation, MarkovParticipation
from fedtheory.symbolic.fedau_derivations import K as K_sym
from fedtheory.symbolic.fedau_derivations import (
    derive_bernoulli_weight,
    derive_markov_weight,
    is_zero,
)
from fedtheory.symbolic.fedau_derivations import p as p_sym
from fedtheory.theory.fedau import (
    chain_long_run_weight,
    expected_intervals,
    long_run_weight,
    renewal_weight,
)

CLAIM = Claim(
    id="fedau.weight_mean", family="fedau",
    seed_ref="001, Algorithm 2 and 'Geometric distribution for Bernoulli participating "
             "clients'; Theorem 3's bias term",
    title="Algorithm 2's long-run weight is (1-(1-p)^K)/p (Bernoulli); 1/p as K -> oo",
    statement=(r"1_t^n\sim\mathrm{Bernoulli}(p_n):\ \omega_t^n\to\frac{1-(1-p_n)^K}{p_n},"
               r"\quad p_n\omega-1\to-(1-p_n)^K,\quad \omega\to\frac1{p_n}\ (K\to\infty)"),
    kind=ClaimKind.CLOSED_FORM,
    contract=(
        "Algorithm 2 with cutoff K gives long-run weights (1 − (1 − p_n)^K)/p_n, so p_n ω − 1 → "
        "−(1 − p_n)^K (the bias in Theorem 3), and 1/p_n as K → ∞."
    ),
    finding=("Confirmed: the renewal mean, the inverse rate of interval ends and the exact "
             "stationary chain all give (1-(1-p)^K)/p under Bernoulli participation, and "
             "fedau_weights agrees (Monte Carlo). The patterns differ at finite K: at p = 3/10, "
             "K = 5 the long-run weight is 2.773 (Bernoulli), 2.509 (Markov, correlation 1/2), "
             "2.363 (correlation 4/5), 2.5 (cyclic, period 10), against 1/p = 3.333; cyclic "
             "participation needs no cutoff once K >= P - m (weight exactly 1/p at K = 10). "
             "With K = oo every stationary pattern gives 1/p, except cyclic participation with "
             "pP not an integer (phase-averaged E[P/m] > 1/p: 4.167 at p = 1/4, P = 10)."),
    expected="confirmed",
    # the 1 of 1 - (1-p)^K and the factor 1/p (a reader may state E min(G, K) without it)
    stated=Stated({"one": 1}, factors=("1/p",)),
    derivation=r"""
**Renewal argument.** Algorithm 2's intervals partition the rounds (each round adds one to
the open counter), and an interval ends when the client took part in the previous round or
the counter reaches $K$. Under Bernoulli participation the intervals are i.i.d.
$X = \min(G, K)$, $G\sim\mathrm{Geom}(p)$ on $\{1,2,\dots\}$ (the first one too, by
memorylessness), and $\omega_t$ is their running mean, so $\omega_t\to\mathbb EX =
\sum_{j<K}P(G>j) = (1-(1-p)^K)/p$ almost surely. Equivalently, $\omega_\infty$ is the inverse
rate of interval ends, $p(1+\mathbb E\lfloor(G-1)/K\rfloor)$ per round, which gives the same
value. Hence $p\omega_\infty - 1 = -(1-p)^K$ (the bias whose square is Theorem 3's bias term)
and $\omega_\infty\to1/p$ as $K\to\infty$.

**Other patterns** (same stationary $p$; `fedtheory.theory.fedau`): the rate argument with the
pattern's gap law gives, for the on/off Markov chain with lag-one correlation $\lambda$ (join
$b = p(1-\lambda)$, leave $a = (1-p)(1-\lambda)$), $\omega_\infty = 1/(p(1 + a(1-b)^{K-1}/
(1-(1-b)^K)))$, and for the cyclic pattern (period $P$, on-run $m$) $\omega_\infty =
P/(m+\lfloor(P-m)/K\rfloor)$. At finite $K$ these differ from the Bernoulli value: positively
correlated chains have longer off-runs, more cutoffs and a smaller weight (larger bias);
cyclic participation has no cutoff at all once $K\ge P-m$, so its weight is exactly $1/p$
there. With $K=\infty$ every stationary ergodic pattern gives $1/p$ (cyclic: when $pP$ is an
integer; otherwise the phase-averaged limit is $\mathbb E[P/m] > 1/p$).

**Checks.** (symbolic) the interval mean and the rate form derived with sympy from the
survival function equal the stated formula; the bias and the $K\to\infty$ limit follow; the
Markov formula reduces to Bernoulli at $\lambda=0$ and tends to $1/p$. (exact) the stationary
rate of interval ends of the finite chain (counter, participation state) computed in exact
rationals, with no renewal argument, equals the stated formula for Bernoulli on a grid of
$(p, K)$, and equals the Markov / cyclic formulas for those patterns (where they differ from
the Bernoulli value, listed). (Monte Carlo) `fedau_weights` on sampled Bernoulli
participation: the weight right after the $m$-th recorded interval is a mean of $m$ i.i.d.
intervals, so its expectation is the stated value exactly (two-sided, Bonferroni over the
clients, $\alpha = 10^{-6}$ per part); under Markov (correlation 0.6) and cyclic (period 7)
participation the intervals are not i.i.d., so there the check is on the number of recorded
intervals $M_T$, whose exact expectation is computed by propagating the law of (counter,
participation state) (cyclic: by integrating over the phase), and the mean weight at round
$T$ is reported beside the pattern's long-run formula.
""",
)


def _stated(ctx: Context, p: Any, K: Any) -> Any:
    """The stated long-run weight, exact for sympy / Fraction arguments."""
    one = exact_like(ctx.const("one"), p)
    inv = (1 / p) if not isinstance(p, Fraction) else Fraction(1) / p
    return (one - (1 - p) ** K) * ctx.factor("1/p", inv)


#: Rational points where a failed sympy identity is evaluated: a difference there is a
#: concrete counterexample; none there leaves the identity unproven (never false).
POINTS = ((sp.Rational(3, 10), 3), (sp.Rational(1, 2), 5), (sp.Rational(9, 10), 2))


@CLAIM.check("symbolic")
def _renewal(ctx: Context) -> Evidence:
    """sympy: E min(G, K) = sum_{j<K} P(G > j) and the inverse rate of interval ends, both
    equal to the stated weight; the bias -(1-p)^K; the K -> oo limit 1/p (the stated weight
    with (1-p)^K -> 0); the Markov formula at lambda = 0 equals it too. A part sympy cannot
    reduce to 0 is evaluated at rational points: a difference there refutes, none leaves it
    unproven."""
    d = derive_bernoulli_weight()
    mk = derive_markov_weight()
    stated = sp.sympify(_stated(ctx, p_sym, K_sym))
    q_K = (1 - p_sym) ** K_sym
    # (derived, stated) pairs; the limit part has no K left
    pairs = {
        "interval mean = stated": (d["mean_interval"], stated),
        "inverse rate = stated": (d["by_rate"], stated),
        "bias p omega - 1 = -(1-p)^K": (-q_K, p_sym * stated - 1),
        "K -> oo limit = 1/p": (1 / p_sym, sp.simplify(sp.expand(stated).subs(q_K, 0))),
        "markov at lambda=0 = stated": (mk["lambda_zero"], stated),
    }
    parts = {k: is_zero(a - b) for k, (a, b) in pairs.items()}
    failed = [k for k, v in parts.items() if not v]
    at_points = []
    for k in failed:
        a, b = pairs[k]
        for pv, kv in POINTS:
            da, db = (sp.nsimplify(sp.sympify(e).subs({p_sym: pv, K_sym: kv})) for e in (a, b))
            if sp.simplify(da - db) != 0:
                at_points.append({"part": k, "p": str(pv), "K": kv, "derived": str(da),
                                  "stated": str(db)})
                break
    detail = "; ".join(f"{k}: {v}" for k, v in parts.items())
    data = {"markov_weight": str(mk["weight"])}
    if failed and not at_points:
        return Evidence.unproven(str(d["mean_interval"]), str(stated),
                                 f"{detail} (sympy could not reduce {failed} to 0, and they "
                                 "agree at every rational point tried)", data=data)
    ce = None if not failed else {"instances": at_points, "failed": failed}
    return Evidence(not failed, str(d["mean_interval"]), str(stated), detail, counterexample=ce,
                    data=data)


@CLAIM.check("exact", "exact_chain")
def _exact_chain(ctx: Context) -> Evidence:
    """Exact rationals: 1 / (stationary rate of interval ends) of the chain (counter,
    participation) equals the stated weight for Bernoulli on p in {1/10, 3/10, 1/2, 9/10},
    K in 1..6; the Markov and cyclic formulas match their own chains; where they differ from
    the Bernoulli value is listed."""
    ps = [Fraction(1, 10), Fraction(3, 10), Fraction(1, 2), Fraction(9, 10)]
    Ks = range(1, 7)
    bad = None
    for p in ps:
        for K in Ks:
            chain = chain_long_run_weight("bernoulli", p, K)
            stated = _stated(ctx, p, K)
            if chain != stated and bad is None:
                bad = {"pattern": "bernoulli", "p": str(p), "K": K, "chain": str(chain),
                       "stated": str(stated)}
    # the other patterns: formula vs chain (not the claim; the library's derived values)
    table = []
    for pattern, kw in (("markov", {"correlation": Fraction(1, 2)}),
                        ("markov", {"correlation": Fraction(4, 5)}),
                        ("cyclic", {"period": 10})):
        for p in (Fraction(3, 10), Fraction(1, 2)):
            for K in (2, 5):
                chain = chain_long_run_weight(pattern, p, K, **kw)
                formula = long_run_weight(pattern, p, K, **kw)
                if chain != formula:  # the library's own formula, not the claim: a bug
                    raise RuntimeError(f"long_run_weight({pattern!r}, {p}, {K}, {kw}) = "
                                       f"{formula} differs from its exact chain {chain}")
                table.append({"pattern": pattern, **{k: str(v) for k, v in kw.items()},
                              "p": str(p), "K": K, "weight": float(chain),
                              "bernoulli": float(long_run_weight("bernoulli", p, K))})
    return Evidence(bad is None, "chain = stated" if bad is None else bad, "(1-(1-p)^K)/p",
                    f"Bernoulli: {len(ps) * len(Ks)} exact (p, K) cases; the Markov and cyclic "
                    "formulas equal their chains", counterexample=bad, data={"patterns": table})


@CLAIM.check("monte_carlo")
def _algorithm2(ctx: Context) -> Evidence:
    """fedau_weights on Bernoulli masks: the weight after the m-th recorded interval (a mean
    of m i.i.d. intervals) has expectation equal to the stated weight, K in {2, 5, inf};
    under Markov and cyclic participation the number of recorded intervals has its exact
    expectation (two-sided), and the long-run weights are reported beside the formulas."""
    ps = np.array([0.1, 0.3, 0.6, 0.9])
    R = ctx.size(quick=3000, full=30000)
    parts = []
    for K, m, pp in ((2.0, 20, ps), (5.0, 20, ps), (float("inf"), 10, np.array([0.5, 0.8]))):
        w = omega_after_intervals(pp, K, m, R, ctx.rng(f"K={K}"))
        stated = np.array([_stated(ctx, float(x), K) for x in pp])
        parts.append((f"K={K}", ctx.check_mean(
            w, stated, what=f"E[omega after {m} intervals], p={pp.tolist()}",
            counterexample={"K": K, "m": m, "p": pp.tolist(), "replicas": R})))
    # the other patterns: Algorithm 2's interval count against its exact expectation
    T, K = 120, 5.0
    R2 = ctx.size(quick=2000, full=20000)
    long_run = {}
    for name, proc, kw in (("markov", MarkovParticipation([0.3], correlation=0.6),
                            {"correlation": 0.6}),
                           ("cyclic", CyclicParticipation([0.35], period=7), {"period": 7})):
        masks = sample_masks(proc, ctx.rng(name), R2, T)
        st = fedau_state(masks, K)
        exact = expected_intervals(name, float(proc.p[0]), K, T, **kw)
        parts.append((f"{name} intervals", checks.check_identity(
            st["intervals"][:, -1, 0], exact[-1], what=f"E[M_T], {name}, T={T}, K={K}",
            counterexample={"pattern": name, **kw, "p": float(proc.p[0]), "K": K, "T": T})))
        long_run[name] = {"omega_T_mean": float(st["omega"][:, -1, 0].mean()),
                          "long_run_formula": float(long_run_weight(
                              name, Fraction(str(float(proc.p[0]))), int(K), **{
                                  k: (Fraction(str(v)) if isinstance(v, float) else v)
                                  for k, v in kw.items()})),
                          "bernoulli_formula": float(renewal_weight(float(proc.p[0]), K))}
    ev = all_of(parts)
    ev.data["other_patterns"] = long_run
    return ev
