r"""li.unbiased: Scheme I's average is unbiased for the full average (Li et al. 2020, Lemma 4).

:math:`K` indices drawn i.i.d. by :math:`p`, the server's :math:`\overline w_{t+1} =
\frac1K\sum_{j=1}^K v^{i_j}_{t+1}`: :math:`\mathbb E_{S_t}\overline w_{t+1} = \overline
v_{t+1} = \sum_k p_k v^k_{t+1}`. Checked exactly over every multiset of draws, and on the
engine (``WithReplacementParticipation`` with ``fedavg_is``: coefficients :math:`N_k/K`).
"""

from fractions import Fraction

import numpy as np
from _li import ETA0, local_models

from fedtheory.certify import OutOfScope
from fedtheory.claims import Claim, ClaimKind, Evidence, all_of
from fedtheory.participation import BernoulliParticipation, WithReplacementParticipation
from fedtheory.problems import QuadraticProblem
from fedtheory.simulate import simulate

CLAIM = Claim(
    id="li.unbiased", family="li", seed_ref="Lemma 4",
    title="Sampling with replacement (Scheme I) averages without bias",
    kind=ClaimKind.IDENTITY, expected="confirmed",
    statement=r"\mathbb E_{S_t}\,\overline w_{t+1} = \overline v_{t+1}",
    one_step=OutOfScope("an identity (a mean), not an inequality: it is proved by the exact "
                        "enumeration, with nothing for a PEP to bound"),
)

CASES = [(3, Fraction(1, 2), Fraction(1, 3), 2), (5, Fraction(3, 4), Fraction(1, 10), 4),
         (1, Fraction(1), Fraction(1, 2), 1)]


@CLAIM.check("exact")
def enumerated(ctx):
    """E_S[w_bar] = sum over every multiset of K draws of its multinomial probability times
    (1/K) sum_k N_k v^k, in rationals, against sum_k p_k v^k."""
    parts = []
    for E, rho, p1, K in CASES:
        v = local_models(E, rho, p1)
        counts, probs = WithReplacementParticipation([p1, 1 - p1], K=K).design() \
            .enumerate_counts(exact=True)
        mean = sum(pr * sum(int(n) * vi for n, vi in zip(row, v, strict=True)) / K
                   for row, pr in zip(counts, probs, strict=True))
        full = p1 * v[0] + (1 - p1) * v[1]
        case = {"E": E, "rho": str(rho), "p1": str(p1), "K": K}
        parts.append((f"E={E}, K={K}", Evidence(
            mean == full, str(mean), str(full), f"{len(probs)} multisets",
            counterexample=None if mean == full else {**case, "mean": str(mean)},
            proof=f"exact enumeration of the {len(probs)} multisets")))
    return all_of(parts)


@CLAIM.check("monte_carlo")
def engine(ctx):
    """One round of the engine: E[x_1] under K = 3 draws by p = (0.3, 0.7), against the
    full average (every client, weights p), with decaying steps (factors 1, 1, 1/2)."""
    p = np.array([0.3, 0.7])
    prob = QuadraticProblem(np.array([[1.0], [3.0]]), np.array([[-1.0], [2.0]]), weights=p)
    common = dict(rounds=1, lr=float(ETA0), local_steps=3, lr_schedule=[1.0, 1.0, 0.5],
                  x0=np.zeros(1), seed=ctx.seed)
    full = simulate(prob, "fedavg_is", BernoulliParticipation(1.0, n=2), replicas=1, **common)
    res = simulate(prob, "fedavg_is", WithReplacementParticipation(p, K=3),
                   replicas=ctx.size(quick=4000, full=40000), **common)
    return ctx.check_mean(res.x[:, 0], float(full.x[0, 0]))
