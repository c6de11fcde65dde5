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
* ``fedau.participation_patterns``: the seed's table (methods x patterns) recomputed on
  digits.

The maths lives in :mod:`fedtheory.algorithms.fedau` (Algorithm 2, the rules ``fedau``,
``fedavg_weighted``, ``fedavg_all``), :mod:`fedtheory.theory.fedau` (renewal weights, exact
chains, the exact weight error, Corollary 4's :math:`K`, Theorem 1's fixed point),
:mod:`fedtheory.symbolic.fedau_derivations` (sympy), :mod:`fedtheory.experiments.fedau_runs`
(Monte Carlo and engine runs), :mod:`fedtheory.experiments.fedau_patterns` (the table) and
:mod:`fedtheory.plotting.fedau` (figures); ``notebooks/fedau_derivations.ipynb`` shows the
derivations.

Main findings (quick preset, seed 0): every claim is confirmed. Theorem 1 holds exactly on
quadratics with one local step (local steps add an :math:`O(\gamma)` drift term). The
long-run weight is exactly :math:`(1-(1-p)^K)/p` under Bernoulli participation; Markov and
cyclic patterns with the same :math:`p` give other finite-:math:`K` weights (smaller for
positively correlated chains; exactly :math:`1/p` for cycles whose off-run is at most
:math:`K`). Theorem 3's bias term is the exact :math:`T\to\infty` limit (constant 1) and the
rest decays like :math:`\log T/T`, with the factor :math:`K` needed only for uniformity in
:math:`p`. Corollary 4's choice makes the bias term at most :math:`1/T`, with equality on a
tight family; it picks a larger :math:`K` than the exact optimum. On digits FedAU beats
"average participating" and "average all" in the true objective under all three patterns and
ties with known participation statistics; in accuracy no baseline is significantly better.
"""

__all__: list[str] = []
