r"""hetero.true_minimiser: "FedAvg with heterogeneous local steps converges to the minimiser of
f" (refuted, with an exact counterexample).

The tempting statement: with local steps :math:`\tau_i` that differ between clients, unbiased
FedAvg still converges (in expectation) to :math:`x^\star = \arg\min_x \sum_i w_i f_i(x)`. On
:math:`f_i = \tfrac{a_i}{2}(x - c_i)^2` the limit is computed exactly in rational arithmetic
and differs from :math:`x^\star` as soon as the :math:`\tau_i` differ (docs/lemmas.md).
"""

from fractions import Fraction

import numpy as np

from fedtheory.claims import Claim, ClaimKind, Evidence
from fedtheory.participation import BernoulliParticipation
from fedtheory.problems import QuadraticProblem
from fedtheory.simulate import simulate

A, C, TAU = (Fraction(1), Fraction(1)), (Fraction(0), Fraction(1)), (1, 5)
W, ETA = (Fraction(1, 2), Fraction(1, 2)), Fraction(1, 10)

CLAIM = Claim(
    id="hetero.true_minimiser", family="hetero", seed_ref="Lemma 2",
    title="Heterogeneous local steps do not move FedAvg's limit (false)",
    kind=ClaimKind.CLOSED_FORM, expected="refuted",
    statement=r"\lim_t \mathbb E[x_t] = x^\star = \frac{\sum_i w_i a_i c_i}{\sum_i w_i a_i}",
)


def x_star():
    top = sum(w * a * c for w, a, c in zip(W, A, C, strict=True))
    return top / sum(w * a for w, a in zip(W, A, strict=True))


@CLAIM.check("exact")
def exact_limit(ctx):
    """The limit of E[x_t], exactly: the fixed point of the expected round map, whose slope and
    intercept come from running each client's tau_i local steps in rationals."""
    slope, intercept = Fraction(1), Fraction(0)  # E[x+] = slope x + intercept
    for w, a, c, tau in zip(W, A, C, TAU, strict=True):
        m = (1 - ETA * a) ** tau  # y_tau - c = m (x - c)
        slope -= w * (1 - m)
        intercept += w * (1 - m) * c
    limit = intercept / (1 - slope)
    ok = limit == x_star()
    return Evidence(ok, str(limit), str(x_star()), f"lim E[x_t] = {limit} vs x* = {x_star()}",
                    counterexample=None if ok else {
                        "a": [str(a) for a in A], "c": [str(c) for c in C], "tau": list(TAU),
                        "eta": str(ETA), "limit": str(limit), "x_star": str(x_star())})


@CLAIM.check("monte_carlo")
def simulated(ctx):
    """E[x_T] over replicas of the engine's run against x*, at level ctx.alpha."""
    prob = QuadraticProblem(np.array(A, dtype=float)[:, None], np.array(C, dtype=float)[:, None])
    res = simulate(prob, "fedavg_is", BernoulliParticipation(0.5, n=2), rounds=200,
                   replicas=ctx.size(quick=4000, full=40000), lr=float(ETA),
                   local_steps=np.array(TAU), seed=ctx.seed, x0=np.zeros(1))
    return ctx.check_mean(res.x[:, 0], float(x_star()))
