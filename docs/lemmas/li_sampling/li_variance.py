r"""li.variance: Scheme I's variance bound (Li et al. 2020, Lemma 5), tight only as E grows.

With non-increasing steps, :math:`\eta_{t_0} \le 2\eta_t` (:math:`t_0` the round's first step)
and :math:`\mathbb E\|\nabla F_k(w, \xi)\|^2 \le G^2`,

.. math:: \mathbb E_{S_t}\|\overline v_{t+1} - \overline w_{t+1}\|^2
          \le \tfrac4K\,\eta_t^2 E^2 G^2 .

The worst instance (two clients pulling apart, :math:`p = (\frac12, \frac12)`, every step
but the last at :math:`\eta_{t_0} = 2\eta_t`) reaches :math:`((2E - 1)/2E)^2`: the tightness
search finds it on the box's boundary. The sampling step alone (:math:`\|v^k - w_{t_0}\| \le
1`, then :math:`\mathbb E\|\overline w - \overline v\|^2 \le 1/K`) is certified exactly.
"""

from fractions import Fraction

import numpy as np
from _li import ETA0, stated, variance

from fedtheory.certify import Built, OneStep, Pep, Vec
from fedtheory.certify.models import expectation
from fedtheory.claims import Claim, ClaimKind, Stated, tightest
from fedtheory.participation import WithReplacementParticipation
from fedtheory.problems import QuadraticProblem
from fedtheory.simulate import simulate


def sampling_step(params):
    """The PEP: free vectors d_k = v^k - w_t0 with ||d_k||^2 <= 1, the worst E_S||w - v||^2."""
    p, K = params["p"], params["K"]
    pep = Pep()
    d = [pep.vector(f"d{k}") for k in range(len(p))]
    for dk in d:
        pep.constrain(dk.sq() - 1)
    vbar = sum((dk * pk for dk, pk in zip(d, p, strict=True)), Vec())
    counts, probs = WithReplacementParticipation(list(p), K=K).design().enumerate_counts(True)

    def error(row):
        w = sum((dk * Fraction(int(n), K) for dk, n in zip(d, row, strict=True)), Vec())
        return (w - vbar).sq()

    pep.maximize(expectation([(tuple(r), pr) for r, pr in zip(counts, probs, strict=True)],
                             error))
    return Built(pep, stated=Fraction(1, K))  # 4/K eta_t^2 E^2 G^2 with E eta_t0 G = 1


STEP = OneStep(
    description="Scheme I's sampling step: K draws by p of free client vectors "
                "||v^k - w_t0|| <= 1; the worst E||w_bar - v_bar||^2 against 1/K",
    build=sampling_step,
    grid=lambda quick: [{"p": (Fraction(1, 2), Fraction(1, 2)), "K": 2},
                        {"p": (Fraction(1, 5), Fraction(3, 10), Fraction(1, 2)), "K": 3}])

CLAIM = Claim(
    id="li.variance", family="li", seed_ref="Lemma 5",
    title="Scheme I's variance is at most (4/K) eta_t^2 E^2 G^2",
    kind=ClaimKind.UPPER_BOUND, expected="confirmed",
    statement=r"\mathbb E_{S_t}\|\overline v_{t+1} - \overline w_{t+1}\|^2 "
              r"\le \frac4K\eta_t^2E^2G^2",
    stated=Stated({"four": 4}, step=r"\eta_{t_0} \le 2\eta_t"), one_step=STEP,
)


@CLAIM.check("exact")
def tightness(ctx):
    """The exact variance (the design's count covariance) over E <= 40, eta_t = rho eta_t0
    (rho >= 1/2), p_1, K <= 4, maximised by the tightness search, re-checked in rationals."""
    box = {"E": (1, 40), "rho": (1 / ctx.step_limit(2), 1.0), "p1": (0.05, 0.95),
           "K": (1, 4)}
    t = tightest(lambda E, rho, p1, K: variance(E, rho, p1, K, exact=isinstance(rho, Fraction)),
                 lambda E, rho, p1, K: stated(ctx, E, rho, K), box, integers=("E", "K"),
                 grid=7, vectorised=False, exact=True)
    return t.evidence("E_S||v_bar - w_bar||^2 at the tightest point of the box")


@CLAIM.check("monte_carlo")
def engine(ctx):
    """One engine round, K = 2 draws by (1/2, 1/2), steps 0.1, 0.1, 0.05 on two quadratics
    pulling apart (c = -1, 1; |gradient| <= G = 1 along the local runs, v_bar = 0 by
    symmetry): ||x_1 - v_bar||^2 against the bound, one-sided at level 1e-6."""
    prob = QuadraticProblem(np.ones((2, 1)), np.array([[-1.0], [1.0]]), weights=[0.5, 0.5])
    res = simulate(prob, "fedavg_is", WithReplacementParticipation([0.5, 0.5], K=2), rounds=1,
                   replicas=ctx.size(quick=4000, full=40000), lr=float(ETA0), local_steps=3,
                   lr_schedule=[1.0, 1.0, 0.5], x0=np.zeros(1), seed=ctx.seed)
    return ctx.check_mean(res.x[:, 0] ** 2, float(stated(ctx, 3, Fraction(1, 2), 2)))
