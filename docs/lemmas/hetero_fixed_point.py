r"""hetero.fixed_point: where FedAvg with heterogeneous local steps converges (confirmed).

Clients :math:`i = 1..n` hold :math:`f_i(x) = \tfrac{a_i}{2}(x - c_i)^2` and run
:math:`\tau_i` local gradient steps of size :math:`\eta` from the server's :math:`x_t`; each
takes part with probability :math:`p` and the server adds :math:`\frac{w_i}{p}(x_t - y_i)`
(unbiased FedAvg). Then :math:`\mathbb E[x_t]` converges to

.. math:: \tilde x = \frac{\sum_i w_i\,\big(1 - (1 - \eta a_i)^{\tau_i}\big)\,c_i}
          {\sum_i w_i\,\big(1 - (1 - \eta a_i)^{\tau_i}\big)},

the minimiser of a surrogate objective, not of :math:`f = \sum_i w_i f_i` (a worked lemma of
docs/lemmas.md: FedNova's objective inconsistency, exactly, on quadratics).
"""

import numpy as np
import sympy as sp

from fedtheory.claims import Claim, ClaimKind, Evidence, Stated
from fedtheory.participation import BernoulliParticipation
from fedtheory.problems import QuadraticProblem
from fedtheory.simulate import simulate

A, C, TAU, W = (1, 2, sp.Rational(1, 2)), (0, 1, 3), (1, 3, 5), (sp.Rational(1, 3),) * 3
ETA, P = sp.Rational(1, 10), sp.Rational(1, 2)

CLAIM = Claim(
    id="hetero.fixed_point", family="hetero", seed_ref="Lemma 1",
    title="FedAvg with heterogeneous local steps converges to a surrogate's minimiser",
    kind=ClaimKind.CLOSED_FORM, expected="confirmed",
    statement=r"\lim_t \mathbb E[x_t] = \frac{\sum_i w_i(1-(1-\eta a_i)^{\tau_i})c_i}"
              r"{\sum_i w_i(1-(1-\eta a_i)^{\tau_i})}",
    stated=Stated({}, factors=("progress",)),  # a reader may drop the local-progress weight
)


def stated_limit(ctx):
    """The statement's right-hand side on the instance (exact)."""
    prog = [ctx.factor("progress", 1 - (1 - ETA * a) ** t)
            for a, t in zip(A, TAU, strict=True)]
    top = sum(w * g * c for w, g, c in zip(W, prog, C, strict=True))
    return top / sum(w * g for w, g in zip(W, prog, strict=True))


@CLAIM.check("symbolic")
def derived(ctx):
    """Run the tau_i local steps symbolically, average the round map over participation, solve
    for its fixed point, and compare with the statement."""
    x, eta, p = sp.symbols("x eta p", positive=True)
    step = 0
    for w, a, c, tau in zip(W, A, C, TAU, strict=True):
        y = x
        for _ in range(tau):  # local gradient steps y <- y - eta a (y - c)
            y = y - eta * a * (y - c)
        step += p * (w / p) * (x - y)  # E[1_i / p] (x - y_i) w_i
    fixed = sp.solve(sp.Eq(x - step, x), x)[0].subs(eta, ETA)
    gap = sp.simplify(fixed - stated_limit(ctx))
    return Evidence(gap == 0, str(fixed), str(stated_limit(ctx)), f"derived - stated = {gap}",
                    counterexample=None if gap == 0 else {"derived": str(fixed)})


@CLAIM.check("monte_carlo")
def simulated(ctx):
    """E[x_T] over replicas of the engine's run (Bernoulli(1/2) participation, per-client
    local steps), tested against the statement at level ctx.alpha."""
    prob = QuadraticProblem(np.array(A, dtype=float)[:, None], np.array(C, dtype=float)[:, None])
    res = simulate(prob, "fedavg_is", BernoulliParticipation(float(P), n=3), rounds=200,
                   replicas=ctx.size(quick=4000, full=40000), lr=float(ETA),
                   local_steps=np.array(TAU), seed=ctx.seed, x0=np.zeros(1))
    return ctx.check_mean(res.x[:, 0], float(stated_limit(ctx)))
