r"""Family ``fedau``: FedAvg with adaptive weights under unknown participation statistics
(seed 001, Wang & Ji).

* ``fedau.objective_inconsistency`` (Theorem 1): with time-constant weights the expected
  update's fixed point minimises :math:`h = \frac1P\sum_n\omega_np_nF_n`.
* ``fedau.weight_mean``: Algorithm 2's long-run weight is :math:`(1-(1-p)^K)/p` under
  Bernoulli participation (renewal argument); Markov and cyclic patterns differ at finite
  :math:`K`.
* ``fedau.weight_error`` (Theorem 3): the weight error's bias limit
  :math:`\frac1N\sum_n(1-p_n)^{2K}` and its :math:`K\log T/T` variance part.
* ``fedau.cutoff_choice`` (Corollary 4): :math:`K = \lceil\log_cT\rceil` makes the bias term
  at most :math:`1/T`.
* ``fedau.participation_patterns``: the document's table (methods x patterns) reproduced in the
  authors' regime (their code's probabilities, ``markov-0.05``, ``cyclic-100``, 5 local
  steps, per-method learning rates) on digits, decided by paired tests.

The maths lives in :mod:`fedtheory.algorithms.fedau` (Algorithm 2, the rules ``fedau``,
``fedavg_weighted``, ``fedavg_all``), :mod:`fedtheory.theory.fedau` (renewal weights, exact
chains, the exact weight error, Corollary 4's :math:`K`, Theorem 1's fixed point),
:mod:`fedtheory.symbolic.fedau_derivations` (sympy), :mod:`fedtheory.experiments.fedau_runs`
(Monte Carlo and engine runs), :mod:`fedtheory.experiments.fedau_patterns` (the table) and
:mod:`fedtheory.plotting.fedau` (figures); ``notebooks/fedau_derivations.ipynb`` shows the
derivations.

Main findings (seed 0). Theorem 1 holds exactly on quadratics with one local step (local
steps add an :math:`O(\gamma)` drift term). The long-run weight is exactly
:math:`(1-(1-p)^K)/p` under Bernoulli participation; Markov and cyclic patterns with the same
:math:`p` give other finite-:math:`K` weights. Theorem 3's bias term is the exact
:math:`T\to\infty` limit (constant 1; a larger exponent is false for every constant) and the
rest decays like :math:`\log T/T`, with the factor :math:`K` needed only for uniformity in
:math:`p`. Corollary 4's choice makes the bias term at most :math:`1/T`, with equality on a
tight family (a larger exponent of :math:`c` is refuted there). The table, in the authors'
regime: the full preset confirms every cell (FedAU beats both biased baselines by about 1.3
training and 1.0 test accuracy points and ties with known participation statistics within
0.1 point); the quick preset's 10 seeds cannot resolve the test-accuracy gains
(inconclusive).
"""

from fedtheory.claims.family_packages import Family

__all__: list[str] = []

#: The family's title, place and reading order (:mod:`fedtheory.claims.family_packages`).
FAMILY = Family(
    title="unknown participation statistics",
    position=3,
    order=(
        "objective_inconsistency", "weight_mean", "weight_error", "cutoff_choice",
        "participation_patterns",
    ),
)
